// AscendC host layer: data types. `half` (IEEE binary16) and `bfloat16_t` as 16-bit storage
// types that convert to and from `float` with round-to-nearest-even, `RoundMode`, and exact
// conversions between formats for every rounding mode of `Cast`.
#ifndef ASCENDC_HOST_TYPES_H
#define ASCENDC_HOST_TYPES_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace AscendC {

// Rounding of a conversion (`Cast`). CAST_NONE rounds like CAST_RINT when the conversion loses
// precision.
enum class RoundMode {
    CAST_NONE = 0,
    CAST_RINT,
    CAST_FLOOR,
    CAST_CEIL,
    CAST_ROUND,
    CAST_TRUNC,
    CAST_ODD,
};

}  // namespace AscendC

namespace ascendc_host {

// Bits of the binary floating-point format with ExpBits exponent and FracBits fraction bits nearest to `v`
// in rounding mode `mode` (overflow gives infinity or the largest finite value, as the mode
// says; NaN stays NaN).
template <int ExpBits, int FracBits>
inline uint32_t encode(double v, AscendC::RoundMode mode)
{
    using AscendC::RoundMode;
    const uint32_t sign = std::signbit(v) ? 1u : 0u;
    const uint32_t sign_bit = sign << (ExpBits + FracBits);
    const int bias = (1 << (ExpBits - 1)) - 1;
    const uint32_t exp_all = (1u << ExpBits) - 1;
    if (std::isnan(v)) {
        return sign_bit | (exp_all << FracBits) | (1u << (FracBits - 1));
    }
    double a = std::fabs(v);
    if (std::isinf(a)) {
        return sign_bit | (exp_all << FracBits);
    }
    if (a == 0.0) {
        return sign_bit;
    }
    int e2 = 0;
    (void)std::frexp(a, &e2);
    int x = e2 - 1;  // a = 1.f * 2^x
    const int emin = 1 - bias;
    if (x < emin) {
        x = emin;  // subnormal
    }
    const double scaled = std::ldexp(a, FracBits - x);  // exact
    const double whole = std::floor(scaled);
    const double frac = scaled - whole;
    uint64_t m = static_cast<uint64_t>(whole);
    bool up = false;
    switch (mode) {
        case RoundMode::CAST_NONE:
        case RoundMode::CAST_RINT:
            up = frac > 0.5 || (frac == 0.5 && (m & 1) != 0);
            break;
        case RoundMode::CAST_ROUND:
            up = frac >= 0.5;
            break;
        case RoundMode::CAST_FLOOR:
            up = frac > 0.0 && sign != 0;
            break;
        case RoundMode::CAST_CEIL:
            up = frac > 0.0 && sign == 0;
            break;
        case RoundMode::CAST_TRUNC:
            break;
        case RoundMode::CAST_ODD:
            if (frac > 0.0) {
                m |= 1;
            }
            break;
    }
    if (up) {
        m += 1;
    }
    if ((m >> (FracBits + 1)) != 0) {
        m >>= 1;
        x += 1;
    }
    if (x > bias) {
        bool to_inf = false;
        switch (mode) {
            case RoundMode::CAST_NONE:
            case RoundMode::CAST_RINT:
            case RoundMode::CAST_ROUND:
                to_inf = true;
                break;
            case RoundMode::CAST_FLOOR:
                to_inf = sign != 0;
                break;
            case RoundMode::CAST_CEIL:
                to_inf = sign == 0;
                break;
            case RoundMode::CAST_TRUNC:
            case RoundMode::CAST_ODD:
                to_inf = false;
                break;
        }
        return to_inf ? (sign_bit | (exp_all << FracBits))
                      : (sign_bit | ((exp_all - 1) << FracBits) | ((1u << FracBits) - 1));
    }
    const uint32_t exp_field = (m >> FracBits) != 0 ? static_cast<uint32_t>(x + bias) : 0u;
    return sign_bit | (exp_field << FracBits) | static_cast<uint32_t>(m & ((1ull << FracBits) - 1));
}

// The value of bits of that format.
template <int ExpBits, int FracBits>
inline double decode(uint32_t bits)
{
    const int bias = (1 << (ExpBits - 1)) - 1;
    const uint32_t exp_all = (1u << ExpBits) - 1;
    const bool negative = ((bits >> (ExpBits + FracBits)) & 1u) != 0;
    const uint32_t exp = (bits >> FracBits) & exp_all;
    const uint32_t man = bits & ((1u << FracBits) - 1);
    double v;
    if (exp == exp_all) {
        v = man != 0 ? std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::infinity();
    } else if (exp == 0) {
        v = std::ldexp(static_cast<double>(man), 1 - bias - FracBits);
    } else {
        v = std::ldexp(static_cast<double>(man | (1u << FracBits)), static_cast<int>(exp) - bias - FracBits);
    }
    return negative ? -v : v;
}

struct FromBits {};

// float to binary16 bits, rounding to nearest even (overflow to infinity, NaN to a quiet NaN of
// the same sign): exact, branch-light, vectorisable.
inline uint16_t f32_to_f16_bits(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    uint32_t h;
    if (x >= 0x47800000u) {
        // |f| >= 65536 (and infinity, NaN): infinity, or a quiet NaN.
        h = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
    } else if (x < 0x38800000u) {
        // Below the smallest normal binary16 (2^-14): a subnormal or zero. Adding 0.5 makes the
        // float's own rounding (to nearest even) round the value to a multiple of 2^-24.
        float v;
        std::memcpy(&v, &x, sizeof(v));
        v += 0.5f;
        uint32_t y;
        std::memcpy(&y, &v, sizeof(y));
        h = y - 0x3f000000u;
    } else {
        // A normal number: rebias the exponent and round the 13 dropped bits to nearest even
        // (a carry into the exponent gives the next binade, or infinity above 65504).
        const uint32_t odd = (x >> 13) & 1u;
        h = (x - 0x38000000u + 0x0fffu + odd) >> 13;
    }
    return static_cast<uint16_t>(h | sign);
}

// binary16 bits to float (exact).
inline float f16_bits_to_f32(uint16_t h)
{
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t man = h & 0x3ffu;
    uint32_t x;
    if (exp == 0x1fu) {
        x = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
        x = sign | ((exp + 112u) << 23) | (man << 13);
    } else {
        // Zero or a subnormal: man * 2^-24 (exact in float).
        float v = static_cast<float>(man) * 5.9604644775390625e-8f;
        std::memcpy(&x, &v, sizeof(x));
        x |= sign;
    }
    float f;
    std::memcpy(&f, &x, sizeof(f));
    return f;
}

// float to bfloat16 bits, rounding to nearest even (NaN stays a quiet NaN).
inline uint16_t f32_to_bf16_bits(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, sizeof(x));
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        return static_cast<uint16_t>((x >> 16) | 0x40u);
    }
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_f32(uint16_t b)
{
    const uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, sizeof(f));
    return f;
}

// Whether an arithmetic value converts to the 16-bit floats through float without a second
// rounding: floats themselves, and integers float holds exactly.
template <typename T>
inline bool via_float(T v)
{
    if constexpr (std::is_same_v<T, float>) {
        return true;
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        const long long x = static_cast<long long>(v);
        return x >= -16777216ll && x <= 16777216ll;
    } else if constexpr (std::is_integral_v<T>) {
        return static_cast<unsigned long long>(v) <= 16777216ull;
    } else {
        return false;
    }
}

}  // namespace ascendc_host

// IEEE binary16, stored as its bits. Converts from any arithmetic type (round to nearest even)
// and to float; arithmetic goes through float.
struct half {
    uint16_t bits = 0;

    half() = default;
    template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    half(T v)
        : bits(ascendc_host::via_float(v)
                   ? ascendc_host::f32_to_f16_bits(static_cast<float>(v))
                   : static_cast<uint16_t>(ascendc_host::encode<5, 10>(
                         static_cast<double>(v), AscendC::RoundMode::CAST_RINT)))
    {
    }
    constexpr half(ascendc_host::FromBits, uint16_t b) : bits(b) {}
    operator float() const { return ascendc_host::f16_bits_to_f32(bits); }

    half& operator+=(float v) { return *this = half(float(*this) + v); }
    half& operator-=(float v) { return *this = half(float(*this) - v); }
    half& operator*=(float v) { return *this = half(float(*this) * v); }
    half& operator/=(float v) { return *this = half(float(*this) / v); }
};

// bfloat16 (8 exponent bits, 7 fraction bits), stored as its bits; like `half`.
struct bfloat16_t {
    uint16_t bits = 0;

    bfloat16_t() = default;
    template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    bfloat16_t(T v)
        : bits(ascendc_host::via_float(v)
                   ? ascendc_host::f32_to_bf16_bits(static_cast<float>(v))
                   : static_cast<uint16_t>(ascendc_host::encode<8, 7>(
                         static_cast<double>(v), AscendC::RoundMode::CAST_RINT)))
    {
    }
    constexpr bfloat16_t(ascendc_host::FromBits, uint16_t b) : bits(b) {}
    operator float() const { return ascendc_host::bf16_bits_to_f32(bits); }

    bfloat16_t& operator+=(float v) { return *this = bfloat16_t(float(*this) + v); }
    bfloat16_t& operator-=(float v) { return *this = bfloat16_t(float(*this) - v); }
    bfloat16_t& operator*=(float v) { return *this = bfloat16_t(float(*this) * v); }
    bfloat16_t& operator/=(float v) { return *this = bfloat16_t(float(*this) / v); }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "16-bit storage types");

namespace AscendC {
// A 4-bit integer type: declared so that code naming it compiles; the host layer's instructions
// do not take it (two of them share a byte on the device).
struct int4b_t {
    int8_t storage = 0;
};
}  // namespace AscendC

namespace ascendc_host {

template <typename T>
struct IsLowFloat : std::false_type {};
template <>
struct IsLowFloat<half> : std::true_type {};
template <>
struct IsLowFloat<bfloat16_t> : std::true_type {};

template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || IsLowFloat<T>::value;

// The type vector instructions compute `T` in: float for the 16-bit floats, else `T`.
template <typename T>
using compute_t = std::conditional_t<IsLowFloat<T>::value, float, T>;

// Any supported type as a double (exact).
template <typename T>
inline double to_double(T v)
{
    if constexpr (IsLowFloat<T>::value) {
        return static_cast<double>(static_cast<float>(v));
    } else {
        return static_cast<double>(v);
    }
}

// `v` converted to `D` with `mode`: floating targets round in that mode; integer targets round
// a floating source in that mode and saturate (NaN gives 0); integer-to-integer conversions
// keep the low bits.
template <typename D, typename S>
inline D convert(S v, AscendC::RoundMode mode)
{
    using AscendC::RoundMode;
    const bool nearest = mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT;
    if constexpr (std::is_same_v<D, S>) {
        return v;
    } else if constexpr ((std::is_same_v<D, half> || std::is_same_v<D, bfloat16_t> ||
                          std::is_same_v<D, float>) &&
                         (std::is_same_v<S, float> || IsLowFloat<S>::value)) {
        // The common conversions between float and the 16-bit floats: bit-exact fast paths.
        const float f = static_cast<float>(v);
        if constexpr (std::is_same_v<D, float>) {
            return f;
        } else {
            if (nearest) {
                return D(f);
            }
            if constexpr (std::is_same_v<D, half>) {
                return half(FromBits{}, static_cast<uint16_t>(encode<5, 10>(f, mode)));
            } else {
                return bfloat16_t(FromBits{}, static_cast<uint16_t>(encode<8, 7>(f, mode)));
            }
        }
    } else if constexpr (std::is_same_v<D, half>) {
        return half(FromBits{}, static_cast<uint16_t>(encode<5, 10>(to_double(v), mode)));
    } else if constexpr (std::is_same_v<D, bfloat16_t>) {
        return bfloat16_t(FromBits{}, static_cast<uint16_t>(encode<8, 7>(to_double(v), mode)));
    } else if constexpr (std::is_same_v<D, float>) {
        uint32_t b = encode<8, 23>(to_double(v), mode);
        float f;
        std::memcpy(&f, &b, sizeof(f));
        return f;
    } else if constexpr (std::is_same_v<D, double>) {
        return to_double(v);
    } else if constexpr (std::is_integral_v<D> && is_float_v<S>) {
        double x = to_double(v);
        if (std::isnan(x)) {
            return 0;
        }
        switch (mode) {
            case RoundMode::CAST_FLOOR:
                x = std::floor(x);
                break;
            case RoundMode::CAST_CEIL:
                x = std::ceil(x);
                break;
            case RoundMode::CAST_ROUND:
                x = std::round(x);
                break;
            case RoundMode::CAST_TRUNC:
                x = std::trunc(x);
                break;
            default:
                x = std::nearbyint(x);
                break;
        }
        if (x <= static_cast<double>(std::numeric_limits<D>::min())) {
            return std::numeric_limits<D>::min();
        }
        if (x >= static_cast<double>(std::numeric_limits<D>::max())) {
            return std::numeric_limits<D>::max();
        }
        return static_cast<D>(x);
    } else {
        static_assert(std::is_integral_v<D> && std::is_integral_v<S>, "unsupported conversion");
        return static_cast<D>(v);
    }
}

}  // namespace ascendc_host

#endif
