// AscendC host layer: filling and conversion. `Duplicate` (a scalar, or a tensor's first
// element, into the first n elements or under a mask), `CreateVecIndex` (first, first + 1, ...),
// `Brcb` (each of 8 elements per repeat into a 32-byte block) and `Cast` (every pair of the
// host's numeric types, rounding as `RoundMode` says; types.h), in their count and repeat forms.
// `Copy` moves local data under the mask (the identity conversion).
// Documentation: docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据填充, 类型转换, 数据搬运 (Copy).
#ifndef ASCENDC_HOST_VEC_CONVERT_H
#define ASCENDC_HOST_VEC_CONVERT_H

#include "vec_arith.h"

namespace AscendC {

template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count)
{
    const T s = scalarValue;
    ascendc_host::unary_count<isSetMask>("Duplicate", dst, dst, count, [s](T& d, T) { d = s; });
}

template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    Duplicate<T, isSetMask>(dst, src.GetValue(0), count);
}

template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const uint64_t mask[],
                      const uint8_t repeatTime, const uint16_t dstBlockStride,
                      const uint8_t dstRepeatStride)
{
    const T s = scalarValue;
    ascendc_host::set_op_mask<T, isSetMask>("Duplicate", mask);
    ascendc_host::unary_repeat("Duplicate", dst, dst, repeatTime,
                               UnaryRepeatParams(dstBlockStride, dstBlockStride, dstRepeatStride,
                                                 dstRepeatStride),
                               [s](T& d, T) { d = s; });
}

template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask,
                      const uint8_t repeatTime, const uint16_t dstBlockStride,
                      const uint8_t dstRepeatStride)
{
    const T s = scalarValue;
    ascendc_host::set_op_mask<T, isSetMask>("Duplicate", mask);
    ascendc_host::unary_repeat("Duplicate", dst, dst, repeatTime,
                               UnaryRepeatParams(dstBlockStride, dstBlockStride, dstRepeatStride,
                                                 dstRepeatStride),
                               [s](T& d, T) { d = s; });
}

// dst[i] = firstValue + i for the first `count` elements.
template <typename T>
inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count)
{
    ascendc_host::check_count("CreateVecIndex", dst, count, "dst");
    T* d = reinterpret_cast<T*>(
        ascendc_host::local_range("CreateVecIndex", dst, uint64_t{count} * sizeof(T), "dst"));
    for (uint32_t i = 0; i < count; ++i) {
        d[i] = T(ascendc_host::compute_t<T>(firstValue) + static_cast<ascendc_host::compute_t<T>>(i));
    }
}

// (The repeat form: the value of element i of repeat r is firstValue + r * per-repeat + i.)
template <typename T>
inline void CreateVecIndexRepeat(LocalTensor<T>& dst, const T& firstValue, uint8_t repeatTime,
                                 uint16_t dstBlkStride, uint8_t dstRepStride)
{
    const char* op = "CreateVecIndex";
    const std::array<ascendc_host::Operand, 1> ops = {
        ascendc_host::operand_of(op, dst, dstBlkStride, dstRepStride, "dst")};
    const uint64_t per = ascendc_host::per_repeat<T>();
    ascendc_host::vec_walk(
        op, ops, static_cast<uint32_t>(per), repeatTime,
        [&](uint64_t n) {
            T* d = reinterpret_cast<T*>(ops[0].base);
            for (uint64_t i = 0; i < n; ++i) {
                d[i] = T(ascendc_host::compute_t<T>(firstValue) +
                         static_cast<ascendc_host::compute_t<T>>(i));
            }
        },
        [&](const std::array<uint64_t, 1>& o) {
            // The element's index from its offset (contiguous blocks assumed within a repeat).
            const uint64_t k = o[0] / sizeof(T);
            *reinterpret_cast<T*>(ops[0].base + o[0]) =
                T(ascendc_host::compute_t<T>(firstValue) +
                  static_cast<ascendc_host::compute_t<T>>(k));
        });
}

template <typename T>
inline void CreateVecIndex(LocalTensor<T>& dst, const T& firstValue, uint64_t mask,
                           uint8_t repeatTime, uint16_t dstBlkStride, uint8_t dstRepStride)
{
    ascendc_host::set_op_mask<T, true>("CreateVecIndex", mask);
    CreateVecIndexRepeat(dst, firstValue, repeatTime, dstBlkStride, dstRepStride);
}

template <typename T>
inline void CreateVecIndex(LocalTensor<T>& dst, const T& firstValue, const uint64_t mask[],
                           uint8_t repeatTime, uint16_t dstBlkStride, uint8_t dstRepStride)
{
    ascendc_host::set_op_mask<T, true>("CreateVecIndex", mask);
    CreateVecIndexRepeat(dst, firstValue, repeatTime, dstBlkStride, dstRepStride);
}

// `Copy`: the vector unit's copy between local tensors, under the mask, with block strides
// (`dstStride`, `srcStride`) and repeat strides (`dstRepeatSize`, `srcRepeatSize`) in 32-byte
// units.
struct CopyRepeatParams {
    CopyRepeatParams() {}
    CopyRepeatParams(const uint16_t dstStrideIn, const uint16_t srcStrideIn,
                     uint16_t dstRepeatSizeIn, uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn),
          srcRepeatSize(srcRepeatSizeIn)
    {
    }
    uint16_t dstStride = 1;
    uint16_t srcStride = 1;
    uint16_t dstRepeatSize = 8;
    uint16_t srcRepeatSize = 8;
};

template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                 const uint8_t repeatTime, const CopyRepeatParams& p)
{
    ascendc_host::set_op_mask<T, isSetMask>("Copy", mask);
    ascendc_host::unary_repeat("Copy", dst, src, repeatTime,
                               UnaryRepeatParams(p.dstStride, p.srcStride,
                                                 static_cast<uint8_t>(p.dstRepeatSize),
                                                 static_cast<uint8_t>(p.srcRepeatSize)),
                               [](T& d, T a) { d = a; });
}

template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask,
                 const uint8_t repeatTime, const CopyRepeatParams& p)
{
    ascendc_host::set_op_mask<T, isSetMask>("Copy", mask);
    Copy<T, false>(dst, src, static_cast<const uint64_t*>(nullptr), repeatTime, p);
}

struct BrcbRepeatParams {
    BrcbRepeatParams() = default;
    BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn)
    {
    }
    uint16_t dstBlkStride = 1;
    uint16_t dstRepStride = 8;
};

// Each repeat takes the next 8 elements of `src` and fills one 32-byte block of `dst` with
// each (blocks dstBlkStride apart, repeats dstRepStride blocks apart).
template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                 const BrcbRepeatParams& repeatParams)
{
    const char* op = "Brcb";
    const uint32_t per = ascendc_host::per_block<T>();
    const uint64_t blk = repeatParams.dstBlkStride == 0 ? 1 : repeatParams.dstBlkStride;
    const uint64_t need =
        repeatTime == 0 ? 0
                        : ((uint64_t{repeatTime} - 1) * repeatParams.dstRepStride + 7 * blk + 1) * 32;
    uint8_t* d = ascendc_host::local_range(op, dst, need, "dst");
    const uint8_t* s = ascendc_host::local_range(op, src, uint64_t{repeatTime} * 8 * sizeof(T), "src");
    for (uint32_t r = 0; r < repeatTime; ++r) {
        for (uint32_t k = 0; k < 8; ++k) {
            const T v = ascendc_host::load<T>(s + (r * 8 + k) * sizeof(T));
            uint8_t* block = d + (r * repeatParams.dstRepStride + k * blk) * 32;
            for (uint32_t i = 0; i < per; ++i) {
                ascendc_host::store<T>(block + i * sizeof(T), v);
            }
        }
    }
}

// Converts the first `count` elements of `src` into `dst`'s type, rounding as `mode` says.
template <typename D, typename S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode,
                 const uint32_t count)
{
    const RoundMode m = mode;
    ascendc_host::unary_count<true>("Cast", dst, src, count,
                                    [m](D& d, S a) { d = ascendc_host::convert<D, S>(a, m); });
}

template <typename D, typename S, bool isSetMask = true>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode,
                 const uint64_t mask[], const uint8_t repeatTime,
                 const UnaryRepeatParams& repeatParams)
{
    const RoundMode m = mode;
    ascendc_host::set_op_mask<D, isSetMask>("Cast", mask);
    ascendc_host::unary_repeat("Cast", dst, src, repeatTime, repeatParams,
                               [m](D& d, S a) { d = ascendc_host::convert<D, S>(a, m); });
}

template <typename D, typename S, bool isSetMask = true>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode,
                 uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams)
{
    const RoundMode m = mode;
    ascendc_host::set_op_mask<D, isSetMask>("Cast", mask);
    ascendc_host::unary_repeat("Cast", dst, src, repeatTime, repeatParams,
                               [m](D& d, S a) { d = ascendc_host::convert<D, S>(a, m); });
}

}  // namespace AscendC

#endif
