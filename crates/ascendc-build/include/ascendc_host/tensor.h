// AscendC host layer: tensors. `GlobalTensor<T>` over global memory (the launch's buffers) and
// `LocalTensor<T>` over a local (unified) buffer of a `TPipe`, every element access checked:
// an index out of range, a freed buffer, a buffer in a queue or global memory outside the
// launch's buffers fails the block instead of touching memory it does not own.
#ifndef ASCENDC_HOST_TENSOR_H
#define ASCENDC_HOST_TENSOR_H

#include "runtime.h"
#include "types.h"

#include <cstdint>
#include <cstring>

namespace AscendC {

// Logical memory positions. `QuePosition` is the older name.
enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX,
};
using QuePosition = TPosition;

using TTagType = int32_t;

}  // namespace AscendC

namespace ascendc_host {

// Alignment of local tensors and of DataCopy lengths, in bytes.
inline constexpr uint32_t kBlockBytes = 32;

enum class BufState : uint8_t { Free, Allocated, Queued };

// One buffer of local memory handed out by a TPipe.
struct LocalBuf {
    uint8_t* data = nullptr;
    uint32_t bytes = 0;
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

    // Host layer: `size` elements at byte `offset` of `buf`.
    LocalTensor(ascendc_host::LocalBuf* buf, uint32_t offset, uint32_t size)
        : buf_(buf), offset_(offset), size_(size)
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
        void* p = element("LocalTensor::operator()", index);
        if (reinterpret_cast<uintptr_t>(p) % alignof(T) != 0) {
            ascendc_host::fault("LocalTensor::operator(): element %u is not aligned for its type",
                                index);
        }
        return *static_cast<T*>(p);
    }

    // The tensor starting `offset` elements further.
    LocalTensor operator[](uint32_t offset) const
    {
        usable("LocalTensor::operator[]");
        if (offset > size_) {
            ascendc_host::fault("LocalTensor::operator[]: offset %u beyond the tensor's %u elements",
                                offset, size_);
        }
        LocalTensor t = *this;
        t.offset_ = offset_ + offset * static_cast<uint32_t>(sizeof(T));
        t.size_ = size_ - offset;
        return t;
    }

    uint32_t GetSize() const { return size_; }

    // Elements in bytes.
    uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }

    void SetSize(uint32_t size)
    {
        usable("LocalTensor::SetSize");
        if (static_cast<uint64_t>(size) * sizeof(T) > buf_->bytes - offset_) {
            ascendc_host::fault("LocalTensor::SetSize: %u elements do not fit in the buffer",
                                size);
        }
        size_ = size;
    }

    template <typename U>
    LocalTensor<U> ReinterpretCast() const
    {
        return LocalTensor<U>(buf_, offset_,
                              static_cast<uint32_t>(static_cast<uint64_t>(size_) * sizeof(T) /
                                                    sizeof(U)));
    }

    uint64_t GetPhyAddr() const
    {
        return buf_ == nullptr ? 0 : reinterpret_cast<uint64_t>(buf_->data + offset_);
    }

    void SetUserTag(TTagType tag) { tag_ = tag; }
    TTagType GetUserTag() const { return tag_; }

    // Host layer: the buffer, checked to be usable; the first element's address.
    ascendc_host::LocalBuf* host_buf() const { return buf_; }
    uint32_t host_offset() const { return offset_; }
    void usable(const char* op) const
    {
        if (buf_ == nullptr) {
            ascendc_host::fault("%s: the LocalTensor has no buffer (AllocTensor, DeQue or "
                                "TBuf::Get gives one)",
                                op);
        }
        if (buf_->state == ascendc_host::BufState::Free) {
            ascendc_host::fault("%s: the LocalTensor's buffer was released by FreeTensor", op);
        }
        if (buf_->state == ascendc_host::BufState::Queued) {
            ascendc_host::fault("%s: the LocalTensor is in a queue (after EnQue, before DeQue)",
                                op);
        }
    }
    uint8_t* host_data(const char* op) const
    {
        usable(op);
        return buf_->data + offset_;
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
    uint32_t offset_ = 0;  // bytes
    uint32_t size_ = 0;    // elements
    TTagType tag_ = 0;
};

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;

    GlobalTensor() = default;

    // `size` elements at `buffer`; accesses beyond them fail the block.
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t size)
    {
        ptr_ = buffer;
        size_ = size;
    }

    // Without a size, only the launch's buffers bound the accesses.
    void SetGlobalBuffer(__gm__ T* buffer)
    {
        ptr_ = buffer;
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

    // The tensor starting `offset` elements further.
    GlobalTensor operator[](uint64_t offset) const
    {
        if (size_ != 0 && offset > size_) {
            ascendc_host::fault("GlobalTensor::operator[]: offset %llu beyond the %llu elements "
                                "given to SetGlobalBuffer",
                                static_cast<unsigned long long>(offset),
                                static_cast<unsigned long long>(size_));
        }
        GlobalTensor t;
        t.ptr_ = ptr_ + offset;
        t.size_ = size_ == 0 ? 0 : size_ - offset;
        return t;
    }

    uint64_t GetSize() const { return size_; }
    __gm__ T* GetPhyAddr() const { return ptr_; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return ptr_ + offset; }

    // Host layer: checks `count` elements from the start for a read or a write and returns them.
    T* host_range(const char* op, uint64_t count, bool write) const
    {
        if (ptr_ == nullptr) {
            ascendc_host::fault("%s: the GlobalTensor has no buffer (SetGlobalBuffer gives one)",
                                op);
        }
        if (size_ != 0 && count > size_) {
            ascendc_host::fault("%s: %llu elements, but SetGlobalBuffer gave %llu", op,
                                static_cast<unsigned long long>(count),
                                static_cast<unsigned long long>(size_));
        }
        ascendc_host::check_gm(op, ptr_, count * sizeof(T), write);
        return ptr_;
    }

private:
    const T* element(const char* op, uint64_t index, bool write) const
    {
        if (ptr_ == nullptr) {
            ascendc_host::fault("%s: the GlobalTensor has no buffer (SetGlobalBuffer gives one)",
                                op);
        }
        if (size_ != 0 && index >= size_) {
            ascendc_host::fault("%s: index %llu out of range [0, %llu)", op,
                                static_cast<unsigned long long>(index),
                                static_cast<unsigned long long>(size_));
        }
        ascendc_host::check_gm(op, ptr_ + index, sizeof(T), write);
        return ptr_ + index;
    }

    T* ptr_ = nullptr;
    uint64_t size_ = 0;
};

}  // namespace AscendC

#endif
