// AscendC host layer: the utilities kernels use beside the instructions: type traits
// (`AscendC::Std`, `IsSameType`), integer helpers (`DivCeil`, `CeilDivision`, `AlignUp`) and
// numeric limits. Documentation: docs/zh/api/SIMD-API/基础API/工具接口, 高阶API/数据结构.
#ifndef ASCENDC_HOST_UTILS_H
#define ASCENDC_HOST_UTILS_H

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace AscendC {

// The standard type traits and utilities, as AscendC::Std offers them to device code.
namespace Std {
using namespace std;
}  // namespace Std

template <typename T, typename U>
struct IsSameType {
    static constexpr bool value = false;
};
template <typename T>
struct IsSameType<T, T> {
    static constexpr bool value = true;
};

// Conditional<b, T, F>::type is T when b holds, F otherwise.
template <bool b, typename T, typename F>
struct Conditional {
    using type = T;
};
template <typename T, typename F>
struct Conditional<false, T, F> {
    using type = F;
};

template <typename T>
constexpr T DivCeil(T a, T b)
{
    return (a + b - 1) / b;
}
template <typename T, typename U>
constexpr auto DivCeil(T a, U b) -> std::common_type_t<T, U>
{
    using C = std::common_type_t<T, U>;
    return (static_cast<C>(a) + static_cast<C>(b) - 1) / static_cast<C>(b);
}
template <typename T, typename U>
constexpr auto CeilDivision(T a, U b) -> std::common_type_t<T, U>
{
    return DivCeil(a, b);
}
template <typename T, typename U>
constexpr auto AlignUp(T a, U b) -> std::common_type_t<T, U>
{
    return DivCeil(a, b) * b;
}
template <typename T, typename U>
constexpr auto AlignDown(T a, U b) -> std::common_type_t<T, U>
{
    using C = std::common_type_t<T, U>;
    return static_cast<C>(a) / static_cast<C>(b) * static_cast<C>(b);
}

}  // namespace AscendC

#endif
