// AscendC host layer: gathering. `GatherMask` keeps the elements of each repeat whose bit in a
// pattern (one of the seven built-in ones, or a tensor's bits) is 1, packed one after another,
// and counts them; in Normal mode a repeat is 256 bytes of the source, in Counter mode (Atlas
// A2/A3's first configuration) `mask` elements from the repeat's start. `Gather` reads each
// element from a byte offset of the source (plus a base address), `Gatherb` each 32-byte block.
// Documentation: docs/zh/api/SIMD-API/基础API/Memory矢量计算/比较与选择/GatherMask.md,
// 离散与聚合 (Gather, Gatherb).
#ifndef ASCENDC_HOST_GATHER_H
#define ASCENDC_HOST_GATHER_H

#include "vec_arith.h"

#include <cstring>
#include <vector>

namespace AscendC {

enum class GatherMaskMode : uint8_t { NO_STORE_REG = 0, STORE_REG = 1 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::NO_STORE_REG;

struct GatherMaskParams {
    GatherMaskParams() {}
    GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn,
                     const uint16_t src0RepeatStrideIn, const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn),
          src0RepeatStride(src0RepeatStrideIn), src1RepeatStride(src1RepeatStrideIn)
    {
    }
    uint8_t src0BlockStride = DEFAULT_BLK_STRIDE;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepeatStride = DEFAULT_REPEAT_STRIDE;
};

struct GatherRepeatParams {
    GatherRepeatParams() {}
    GatherRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(static_cast<uint8_t>(dstBlkStrideIn))
    {
    }
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

}  // namespace AscendC

namespace ascendc_host {

// GatherMask's core: `keep(rep, i)` says whether element i of repeat rep stays.
template <typename T, typename Keep>
inline uint64_t gather_mask(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                            bool reduceMode, uint32_t mask, const AscendC::GatherMaskParams& p,
                            Keep keep)
{
    const char* op = "GatherMask";
    constexpr uint32_t elems = per_repeat<T>();
    const Operand s = operand_of(op, src0, p.src0BlockStride, p.src0RepeatStride, "src0");
    const uint32_t per = reduceMode ? mask : elems;
    std::vector<T> kept;
    for (uint32_t rep = 0; rep < p.repeatTimes; ++rep) {
        for (uint32_t i = 0; i < per; ++i) {
            if (keep(rep, i)) {
                kept.push_back(*reinterpret_cast<const T*>(s.base + elem_offset(op, s, rep, i)));
            }
        }
    }
    uint8_t* d = local_range(op, dst, kept.size() * sizeof(T), "dst");
    if (!kept.empty()) {
        std::memcpy(d, kept.data(), kept.size() * sizeof(T));
    }
    return kept.size();
}

}  // namespace ascendc_host

namespace AscendC {

// The user-defined pattern: the bits of src1Pattern, the repeat's part starting
// src1RepeatStride data blocks after the previous repeat's.
template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                       const LocalTensor<U>& src1Pattern, const bool reduceMode,
                       const uint32_t mask, const GatherMaskParams& p, uint64_t& rsvdCnt)
{
    const uint32_t per = reduceMode ? mask : ascendc_host::per_repeat<T>();
    const uint64_t bits = (p.repeatTimes == 0 ? 0 : uint64_t{p.repeatTimes - 1u} *
                                                         p.src1RepeatStride * 256u) +
                          per;
    const uint8_t* pat =
        ascendc_host::local_range("GatherMask", src1Pattern, (bits + 7) / 8, "src1Pattern");
    rsvdCnt = ascendc_host::gather_mask(dst, src0, reduceMode, mask, p, [&](uint32_t rep, uint32_t i) {
        return ascendc_host::get_bit(pat, uint64_t{rep} * p.src1RepeatStride * 256u + i);
    });
}

// The built-in patterns 1-7: even elements, odd elements, the first/second/third/fourth of
// every four, all.
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                       const uint8_t src1Pattern, const bool reduceMode, const uint32_t mask,
                       const GatherMaskParams& p, uint64_t& rsvdCnt)
{
    if (src1Pattern < 1 || src1Pattern > 7) {
        ascendc_host::fault("GatherMask: built-in pattern %u is not one of 1-7", src1Pattern);
    }
    rsvdCnt = ascendc_host::gather_mask(dst, src0, reduceMode, mask, p, [&](uint32_t, uint32_t i) {
        switch (src1Pattern) {
            case 1: return i % 2 == 0;
            case 2: return i % 2 == 1;
            case 7: return true;
            default: return i % 4 == static_cast<uint32_t>(src1Pattern - 3);
        }
    });
}

// dst[i] = the element at byte srcBaseAddr + srcOffset[i] of src.
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                   const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseAddr,
                   const uint32_t count)
{
    const char* op = "Gather";
    ascendc_host::check_count(op, dst, count, "dst");
    ascendc_host::check_count(op, srcOffset, count, "srcOffset");
    T* d = reinterpret_cast<T*>(ascendc_host::local_range(op, dst, uint64_t{count} * sizeof(T), "dst"));
    const uint32_t* o = reinterpret_cast<const uint32_t*>(
        ascendc_host::local_range(op, srcOffset, uint64_t{count} * 4, "srcOffset"));
    const uint8_t* s = src.host_data(op);
    const uint64_t room = src.host_room();
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t at = uint64_t{srcBaseAddr} + o[i];
        if (at % sizeof(T) != 0 || at + sizeof(T) > room) {
            ascendc_host::fault("Gather: element %u's offset %llu is %s src (%llu bytes)", i,
                                static_cast<unsigned long long>(at),
                                at % sizeof(T) != 0 ? "not aligned to an element of" : "past",
                                static_cast<unsigned long long>(room));
        }
        std::memcpy(static_cast<void*>(&d[i]), s + at, sizeof(T));
    }
}

template <typename T, bool isSetMask = true>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                   const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseAddr,
                   const uint64_t mask[], const uint8_t repeatTime, const uint16_t dstRepStride)
{
    using namespace ascendc_host;
    set_op_mask<T, isSetMask>("Gather", mask);
    constexpr uint32_t elems = per_repeat<T>();
    const std::array<Operand, 1> ops = {operand_of("Gather", dst, 1, dstRepStride, "dst")};
    const uint32_t* o = reinterpret_cast<const uint32_t*>(local_range(
        "Gather", srcOffset, uint64_t{repeatTime} * elems * 4, "srcOffset"));
    const uint8_t* s = src.host_data("Gather");
    const uint64_t room = src.host_room();
    vec_each("Gather", ops, elems, repeatTime, true,
             [&](uint32_t rep, uint32_t i, const std::array<uint64_t, 1>& off) {
                 const uint64_t at = uint64_t{srcBaseAddr} + o[uint64_t{rep} * elems + i];
                 if (at + sizeof(T) > room) {
                     fault("Gather: repeat %u element %u's offset %llu is past src (%llu bytes)",
                           rep, i, static_cast<unsigned long long>(at),
                           static_cast<unsigned long long>(room));
                 }
                 std::memcpy(ops[0].base + off[0], s + at, sizeof(T));
             });
}

template <typename T, bool isSetMask = true>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                   const LocalTensor<uint32_t>& srcOffset, const uint32_t srcBaseAddr,
                   const uint64_t mask, const uint8_t repeatTime, const uint16_t dstRepStride)
{
    ascendc_host::set_op_mask<T, isSetMask>("Gather", mask);
    Gather<T, false>(dst, src, srcOffset, srcBaseAddr, static_cast<const uint64_t*>(nullptr),
                     repeatTime, dstRepStride);
}

// Block j of repeat i of dst = the 32 bytes at byte offset[i * 8 + j] of src.
template <typename T>
inline void Gatherb(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                    const LocalTensor<uint32_t>& offset, const uint8_t repeatTime,
                    const GatherRepeatParams& p)
{
    const char* op = "Gatherb";
    const uint32_t blk = p.dstBlkStride == 0 ? 1 : p.dstBlkStride;
    const uint32_t* o = reinterpret_cast<const uint32_t*>(
        ascendc_host::local_range(op, offset, uint64_t{repeatTime} * 8 * 4, "offset"));
    uint8_t* d = dst.host_data(op);
    const uint8_t* s = src.host_data(op);
    for (uint32_t i = 0; i < repeatTime; ++i) {
        for (uint32_t j = 0; j < 8; ++j) {
            const uint64_t at = o[i * 8 + j];
            const uint64_t to = (uint64_t{i} * p.dstRepStride + uint64_t{j} * blk) * 32u;
            if (at + 32 > src.host_room() || to + 32 > dst.host_room()) {
                ascendc_host::fault("Gatherb: repeat %u block %u (from byte %llu to byte %llu) "
                                    "runs past its tensor",
                                    i, j, static_cast<unsigned long long>(at),
                                    static_cast<unsigned long long>(to));
            }
            std::memmove(d + to, s + at, 32);
        }
    }
}

}  // namespace AscendC

#endif
