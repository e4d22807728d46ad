// AscendC host layer: debugging output. `printf`/`PRINTF` (printf formats; `half` must be cast
// to float) and `DumpTensor` write into the core's buffer, written after the launch in block
// order; `Trap()` stops the core (the block fails). Documentation: docs/zh/api/Utils-API/调测接口.
#ifndef ASCENDC_HOST_PRINT_H
#define ASCENDC_HOST_PRINT_H

#include "core.h"
#include "tensor.h"
#include "types.h"

#include <cstdarg>
#include <string>

namespace ascendc_host {

// What the device puts before each printf: "[AIV Block i/n] " (or AIC), i the core's logical
// index, n the cores of its type in the launch.
inline std::string block_prefix()
{
    if (current == nullptr) {
        return std::string();
    }
    char buf[64];
    std::snprintf(buf, sizeof(buf), "[%s Block %u/%u] ", current->type == CoreType::AIC ? "AIC" : "AIV",
                  current->idx, current->num * current->ratio);
    return buf;
}

inline void device_vprintf(const char* fmt, va_list args)
{
    if (current != nullptr) {
        current->out += block_prefix();
    }
    vprint(fmt, args);
}

// A failed `assert` in device code: the device prints where, then stops the core.
[[noreturn]] inline void device_assert_failed(const char* expr, const char* file, int line,
                                              const char* func)
{
    if (current != nullptr) {
        current->out += block_prefix() + "[ASSERT] " + file + ":" + std::to_string(line) + ": " +
                        func + ": Assertion `" + expr + "' failed.\n";
    }
    fault("assert(%s) failed at %s:%d", expr, file, line);
}

}  // namespace ascendc_host

// `assert(expr)` (and `assert(expr, fmt, ...)`) in device code.
#define ASCENDC_HOST_DEVICE_ASSERT(expr, ...)                                                  \
    ((expr) ? static_cast<void>(0)                                                             \
            : ::ascendc_host::device_assert_failed(#expr, __FILE__, __LINE__, __func__))

namespace AscendC {

// Stops the kernel: the block fails, and with it the launch (an AI Core trap on the device).
[[noreturn]] inline void Trap() { ascendc_host::fault("Trap()"); }

// Kernel printf: "[AIV Block i/n] " and the text, buffered per core, written after the launch
// in block order.
inline void printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void printf(const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    ascendc_host::device_vprintf(fmt, args);
    va_end(args);
}

inline void PRINTF(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void PRINTF(const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    ascendc_host::device_vprintf(fmt, args);
    va_end(args);
}

namespace detail {
template <typename T>
inline void dump_values(uint32_t desc, const uint8_t* p, uint32_t count)
{
    std::string line = "DumpTensor: desc=" + std::to_string(desc) + ", " +
                       std::to_string(count) + " element(s):";
    char buf[64];
    for (uint32_t i = 0; i < count; ++i) {
        T v = ascendc_host::load<T>(p + static_cast<size_t>(i) * sizeof(T));
        if constexpr (ascendc_host::is_float_v<T>) {
            std::snprintf(buf, sizeof(buf), " %g", static_cast<double>(ascendc_host::to_double(v)));
        } else if constexpr (std::is_signed_v<T>) {
            std::snprintf(buf, sizeof(buf), " %lld", static_cast<long long>(v));
        } else {
            std::snprintf(buf, sizeof(buf), " %llu", static_cast<unsigned long long>(v));
        }
        line += buf;
    }
    line += "\n";
    printf("%s", line.c_str());
}
}  // namespace detail

// Prints the first `count` elements of a tensor (with the kernel's printf output).
template <typename T>
inline void DumpTensor(const LocalTensor<T>& tensor, uint32_t desc, uint32_t count)
{
    const uint32_t n = count < tensor.GetSize() ? count : tensor.GetSize();
    detail::dump_values<T>(desc, tensor.host_data("DumpTensor"), n);
}

template <typename T>
inline void DumpTensor(const GlobalTensor<T>& tensor, uint32_t desc, uint32_t count)
{
    const T* p = tensor.host_range("DumpTensor", count, false);
    detail::dump_values<T>(desc, reinterpret_cast<const uint8_t*>(p), count);
}

}  // namespace AscendC

#endif
