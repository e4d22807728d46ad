// AscendC host layer: data movement between global memory and the core's buffers and within
// them. `DataCopy` (contiguous, in blocks with DataCopyParams, ND to NZ with Nd2NzParams,
// slices with SliceInfo), `DataCopyPad` (byte lengths, padding to 32 bytes, loop mode), and the
// atomic modes of writes to global memory (SetAtomicAdd/Max/Min: the core's writes combine with
// what is there, atomically with respect to the other cores). Every global range is checked
// against the launch's memory, every local range against its buffer; lengths and alignments as
// the device requires. Documentation: docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运 and
// 数据搬运辅助配置接口, 原子操作, 矩阵计算（ISASI）(GM to L1 with ND2NZ).
#ifndef ASCENDC_HOST_COPY_H
#define ASCENDC_HOST_COPY_H

#include "memory.h"
#include "tensor.h"
#include "vector.h"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace AscendC {

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

// DataCopyPad's blocks: `blockLen` in bytes; the global-memory side's stride in bytes, the
// local side's in 32-byte units.
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

// The older form of DataCopyExtParams (16-bit fields).
struct DataCopyPadParams {
    DataCopyPadParams() = default;
    DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value)
    {
    }
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
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

enum class PaddingMode : uint8_t { Normal = 0, Compact };

// ND matrices to the NZ (fractal) layout: see DataCopy(LocalTensor, GlobalTensor, Nd2NzParams).
struct Nd2NzParams {
    Nd2NzParams() = default;
    Nd2NzParams(uint16_t ndNumIn, uint16_t nValueIn, uint16_t dValueIn,
                uint16_t srcNdMatrixStrideIn, uint16_t srcDValueIn, uint16_t dstNzC0StrideIn,
                uint16_t dstNzNStrideIn, uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn),
          srcNdMatrixStride(srcNdMatrixStrideIn), srcDValue(srcDValueIn),
          dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn)
    {
    }
    uint16_t ndNum = 0;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

// DN (column-major) matrices to NZ: the same fields, rows and columns exchanged in the source.
struct Dn2NzParams {
    Dn2NzParams() = default;
    Dn2NzParams(uint16_t dnNumIn, uint16_t dValueIn, uint16_t nValueIn,
                uint16_t srcDnMatrixStrideIn, uint16_t srcNValueIn, uint16_t dstNzC0StrideIn,
                uint16_t dstNzNStrideIn, uint16_t dstNzMatrixStrideIn)
        : dnNum(dnNumIn), dValue(dValueIn), nValue(nValueIn),
          srcDnMatrixStride(srcDnMatrixStrideIn), srcNValue(srcNValueIn),
          dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn)
    {
    }
    uint16_t dnNum = 0;
    uint16_t dValue = 0;
    uint16_t nValue = 0;
    uint16_t srcDnMatrixStride = 0;
    uint16_t srcNValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

// The most dimensions a slice copy takes.
const int32_t K_MAX_DIM = 8;

struct SliceInfo {
    SliceInfo() = default;
    SliceInfo(uint32_t startIndexIn, uint32_t endIndexIn, uint32_t strideIn, uint32_t burstLenIn,
              uint32_t shapeValueIn)
        : startIndex(startIndexIn), endIndex(endIndexIn), stride(strideIn), burstLen(burstLenIn),
          shapeValue(shapeValueIn)
    {
    }
    uint32_t startIndex = 0;
    uint32_t endIndex = 0;
    uint32_t stride = 0;
    uint32_t burstLen = 0;
    uint32_t shapeValue = 0;
};

// Loop mode of DataCopyPad (SetLoopModePara): an outer loop of `loop2Size` and an inner loop of
// `loop1Size` copies, with their source and destination strides in bytes.
struct LoopModeParams {
    uint32_t loop1Size = 1;
    uint32_t loop2Size = 1;
    uint64_t loop1SrcStride = 0;
    uint64_t loop1DstStride = 0;
    uint64_t loop2SrcStride = 0;
    uint64_t loop2DstStride = 0;
};

enum class DataCopyMVType : uint8_t { UB_TO_OUT = 0, OUT_TO_UB = 1 };

}  // namespace AscendC

namespace ascendc_host {

// What atomic mode writes to global memory are in (SetAtomicAdd & co.).
enum class AtomicOp : uint8_t { None = 0, Add, Max, Min };
enum class AtomicType : uint8_t { None = 0, F32, F16, BF16, I32, I16, I8 };

template <typename T>
constexpr AtomicType atomic_type_of()
{
    if constexpr (std::is_same_v<T, float>) {
        return AtomicType::F32;
    } else if constexpr (std::is_same_v<T, half>) {
        return AtomicType::F16;
    } else if constexpr (std::is_same_v<T, bfloat16_t>) {
        return AtomicType::BF16;
    } else if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>) {
        return AtomicType::I32;
    } else if constexpr (std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t>) {
        return AtomicType::I16;
    } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
        return AtomicType::I8;
    } else {
        return AtomicType::None;
    }
}

// Writes to global memory combine under one lock, as the device's atomic unit serialises them.
inline std::mutex& atomic_mutex()
{
    static std::mutex* m = new std::mutex();
    return *m;
}

template <typename T>
inline void combine(uint8_t* d, const uint8_t* s, uint64_t bytes, AtomicOp op)
{
    for (uint64_t i = 0; i + sizeof(T) <= bytes; i += sizeof(T)) {
        T a = load<T>(d + i);
        T b = load<T>(s + i);
        T r;
        switch (op) {
            case AtomicOp::Add:
                if constexpr (std::is_integral_v<T>) {
                    r = static_cast<T>(a + b);
                } else {
                    r = T(compute_t<T>(a) + compute_t<T>(b));
                }
                break;
            case AtomicOp::Max:
                r = compute_t<T>(a) > compute_t<T>(b) ? a : b;
                break;
            default:
                r = compute_t<T>(a) < compute_t<T>(b) ? a : b;
                break;
        }
        store<T>(d + i, r);
    }
}

// Writes `bytes` bytes to global memory (already checked) in the core's atomic mode.
inline void gm_write(uint8_t* dst, const uint8_t* src, uint64_t bytes)
{
    BlockContext* c = current;
    if (c == nullptr || c->memory == nullptr || c->memory->regs.atomic == 0) {
        std::memcpy(dst, src, bytes);
        return;
    }
    const AtomicOp op = static_cast<AtomicOp>(c->memory->regs.atomic);
    const AtomicType t = static_cast<AtomicType>(c->memory->regs.atomic_type);
    std::lock_guard<std::mutex> lk(atomic_mutex());
    switch (t) {
        case AtomicType::F32:
            combine<float>(dst, src, bytes, op);
            break;
        case AtomicType::F16:
            combine<half>(dst, src, bytes, op);
            break;
        case AtomicType::BF16:
            combine<bfloat16_t>(dst, src, bytes, op);
            break;
        case AtomicType::I32:
            combine<int32_t>(dst, src, bytes, op);
            break;
        case AtomicType::I16:
            combine<int16_t>(dst, src, bytes, op);
            break;
        case AtomicType::I8:
            combine<int8_t>(dst, src, bytes, op);
            break;
        default:
            std::memcpy(dst, src, bytes);
            break;
    }
}

template <typename T>
inline void set_atomic(AtomicOp op)
{
    VectorRegs& r = core_memory("SetAtomic").regs;
    r.atomic = static_cast<int>(op);
    r.atomic_type = static_cast<int>(atomic_type_of<T>());
}

template <typename T>
inline void copy_length(const char* op, uint64_t count)
{
    if ((count * sizeof(T)) % kBlockBytes != 0) {
        fault("%s: %llu elements of %zu bytes are not a multiple of 32 bytes (DataCopyPad copies "
              "unaligned lengths)",
              op, static_cast<unsigned long long>(count), sizeof(T));
    }
}

inline uint64_t block_span(uint64_t count, uint64_t len, uint64_t gap)
{
    return count == 0 ? 0 : (count - 1) * (len + gap) + len;
}

}  // namespace ascendc_host

namespace AscendC {

template <typename T>
inline void SetAtomicAdd()
{
    ascendc_host::set_atomic<T>(ascendc_host::AtomicOp::Add);
}
template <typename T>
inline void SetAtomicMax()
{
    ascendc_host::set_atomic<T>(ascendc_host::AtomicOp::Max);
}
template <typename T>
inline void SetAtomicMin()
{
    ascendc_host::set_atomic<T>(ascendc_host::AtomicOp::Min);
}
template <typename T>
inline void SetAtomicType()
{
    ascendc_host::VectorRegs& r = ascendc_host::core_memory("SetAtomicType").regs;
    r.atomic_type = static_cast<int>(ascendc_host::atomic_type_of<T>());
}
inline void SetAtomicNone()
{
    ascendc_host::core_memory("SetAtomicNone").regs.atomic = 0;
}
inline void DisableDmaAtomic() { SetAtomicNone(); }

// ---- global memory to a local buffer, back, and between local buffers ----

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy (GM to local)";
    ascendc_host::copy_length<T>(op, count);
    const uint64_t bytes = uint64_t{count} * sizeof(T);
    if (count > dst.GetSize()) {
        ascendc_host::fault("%s: %u elements, but dst has %u", op, count, dst.GetSize());
    }
    uint8_t* d = ascendc_host::local_range(op, dst, bytes, "dst");
    const uint8_t* s = src.host_bytes(op, 0, bytes, false);
    std::memcpy(d, s, bytes);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy (local to GM)";
    ascendc_host::copy_length<T>(op, count);
    const uint64_t bytes = uint64_t{count} * sizeof(T);
    if (count > src.GetSize()) {
        ascendc_host::fault("%s: %u elements, but src has %u", op, count, src.GetSize());
    }
    const uint8_t* s = ascendc_host::local_range(op, src, bytes, "src");
    uint8_t* d = dst.host_bytes(op, 0, bytes, true);
    ascendc_host::gm_write(d, s, bytes);
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count)
{
    const char* op = "DataCopy (local to local)";
    ascendc_host::copy_length<T>(op, count);
    const uint64_t bytes = uint64_t{count} * sizeof(T);
    uint8_t* d = ascendc_host::local_range(op, dst, bytes, "dst");
    const uint8_t* s = ascendc_host::local_range(op, src, bytes, "src");
    std::memmove(d, s, bytes);
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                     const DataCopyParams& p)
{
    const char* op = "DataCopy (GM to local, DataCopyParams)";
    const uint64_t unit = ascendc_host::kBlockBytes;
    const uint64_t len = uint64_t{p.blockLen} * unit;
    uint8_t* d = ascendc_host::local_range(
        op, dst, ascendc_host::block_span(p.blockCount, len, uint64_t{p.dstStride} * unit), "dst");
    const uint8_t* s = src.host_bytes(
        op, 0, ascendc_host::block_span(p.blockCount, len, uint64_t{p.srcStride} * unit), false);
    for (uint16_t b = 0; b < p.blockCount; ++b) {
        std::memcpy(d + b * (len + uint64_t{p.dstStride} * unit),
                    s + b * (len + uint64_t{p.srcStride} * unit), len);
    }
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                     const DataCopyParams& p)
{
    const char* op = "DataCopy (local to GM, DataCopyParams)";
    const uint64_t unit = ascendc_host::kBlockBytes;
    const uint64_t len = uint64_t{p.blockLen} * unit;
    const uint8_t* s = ascendc_host::local_range(
        op, src, ascendc_host::block_span(p.blockCount, len, uint64_t{p.srcStride} * unit), "src");
    uint8_t* d = dst.host_bytes(
        op, 0, ascendc_host::block_span(p.blockCount, len, uint64_t{p.dstStride} * unit), true);
    for (uint16_t b = 0; b < p.blockCount; ++b) {
        ascendc_host::gm_write(d + b * (len + uint64_t{p.dstStride} * unit),
                               s + b * (len + uint64_t{p.srcStride} * unit), len);
    }
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                     const DataCopyParams& p)
{
    const char* op = "DataCopy (local to local, DataCopyParams)";
    // Into the bias table (C1 to C2) a block is 64 bytes on A2/A3; 32 elsewhere.
    const uint64_t unit = dst.host_hw() == Hardware::BIAS ? 64 : ascendc_host::kBlockBytes;
    const uint64_t len = uint64_t{p.blockLen} * unit;
    uint8_t* d = ascendc_host::local_range(
        op, dst, ascendc_host::block_span(p.blockCount, len, uint64_t{p.dstStride} * unit), "dst");
    const uint8_t* s = ascendc_host::local_range(
        op, src, ascendc_host::block_span(p.blockCount, len, uint64_t{p.srcStride} * unit), "src");
    for (uint16_t b = 0; b < p.blockCount; ++b) {
        std::memmove(d + b * (len + uint64_t{p.dstStride} * unit),
                     s + b * (len + uint64_t{p.srcStride} * unit), len);
    }
}

// GM (ND) to a local buffer (NZ): matrix k, row r, column j lands at
// k * dstNzMatrixStride + (j / C0) * dstNzC0Stride * C0 + r * dstNzNStride * C0 + j % C0 elements
// (C0 = 32 bytes of elements); the columns of the last C0 block beyond dValue are zeros.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                     const Nd2NzParams& p)
{
    const char* op = "DataCopy (GM to local, Nd2NzParams)";
    constexpr uint64_t c0 = 32 / sizeof(T);
    const uint64_t blocks = (uint64_t{p.dValue} + c0 - 1) / c0;
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) {
        return;
    }
    const uint64_t src_elems = uint64_t{p.ndNum - 1u} * p.srcNdMatrixStride +
                               uint64_t{p.nValue - 1u} * p.srcDValue + p.dValue;
    const uint64_t dst_elems = uint64_t{p.ndNum - 1u} * p.dstNzMatrixStride +
                               (blocks - 1) * p.dstNzC0Stride * c0 +
                               uint64_t{p.nValue - 1u} * p.dstNzNStride * c0 + c0;
    uint8_t* d = ascendc_host::local_range(op, dst, dst_elems * sizeof(T), "dst");
    const uint8_t* s = src.host_bytes(op, 0, src_elems * sizeof(T), false);
    T* dt = reinterpret_cast<T*>(d);
    const T* st = reinterpret_cast<const T*>(s);
    for (uint64_t k = 0; k < p.ndNum; ++k) {
        for (uint64_t r = 0; r < p.nValue; ++r) {
            const T* row = st + k * p.srcNdMatrixStride + r * p.srcDValue;
            for (uint64_t b = 0; b < blocks; ++b) {
                T* out = dt + k * p.dstNzMatrixStride + b * p.dstNzC0Stride * c0 +
                         r * p.dstNzNStride * c0;
                for (uint64_t j = 0; j < c0; ++j) {
                    const uint64_t col = b * c0 + j;
                    out[j] = col < p.dValue ? row[col] : T(0);
                }
            }
        }
    }
}

// GM (DN: column-major) to a local buffer (NZ): element (row r, column j) of matrix k is read
// from k * srcDnMatrixStride + j * srcNValue + r, and placed as Nd2Nz places it.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                     const Dn2NzParams& p)
{
    const char* op = "DataCopy (GM to local, Dn2NzParams)";
    constexpr uint64_t c0 = 32 / sizeof(T);
    if (p.dnNum == 0 || p.nValue == 0 || p.dValue == 0) {
        return;
    }
    const uint64_t blocks = (uint64_t{p.dValue} + c0 - 1) / c0;
    const uint64_t src_elems = uint64_t{p.dnNum - 1u} * p.srcDnMatrixStride +
                               uint64_t{p.dValue - 1u} * p.srcNValue + p.nValue;
    const uint64_t dst_elems = uint64_t{p.dnNum - 1u} * p.dstNzMatrixStride +
                               (blocks - 1) * p.dstNzC0Stride * c0 +
                               uint64_t{p.nValue - 1u} * p.dstNzNStride * c0 + c0;
    T* dt = reinterpret_cast<T*>(ascendc_host::local_range(op, dst, dst_elems * sizeof(T), "dst"));
    const T* st = reinterpret_cast<const T*>(src.host_bytes(op, 0, src_elems * sizeof(T), false));
    for (uint64_t k = 0; k < p.dnNum; ++k) {
        for (uint64_t r = 0; r < p.nValue; ++r) {
            for (uint64_t b = 0; b < blocks; ++b) {
                T* out = dt + k * p.dstNzMatrixStride + b * p.dstNzC0Stride * c0 +
                         r * p.dstNzNStride * c0;
                for (uint64_t j = 0; j < c0; ++j) {
                    const uint64_t col = b * c0 + j;
                    out[j] = col < p.dValue ? st[k * p.srcDnMatrixStride + col * p.srcNValue + r]
                                            : T(0);
                }
            }
        }
    }
}

// ---- unaligned copies ----

template <typename T>
inline void SetPadValue(T value)
{
    ascendc_host::VectorRegs& r = ascendc_host::core_memory("SetPadValue").regs;
    r.pad_value = 0;
    std::memcpy(&r.pad_value, &value, sizeof(T));
    r.pad_value_set = true;
}

// Global to local with byte lengths: each block of `blockLen` bytes lands on a 32-byte boundary
// of the local tensor, after `leftPadding` elements, its row filled up to 32 bytes: with
// `paddingValue` when isPad (or SetPadValue's value), with the block's first element when no
// padding is asked for.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                        const DataCopyExtParams& p, const DataCopyPadExtParams<T>& pad)
{
    const char* op = "DataCopyPad (GM to local)";
    const uint64_t unit = ascendc_host::kBlockBytes;
    if (p.blockLen % sizeof(T) != 0) {
        ascendc_host::fault("%s: blockLen %u is not a whole number of %zu-byte elements", op,
                            p.blockLen, sizeof(T));
    }
    if (pad.leftPadding * sizeof(T) > 32 || pad.rightPadding * sizeof(T) > 32) {
        ascendc_host::fault("%s: leftPadding and rightPadding may take 32 bytes each at most", op);
    }
    ascendc_host::VectorRegs& regs = ascendc_host::core_memory(op).regs;
    const ascendc_host::LoopModeRegs lm = regs.loop;
    const uint64_t row = (uint64_t{pad.leftPadding} + pad.rightPadding) * sizeof(T) + p.blockLen;
    const uint64_t row_local = (row + unit - 1) / unit * unit;
    const uint64_t dst_span =
        ascendc_host::block_span(p.blockCount, row_local, uint64_t{p.dstStride} * unit);
    const uint64_t src_span = ascendc_host::block_span(p.blockCount, p.blockLen, p.srcStride);
    const uint64_t dst_total = (lm.loop2 - 1) * lm.loop2_dst + (lm.loop1 - 1) * lm.loop1_dst + dst_span;
    const uint64_t src_total = (lm.loop2 - 1) * lm.loop2_src + (lm.loop1 - 1) * lm.loop1_src + src_span;
    uint8_t* d0 = ascendc_host::local_range(op, dst, dst_total, "dst");
    const uint8_t* s0 = src.host_bytes(op, 0, src_total, false);
    for (uint64_t l2 = 0; l2 < lm.loop2; ++l2) {
        for (uint64_t l1 = 0; l1 < lm.loop1; ++l1) {
            uint8_t* d = d0 + l2 * lm.loop2_dst + l1 * lm.loop1_dst;
            const uint8_t* s = s0 + l2 * lm.loop2_src + l1 * lm.loop1_src;
            for (uint16_t b = 0; b < p.blockCount; ++b) {
                uint8_t* drow = d + b * (row_local + uint64_t{p.dstStride} * unit);
                const uint8_t* srow = s + b * (uint64_t{p.blockLen} + p.srcStride);
                T fill = pad.paddingValue;
                const bool padded = pad.isPad || regs.pad_value_set;
                if (!pad.isPad && regs.pad_value_set) {
                    std::memcpy(&fill, &regs.pad_value, sizeof(T));
                }
                if (!padded && pad.leftPadding == 0 && pad.rightPadding == 0 && p.blockLen > 0) {
                    fill = ascendc_host::load<T>(srow);  // the device's dummy value
                }
                for (uint64_t i = 0; i < row_local / sizeof(T); ++i) {
                    ascendc_host::store<T>(drow + i * sizeof(T), fill);
                }
                std::memcpy(drow + pad.leftPadding * sizeof(T), srow, p.blockLen);
            }
        }
    }
}

template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                        const DataCopyParams& p, const DataCopyPadParams& pad)
{
    T value;
    std::memcpy(&value, &pad.paddingValue, sizeof(T));
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0),
                DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, value));
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
        ascendc_host::fault("%s: blockLen %u is not a whole number of %zu-byte elements", op,
                            p.blockLen, sizeof(T));
    }
    const ascendc_host::LoopModeRegs lm = ascendc_host::core_memory(op).regs.loop;
    const uint64_t row_local = (uint64_t{p.blockLen} + unit - 1) / unit * unit;
    const uint64_t src_span =
        ascendc_host::block_span(p.blockCount, row_local, uint64_t{p.srcStride} * unit);
    const uint64_t dst_span = ascendc_host::block_span(p.blockCount, p.blockLen, p.dstStride);
    const uint64_t src_total = (lm.loop2 - 1) * lm.loop2_src + (lm.loop1 - 1) * lm.loop1_src + src_span;
    const uint64_t dst_total = (lm.loop2 - 1) * lm.loop2_dst + (lm.loop1 - 1) * lm.loop1_dst + dst_span;
    const uint8_t* s0 = ascendc_host::local_range(op, src, src_total, "src");
    uint8_t* d0 = dst.host_bytes(op, 0, dst_total, true);
    for (uint64_t l2 = 0; l2 < lm.loop2; ++l2) {
        for (uint64_t l1 = 0; l1 < lm.loop1; ++l1) {
            const uint8_t* s = s0 + l2 * lm.loop2_src + l1 * lm.loop1_src;
            uint8_t* d = d0 + l2 * lm.loop2_dst + l1 * lm.loop1_dst;
            for (uint16_t b = 0; b < p.blockCount; ++b) {
                ascendc_host::gm_write(d + b * (uint64_t{p.blockLen} + p.dstStride),
                                       s + b * (row_local + uint64_t{p.srcStride} * unit),
                                       p.blockLen);
            }
        }
    }
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                        const DataCopyParams& p)
{
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0));
}

// Loop mode of the next DataCopyPad calls (strides in bytes), until ResetLoopModePara.
inline void SetLoopModePara(const LoopModeParams& p, DataCopyMVType)
{
    ascendc_host::LoopModeRegs& l = ascendc_host::core_memory("SetLoopModePara").regs.loop;
    l.loop1 = std::max<uint32_t>(p.loop1Size, 1);
    l.loop2 = std::max<uint32_t>(p.loop2Size, 1);
    l.loop1_src = p.loop1SrcStride;
    l.loop1_dst = p.loop1DstStride;
    l.loop2_src = p.loop2SrcStride;
    l.loop2_dst = p.loop2DstStride;
}
inline void ResetLoopModePara(DataCopyMVType)
{
    ascendc_host::core_memory("ResetLoopModePara").regs.loop = ascendc_host::LoopModeRegs{};
}

// ---- slices ----

// Elements of `info` (outermost dimension last) in traversal order, as element offsets: each
// dimension from startIndex to endIndex, slices of burstLen blocks (dimension 0) separated by
// `stride` elements; the offsets of dimension d scale by the shapes below it.
template <typename T>
inline std::vector<uint64_t> slice_offsets(const SliceInfo info[], uint32_t dims)
{
    std::vector<uint64_t> out;
    constexpr uint64_t per = 32 / sizeof(T);
    std::vector<uint64_t> scale(dims, 1);
    for (uint32_t d = 1; d < dims; ++d) {
        scale[d] = scale[d - 1] * info[d - 1].shapeValue;
    }
    std::vector<uint64_t> dim0;
    const SliceInfo& s0 = info[0];
    const uint64_t burst = std::max<uint64_t>(1, s0.burstLen) * per;
    for (uint64_t i = s0.startIndex; i <= s0.endIndex;) {
        for (uint64_t j = 0; j < burst && i + j <= s0.endIndex; ++j) {
            dim0.push_back(i + j);
        }
        i += burst + s0.stride;
    }
    // The outer dimensions, innermost first.
    std::vector<uint64_t> bases{0};
    for (uint32_t d = 1; d < dims; ++d) {
        std::vector<uint64_t> next;
        for (uint64_t b : bases) {
            for (uint64_t i = info[d].startIndex; i <= info[d].endIndex; i += 1 + info[d].stride) {
                next.push_back(b + i * scale[d]);
            }
        }
        bases = std::move(next);
    }
    std::sort(bases.begin(), bases.end());
    for (uint64_t b : bases) {
        for (uint64_t e : dim0) {
            out.push_back(b + e);
        }
    }
    return out;
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                     const SliceInfo dstSliceInfo[], const SliceInfo srcSliceInfo[],
                     const uint32_t dimValue = 1)
{
    const char* op = "DataCopy (GM to local, SliceInfo)";
    auto so = slice_offsets<T>(srcSliceInfo, dimValue);
    auto dofs = slice_offsets<T>(dstSliceInfo, dimValue);
    if (so.size() != dofs.size()) {
        ascendc_host::fault("%s: the source slices hold %zu elements, the destination's %zu", op,
                            so.size(), dofs.size());
    }
    if (so.empty()) {
        return;
    }
    const uint64_t smax = *std::max_element(so.begin(), so.end()) + 1;
    const uint64_t dmax = *std::max_element(dofs.begin(), dofs.end()) + 1;
    T* d = reinterpret_cast<T*>(ascendc_host::local_range(op, dst, dmax * sizeof(T), "dst"));
    const T* s = reinterpret_cast<const T*>(src.host_bytes(op, 0, smax * sizeof(T), false));
    for (size_t i = 0; i < so.size(); ++i) {
        d[dofs[i]] = s[so[i]];
    }
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                     const SliceInfo dstSliceInfo[], const SliceInfo srcSliceInfo[],
                     const uint32_t dimValue = 1)
{
    const char* op = "DataCopy (local to GM, SliceInfo)";
    auto so = slice_offsets<T>(srcSliceInfo, dimValue);
    auto dofs = slice_offsets<T>(dstSliceInfo, dimValue);
    if (so.size() != dofs.size()) {
        ascendc_host::fault("%s: the source slices hold %zu elements, the destination's %zu", op,
                            so.size(), dofs.size());
    }
    if (so.empty()) {
        return;
    }
    const uint64_t smax = *std::max_element(so.begin(), so.end()) + 1;
    const uint64_t dmax = *std::max_element(dofs.begin(), dofs.end()) + 1;
    const T* s = reinterpret_cast<const T*>(ascendc_host::local_range(op, src, smax * sizeof(T), "src"));
    uint8_t* d = dst.host_bytes(op, 0, dmax * sizeof(T), true);
    for (size_t i = 0; i < so.size(); ++i) {
        ascendc_host::gm_write(d + dofs[i] * sizeof(T),
                               reinterpret_cast<const uint8_t*>(s + so[i]), sizeof(T));
    }
}

}  // namespace AscendC

#endif
