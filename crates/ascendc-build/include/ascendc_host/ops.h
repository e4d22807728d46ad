// AscendC host layer: instructions. Data movement (`DataCopy`, `DataCopyPad`), the vector
// instructions in their "first `count` elements" form, `Duplicate` and `Cast`, the
// synchronisation calls (no-ops: the host runs a block's stages in program order), `printf`
// and `DumpTensor`. Operand sizes, 32-byte alignment of local operands and global ranges are
// checked; a violation fails the block.
#ifndef ASCENDC_HOST_OPS_H
#define ASCENDC_HOST_OPS_H

#include "pipe.h"

#include <cmath>
#include <cstdarg>
#include <type_traits>

// Pipelines and events of the core, for the synchronisation calls.
enum pipe_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_MTE4,
    PIPE_MTE5,
    PIPE_V2,
    PIPE_FIX,
};

inline void pipe_barrier(pipe_t) {}

namespace ascendc_host {

// The first element of a local operand of `count` elements, checked.
template <typename T>
inline uint8_t* operand(const char* op, const AscendC::LocalTensor<T>& t, int64_t count,
                        const char* role)
{
    uint8_t* p = t.host_data(op);
    if (count < 0) {
        fault("%s: negative count %lld", op, static_cast<long long>(count));
    }
    if (count > static_cast<int64_t>(t.GetSize())) {
        fault("%s: %lld elements, but %s has %u", op, static_cast<long long>(count), role,
              t.GetSize());
    }
    if (t.host_offset() % kBlockBytes != 0) {
        fault("%s: %s does not start on a 32-byte boundary (byte %u of its buffer)", op, role,
              t.host_offset());
    }
    return p;
}

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
            if (a == std::numeric_limits<T>::min() && b == -1) {
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

template <typename T, typename F>
inline void binary(const char* op, const AscendC::LocalTensor<T>& dst,
                   const AscendC::LocalTensor<T>& src0, const AscendC::LocalTensor<T>& src1,
                   int32_t count, F f)
{
    uint8_t* d = operand(op, dst, count, "dst");
    const uint8_t* x = operand(op, src0, count, "src0");
    const uint8_t* y = operand(op, src1, count, "src1");
    for (int32_t i = 0; i < count; ++i) {
        const size_t o = static_cast<size_t>(i) * sizeof(T);
        store<T>(d + o, f(load<T>(x + o), load<T>(y + o)));
    }
}

template <typename T, typename F>
inline void unary(const char* op, const AscendC::LocalTensor<T>& dst,
                  const AscendC::LocalTensor<T>& src, int32_t count, F f)
{
    uint8_t* d = operand(op, dst, count, "dst");
    const uint8_t* x = operand(op, src, count, "src");
    for (int32_t i = 0; i < count; ++i) {
        const size_t o = static_cast<size_t>(i) * sizeof(T);
        store<T>(d + o, f(load<T>(x + o)));
    }
}

template <typename T>
inline void data_copy_length(const char* op, uint64_t count)
{
    if ((count * sizeof(T)) % kBlockBytes != 0) {
        fault("%s: %llu elements of %zu bytes are not a multiple of 32 bytes (DataCopyPad copies "
              "unaligned lengths)",
              op, static_cast<unsigned long long>(count), sizeof(T));
    }
}

}  // namespace ascendc_host

namespace AscendC {

using ascendc_host::fault;

constexpr uint32_t ONE_BLK_SIZE = 32;

inline int64_t GetBlockIdx() { return block_idx; }
inline int64_t GetBlockNum() { return block_num; }
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetTaskRation() { return 1; }

// ---- synchronisation: the host runs each block's stages in program order ----

enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
};

using TEventID = int8_t;

template <pipe_t PIPE>
inline void PipeBarrier()
{
}

template <HardEvent EVENT>
inline void SetFlag(int32_t)
{
}

template <HardEvent EVENT>
inline void WaitFlag(int32_t)
{
}

// ---- data movement ----

// Repeated block copy: `blockCount` blocks of `blockLen` 32-byte units, with gaps of
// `srcStride` / `dstStride` 32-byte units between blocks.
struct DataCopyParams {
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t src_stride, uint16_t dst_stride)
        : blockCount(count), blockLen(len), srcStride(src_stride), dstStride(dst_stride)
    {
    }
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};

// DataCopyPad's blocks: `blockLen` is in bytes; the global-memory side's stride is in bytes,
// the local side's in 32-byte units.
struct DataCopyExtParams {
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src_stride, uint32_t dst_stride,
                      uint32_t reserved)
        : blockCount(count), blockLen(len), srcStride(src_stride), dstStride(dst_stride),
          rsv(reserved)
    {
    }
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value)
    {
    }
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = T();
};

// Global to local: `count` elements (a multiple of 32 bytes).
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy (GM to local)";
    ascendc_host::data_copy_length<T>(op, count);
    uint8_t* d = ascendc_host::operand(op, dst, count, "dst");
    const T* s = src.host_range(op, count, false);
    std::memcpy(d, s, count * sizeof(T));
}

// Local to global: `count` elements (a multiple of 32 bytes).
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy (local to GM)";
    ascendc_host::data_copy_length<T>(op, count);
    const uint8_t* s = ascendc_host::operand(op, src, count, "src");
    T* d = dst.host_range(op, count, true);
    std::memcpy(d, s, count * sizeof(T));
}

// Local to local: `count` elements (a multiple of 32 bytes).
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy (local to local)";
    ascendc_host::data_copy_length<T>(op, count);
    uint8_t* d = ascendc_host::operand(op, dst, count, "dst");
    const uint8_t* s = ascendc_host::operand(op, src, count, "src");
    std::memmove(d, s, count * sizeof(T));
}

namespace detail {
inline uint64_t block_span(uint16_t count, uint64_t len, uint64_t stride)
{
    return count == 0 ? 0 : (static_cast<uint64_t>(count) - 1) * (len + stride) + len;
}
}  // namespace detail

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                     const DataCopyParams& p)
{
    const char* op = "DataCopy (GM to local, DataCopyParams)";
    const uint64_t unit = ascendc_host::kBlockBytes;
    const uint64_t dst_span = detail::block_span(p.blockCount, p.blockLen * unit, p.dstStride * unit);
    const uint64_t src_span = detail::block_span(p.blockCount, p.blockLen * unit, p.srcStride * unit);
    uint8_t* d = ascendc_host::operand(op, dst, static_cast<int64_t>((dst_span + sizeof(T) - 1) / sizeof(T)), "dst");
    const uint8_t* s = reinterpret_cast<const uint8_t*>(
        src.host_range(op, (src_span + sizeof(T) - 1) / sizeof(T), false));
    for (uint16_t b = 0; b < p.blockCount; ++b) {
        std::memcpy(d + b * (p.blockLen + p.dstStride) * unit,
                    s + b * (p.blockLen + p.srcStride) * unit, p.blockLen * unit);
    }
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                     const DataCopyParams& p)
{
    const char* op = "DataCopy (local to GM, DataCopyParams)";
    const uint64_t unit = ascendc_host::kBlockBytes;
    const uint64_t dst_span = detail::block_span(p.blockCount, p.blockLen * unit, p.dstStride * unit);
    const uint64_t src_span = detail::block_span(p.blockCount, p.blockLen * unit, p.srcStride * unit);
    const uint8_t* s = ascendc_host::operand(op, src, static_cast<int64_t>((src_span + sizeof(T) - 1) / sizeof(T)), "src");
    uint8_t* d = reinterpret_cast<uint8_t*>(
        dst.host_range(op, (dst_span + sizeof(T) - 1) / sizeof(T), true));
    for (uint16_t b = 0; b < p.blockCount; ++b) {
        std::memcpy(d + b * (p.blockLen + p.dstStride) * unit,
                    s + b * (p.blockLen + p.srcStride) * unit, p.blockLen * unit);
    }
}

// Global to local with byte lengths: each block of `blockLen` bytes lands on a 32-byte
// boundary of the local tensor, after `leftPadding` elements; with `isPad`, the padding
// elements are set to `paddingValue`.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                        const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad)
{
    const char* op = "DataCopyPad (GM to local)";
    const uint64_t unit = ascendc_host::kBlockBytes;
    if (p.blockLen % sizeof(T) != 0) {
        fault("%s: blockLen %u is not a whole number of %zu-byte elements", op, p.blockLen,
              sizeof(T));
    }
    const uint64_t row = (static_cast<uint64_t>(pad.leftPadding) + pad.rightPadding) * sizeof(T) + p.blockLen;
    const uint64_t row_local = (row + unit - 1) / unit * unit;
    const uint64_t dst_span = detail::block_span(p.blockCount, row_local, p.dstStride * unit);
    const uint64_t src_span = detail::block_span(p.blockCount, p.blockLen, p.srcStride);
    uint8_t* d = ascendc_host::operand(op, dst, static_cast<int64_t>((dst_span + sizeof(T) - 1) / sizeof(T)), "dst");
    const uint8_t* s = reinterpret_cast<const uint8_t*>(
        src.host_range(op, (src_span + sizeof(T) - 1) / sizeof(T), false));
    for (uint16_t b = 0; b < p.blockCount; ++b) {
        uint8_t* drow = d + b * (row_local + p.dstStride * unit);
        if (pad.isPad) {
            for (uint8_t i = 0; i < pad.leftPadding; ++i) {
                ascendc_host::store<T>(drow + i * sizeof(T), pad.paddingValue);
            }
            for (uint8_t i = 0; i < pad.rightPadding; ++i) {
                ascendc_host::store<T>(drow + pad.leftPadding * sizeof(T) + p.blockLen + i * sizeof(T),
                                       pad.paddingValue);
            }
        }
        std::memcpy(drow + pad.leftPadding * sizeof(T), s + b * (p.blockLen + p.srcStride), p.blockLen);
    }
}

// Local to global with byte lengths: blocks of `blockLen` bytes, each starting on a 32-byte
// boundary of the local tensor (plus `srcStride` 32-byte units), `dstStride` bytes apart in
// global memory.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                        const DataCopyExtParams& p)
{
    const char* op = "DataCopyPad (local to GM)";
    const uint64_t unit = ascendc_host::kBlockBytes;
    if (p.blockLen % sizeof(T) != 0) {
        fault("%s: blockLen %u is not a whole number of %zu-byte elements", op, p.blockLen,
              sizeof(T));
    }
    const uint64_t row_local = (p.blockLen + unit - 1) / unit * unit;
    const uint64_t src_span = detail::block_span(p.blockCount, row_local, p.srcStride * unit);
    const uint64_t dst_span = detail::block_span(p.blockCount, p.blockLen, p.dstStride);
    const uint8_t* s = ascendc_host::operand(op, src, static_cast<int64_t>((src_span + sizeof(T) - 1) / sizeof(T)), "src");
    uint8_t* d = reinterpret_cast<uint8_t*>(
        dst.host_range(op, (dst_span + sizeof(T) - 1) / sizeof(T), true));
    for (uint16_t b = 0; b < p.blockCount; ++b) {
        std::memcpy(d + b * (p.blockLen + p.dstStride), s + b * (row_local + p.srcStride * unit),
                    p.blockLen);
    }
}

// ---- vector instructions on the first `count` elements ----

template <typename T>
inline void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count)
{
    ascendc_host::binary("Add", dst, src0, src1, count, ascendc_host::add<T>);
}

template <typename T>
inline void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count)
{
    ascendc_host::binary("Sub", dst, src0, src1, count, ascendc_host::sub<T>);
}

template <typename T>
inline void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count)
{
    ascendc_host::binary("Mul", dst, src0, src1, count, ascendc_host::mul<T>);
}

template <typename T>
inline void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count)
{
    ascendc_host::binary("Div", dst, src0, src1, count, ascendc_host::div<T>);
}

template <typename T>
inline void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count)
{
    ascendc_host::binary("Max", dst, src0, src1, count, ascendc_host::max<T>);
}

template <typename T>
inline void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count)
{
    ascendc_host::binary("Min", dst, src0, src1, count, ascendc_host::min<T>);
}

template <typename T>
inline void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,
                 const int32_t& count)
{
    const T s = scalar;
    ascendc_host::unary("Adds", dst, src, count, [s](T x) { return ascendc_host::add<T>(x, s); });
}

template <typename T>
inline void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,
                 const int32_t& count)
{
    const T s = scalar;
    ascendc_host::unary("Muls", dst, src, count, [s](T x) { return ascendc_host::mul<T>(x, s); });
}

template <typename T>
inline void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,
                 const int32_t& count)
{
    const T s = scalar;
    ascendc_host::unary("Maxs", dst, src, count, [s](T x) { return ascendc_host::max<T>(x, s); });
}

template <typename T>
inline void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,
                 const int32_t& count)
{
    const T s = scalar;
    ascendc_host::unary("Mins", dst, src, count, [s](T x) { return ascendc_host::min<T>(x, s); });
}

template <typename T>
inline void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    static_assert(ascendc_host::is_float_v<T>, "Exp takes floating-point tensors");
    ascendc_host::unary("Exp", dst, src, count,
                        [](T x) { return T(std::exp(ascendc_host::compute_t<T>(x))); });
}

template <typename T>
inline void Ln(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    static_assert(ascendc_host::is_float_v<T>, "Ln takes floating-point tensors");
    ascendc_host::unary("Ln", dst, src, count,
                        [](T x) { return T(std::log(ascendc_host::compute_t<T>(x))); });
}

template <typename T>
inline void Sqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    static_assert(ascendc_host::is_float_v<T>, "Sqrt takes floating-point tensors");
    ascendc_host::unary("Sqrt", dst, src, count,
                        [](T x) { return T(std::sqrt(ascendc_host::compute_t<T>(x))); });
}

template <typename T>
inline void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    ascendc_host::unary("Abs", dst, src, count, [](T x) {
        if constexpr (std::is_integral_v<T>) {
            return x < 0 ? ascendc_host::sub<T>(T(0), x) : x;
        } else {
            return T(std::fabs(ascendc_host::compute_t<T>(x)));
        }
    });
}

template <typename T>
inline void Relu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count)
{
    ascendc_host::unary("Relu", dst, src, count,
                        [](T x) { return ascendc_host::compute_t<T>(x) > 0 ? x : T(0); });
}

// Sets the first `count` elements to `scalar`.
template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalar, const int32_t& count)
{
    uint8_t* d = ascendc_host::operand("Duplicate", dst, count, "dst");
    for (int32_t i = 0; i < count; ++i) {
        ascendc_host::store<T>(d + static_cast<size_t>(i) * sizeof(T), scalar);
    }
}

// Converts the first `count` elements of `src` into `dst`'s type, rounding as `mode` says.
template <typename D, typename S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode,
                 const uint32_t count)
{
    uint8_t* d = ascendc_host::operand("Cast", dst, count, "dst");
    const uint8_t* s = ascendc_host::operand("Cast", src, count, "src");
    for (uint32_t i = 0; i < count; ++i) {
        S v = ascendc_host::load<S>(s + static_cast<size_t>(i) * sizeof(S));
        ascendc_host::store<D>(d + static_cast<size_t>(i) * sizeof(D),
                               ascendc_host::convert<D, S>(v, mode));
    }
}

// ---- debugging ----

// Stops the kernel: the block fails, and with it the launch (an AI Core trap on the device).
[[noreturn]] inline void Trap() { ascendc_host::fault("Trap()"); }

// ---- output ----

// Kernel printf: buffered per block, written after the kernel in block order.
inline void printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void printf(const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    ascendc_host::vprint(fmt, args);
    va_end(args);
}

inline void PRINTF(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void PRINTF(const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    ascendc_host::vprint(fmt, args);
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
