// AscendC host layer: how vector instructions walk their operands. A vector instruction works in
// repeats of 256 bytes (8 data blocks of 32 bytes) of its operands; each operand has a block
// stride (data blocks between the blocks of one repeat) and a repeat stride (data blocks between
// repeats). The core's mask register says which elements of a repeat take part: in Normal mode a
// 128-bit mask per repeat (bit i is element i), in Counter mode the total number of elements,
// the repeat count following from it. The APIs set the register as the library does (the
// "first n elements" form switches to Counter mode for n elements, then resets the mask and
// goes back to Normal; the repeat forms set the mask unless `isSetMask` is false, when
// SetVectorMask's value applies), so a kernel that manages the mask itself sees what it would
// on the device. Contiguous, fully masked work runs as plain loops the compiler vectorises.
// Documentation: docs/zh/api/SIMD-API/基础API/Memory矢量计算/SIMD计算说明 (掩码, 高维切分,
// 连续计算), 掩码操作, 辅助数据结构 (UnaryRepeatParams, BinaryRepeatParams).
#ifndef ASCENDC_HOST_VECTOR_H
#define ASCENDC_HOST_VECTOR_H

#include "memory.h"
#include "tensor.h"
#include "types.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace AscendC {

const int32_t DEFAULT_BLK_NUM = 8;
const int32_t DEFAULT_BLK_STRIDE = 1;
const uint8_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint32_t DEFAULT_C0_SIZE = 32;

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

struct UnaryRepeatParams {
    UnaryRepeatParams() {}
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn,
                      const uint8_t dstRepStrideIn, const uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn)
    {
    }
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn,
                      const uint8_t dstRepStrideIn, const uint8_t srcRepStrideIn,
                      const bool halfBlockIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn), halfBlock(halfBlockIn)
    {
    }
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
    bool halfBlock = false;
};

struct BinaryRepeatParams {
    BinaryRepeatParams() {}
    BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn,
                       const uint8_t src1BlkStrideIn, const uint8_t dstRepStrideIn,
                       const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn),
          src1BlkStride(src1BlkStrideIn), dstRepStride(dstRepStrideIn),
          src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn)
    {
    }
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

}  // namespace AscendC

namespace ascendc_host {

inline VectorRegs& vregs(const char* op) { return core_memory(op).regs; }

// Elements of a type in one data block (32 bytes) and one repeat (256 bytes).
template <typename T>
constexpr uint32_t per_block()
{
    return 32u / static_cast<uint32_t>(sizeof(T));
}
template <typename T>
constexpr uint32_t per_repeat()
{
    return 256u / static_cast<uint32_t>(sizeof(T));
}

// Writes `len` into the mask register the way the library does: Counter mode takes it as the
// element count, Normal mode as the first `len` elements of each repeat.
inline void set_mask_len(VectorRegs& r, uint64_t len, bool counter)
{
    if (counter || r.counter_mode) {
        r.mask[0] = len;
        r.mask[1] = 0;
        return;
    }
    if (len >= 128) {
        r.mask[0] = r.mask[1] = ~0ull;
    } else if (len > 64) {
        r.mask[0] = ~0ull;
        r.mask[1] = (1ull << (len - 64)) - 1;
    } else {
        r.mask[0] = len == 64 ? ~0ull : (1ull << len) - 1;
        r.mask[1] = 0;
    }
}

inline void set_mask_bits(VectorRegs& r, uint64_t high, uint64_t low)
{
    r.mask[0] = low;
    r.mask[1] = high;
}

// One operand of an instruction: its first byte, the bytes it may touch, its element size and
// its strides (in data blocks).
struct Operand {
    uint8_t* base;
    uint64_t room;
    uint32_t size;
    uint32_t blk;
    uint32_t rep;
    const char* role;
};

template <typename T>
inline Operand operand_of(const char* op, const AscendC::LocalTensor<T>& t, uint32_t blk,
                          uint32_t rep, const char* role)
{
    uint8_t* p = t.host_data(op);
    if (t.host_addr() % kBlockBytes != 0) {
        fault("%s: %s does not start on a 32-byte boundary (byte %u of %s)", op, role,
              t.host_addr(), hw_name(t.host_hw()));
    }
    return Operand{p, t.host_room(), static_cast<uint32_t>(sizeof(T)), blk, rep, role};
}

// A local operand of a copy: its first byte, checked to be 32-byte aligned and to have `bytes`
// bytes from there within its memory.
template <typename T>
inline uint8_t* local_range(const char* op, const AscendC::LocalTensor<T>& t, uint64_t bytes,
                            const char* role)
{
    uint8_t* p = t.host_data(op);
    if (t.host_addr() % kBlockBytes != 0) {
        fault("%s: %s does not start on a 32-byte boundary (byte %u of %s)", op, role,
              t.host_addr(), hw_name(t.host_hw()));
    }
    if (bytes > t.host_room()) {
        fault("%s: %llu bytes of %s run past its buffer (%llu bytes from its start)", op,
              static_cast<unsigned long long>(bytes), role,
              static_cast<unsigned long long>(t.host_room()));
    }
    return p;
}

// Checks a contiguous run of `n` elements of every operand.
template <size_t NOps>
inline void check_run(const char* op, const std::array<Operand, NOps>& ops, uint64_t n)
{
    for (const Operand& o : ops) {
        if (n * o.size > o.room) {
            fault("%s: %llu elements of %s run past its buffer (%llu bytes)", op,
                  static_cast<unsigned long long>(n), o.role,
                  static_cast<unsigned long long>(o.room));
        }
    }
}

// Runs an instruction over its operands under the core's mask and mode. `elems` is the
// instruction's elements per repeat. Contiguous work (every operand's block stride 1 and
// repeat stride one repeat, and either Counter mode or a full mask) goes to `run(n)`, which
// handles elements [0, n) of every operand; anything else to `one(offsets)` per element, with
// each operand's byte offset.
template <size_t NOps, typename Run, typename One>
inline void vec_walk(const char* op, const std::array<Operand, NOps>& ops, uint32_t elems,
                     uint32_t repeat, Run&& run, One&& one)
{
    VectorRegs& r = vregs(op);
    if (repeat > 255) {
        fault("%s: repeatTime %u exceeds 255", op, repeat);
    }
    uint64_t total = 0;
    uint32_t repeats = repeat;
    if (r.counter_mode) {
        total = r.mask[0];
        repeats = static_cast<uint32_t>((total + elems - 1) / elems);
    }
    bool contiguous = true;
    for (const Operand& o : ops) {
        contiguous = contiguous && o.blk == 1 && o.rep * 32ull == uint64_t{elems} * o.size;
    }
    const bool full_mask =
        elems >= 128 ? (r.mask[0] == ~0ull && r.mask[1] == ~0ull)
                     : (elems == 64 ? r.mask[0] == ~0ull
                                    : (r.mask[0] & ((1ull << elems) - 1)) == (1ull << elems) - 1);
    if (contiguous && (r.counter_mode || full_mask)) {
        const uint64_t n = r.counter_mode ? total : uint64_t{repeats} * elems;
        check_run(op, ops, n);
        run(n);
        return;
    }
    std::array<uint64_t, NOps> off{};
    for (uint32_t rep = 0; rep < repeats; ++rep) {
        const uint32_t in_repeat =
            r.counter_mode ? static_cast<uint32_t>(std::min<uint64_t>(elems, total - uint64_t{rep} * elems))
                           : elems;
        for (uint32_t i = 0; i < in_repeat; ++i) {
            if (!r.counter_mode) {
                const uint64_t word = i < 64 ? r.mask[0] : r.mask[1];
                if (i >= 128 || ((word >> (i % 64)) & 1u) == 0) {
                    continue;
                }
            }
            for (size_t k = 0; k < NOps; ++k) {
                const Operand& o = ops[k];
                const uint32_t pb = 32u / o.size;
                off[k] = (uint64_t{rep} * o.rep + uint64_t{i / pb} * o.blk) * 32u +
                         uint64_t{i % pb} * o.size;
                if (off[k] + o.size > o.room) {
                    fault("%s: repeat %u, element %u of %s is byte %llu, past its buffer (%llu "
                          "bytes)",
                          op, rep, i, o.role, static_cast<unsigned long long>(off[k]),
                          static_cast<unsigned long long>(o.room));
                }
            }
            one(off);
        }
    }
}

// The byte offset of element `i` of repeat `rep` of an operand, checked against its room.
inline uint64_t elem_offset(const char* op, const Operand& o, uint64_t rep, uint64_t i)
{
    const uint32_t pb = 32u / o.size;
    const uint64_t off = (rep * o.rep + (i / pb) * o.blk) * 32u + (i % pb) * o.size;
    if (off + o.size > o.room) {
        fault("%s: repeat %llu, element %llu of %s is byte %llu, past its buffer (%llu bytes)", op,
              static_cast<unsigned long long>(rep), static_cast<unsigned long long>(i), o.role,
              static_cast<unsigned long long>(off), static_cast<unsigned long long>(o.room));
    }
    return off;
}

// Bit `j` of a bit string (bit 0 the lowest bit of byte 0).
inline bool get_bit(const uint8_t* bits, uint64_t j) { return ((bits[j / 8] >> (j % 8)) & 1u) != 0; }
inline void set_bit(uint8_t* bits, uint64_t j, bool v)
{
    const uint8_t b = static_cast<uint8_t>(1u << (j % 8));
    bits[j / 8] = v ? static_cast<uint8_t>(bits[j / 8] | b) : static_cast<uint8_t>(bits[j / 8] & ~b);
}

// Every element an instruction takes part with, in order: `one(rep, i, offsets)` for element i
// of repeat `rep` (within the mask unless `masked` is false), with each operand's byte offset.
// In Counter mode the register's count gives the elements and the repeats.
template <size_t NOps, typename One>
inline void vec_each(const char* op, const std::array<Operand, NOps>& ops, uint32_t elems,
                     uint32_t repeat, bool masked, One&& one)
{
    VectorRegs& r = vregs(op);
    uint64_t total = uint64_t{repeat} * elems;
    uint32_t repeats = repeat;
    if (r.counter_mode) {
        total = r.mask[0];
        repeats = static_cast<uint32_t>((total + elems - 1) / elems);
    }
    std::array<uint64_t, NOps> off{};
    for (uint32_t rep = 0; rep < repeats; ++rep) {
        const uint32_t in_repeat =
            static_cast<uint32_t>(std::min<uint64_t>(elems, total - uint64_t{rep} * elems));
        for (uint32_t i = 0; i < in_repeat; ++i) {
            if (masked && !r.counter_mode) {
                const uint64_t word = i < 64 ? r.mask[0] : r.mask[1];
                if (i >= 128 || ((word >> (i % 64)) & 1u) == 0) {
                    continue;
                }
            }
            for (size_t k = 0; k < NOps; ++k) {
                const Operand& o = ops[k];
                const uint32_t pb = 32u / o.size;
                off[k] = (uint64_t{rep} * o.rep + uint64_t{i / pb} * o.blk) * 32u +
                         uint64_t{i % pb} * o.size;
                if (off[k] + o.size > o.room) {
                    fault("%s: repeat %u, element %u of %s is byte %llu, past its buffer (%llu "
                          "bytes)",
                          op, rep, i, o.role, static_cast<unsigned long long>(off[k]),
                          static_cast<unsigned long long>(o.room));
                }
            }
            one(rep, i, off);
        }
    }
}

// The "first `count` elements" form: Counter mode for `count` elements (or, with isSetMask
// false, one repeat under the register's own mask), then the mask reset and Normal mode.
template <bool isSetMask, size_t NOps, typename Run, typename One>
inline void vec_count(const char* op, const std::array<Operand, NOps>& ops, uint32_t elems,
                      int64_t count, Run&& run, One&& one)
{
    VectorRegs& r = vregs(op);
    if constexpr (!isSetMask) {
        vec_walk(op, ops, elems, 1, run, one);
        return;
    }
    if (count < 0) {
        fault("%s: negative count %lld", op, static_cast<long long>(count));
    }
    r.counter_mode = true;
    set_mask_len(r, static_cast<uint64_t>(count), true);
    vec_walk(op, ops, elems, 1, run, one);
    r.mask[0] = r.mask[1] = ~0ull;
    r.counter_mode = false;
}

// Sets the mask for a repeat form (unless isSetMask is false).
template <typename T, bool isSetMask>
inline void set_op_mask(const char* op, uint64_t mask)
{
    if constexpr (isSetMask) {
        set_mask_len(vregs(op), mask, false);
    }
}
template <typename T, bool isSetMask>
inline void set_op_mask(const char* op, const uint64_t mask[])
{
    if constexpr (isSetMask) {
        VectorRegs& r = vregs(op);
        if (r.counter_mode) {
            set_mask_len(r, mask[0], true);
        } else {
            set_mask_bits(r, mask[1], mask[0]);
        }
    }
}

// A count form's check: `count` within every tensor.
template <typename T>
inline void check_count(const char* op, const AscendC::LocalTensor<T>& t, int64_t count,
                        const char* role)
{
    if (count > static_cast<int64_t>(t.GetSize())) {
        fault("%s: %lld elements, but %s has %u", op, static_cast<long long>(count), role,
              t.GetSize());
    }
}

}  // namespace ascendc_host

namespace AscendC {

template <typename T = uint16_t, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow)
{
    ascendc_host::VectorRegs& r = ascendc_host::vregs("SetVectorMask");
    if (mode == MaskMode::COUNTER || r.counter_mode) {
        ascendc_host::set_mask_len(r, maskLow, true);
    } else {
        ascendc_host::set_mask_bits(r, maskHigh, maskLow);
    }
}

template <typename T = uint16_t, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len)
{
    ascendc_host::set_mask_len(ascendc_host::vregs("SetVectorMask"), static_cast<uint64_t>(len),
                               mode == MaskMode::COUNTER);
}

inline void SetMaskCount() { ascendc_host::vregs("SetMaskCount").counter_mode = true; }
inline void SetMaskNorm() { ascendc_host::vregs("SetMaskNorm").counter_mode = false; }
inline void ResetMask()
{
    ascendc_host::VectorRegs& r = ascendc_host::vregs("ResetMask");
    r.mask[0] = r.mask[1] = ~0ull;
}

}  // namespace AscendC

#endif
