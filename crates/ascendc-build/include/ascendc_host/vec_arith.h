// AscendC host layer: element-wise vector instructions — arithmetic (Add, Sub, Mul, Div, Max,
// Min, Exp, Ln, Abs, Sqrt, Rsqrt, Reciprocal, Relu, LeakyRelu, Adds, Muls, Maxs, Mins, Subs,
// Divs), compound (AddRelu, SubRelu, Axpy, MulAddDst, FusedMulAdd, FusedMulAddRelu, MulAddRelu)
// and logic (And, Or, Not, Ands, Ors, ShiftLeft, ShiftRight) — each in its three forms: the
// first `count` elements, and the repeat forms with a bit mask or a length mask and
// Unary/BinaryRepeatParams (vector.h walks the operands). Half and bfloat16 compute in float and
// round once; integers wrap. Documentation: docs/zh/api/SIMD-API/基础API/Memory矢量计算/
// 基础算术, 复合计算, 逻辑计算.
#ifndef ASCENDC_HOST_VEC_ARITH_H
#define ASCENDC_HOST_VEC_ARITH_H

#include "vector.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace ascendc_host {

// An unsigned type at least as wide as int, for wrapping integer arithmetic.
template <typename T>
using wide_unsigned_t =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
inline T add(T a, T b)
{
    if constexpr (std::is_integral_v<T>) {
        using U = wide_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
        return T(compute_t<T>(a) + compute_t<T>(b));
    }
}

template <typename T>
inline T sub(T a, T b)
{
    if constexpr (std::is_integral_v<T>) {
        using U = wide_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    } else {
        return T(compute_t<T>(a) - compute_t<T>(b));
    }
}

template <typename T>
inline T mul(T a, T b)
{
    if constexpr (std::is_integral_v<T>) {
        using U = wide_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
        return T(compute_t<T>(a) * compute_t<T>(b));
    }
}

template <typename T>
inline T div(T a, T b)
{
    if constexpr (std::is_integral_v<T>) {
        if (b == 0) {
            fault("Div: integer division by zero");
        }
        if constexpr (std::is_signed_v<T>) {
            if (a == std::numeric_limits<T>::min() && b == T(-1)) {
                return a;
            }
        }
        return static_cast<T>(a / b);
    } else {
        return T(compute_t<T>(a) / compute_t<T>(b));
    }
}

template <typename T>
inline T max(T a, T b)
{
    return compute_t<T>(a) > compute_t<T>(b) ? a : b;
}

template <typename T>
inline T min(T a, T b)
{
    return compute_t<T>(a) < compute_t<T>(b) ? a : b;
}

template <typename T>
inline T relu(T a)
{
    return compute_t<T>(a) > compute_t<T>(T(0)) ? a : T(0);
}

template <typename T>
inline T absolute(T a)
{
    if constexpr (std::is_integral_v<T>) {
        return a < 0 ? sub<T>(T(0), a) : a;
    } else {
        return T(std::fabs(compute_t<T>(a)));
    }
}

template <typename T>
inline constexpr bool float_only()
{
    return is_float_v<T>;
}

// ---- the engines: one per operand count, each in the count and the repeat form ----

// dst = f(src0, src1) element-wise: `f(D& d, A a, B b)`.
template <bool isSetMask, typename D, typename A, typename B, typename F>
inline void binary_count(const char* op, const AscendC::LocalTensor<D>& dst,
                         const AscendC::LocalTensor<A>& a, const AscendC::LocalTensor<B>& b,
                         int64_t count, F f)
{
    if constexpr (isSetMask) {
        check_count(op, dst, count, "dst");
        check_count(op, a, count, "src0");
        check_count(op, b, count, "src1");
    }
    constexpr uint32_t sz = std::max({sizeof(D), sizeof(A), sizeof(B)});
    constexpr uint32_t elems = 256 / sz;
    const std::array<Operand, 3> ops = {operand_of(op, dst, 1, elems * sizeof(D) / 32, "dst"),
                                        operand_of(op, a, 1, elems * sizeof(A) / 32, "src0"),
                                        operand_of(op, b, 1, elems * sizeof(B) / 32, "src1")};
    D* d = reinterpret_cast<D*>(ops[0].base);
    const A* x = reinterpret_cast<const A*>(ops[1].base);
    const B* y = reinterpret_cast<const B*>(ops[2].base);
    vec_count<isSetMask>(
        op, ops, elems, count,
        [&](uint64_t n) {
            for (uint64_t i = 0; i < n; ++i) {
                f(d[i], x[i], y[i]);
            }
        },
        [&](const std::array<uint64_t, 3>& o) {
            f(*reinterpret_cast<D*>(ops[0].base + o[0]),
              *reinterpret_cast<const A*>(ops[1].base + o[1]),
              *reinterpret_cast<const B*>(ops[2].base + o[2]));
        });
}

template <typename D, typename A, typename B, typename F>
inline void binary_repeat(const char* op, const AscendC::LocalTensor<D>& dst,
                          const AscendC::LocalTensor<A>& a, const AscendC::LocalTensor<B>& b,
                          uint32_t repeat, const AscendC::BinaryRepeatParams& p, F f)
{
    constexpr uint32_t sz = std::max({sizeof(D), sizeof(A), sizeof(B)});
    constexpr uint32_t elems = 256 / sz;
    const std::array<Operand, 3> ops = {
        operand_of(op, dst, p.dstBlkStride, p.dstRepStride, "dst"),
        operand_of(op, a, p.src0BlkStride, p.src0RepStride, "src0"),
        operand_of(op, b, p.src1BlkStride, p.src1RepStride, "src1")};
    D* d = reinterpret_cast<D*>(ops[0].base);
    const A* x = reinterpret_cast<const A*>(ops[1].base);
    const B* y = reinterpret_cast<const B*>(ops[2].base);
    vec_walk(
        op, ops, elems, repeat,
        [&](uint64_t n) {
            for (uint64_t i = 0; i < n; ++i) {
                f(d[i], x[i], y[i]);
            }
        },
        [&](const std::array<uint64_t, 3>& o) {
            f(*reinterpret_cast<D*>(ops[0].base + o[0]),
              *reinterpret_cast<const A*>(ops[1].base + o[1]),
              *reinterpret_cast<const B*>(ops[2].base + o[2]));
        });
}

// dst = f(src) element-wise: `f(D& d, A a)`.
template <bool isSetMask, typename D, typename A, typename F>
inline void unary_count(const char* op, const AscendC::LocalTensor<D>& dst,
                        const AscendC::LocalTensor<A>& a, int64_t count, F f)
{
    if constexpr (isSetMask) {
        check_count(op, dst, count, "dst");
        check_count(op, a, count, "src");
    }
    constexpr uint32_t sz = std::max(sizeof(D), sizeof(A));
    constexpr uint32_t elems = 256 / sz;
    const std::array<Operand, 2> ops = {operand_of(op, dst, 1, elems * sizeof(D) / 32, "dst"),
                                        operand_of(op, a, 1, elems * sizeof(A) / 32, "src")};
    D* d = reinterpret_cast<D*>(ops[0].base);
    const A* x = reinterpret_cast<const A*>(ops[1].base);
    vec_count<isSetMask>(
        op, ops, elems, count,
        [&](uint64_t n) {
            for (uint64_t i = 0; i < n; ++i) {
                f(d[i], x[i]);
            }
        },
        [&](const std::array<uint64_t, 2>& o) {
            f(*reinterpret_cast<D*>(ops[0].base + o[0]),
              *reinterpret_cast<const A*>(ops[1].base + o[1]));
        });
}

template <typename D, typename A, typename F>
inline void unary_repeat(const char* op, const AscendC::LocalTensor<D>& dst,
                         const AscendC::LocalTensor<A>& a, uint32_t repeat,
                         const AscendC::UnaryRepeatParams& p, F f)
{
    constexpr uint32_t sz = std::max(sizeof(D), sizeof(A));
    constexpr uint32_t elems = 256 / sz;
    const std::array<Operand, 2> ops = {
        operand_of(op, dst, p.dstBlkStride, p.dstRepStride, "dst"),
        operand_of(op, a, p.srcBlkStride, p.srcRepStride, "src")};
    D* d = reinterpret_cast<D*>(ops[0].base);
    const A* x = reinterpret_cast<const A*>(ops[1].base);
    vec_walk(
        op, ops, elems, repeat,
        [&](uint64_t n) {
            for (uint64_t i = 0; i < n; ++i) {
                f(d[i], x[i]);
            }
        },
        [&](const std::array<uint64_t, 2>& o) {
            f(*reinterpret_cast<D*>(ops[0].base + o[0]),
              *reinterpret_cast<const A*>(ops[1].base + o[1]));
        });
}

}  // namespace ascendc_host

// The three forms of a two-operand instruction; `BODY` computes `d` from `a` and `b` (of type T).
#define ASCENDC_HOST_BINARY_OP(NAME, BODY)                                                          \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                         \
                     const LocalTensor<T>& src1, const int32_t& count)                              \
    {                                                                                               \
        ascendc_host::binary_count<isSetMask>(#NAME, dst, src0, src1, count,                        \
                                              [](T& d, T a, T b) { BODY; });                        \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                         \
                     const LocalTensor<T>& src1, const uint64_t mask[], const uint8_t repeatTime,   \
                     const BinaryRepeatParams& repeatParams)                                        \
    {                                                                                               \
        ascendc_host::set_op_mask<T, isSetMask>(#NAME, mask);                                       \
        ascendc_host::binary_repeat(#NAME, dst, src0, src1, repeatTime, repeatParams,               \
                                    [](T& d, T a, T b) { BODY; });                                  \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0,                         \
                     const LocalTensor<T>& src1, uint64_t mask, const uint8_t repeatTime,           \
                     const BinaryRepeatParams& repeatParams)                                        \
    {                                                                                               \
        ascendc_host::set_op_mask<T, isSetMask>(#NAME, mask);                                       \
        ascendc_host::binary_repeat(#NAME, dst, src0, src1, repeatTime, repeatParams,               \
                                    [](T& d, T a, T b) { BODY; });                                  \
    }

// The three forms of a one-operand instruction; `BODY` computes `d` from `a`.
#define ASCENDC_HOST_UNARY_OP(NAME, CHECK, BODY)                                                    \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)    \
    {                                                                                               \
        CHECK;                                                                                      \
        ascendc_host::unary_count<isSetMask>(#NAME, dst, src, count, [](T& d, T a) { BODY; });      \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],   \
                     const uint8_t repeatTime, const UnaryRepeatParams& repeatParams)               \
    {                                                                                               \
        CHECK;                                                                                      \
        ascendc_host::set_op_mask<T, isSetMask>(#NAME, mask);                                       \
        ascendc_host::unary_repeat(#NAME, dst, src, repeatTime, repeatParams,                       \
                                   [](T& d, T a) { BODY; });                                        \
    }                                                                                               \
    template <typename T, bool isSetMask = true>                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,           \
                     const uint8_t repeatTime, const UnaryRepeatParams& repeatParams)               \
    {                                                                                               \
        CHECK;                                                                                      \
        ascendc_host::set_op_mask<T, isSetMask>(#NAME, mask);                                       \
        ascendc_host::unary_repeat(#NAME, dst, src, repeatTime, repeatParams,                       \
                                   [](T& d, T a) { BODY; });                                        \
    }

// The three forms of an instruction with a tensor and a scalar; `BODY` computes `d` from `a` and
// the scalar `s` (of the tensor's type).
#define ASCENDC_HOST_SCALAR_OP(NAME, BODY)                                                          \
    template <typename T, bool isSetMask = true, typename U>                                        \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,    \
                     const int32_t& count)                                                          \
    {                                                                                               \
        const T s = static_cast<T>(scalarValue);                                                    \
        ascendc_host::unary_count<isSetMask>(#NAME, dst, src, count, [s](T& d, T a) { BODY; });     \
    }                                                                                               \
    template <typename T, bool isSetMask = true, typename U>                                        \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,    \
                     const uint64_t mask[], const uint8_t repeatTime,                               \
                     const UnaryRepeatParams& repeatParams)                                         \
    {                                                                                               \
        const T s = static_cast<T>(scalarValue);                                                    \
        ascendc_host::set_op_mask<T, isSetMask>(#NAME, mask);                                       \
        ascendc_host::unary_repeat(#NAME, dst, src, repeatTime, repeatParams,                       \
                                   [s](T& d, T a) { BODY; });                                       \
    }                                                                                               \
    template <typename T, bool isSetMask = true, typename U>                                        \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& scalarValue,    \
                     uint64_t mask, const uint8_t repeatTime,                                       \
                     const UnaryRepeatParams& repeatParams)                                         \
    {                                                                                               \
        const T s = static_cast<T>(scalarValue);                                                    \
        ascendc_host::set_op_mask<T, isSetMask>(#NAME, mask);                                       \
        ascendc_host::unary_repeat(#NAME, dst, src, repeatTime, repeatParams,                       \
                                   [s](T& d, T a) { BODY; });                                       \
    }

#define ASCENDC_HOST_FLOAT_ONLY(NAME)                                                               \
    static_assert(ascendc_host::is_float_v<T>, #NAME " takes floating-point tensors")
#define ASCENDC_HOST_INT_ONLY(NAME)                                                                 \
    static_assert(std::is_integral_v<T>, #NAME " takes integer tensors")

namespace AscendC {

using ascendc_host::compute_t;

ASCENDC_HOST_BINARY_OP(Add, d = ascendc_host::add<T>(a, b))
ASCENDC_HOST_BINARY_OP(Sub, d = ascendc_host::sub<T>(a, b))
ASCENDC_HOST_BINARY_OP(Mul, d = ascendc_host::mul<T>(a, b))
ASCENDC_HOST_BINARY_OP(Div, d = ascendc_host::div<T>(a, b))
ASCENDC_HOST_BINARY_OP(Max, d = ascendc_host::max<T>(a, b))
ASCENDC_HOST_BINARY_OP(Min, d = ascendc_host::min<T>(a, b))
ASCENDC_HOST_BINARY_OP(AddRelu, d = ascendc_host::relu<T>(ascendc_host::add<T>(a, b)))
ASCENDC_HOST_BINARY_OP(SubRelu, d = ascendc_host::relu<T>(ascendc_host::sub<T>(a, b)))
// dst = src0 * src1 + dst.
ASCENDC_HOST_BINARY_OP(MulAddDst,
                       d = T(compute_t<T>(a) * compute_t<T>(b) + compute_t<T>(d)))
// dst = src0 * dst + src1.
ASCENDC_HOST_BINARY_OP(FusedMulAdd,
                       d = T(compute_t<T>(a) * compute_t<T>(d) + compute_t<T>(b)))
ASCENDC_HOST_BINARY_OP(FusedMulAddRelu,
                       d = ascendc_host::relu<T>(
                           T(compute_t<T>(a) * compute_t<T>(d) + compute_t<T>(b))))
// dst = relu(src0 * src1 + dst).
ASCENDC_HOST_BINARY_OP(MulAddRelu,
                       d = ascendc_host::relu<T>(
                           T(compute_t<T>(a) * compute_t<T>(b) + compute_t<T>(d))))
ASCENDC_HOST_BINARY_OP(And, d = static_cast<T>(a & b))
ASCENDC_HOST_BINARY_OP(Or, d = static_cast<T>(a | b))

ASCENDC_HOST_UNARY_OP(Exp, ASCENDC_HOST_FLOAT_ONLY(Exp), d = T(std::exp(compute_t<T>(a))))
ASCENDC_HOST_UNARY_OP(Ln, ASCENDC_HOST_FLOAT_ONLY(Ln), d = T(std::log(compute_t<T>(a))))
ASCENDC_HOST_UNARY_OP(Sqrt, ASCENDC_HOST_FLOAT_ONLY(Sqrt), d = T(std::sqrt(compute_t<T>(a))))
ASCENDC_HOST_UNARY_OP(Rsqrt, ASCENDC_HOST_FLOAT_ONLY(Rsqrt),
                      d = T(compute_t<T>(1) / std::sqrt(compute_t<T>(a))))
ASCENDC_HOST_UNARY_OP(Reciprocal, ASCENDC_HOST_FLOAT_ONLY(Reciprocal),
                      d = T(compute_t<T>(1) / compute_t<T>(a)))
ASCENDC_HOST_UNARY_OP(Abs, (void)0, d = ascendc_host::absolute<T>(a))
ASCENDC_HOST_UNARY_OP(Relu, (void)0, d = ascendc_host::relu<T>(a))
ASCENDC_HOST_UNARY_OP(Not, ASCENDC_HOST_INT_ONLY(Not), d = static_cast<T>(~a))

ASCENDC_HOST_SCALAR_OP(Adds, d = ascendc_host::add<T>(a, s))
ASCENDC_HOST_SCALAR_OP(Subs, d = ascendc_host::sub<T>(a, s))
ASCENDC_HOST_SCALAR_OP(Muls, d = ascendc_host::mul<T>(a, s))
ASCENDC_HOST_SCALAR_OP(Divs, d = ascendc_host::div<T>(a, s))
ASCENDC_HOST_SCALAR_OP(Maxs, d = ascendc_host::max<T>(a, s))
ASCENDC_HOST_SCALAR_OP(Mins, d = ascendc_host::min<T>(a, s))
ASCENDC_HOST_SCALAR_OP(Ands, d = static_cast<T>(a & s))
ASCENDC_HOST_SCALAR_OP(Ors, d = static_cast<T>(a | s))
ASCENDC_HOST_SCALAR_OP(LeakyRelu,
                       d = compute_t<T>(a) >= compute_t<T>(T(0))
                               ? a
                               : T(compute_t<T>(a) * compute_t<T>(s)))
// Shifts: signed right shifts are arithmetic, left shifts wrap.
ASCENDC_HOST_SCALAR_OP(ShiftLeft, d = static_cast<T>(static_cast<ascendc_host::wide_unsigned_t<T>>(a)
                                                     << static_cast<unsigned>(s)))
ASCENDC_HOST_SCALAR_OP(ShiftRight, d = static_cast<T>(a >> static_cast<unsigned>(s)))

// dst = src * scalar + dst; `dst` may be wider than `src` (half into float).
template <typename T, typename U, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                 const int32_t& count)
{
    const compute_t<U> s = static_cast<compute_t<U>>(scalarValue);
    ascendc_host::unary_count<isSetMask>("Axpy", dst, src, count, [s](T& d, U a) {
        d = T(compute_t<T>(compute_t<U>(a) * s) + compute_t<T>(d));
    });
}
template <typename T, typename U, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                 const uint64_t mask[], const uint8_t repeatTime,
                 const UnaryRepeatParams& repeatParams)
{
    const compute_t<U> s = static_cast<compute_t<U>>(scalarValue);
    ascendc_host::set_op_mask<T, isSetMask>("Axpy", mask);
    ascendc_host::unary_repeat("Axpy", dst, src, repeatTime, repeatParams, [s](T& d, U a) {
        d = T(compute_t<T>(compute_t<U>(a) * s) + compute_t<T>(d));
    });
}
template <typename T, typename U, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue,
                 uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& repeatParams)
{
    const compute_t<U> s = static_cast<compute_t<U>>(scalarValue);
    ascendc_host::set_op_mask<T, isSetMask>("Axpy", mask);
    ascendc_host::unary_repeat("Axpy", dst, src, repeatTime, repeatParams, [s](T& d, U a) {
        d = T(compute_t<T>(compute_t<U>(a) * s) + compute_t<T>(d));
    });
}

}  // namespace AscendC

#endif
