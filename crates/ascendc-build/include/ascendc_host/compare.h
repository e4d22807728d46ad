// AscendC host layer: comparison and selection. `Compare`/`Compares` write one bit per element
// (bit j of the destination's bytes, lowest bit first, is element j's result); the register
// form of `Compare` writes the 128-bit CMPMASK register instead, which `GetCmpMask` reads and
// `SetCmpMask` loads. `Select` picks src0's element where its selection bit is 1 and src1's (a
// tensor or a scalar) where it is 0, in the three documented modes: VSEL_CMPMASK_SPR (every
// repeat uses the same first 256/sizeof(T) bits), VSEL_TENSOR_SCALAR_MODE and
// VSEL_TENSOR_TENSOR_MODE (the bits are used up across repeats); the forms without a mask take
// the selection (mode 0), the scalar (mode 1) or the selection's UB address (mode 2) from
// CMPMASK, as SetCmpMask left it.
// On Atlas A2/A3 the mask argument of the tensor Compare/Compares is documented as reserved:
// every element of each 256-byte repeat is compared, and the "first n" form compares the whole
// repeats in n (the tail that does not fill 256 bytes takes no part).
// Documentation: docs/zh/api/SIMD-API/基础API/Memory矢量计算/比较与选择 (Compare, Compares,
// Compare（结果存入寄存器）, GetCmpMask, SetCmpMask, Select).
#ifndef ASCENDC_HOST_COMPARE_H
#define ASCENDC_HOST_COMPARE_H

#include "vec_arith.h"

#include <cstring>

namespace AscendC {

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };

enum class SELMODE : uint8_t {
    VSEL_CMPMASK_SPR = 0,
    VSEL_TENSOR_SCALAR_MODE,
    VSEL_TENSOR_TENSOR_MODE,
};

}  // namespace AscendC

namespace ascendc_host {

template <typename T>
inline bool compare(AscendC::CMPMODE m, T a, T b)
{
    const compute_t<T> x = static_cast<compute_t<T>>(a);
    const compute_t<T> y = static_cast<compute_t<T>>(b);
    switch (m) {
        case AscendC::CMPMODE::LT: return x < y;
        case AscendC::CMPMODE::GT: return x > y;
        case AscendC::CMPMODE::EQ: return x == y;
        case AscendC::CMPMODE::LE: return x <= y;
        case AscendC::CMPMODE::GE: return x >= y;
        case AscendC::CMPMODE::NE: return x != y;
    }
    return false;
}

// Compares `repeats` whole repeats of `a` with `b` (a tensor operand, or the scalar when
// `b_scalar` is set) into bits of `dst`, every element of each repeat taking part.
template <typename T, typename U>
inline void compare_bits(const char* op, const AscendC::LocalTensor<U>& dst, const Operand& a,
                         const Operand* b, T scalar, AscendC::CMPMODE mode, uint64_t repeats)
{
    constexpr uint32_t elems = per_repeat<T>();
    const uint64_t bits = repeats * elems;
    uint8_t* d = local_range(op, dst, (bits + 7) / 8, "dst");
    for (uint64_t rep = 0; rep < repeats; ++rep) {
        for (uint32_t i = 0; i < elems; ++i) {
            const T x = *reinterpret_cast<const T*>(a.base + elem_offset(op, a, rep, i));
            const T y = b == nullptr
                            ? scalar
                            : *reinterpret_cast<const T*>(b->base + elem_offset(op, *b, rep, i));
            set_bit(d, rep * elems + i, compare<T>(mode, x, y));
        }
    }
}

template <typename T>
inline uint64_t whole_repeats(uint32_t count)
{
    return uint64_t{count} * sizeof(T) / 256u;
}

template <typename T>
inline void check_select_type(const char*)
{
    static_assert(is_float_v<T> || std::is_integral_v<T>, "Select takes numeric tensors");
}

// Select's core: for every element the instruction takes part with, the selection bit `bit(rep,
// i)` picks src0's element (1) or src1's (0; the scalar when `b` is null).
template <typename T, typename Bit>
inline void select_walk(const char* op, const Operand& d, const Operand& a, const Operand* b,
                        T scalar, uint32_t repeat, bool masked, Bit bit)
{
    constexpr uint32_t elems = per_repeat<T>();
    auto body = [&](uint32_t rep, uint32_t i, const auto& off) {
        const T x = *reinterpret_cast<const T*>(a.base + off[1]);
        const T y = b == nullptr ? scalar : *reinterpret_cast<const T*>(b->base + off[2]);
        *reinterpret_cast<T*>(d.base + off[0]) = bit(rep, i) ? x : y;
    };
    if (b == nullptr) {
        const std::array<Operand, 2> ops = {d, a};
        vec_each(op, ops, elems, repeat, masked, [&](uint32_t rep, uint32_t i, const auto& off) {
            const std::array<uint64_t, 3> o3 = {off[0], off[1], 0};
            body(rep, i, o3);
        });
    } else {
        const std::array<Operand, 3> ops = {d, a, *b};
        vec_each(op, ops, elems, repeat, masked, body);
    }
}

// The selection bits of a tensor, checked to hold `bits` bits.
template <typename U>
inline const uint8_t* sel_bits(const char* op, const AscendC::LocalTensor<U>& sel, uint64_t bits)
{
    return local_range(op, sel, (bits + 7) / 8, "selMask");
}

// Runs a Select in Counter mode over the first `count` elements (contiguous operands).
template <typename T, typename Body>
inline void select_count(const char* op, uint32_t count, Body body)
{
    VectorRegs& r = vregs(op);
    const bool counter = r.counter_mode;
    const uint64_t m0 = r.mask[0];
    const uint64_t m1 = r.mask[1];
    r.counter_mode = true;
    r.mask[0] = count;
    r.mask[1] = 0;
    constexpr uint32_t elems = per_repeat<T>();
    body(static_cast<uint32_t>((uint64_t{count} + elems - 1) / elems));
    r.counter_mode = counter;
    r.mask[0] = counter ? m0 : ~0ull;
    r.mask[1] = counter ? m1 : ~0ull;
}

}  // namespace ascendc_host

namespace AscendC {

// ---- Compare: bits into a tensor ----

template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0,
                    const LocalTensor<T>& src1, CMPMODE cmpMode, uint32_t count)
{
    static_assert(sizeof(U) == 1, "Compare writes its bits to a uint8_t/int8_t tensor");
    constexpr uint32_t rs = 256 / 32;
    const ascendc_host::Operand a = ascendc_host::operand_of("Compare", src0, 1, rs, "src0");
    const ascendc_host::Operand b = ascendc_host::operand_of("Compare", src1, 1, rs, "src1");
    ascendc_host::compare_bits<T>("Compare", dst, a, &b, T{}, cmpMode,
                                  ascendc_host::whole_repeats<T>(count));
}

template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0,
                    const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t[],
                    uint8_t repeatTime, const BinaryRepeatParams& p)
{
    const ascendc_host::Operand a =
        ascendc_host::operand_of("Compare", src0, p.src0BlkStride, p.src0RepStride, "src0");
    const ascendc_host::Operand b =
        ascendc_host::operand_of("Compare", src1, p.src1BlkStride, p.src1RepStride, "src1");
    ascendc_host::compare_bits<T>("Compare", dst, a, &b, T{}, cmpMode, repeatTime);
}

template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0,
                    const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t,
                    uint8_t repeatTime, const BinaryRepeatParams& p)
{
    const uint64_t none[2] = {0, 0};
    Compare<T, U, isSetMask>(dst, src0, src1, cmpMode, none, repeatTime, p);
}

// ---- Compares: a tensor against a scalar ----

template <typename T, typename U>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                     CMPMODE cmpMode, uint32_t count)
{
    static_assert(sizeof(U) == 1, "Compares writes its bits to a uint8_t/int8_t tensor");
    const ascendc_host::Operand a = ascendc_host::operand_of("Compares", src0, 1, 8, "src0");
    ascendc_host::compare_bits<T>("Compares", dst, a, nullptr, src1Scalar, cmpMode,
                                  ascendc_host::whole_repeats<T>(count));
}

template <typename T, typename U, bool isSetMask = true>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                     CMPMODE cmpMode, const uint64_t[], uint8_t repeatTime,
                     const UnaryRepeatParams& p)
{
    const ascendc_host::Operand a =
        ascendc_host::operand_of("Compares", src0, p.srcBlkStride, p.srcRepStride, "src0");
    ascendc_host::compare_bits<T>("Compares", dst, a, nullptr, src1Scalar, cmpMode, repeatTime);
}

template <typename T, typename U, bool isSetMask = true>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar,
                     CMPMODE cmpMode, const uint64_t, uint8_t repeatTime,
                     const UnaryRepeatParams& p)
{
    const uint64_t none[2] = {0, 0};
    Compares<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, none, repeatTime, p);
}

// ---- Compare into the CMPMASK register: one repeat, under the mask ----

template <typename T, bool isSetMask = true>
inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    const uint64_t mask[], const BinaryRepeatParams& p)
{
    ascendc_host::set_op_mask<T, isSetMask>("Compare", mask);
    ascendc_host::VectorRegs& r = ascendc_host::vregs("Compare");
    const std::array<ascendc_host::Operand, 2> ops = {
        ascendc_host::operand_of("Compare", src0, p.src0BlkStride, p.src0RepStride, "src0"),
        ascendc_host::operand_of("Compare", src1, p.src1BlkStride, p.src1RepStride, "src1")};
    uint8_t bits[16] = {};
    ascendc_host::vec_each("Compare", ops, ascendc_host::per_repeat<T>(), 1, true,
                           [&](uint32_t, uint32_t i, const std::array<uint64_t, 2>& o) {
                               const T x = *reinterpret_cast<const T*>(ops[0].base + o[0]);
                               const T y = *reinterpret_cast<const T*>(ops[1].base + o[1]);
                               ascendc_host::set_bit(bits, i, ascendc_host::compare<T>(cmpMode, x, y));
                           });
    std::memcpy(r.cmp_mask, bits, sizeof bits);
}

template <typename T, bool isSetMask = true>
inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    const uint64_t mask, const BinaryRepeatParams& p)
{
    ascendc_host::set_op_mask<T, isSetMask>("Compare", mask);
    Compare<T, false>(src0, src1, cmpMode, static_cast<const uint64_t*>(nullptr), p);
}

template <typename T>
inline void GetCmpMask(const LocalTensor<T>& dst)
{
    uint8_t* d = ascendc_host::local_range("GetCmpMask", dst, 16, "dst");
    std::memcpy(d, ascendc_host::vregs("GetCmpMask").cmp_mask, 16);
}

template <typename T>
inline void SetCmpMask(const LocalTensor<T>& src)
{
    const uint8_t* s = ascendc_host::local_range("SetCmpMask", src, 16, "src");
    std::memcpy(ascendc_host::vregs("SetCmpMask").cmp_mask, s, 16);
}

// ---- Select ----

// The "first count elements" forms (modes 0 and 2 with a tensor src1, mode 1 with a scalar).
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE selMode,
                   uint32_t count)
{
    using namespace ascendc_host;
    check_count("Select", dst, count, "dst");
    check_count("Select", src0, count, "src0");
    check_count("Select", src1, count, "src1");
    constexpr uint32_t elems = per_repeat<T>();
    const bool same = selMode == SELMODE::VSEL_CMPMASK_SPR;
    const uint8_t* bits = sel_bits("Select", selMask, same ? elems : count);
    const Operand d = operand_of("Select", dst, 1, 8, "dst");
    const Operand a = operand_of("Select", src0, 1, 8, "src0");
    const Operand b = operand_of("Select", src1, 1, 8, "src1");
    select_count<T>("Select", count, [&](uint32_t repeats) {
        select_walk<T>("Select", d, a, &b, T{}, repeats, false, [&](uint32_t rep, uint32_t i) {
            return get_bit(bits, same ? i : uint64_t{rep} * elems + i);
        });
    });
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, T src1, SELMODE selMode, uint32_t count)
{
    using namespace ascendc_host;
    check_count("Select", dst, count, "dst");
    check_count("Select", src0, count, "src0");
    constexpr uint32_t elems = per_repeat<T>();
    const bool same = selMode == SELMODE::VSEL_CMPMASK_SPR;
    const uint8_t* bits = sel_bits("Select", selMask, same ? elems : count);
    const Operand d = operand_of("Select", dst, 1, 8, "dst");
    const Operand a = operand_of("Select", src0, 1, 8, "src0");
    select_count<T>("Select", count, [&](uint32_t repeats) {
        select_walk<T>("Select", d, a, nullptr, src1, repeats, false,
                       [&](uint32_t rep, uint32_t i) {
                           return get_bit(bits, same ? i : uint64_t{rep} * elems + i);
                       });
    });
}

// The repeat forms with a mask.
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE selMode,
                   const uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams& p)
{
    using namespace ascendc_host;
    set_op_mask<T, isSetMask>("Select", mask);
    constexpr uint32_t elems = per_repeat<T>();
    const bool same = selMode == SELMODE::VSEL_CMPMASK_SPR;
    const uint8_t* bits = sel_bits("Select", selMask, same ? elems : uint64_t{repeatTime} * elems);
    const Operand d = operand_of("Select", dst, p.dstBlkStride, p.dstRepStride, "dst");
    const Operand a = operand_of("Select", src0, p.src0BlkStride, p.src0RepStride, "src0");
    const Operand b = operand_of("Select", src1, p.src1BlkStride, p.src1RepStride, "src1");
    select_walk<T>("Select", d, a, &b, T{}, repeatTime, true, [&](uint32_t rep, uint32_t i) {
        return get_bit(bits, same ? i : uint64_t{rep} * elems + i);
    });
}

template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE selMode,
                   uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& p)
{
    ascendc_host::set_op_mask<T, isSetMask>("Select", mask);
    Select<T, U, false>(dst, selMask, src0, src1, selMode, static_cast<const uint64_t*>(nullptr),
                        repeatTime, p);
}

template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, T src1, SELMODE, const uint64_t mask[],
                   uint8_t repeatTime, const BinaryRepeatParams& p)
{
    using namespace ascendc_host;
    set_op_mask<T, isSetMask>("Select", mask);
    constexpr uint32_t elems = per_repeat<T>();
    const uint8_t* bits = sel_bits("Select", selMask, uint64_t{repeatTime} * elems);
    const Operand d = operand_of("Select", dst, p.dstBlkStride, p.dstRepStride, "dst");
    const Operand a = operand_of("Select", src0, p.src0BlkStride, p.src0RepStride, "src0");
    select_walk<T>("Select", d, a, nullptr, src1, repeatTime, true,
                   [&](uint32_t rep, uint32_t i) { return get_bit(bits, uint64_t{rep} * elems + i); });
}

template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, T src1, SELMODE selMode, uint64_t mask,
                   uint8_t repeatTime, const BinaryRepeatParams& p)
{
    ascendc_host::set_op_mask<T, isSetMask>("Select", mask);
    Select<T, U, false>(dst, selMask, src0, src1, selMode, static_cast<const uint64_t*>(nullptr),
                        repeatTime, p);
}

// Mode 1 without a mask: the scalar is CMPMASK's first element (SetCmpMask), the mask
// SetVectorMask's.
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, uint8_t repeatTime, const BinaryRepeatParams& p)
{
    T scalar;
    std::memcpy(static_cast<void*>(&scalar), ascendc_host::vregs("Select").cmp_mask, sizeof(T));
    Select<T, U, false>(dst, selMask, src0, scalar, SELMODE::VSEL_TENSOR_SCALAR_MODE,
                        static_cast<const uint64_t*>(nullptr), repeatTime, p);
}

// Modes 0 and 2 without a mask: the selection is CMPMASK itself (mode 0) or the UB tensor
// whose address CMPMASK's first 32 bits hold (mode 2).
template <typename T, SELMODE selMode>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, uint8_t repeatTime, const BinaryRepeatParams& p)
{
    using namespace ascendc_host;
    VectorRegs& r = vregs("Select");
    constexpr uint32_t elems = per_repeat<T>();
    const Operand d = operand_of("Select", dst, p.dstBlkStride, p.dstRepStride, "dst");
    const Operand a = operand_of("Select", src0, p.src0BlkStride, p.src0RepStride, "src0");
    const Operand b = operand_of("Select", src1, p.src1BlkStride, p.src1RepStride, "src1");
    if constexpr (selMode == SELMODE::VSEL_TENSOR_TENSOR_MODE) {
        uint32_t addr;
        std::memcpy(&addr, r.cmp_mask, sizeof addr);
        const uint64_t bytes = (uint64_t{repeatTime} * elems + 7) / 8;
        LocalTensor<uint8_t> sel(TPosition::VECCALC, addr, static_cast<uint32_t>(bytes));
        const uint8_t* bits = sel_bits("Select", sel, uint64_t{repeatTime} * elems);
        select_walk<T>("Select", d, a, &b, T{}, repeatTime, true, [&](uint32_t rep, uint32_t i) {
            return get_bit(bits, uint64_t{rep} * elems + i);
        });
    } else {
        static_assert(selMode == SELMODE::VSEL_CMPMASK_SPR,
                      "Select without a selection tensor takes mode 0 or mode 2");
        uint8_t bits[16];
        std::memcpy(bits, r.cmp_mask, sizeof bits);
        select_walk<T>("Select", d, a, &b, T{}, repeatTime, true,
                       [&](uint32_t, uint32_t i) { return get_bit(bits, i); });
    }
}

}  // namespace AscendC

#endif
