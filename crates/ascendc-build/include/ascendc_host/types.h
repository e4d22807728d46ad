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

// Bits of the binary floating-point format with E exponent and M fraction bits nearest to `v`
// in rounding mode `mode` (overflow gives infinity or the largest finite value, as the mode
// says; NaN stays NaN).
template <int E, int M>
inline uint32_t encode(double v, AscendC::RoundMode mode)
{
    using AscendC::RoundMode;
    const uint32_t sign = std::signbit(v) ? 1u : 0u;
    const uint32_t sign_bit = sign << (E + M);
    const int bias = (1 << (E - 1)) - 1;
    const uint32_t exp_all = (1u << E) - 1;
    if (std::isnan(v)) {
        return sign_bit | (exp_all << M) | (1u << (M - 1));
    }
    double a = std::fabs(v);
    if (std::isinf(a)) {
        return sign_bit | (exp_all << M);
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
    const double scaled = std::ldexp(a, M - x);  // exact
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
    if ((m >> (M + 1)) != 0) {
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
        return to_inf ? (sign_bit | (exp_all << M))
                      : (sign_bit | ((exp_all - 1) << M) | ((1u << M) - 1));
    }
    const uint32_t exp_field = (m >> M) != 0 ? static_cast<uint32_t>(x + bias) : 0u;
    return sign_bit | (exp_field << M) | static_cast<uint32_t>(m & ((1ull << M) - 1));
}

// The value of bits of that format.
template <int E, int M>
inline double decode(uint32_t bits)
{
    const int bias = (1 << (E - 1)) - 1;
    const uint32_t exp_all = (1u << E) - 1;
    const bool negative = ((bits >> (E + M)) & 1u) != 0;
    const uint32_t exp = (bits >> M) & exp_all;
    const uint32_t man = bits & ((1u << M) - 1);
    double v;
    if (exp == exp_all) {
        v = man != 0 ? std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::infinity();
    } else if (exp == 0) {
        v = std::ldexp(static_cast<double>(man), 1 - bias - M);
    } else {
        v = std::ldexp(static_cast<double>(man | (1u << M)), static_cast<int>(exp) - bias - M);
    }
    return negative ? -v : v;
}

struct FromBits {};

}  // namespace ascendc_host

// IEEE binary16, stored as its bits. Converts from any arithmetic type (round to nearest even)
// and to float; arithmetic goes through float.
struct half {
    uint16_t bits = 0;

    half() = default;
    template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    half(T v)
        : bits(static_cast<uint16_t>(
              ascendc_host::encode<5, 10>(static_cast<double>(v), AscendC::RoundMode::CAST_RINT)))
    {
    }
    constexpr half(ascendc_host::FromBits, uint16_t b) : bits(b) {}
    operator float() const { return static_cast<float>(ascendc_host::decode<5, 10>(bits)); }

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
        : bits(static_cast<uint16_t>(
              ascendc_host::encode<8, 7>(static_cast<double>(v), AscendC::RoundMode::CAST_RINT)))
    {
    }
    constexpr bfloat16_t(ascendc_host::FromBits, uint16_t b) : bits(b) {}
    operator float() const { return static_cast<float>(ascendc_host::decode<8, 7>(bits)); }

    bfloat16_t& operator+=(float v) { return *this = bfloat16_t(float(*this) + v); }
    bfloat16_t& operator-=(float v) { return *this = bfloat16_t(float(*this) - v); }
    bfloat16_t& operator*=(float v) { return *this = bfloat16_t(float(*this) * v); }
    bfloat16_t& operator/=(float v) { return *this = bfloat16_t(float(*this) / v); }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "16-bit storage types");

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
    if constexpr (std::is_same_v<D, S>) {
        return v;
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
