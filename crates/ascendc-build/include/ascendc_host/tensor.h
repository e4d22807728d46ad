// AscendC host layer: tensors. `LocalTensor<T>`: a position, a byte address in the core's buffer
// for that position and a length in elements (memory.h), optionally a buffer of a TPipe queue
// whose state (allocated, queued, freed) every access checks. `GlobalTensor<T>`: global memory
// (the launch's buffers), every access checked against the device's live allocations.
// Documentation: docs/zh/api/SIMD-API/基础API/数据结构 (LocalTensor, GlobalTensor, ShapeInfo).
#ifndef ASCENDC_HOST_TENSOR_H
#define ASCENDC_HOST_TENSOR_H

#include "core.h"
#include "memory.h"
#include "types.h"

#include <cstdint>
#include <cstring>

namespace AscendC {

enum class DataFormat : uint8_t {
    ND = 0,
    NZ,
    NCHW,
    NC1HWC0,
    NHWC,
    NCDHW,
    NDC1HWC0,
    FRACTAL_Z_3D,
};

constexpr int32_t K_MAX_SHAPE_DIM = 8;

// The shape a tensor may carry for the APIs that read it.
struct ShapeInfo {
    ShapeInfo() = default;
    ShapeInfo(uint8_t inputShapeDim, const uint32_t inputShape[], uint8_t inputOriginalShapeDim,
              const uint32_t inputOriginalShape[], DataFormat inputFormat)
        : shapeDim(inputShapeDim), originalShapeDim(inputOriginalShapeDim), dataFormat(inputFormat)
    {
        for (int i = 0; i < K_MAX_SHAPE_DIM && i < inputShapeDim; ++i) {
            shape[i] = inputShape[i];
        }
        for (int i = 0; i < K_MAX_SHAPE_DIM && i < inputOriginalShapeDim; ++i) {
            originalShape[i] = inputOriginalShape[i];
        }
    }
    ShapeInfo(uint8_t inputShapeDim, const uint32_t inputShape[], DataFormat inputFormat)
        : ShapeInfo(inputShapeDim, inputShape, inputShapeDim, inputShape, inputFormat)
    {
    }
    ShapeInfo(uint8_t inputShapeDim, const uint32_t inputShape[])
        : ShapeInfo(inputShapeDim, inputShape, DataFormat::ND)
    {
    }
    uint8_t shapeDim = 0;
    uint8_t originalShapeDim = 0;
    uint32_t shape[K_MAX_SHAPE_DIM] = {};
    uint32_t originalShape[K_MAX_SHAPE_DIM] = {};
    DataFormat dataFormat = DataFormat::ND;
};

inline uint64_t GetShapeSize(const ShapeInfo& s)
{
    uint64_t n = 1;
    for (int i = 0; i < s.shapeDim; ++i) {
        n *= s.shape[i];
    }
    return n;
}

}  // namespace AscendC

namespace ascendc_host {

enum class BufState : uint8_t { Free, Allocated, Queued };

// One buffer of local memory handed out by a TPipe: a byte range of a core buffer.
struct LocalBuf {
    AscendC::Hardware hw = AscendC::Hardware::UB;
    uint32_t addr = 0;   // first byte in the buffer
    uint32_t bytes = 0;  // length
    BufState state = BufState::Free;
    const void* owner = nullptr;  // the queue or TBuf it belongs to
};

template <typename T>
inline T load(const void* p)
{
    T v;
    std::memcpy(static_cast<void*>(&v), p, sizeof(T));
    return v;
}

template <typename T>
inline void store(void* p, const T& v)
{
    std::memcpy(p, static_cast<const void*>(&v), sizeof(T));
}

}  // namespace ascendc_host

namespace AscendC {

template <typename T>
class LocalTensor {
public:
    using PrimType = T;

    LocalTensor() = default;

    // The static memory model: `tileSize` elements at byte `addr` of the position's buffer.
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize)
        : pos_(pos), hw_(ascendc_host::hw_of(pos)), addr_(addr), size_(tileSize), valid_(true)
    {
        const uint32_t cap = ascendc_host::hw_capacity(hw_);
        if (hw_ == Hardware::GM) {
            ascendc_host::fault("LocalTensor(TPosition::GM, ...): GM is not a local position");
        }
        if (addr % ascendc_host::kBlockBytes != 0) {
            ascendc_host::fault("LocalTensor(TPosition::%s, %u, %u): the address is not 32-byte "
                                "aligned",
                                ascendc_host::pos_name(pos), addr, tileSize);
        }
        if (static_cast<uint64_t>(addr) + static_cast<uint64_t>(tileSize) * sizeof(T) > cap) {
            ascendc_host::fault("LocalTensor(TPosition::%s, %u, %u): %llu bytes from byte %u run "
                                "past the %u bytes of %s",
                                ascendc_host::pos_name(pos), addr, tileSize,
                                static_cast<unsigned long long>(tileSize) * sizeof(T), addr, cap,
                                ascendc_host::hw_name(hw_));
        }
    }

    // Host layer: `size` elements at byte `offset` of a pipe buffer.
    LocalTensor(ascendc_host::LocalBuf* buf, TPosition pos, uint32_t offset, uint32_t size)
        : buf_(buf), pos_(pos), hw_(buf->hw), addr_(buf->addr + offset), size_(size), valid_(true)
    {
    }

    T GetValue(uint32_t index) const
    {
        return ascendc_host::load<T>(element("LocalTensor::GetValue", index));
    }

    template <typename U>
    void SetValue(uint32_t index, U value) const
    {
        ascendc_host::store<T>(element("LocalTensor::SetValue", index), static_cast<T>(value));
    }

    // A reference to element `index`.
    T& operator()(uint32_t index) const
    {
        return *static_cast<T*>(element("LocalTensor::operator()", index));
    }

    // The tensor starting `offset` elements further.
    LocalTensor operator[](uint32_t offset) const
    {
        if (offset > size_) {
            ascendc_host::fault("LocalTensor::operator[]: offset %u beyond the tensor's %u elements",
                                offset, size_);
        }
        LocalTensor t = *this;
        t.addr_ = addr_ + offset * static_cast<uint32_t>(sizeof(T));
        t.size_ = size_ - offset;
        return t;
    }

    uint32_t GetSize() const { return size_; }

    // Elements in bytes.
    uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }

    void SetSize(uint32_t size)
    {
        if (buf_ != nullptr &&
            static_cast<uint64_t>(size) * sizeof(T) > buf_->bytes - (addr_ - buf_->addr)) {
            ascendc_host::fault("LocalTensor::SetSize: %u elements do not fit in the buffer",
                                size);
        }
        size_ = size;
    }

    void SetBufferLen(uint32_t bytes) { SetSize(bytes / static_cast<uint32_t>(sizeof(T))); }

    template <typename U>
    LocalTensor<U> ReinterpretCast() const
    {
        LocalTensor<U> t;
        if (!valid_) {
            return t;
        }
        t.host_assign(buf_, pos_, hw_, addr_,
                      static_cast<uint32_t>(static_cast<uint64_t>(size_) * sizeof(T) / sizeof(U)),
                      tag_);
        return t;
    }

    // The tensor's byte address in its buffer (as on the device).
    uint64_t GetPhyAddr() const { return addr_; }
    uint64_t GetPhyAddr(uint32_t offset) const { return addr_ + offset * sizeof(T); }

    TPosition GetPosition() const { return pos_; }

    void SetUserTag(TTagType tag) { tag_ = tag; }
    TTagType GetUserTag() const { return tag_; }

    void SetShapeInfo(const ShapeInfo& s) { shape_ = s; }
    ShapeInfo GetShapeInfo() const { return shape_; }

    // The tensor `offset` elements into `src` (its position, buffer and the rest of its length).
    void SetAddrWithOffset(const LocalTensor<T>& src, uint32_t offset) { *this = src[offset]; }

    // Host layer.
    ascendc_host::LocalBuf* host_buf() const { return buf_; }
    Hardware host_hw() const { return hw_; }
    uint32_t host_offset() const { return addr_ - (buf_ != nullptr ? buf_->addr : 0); }
    uint32_t host_addr() const { return addr_; }
    void usable(const char* op) const
    {
        if (!valid_) {
            ascendc_host::fault("%s: the LocalTensor has no buffer (AllocTensor, DeQue, "
                                "TBuf::Get or a LocalMemAllocator gives one)",
                                op);
        }
        if (buf_ != nullptr) {
            if (buf_->state == ascendc_host::BufState::Free) {
                ascendc_host::fault("%s: the LocalTensor's buffer was released by FreeTensor", op);
            }
            if (buf_->state == ascendc_host::BufState::Queued) {
                ascendc_host::fault("%s: the LocalTensor is in a queue (after EnQue, before DeQue)",
                                    op);
            }
        }
    }
    uint8_t* host_data(const char* op) const
    {
        usable(op);
        return ascendc_host::hw_base(hw_, op) + addr_;
    }
    // The bytes from the tensor's address to the end of its buffer (what an instruction may
    // touch at most).
    uint64_t host_room() const { return ascendc_host::hw_capacity(hw_) - addr_; }
    void host_assign(ascendc_host::LocalBuf* buf, TPosition pos, Hardware hw, uint32_t addr,
                     uint32_t size, TTagType tag)
    {
        buf_ = buf;
        pos_ = pos;
        hw_ = hw;
        addr_ = addr;
        size_ = size;
        tag_ = tag;
        valid_ = true;
    }

private:
    void* element(const char* op, uint64_t index) const
    {
        uint8_t* base = host_data(op);
        if (index >= size_) {
            ascendc_host::fault("%s: index %llu out of range [0, %u)", op,
                                static_cast<unsigned long long>(index), size_);
        }
        return base + index * sizeof(T);
    }

    ascendc_host::LocalBuf* buf_ = nullptr;
    TPosition pos_ = TPosition::GM;
    Hardware hw_ = Hardware::UB;
    uint32_t addr_ = 0;  // bytes
    uint32_t size_ = 0;  // elements
    TTagType tag_ = 0;
    bool valid_ = false;
    ShapeInfo shape_;
};

enum class CacheMode : uint8_t {
    CACHE_MODE_DISABLE = 0,
    CACHE_MODE_NORMAL,
    CACHE_MODE_LAST,
    CACHE_MODE_PERSISTENT,
};

enum class CacheRwMode : uint8_t {
    READ = 1,
    WRITE = 2,
    RW = 3,
};

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;

    GlobalTensor() = default;

    // `size` elements at `buffer`; accesses beyond them fail the block.
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t size)
    {
        address_ = buffer;
        size_ = size;
    }

    // Without a size, only the launch's buffers bound the accesses.
    void SetGlobalBuffer(__gm__ T* buffer)
    {
        address_ = buffer;
        size_ = 0;
    }

    T GetValue(uint64_t index) const
    {
        const T* p = element("GlobalTensor::GetValue", index, false);
        return ascendc_host::load<T>(p);
    }

    void SetValue(uint64_t index, T value) const
    {
        ascendc_host::store<T>(const_cast<T*>(element("GlobalTensor::SetValue", index, true)),
                               value);
    }

    // A reference to element `index` (checked as written).
    T& operator()(uint64_t index) const
    {
        return *const_cast<T*>(element("GlobalTensor::operator()", index, true));
    }

    // The tensor starting `offset` elements further.
    GlobalTensor operator[](uint64_t offset) const
    {
        if (size_ != 0 && offset > size_) {
            ascendc_host::fault("GlobalTensor::operator[]: offset %llu beyond the %llu elements "
                                "given to SetGlobalBuffer",
                                static_cast<unsigned long long>(offset),
                                static_cast<unsigned long long>(size_));
        }
        GlobalTensor t = *this;
        t.address_ = address_ + offset;
        t.size_ = size_ == 0 ? 0 : size_ - offset;
        return t;
    }

    uint64_t GetSize() const { return size_; }
    __gm__ T* GetPhyAddr() const { return address_; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return address_ + offset; }

    void SetShapeInfo(const ShapeInfo& s) { shape_ = s; }
    ShapeInfo GetShapeInfo() const { return shape_; }

    template <CacheRwMode rwMode = CacheRwMode::RW>
    void SetL2CacheHint(CacheMode)
    {
    }

    // Host layer: checks `count` elements from the start for a read or a write and returns them.
    T* host_range(const char* op, uint64_t count, bool write) const
    {
        if (address_ == nullptr) {
            ascendc_host::fault("%s: the GlobalTensor has no buffer (SetGlobalBuffer gives one)",
                                op);
        }
        if (size_ != 0 && count > size_) {
            ascendc_host::fault("%s: %llu elements, but SetGlobalBuffer gave %llu", op,
                                static_cast<unsigned long long>(count),
                                static_cast<unsigned long long>(size_));
        }
        ascendc_host::check_gm(op, address_, count * sizeof(T), write);
        return address_;
    }

    // Host layer: checks the byte range [offset, offset + bytes) from the start.
    uint8_t* host_bytes(const char* op, uint64_t offset, uint64_t bytes, bool write) const
    {
        if (address_ == nullptr) {
            ascendc_host::fault("%s: the GlobalTensor has no buffer (SetGlobalBuffer gives one)",
                                op);
        }
        if (size_ != 0 && offset == 0 && bytes % sizeof(T) == 0 && bytes > size_ * sizeof(T)) {
            ascendc_host::fault("%s: %llu elements, but SetGlobalBuffer gave %llu", op,
                                static_cast<unsigned long long>(bytes / sizeof(T)),
                                static_cast<unsigned long long>(size_));
        }
        if (size_ != 0 && offset + bytes > size_ * sizeof(T)) {
            ascendc_host::fault("%s: bytes [%llu, %llu) of a GlobalTensor of %llu elements", op,
                                static_cast<unsigned long long>(offset),
                                static_cast<unsigned long long>(offset + bytes),
                                static_cast<unsigned long long>(size_));
        }
        uint8_t* p = reinterpret_cast<uint8_t*>(address_) + offset;
        ascendc_host::check_gm(op, p, bytes, write);
        return p;
    }

private:
    const T* element(const char* op, uint64_t index, bool write) const
    {
        if (address_ == nullptr) {
            ascendc_host::fault("%s: the GlobalTensor has no buffer (SetGlobalBuffer gives one)",
                                op);
        }
        if (size_ != 0 && index >= size_) {
            ascendc_host::fault("%s: index %llu out of range [0, %llu)", op,
                                static_cast<unsigned long long>(index),
                                static_cast<unsigned long long>(size_));
        }
        ascendc_host::check_gm(op, address_ + index, sizeof(T), write);
        return address_ + index;
    }

    uint64_t size_ = 0;
    ShapeInfo shape_;

public:
    // The first element (a public member on the device too).
    T* address_ = nullptr;
};

}  // namespace AscendC

#endif
