// AscendC host layer: reductions. `ReduceRepeat` reduces each repeat (256 bytes under the mask)
// to one sum, or one extreme value and its index within the repeat; `ReduceDataBlock` each
// 32-byte block; `ReducePairElem` each pair of neighbours; `ReduceSum`/`ReduceMax`/`ReduceMin`
// the whole input, repeat by repeat and then over the repeats' results, as the library does.
// Sums are taken as the instructions take them, pairwise up a binary tree in the operand's own
// type (elements outside the mask count as zero); an extreme value found more than once gives
// its smallest index. An index is stored in the bits of a value slot (a half slot holds a
// uint16_t index, a float slot a uint32_t one), `ORDER_ONLY_INDEX` in a uint32_t.
// `GetReduceRepeatSumSpr` and `GetReduceRepeatMaxMinSpr` read the last results.
// Documentation: docs/zh/api/SIMD-API/基础API/Memory矢量计算/归约计算, 归约计算辅助配置接口.
#ifndef ASCENDC_HOST_REDUCE_H
#define ASCENDC_HOST_REDUCE_H

#include "vec_arith.h"

#include <cstring>
#include <vector>

namespace AscendC {

enum class ReduceType {
    SUM = 0,
    MAX,
    MIN,
};

enum class ReduceOrder {
    ORDER_VALUE_INDEX = 0,
    ORDER_INDEX_VALUE,
    ORDER_ONLY_VALUE,
    ORDER_ONLY_INDEX,
};

}  // namespace AscendC

namespace ascendc_host {

// The pairwise sum of `v` (its length a power of two), each step rounded to T.
template <typename T>
inline T tree_sum(std::vector<compute_t<T>>& v)
{
    size_t n = v.size();
    if (n == 0) {
        return T{};
    }
    while (n > 1) {
        const size_t half_n = (n + 1) / 2;
        for (size_t k = 0; k < half_n; ++k) {
            const compute_t<T> a = v[2 * k];
            const compute_t<T> b = 2 * k + 1 < n ? v[2 * k + 1] : compute_t<T>{};
            v[k] = static_cast<compute_t<T>>(static_cast<T>(a + b));
        }
        n = half_n;
    }
    return static_cast<T>(v[0]);
}

// The extreme of a run: its value and first index.
template <typename T>
struct Extreme {
    T value{};
    uint64_t index = 0;
    bool any = false;
    void take(AscendC::ReduceType t, T x, uint64_t i)
    {
        const compute_t<T> a = static_cast<compute_t<T>>(x);
        const compute_t<T> b = static_cast<compute_t<T>>(value);
        if (!any || (t == AscendC::ReduceType::MAX ? a > b : a < b)) {
            value = x;
            index = i;
            any = true;
        }
    }
};

// An index in the bits of a T slot.
template <typename T>
inline T index_bits(uint64_t index)
{
    T out{};
    if constexpr (sizeof(T) == 2) {
        const uint16_t v = static_cast<uint16_t>(index);
        std::memcpy(static_cast<void*>(&out), &v, 2);
    } else if constexpr (sizeof(T) == 4) {
        const uint32_t v = static_cast<uint32_t>(index);
        std::memcpy(static_cast<void*>(&out), &v, 4);
    } else {
        out = static_cast<T>(index);
    }
    return out;
}

// The elements of each repeat of `src` in order (nullopt-like: `active` false outside the mask),
// as `per(rep, vector<value>, vector<active>)`.
template <typename T, typename Per>
inline void per_repeat_values(const char* op, const AscendC::LocalTensor<T>& src, uint32_t elems,
                              uint32_t repeat, uint32_t blk, uint32_t rep_stride, Per per)
{
    const std::array<Operand, 1> ops = {operand_of(op, src, blk, rep_stride, "src")};
    VectorRegs& r = vregs(op);
    uint32_t repeats = repeat;
    if (r.counter_mode) {
        repeats = static_cast<uint32_t>((r.mask[0] + elems - 1) / elems);
    }
    std::vector<std::vector<T>> vals(repeats, std::vector<T>(elems));
    std::vector<std::vector<char>> act(repeats, std::vector<char>(elems, 0));
    vec_each(op, ops, elems, repeat, true,
             [&](uint32_t rp, uint32_t i, const std::array<uint64_t, 1>& off) {
                 vals[rp][i] = *reinterpret_cast<const T*>(ops[0].base + off[0]);
                 act[rp][i] = 1;
             });
    for (uint32_t rp = 0; rp < repeats; ++rp) {
        per(rp, vals[rp], act[rp]);
    }
}

template <typename T>
inline T sum_of(const std::vector<T>& vals, const std::vector<char>& act, size_t from, size_t n)
{
    std::vector<compute_t<T>> v(n);
    for (size_t k = 0; k < n; ++k) {
        v[k] = act[from + k] ? static_cast<compute_t<T>>(vals[from + k]) : compute_t<T>{};
    }
    return tree_sum<T>(v);
}

// The library's reduction of a whole input: ReduceRepeat over the input, then over its results
// until one is left.
template <typename T>
inline Extreme<T> reduce_all(AscendC::ReduceType t, std::vector<T> vals, std::vector<char> act)
{
    constexpr uint32_t elems = per_repeat<T>();
    std::vector<uint64_t> idx(vals.size());
    for (size_t k = 0; k < idx.size(); ++k) {
        idx[k] = k;
    }
    do {
        std::vector<T> nv;
        std::vector<char> na;
        std::vector<uint64_t> ni;
        for (size_t from = 0; from < vals.size(); from += elems) {
            const size_t n = std::min<size_t>(elems, vals.size() - from);
            if (t == AscendC::ReduceType::SUM) {
                nv.push_back(sum_of(vals, act, from, n));
                ni.push_back(0);
                na.push_back(1);
            } else {
                Extreme<T> e;
                for (size_t k = 0; k < n; ++k) {
                    if (act[from + k]) {
                        e.take(t, vals[from + k], idx[from + k]);
                    }
                }
                nv.push_back(e.value);
                ni.push_back(e.index);
                na.push_back(e.any ? 1 : 0);
            }
        }
        vals.swap(nv);
        act.swap(na);
        idx.swap(ni);
    } while (vals.size() > 1);
    Extreme<T> out;
    if (!vals.empty()) {
        out.value = vals[0];
        out.index = idx[0];
        out.any = act[0] != 0;
    }
    return out;
}

template <typename T>
inline void write_extreme(const char* op, uint8_t* d, uint64_t room, uint64_t at,
                          const Extreme<T>& e, AscendC::ReduceOrder order)
{
    auto put = [&](uint64_t byte, const void* p, size_t n) {
        if (byte + n > room) {
            fault("%s: result byte %llu runs past dst (%llu bytes)", op,
                  static_cast<unsigned long long>(byte), static_cast<unsigned long long>(room));
        }
        std::memcpy(d + byte, p, n);
    };
    const T ix = index_bits<T>(e.index);
    switch (order) {
        case AscendC::ReduceOrder::ORDER_VALUE_INDEX:
            put(at, &e.value, sizeof(T));
            put(at + sizeof(T), &ix, sizeof(T));
            break;
        case AscendC::ReduceOrder::ORDER_INDEX_VALUE:
            put(at, &ix, sizeof(T));
            put(at + sizeof(T), &e.value, sizeof(T));
            break;
        case AscendC::ReduceOrder::ORDER_ONLY_VALUE: put(at, &e.value, sizeof(T)); break;
        case AscendC::ReduceOrder::ORDER_ONLY_INDEX: {
            const uint32_t i32 = static_cast<uint32_t>(e.index);
            put(at, &i32, 4);
            break;
        }
    }
}

template <typename T>
inline uint32_t extreme_unit(AscendC::ReduceOrder order)
{
    switch (order) {
        case AscendC::ReduceOrder::ORDER_ONLY_VALUE: return sizeof(T);
        case AscendC::ReduceOrder::ORDER_ONLY_INDEX: return 4;
        default: return 2 * sizeof(T);
    }
}

template <AscendC::ReduceType reduceType, typename T>
inline void reduce_repeat(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                          int32_t repeatTime, int32_t dstRepStride, int32_t srcBlkStride,
                          int32_t srcRepStride, AscendC::ReduceOrder order)
{
    const char* op = "ReduceRepeat";
    if (repeatTime < 0 || repeatTime > 255) {
        fault("%s: repeatTime %d is outside [0, 255]", op, repeatTime);
    }
    constexpr uint32_t elems = per_repeat<T>();
    uint8_t* d = dst.host_data(op);
    const uint64_t room = dst.host_room();
    VectorRegs& r = vregs(op);
    Extreme<T> all;
    per_repeat_values(op, src, elems, static_cast<uint32_t>(repeatTime),
                      static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride),
                      [&](uint32_t rp, const std::vector<T>& vals, const std::vector<char>& act) {
                          if constexpr (reduceType == AscendC::ReduceType::SUM) {
                              const T s = sum_of(vals, act, 0, elems);
                              const uint64_t at = uint64_t{rp} * dstRepStride * sizeof(T);
                              if (at + sizeof(T) > room) {
                                  fault("%s: repeat %u's result runs past dst", op, rp);
                              }
                              std::memcpy(d + at, &s, sizeof(T));
                          } else {
                              Extreme<T> e;
                              for (uint32_t i = 0; i < elems; ++i) {
                                  if (act[i]) {
                                      e.take(reduceType, vals[i], i);
                                      all.take(reduceType, vals[i], uint64_t{rp} * elems + i);
                                  }
                              }
                              write_extreme(op, d, room,
                                            uint64_t{rp} * dstRepStride * extreme_unit<T>(order), e,
                                            order);
                          }
                      });
    if (reduceType != AscendC::ReduceType::SUM && all.any) {
        r.max_min_spr = static_cast<double>(static_cast<compute_t<T>>(all.value));
        r.max_min_index = all.index;
    }
}

}  // namespace ascendc_host

namespace AscendC {

template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true>
inline void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[],
                         const int32_t repeatTime, const int32_t dstRepStride,
                         const int32_t srcBlkStride, const int32_t srcRepStride,
                         ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    static_assert(std::is_same_v<T, U>, "ReduceRepeat on Atlas A2/A3 takes one type for dst and src");
    ascendc_host::set_op_mask<T, isSetMask>("ReduceRepeat", mask);
    ascendc_host::reduce_repeat<reduceType, T>(dst, src, repeatTime, dstRepStride, srcBlkStride,
                                               srcRepStride, order);
}

template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true>
inline void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask,
                         const int32_t repeatTime, const int32_t dstRepStride,
                         const int32_t srcBlkStride, const int32_t srcRepStride,
                         ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    static_assert(std::is_same_v<T, U>, "ReduceRepeat on Atlas A2/A3 takes one type for dst and src");
    ascendc_host::set_op_mask<T, isSetMask>("ReduceRepeat", static_cast<uint64_t>(mask));
    ascendc_host::reduce_repeat<reduceType, T>(dst, src, repeatTime, dstRepStride, srcBlkStride,
                                               srcRepStride, order);
}

// One result per 32-byte block: 8 per repeat, dstRepStride in units of 8 results.
template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true>
inline void ReduceDataBlock(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                            const uint64_t mask[], const int32_t repeatTime,
                            const int32_t dstRepStride, const int32_t srcBlkStride,
                            const int32_t srcRepStride)
{
    using namespace ascendc_host;
    static_assert(std::is_same_v<T, U>, "ReduceDataBlock takes one type for dst and src");
    const char* op = "ReduceDataBlock";
    set_op_mask<T, isSetMask>(op, mask);
    constexpr uint32_t elems = per_repeat<T>();
    constexpr uint32_t pb = per_block<T>();
    T* d = reinterpret_cast<T*>(dst.host_data(op));
    const uint64_t room = dst.host_room();
    per_repeat_values(op, src, elems, static_cast<uint32_t>(repeatTime),
                      static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride),
                      [&](uint32_t rp, const std::vector<T>& vals, const std::vector<char>& act) {
                          for (uint32_t b = 0; b < 8; ++b) {
                              T out{};
                              bool any = false;
                              for (uint32_t k = 0; k < pb; ++k) {
                                  any = any || act[b * pb + k];
                              }
                              if (!any) {
                                  continue;
                              }
                              if constexpr (reduceType == ReduceType::SUM) {
                                  out = sum_of(vals, act, b * pb, pb);
                              } else {
                                  Extreme<T> e;
                                  for (uint32_t k = 0; k < pb; ++k) {
                                      if (act[b * pb + k]) {
                                          e.take(reduceType, vals[b * pb + k], k);
                                      }
                                  }
                                  out = e.value;
                              }
                              const uint64_t at = uint64_t{rp} * dstRepStride * 8 + b;
                              if ((at + 1) * sizeof(T) > room) {
                                  fault("%s: repeat %u block %u's result runs past dst", op, rp, b);
                              }
                              d[at] = out;
                          }
                      });
}

template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true>
inline void ReduceDataBlock(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                            const int32_t mask, const int32_t repeatTime,
                            const int32_t dstRepStride, const int32_t srcBlkStride,
                            const int32_t srcRepStride)
{
    ascendc_host::set_op_mask<T, isSetMask>("ReduceDataBlock", static_cast<uint64_t>(mask));
    ReduceDataBlock<reduceType, T, U, false>(dst, src, static_cast<const uint64_t*>(nullptr),
                                             repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}

// The sum of each pair of neighbours: elems/2 results per repeat, dstRepStride in units of 128
// bytes.
template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true>
inline void ReducePairElem(const LocalTensor<T>& dst, const LocalTensor<U>& src,
                           const uint64_t mask[], const int32_t repeatTime,
                           const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride)
{
    using namespace ascendc_host;
    static_assert(reduceType == ReduceType::SUM, "ReducePairElem sums (ReduceType::SUM)");
    static_assert(std::is_same_v<T, U>, "ReducePairElem takes one type for dst and src");
    const char* op = "ReducePairElem";
    set_op_mask<T, isSetMask>(op, mask);
    constexpr uint32_t elems = per_repeat<T>();
    T* d = reinterpret_cast<T*>(dst.host_data(op));
    const uint64_t room = dst.host_room();
    per_repeat_values(op, src, elems, static_cast<uint32_t>(repeatTime),
                      static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride),
                      [&](uint32_t rp, const std::vector<T>& vals, const std::vector<char>& act) {
                          for (uint32_t k = 0; k < elems / 2; ++k) {
                              if (!act[2 * k] && !act[2 * k + 1]) {
                                  continue;
                              }
                              const uint64_t at = uint64_t{rp} * dstRepStride * (elems / 2) + k;
                              if ((at + 1) * sizeof(T) > room) {
                                  fault("%s: repeat %u pair %u's result runs past dst", op, rp, k);
                              }
                              d[at] = sum_of(vals, act, 2 * k, 2);
                          }
                      });
}

template <ReduceType reduceType, typename T, typename U = T, bool isSetMask = true>
inline void ReducePairElem(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask,
                           const int32_t repeatTime, const int32_t dstRepStride,
                           const int32_t srcBlkStride, const int32_t srcRepStride)
{
    ascendc_host::set_op_mask<T, isSetMask>("ReducePairElem", static_cast<uint64_t>(mask));
    ReducePairElem<reduceType, T, U, false>(dst, src, static_cast<const uint64_t*>(nullptr),
                                            repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}

}  // namespace AscendC

namespace ascendc_host {

// The whole-input reductions: the first `count` elements, or `repeat` repeats under the mask.
template <typename T>
inline void reduce_whole(const char* op, AscendC::ReduceType t, const AscendC::LocalTensor<T>& dst,
                         const AscendC::LocalTensor<T>& src, int64_t count, bool calIndex)
{
    if (count < 0) {
        fault("%s: negative count %lld", op, static_cast<long long>(count));
    }
    check_count(op, src, count, "src");
    const T* s = reinterpret_cast<const T*>(local_range(op, src, count * sizeof(T), "src"));
    std::vector<T> vals(s, s + count);
    std::vector<char> act(static_cast<size_t>(count), 1);
    const Extreme<T> e = reduce_all<T>(t, vals, act);
    T* d = reinterpret_cast<T*>(local_range(op, dst, (calIndex ? 2 : 1) * sizeof(T), "dst"));
    d[0] = e.value;
    if (calIndex) {
        d[1] = index_bits<T>(e.index);
    }
    VectorRegs& r = vregs(op);
    if (t == AscendC::ReduceType::SUM) {
        r.sum_spr = static_cast<double>(static_cast<compute_t<T>>(e.value));
    } else {
        r.max_min_spr = static_cast<double>(static_cast<compute_t<T>>(e.value));
        r.max_min_index = e.index;
    }
}

template <typename T>
inline void reduce_whole_repeat(const char* op, AscendC::ReduceType t,
                                const AscendC::LocalTensor<T>& dst,
                                const AscendC::LocalTensor<T>& src, int32_t repeatTime,
                                int32_t srcRepStride, bool calIndex)
{
    constexpr uint32_t elems = per_repeat<T>();
    std::vector<T> vals;
    std::vector<char> act;
    per_repeat_values(op, src, elems, static_cast<uint32_t>(repeatTime), 1,
                      static_cast<uint32_t>(srcRepStride),
                      [&](uint32_t, const std::vector<T>& v, const std::vector<char>& a) {
                          vals.insert(vals.end(), v.begin(), v.end());
                          act.insert(act.end(), a.begin(), a.end());
                      });
    const Extreme<T> e = reduce_all<T>(t, vals, act);
    T* d = reinterpret_cast<T*>(local_range(op, dst, (calIndex ? 2 : 1) * sizeof(T), "dst"));
    d[0] = e.value;
    if (calIndex) {
        d[1] = index_bits<T>(e.index);
    }
    VectorRegs& r = vregs(op);
    if (t == AscendC::ReduceType::SUM) {
        r.sum_spr = static_cast<double>(static_cast<compute_t<T>>(e.value));
    } else {
        r.max_min_spr = static_cast<double>(static_cast<compute_t<T>>(e.value));
        r.max_min_index = e.index;
    }
}

}  // namespace ascendc_host

namespace AscendC {

#define ASCENDC_HOST_WHOLE_REDUCE(NAME, KIND, INDEX_PARAM, INDEX_ARG)                               \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                          \
                     const LocalTensor<T>&, const int32_t count INDEX_PARAM)                        \
    {                                                                                               \
        ascendc_host::reduce_whole<T>(#NAME, KIND, dst, src, count, INDEX_ARG);                     \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                          \
                     const LocalTensor<T>&, const uint64_t mask[], const int32_t repeatTime,        \
                     const int32_t srcRepStride INDEX_PARAM)                                        \
    {                                                                                               \
        ascendc_host::set_op_mask<T, isSetMask>(#NAME, mask);                                       \
        ascendc_host::reduce_whole_repeat<T>(#NAME, KIND, dst, src, repeatTime, srcRepStride,       \
                                             INDEX_ARG);                                            \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                          \
                     const LocalTensor<T>&, const int32_t mask, const int32_t repeatTime,           \
                     const int32_t srcRepStride INDEX_PARAM)                                        \
    {                                                                                               \
        ascendc_host::set_op_mask<T, isSetMask>(#NAME, static_cast<uint64_t>(mask));                \
        ascendc_host::reduce_whole_repeat<T>(#NAME, KIND, dst, src, repeatTime, srcRepStride,       \
                                             INDEX_ARG);                                            \
    }

#define ASCENDC_HOST_COMMA ,
ASCENDC_HOST_WHOLE_REDUCE(ReduceSum, ReduceType::SUM, , false)
ASCENDC_HOST_WHOLE_REDUCE(ReduceMax, ReduceType::MAX, ASCENDC_HOST_COMMA bool calIndex = 0, calIndex)
ASCENDC_HOST_WHOLE_REDUCE(ReduceMin, ReduceType::MIN, ASCENDC_HOST_COMMA bool calIndex = 0, calIndex)
#undef ASCENDC_HOST_COMMA
#undef ASCENDC_HOST_WHOLE_REDUCE

template <typename T>
inline T GetReduceRepeatSumSpr()
{
    return static_cast<T>(static_cast<compute_t<T>>(ascendc_host::vregs("GetReduceRepeatSumSpr").sum_spr));
}

template <typename T>
inline void GetReduceRepeatMaxMinSpr(T& maxMinValue, T& maxMinIndex)
{
    ascendc_host::VectorRegs& r = ascendc_host::vregs("GetReduceRepeatMaxMinSpr");
    maxMinValue = static_cast<T>(static_cast<compute_t<T>>(r.max_min_spr));
    maxMinIndex = ascendc_host::index_bits<T>(r.max_min_index);
}

template <typename T>
inline void GetReduceRepeatMaxMinSpr(T& maxMinValue)
{
    ascendc_host::VectorRegs& r = ascendc_host::vregs("GetReduceRepeatMaxMinSpr");
    maxMinValue = static_cast<T>(static_cast<compute_t<T>>(r.max_min_spr));
}

}  // namespace AscendC

#endif
