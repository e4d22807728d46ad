// AscendC host layer: memory management and queues. `TPipe` hands out ranges of the core's
// buffers (memory.h; each position's buffer from address 0, each range rounded up to 32
// bytes), `TQue`/`TQueBind` pass them between the copy-in, compute and copy-out stages, `TBuf`
// holds scratch memory. Misuse — no free buffer, an empty DeQue, a tensor freed twice or
// enqueued on the wrong queue, more memory than the buffer has — fails the block.
// Documentation: docs/zh/api/SIMD-API/基础API/资源管理 (TPipe, TQue, TQueBind, TBuf).
#ifndef ASCENDC_HOST_PIPE_H
#define ASCENDC_HOST_PIPE_H

#include "sync.h"
#include "tensor.h"

#include <deque>
#include <memory>
#include <new>
#include <vector>

namespace AscendC {

class TPipe;

template <TPosition SRC, TPosition DST, int32_t DEPTH, auto MASK = 0>
class TQueBind {
public:
    TQueBind() = default;
    TQueBind(const TQueBind&) = delete;
    TQueBind& operator=(const TQueBind&) = delete;

    // A free buffer of the queue, as a tensor of its whole length (its content is garbage).
    template <typename T>
    LocalTensor<T> AllocTensor()
    {
        if (bufs_.empty()) {
            ascendc_host::fault("AllocTensor: the queue has no buffers (TPipe::InitBuffer first)");
        }
        for (ascendc_host::LocalBuf* b : bufs_) {
            if (b->state == ascendc_host::BufState::Free) {
                b->state = ascendc_host::BufState::Allocated;
                return LocalTensor<T>(b, SRC, 0, b->bytes / static_cast<uint32_t>(sizeof(T)));
            }
        }
        ascendc_host::fault("AllocTensor: all %zu buffers of the queue are in use (FreeTensor "
                            "gives them back)",
                            bufs_.size());
    }

    template <typename T>
    void AllocTensor(LocalTensor<T>& tensor)
    {
        tensor = AllocTensor<T>();
    }

    // Puts an allocated tensor of this queue into it; false when the queue already holds
    // DEPTH tensors.
    template <typename T>
    bool EnQue(const LocalTensor<T>& tensor)
    {
        ascendc_host::LocalBuf* b = own("EnQue", tensor.host_buf());
        if (b->state != ascendc_host::BufState::Allocated) {
            ascendc_host::fault("EnQue: the tensor is %s",
                                b->state == ascendc_host::BufState::Queued ? "already in the queue"
                                                                           : "freed");
        }
        if (DEPTH > 0 && queue_.size() >= static_cast<size_t>(DEPTH)) {
            return false;
        }
        b->state = ascendc_host::BufState::Queued;
        queue_.push_back(b);
        return true;
    }

    // Takes the oldest tensor out of the queue. An empty queue would wait forever on the device:
    // here it fails the block.
    template <typename T>
    LocalTensor<T> DeQue()
    {
        if (queue_.empty()) {
            ascendc_host::fault("DeQue: the queue is empty (nothing was EnQue'd); on the device "
                                "this waits forever");
        }
        ascendc_host::LocalBuf* b = queue_.front();
        queue_.pop_front();
        b->state = ascendc_host::BufState::Allocated;
        return LocalTensor<T>(b, DST, 0, b->bytes / static_cast<uint32_t>(sizeof(T)));
    }

    // Gives an allocated tensor's buffer back to the queue.
    template <typename T>
    void FreeTensor(LocalTensor<T>& tensor)
    {
        ascendc_host::LocalBuf* b = own("FreeTensor", tensor.host_buf());
        if (b->state == ascendc_host::BufState::Free) {
            ascendc_host::fault("FreeTensor: the tensor was already freed");
        }
        if (b->state == ascendc_host::BufState::Queued) {
            ascendc_host::fault("FreeTensor: the tensor is in the queue (DeQue it first)");
        }
        b->state = ascendc_host::BufState::Free;
    }

    bool VacantInQue() const { return DEPTH == 0 || queue_.size() < static_cast<size_t>(DEPTH); }
    bool HasTensorInQue() const { return !queue_.empty(); }
    int32_t GetTensorCountInQue() const { return static_cast<int32_t>(queue_.size()); }
    bool HasIdleBuffer() const
    {
        for (ascendc_host::LocalBuf* b : bufs_) {
            if (b->state == ascendc_host::BufState::Free) {
                return true;
            }
        }
        return false;
    }

    // Host layer: the buffer the queue's memory is in, and TPipe::InitBuffer's call.
    static constexpr Hardware host_hw()
    {
        return ascendc_host::hw_of(SRC) == Hardware::GM ? ascendc_host::hw_of(DST)
                                                         : ascendc_host::hw_of(SRC);
    }
    void host_attach(std::vector<ascendc_host::LocalBuf*> bufs)
    {
        if (!bufs_.empty()) {
            ascendc_host::fault("TPipe::InitBuffer: the queue already has buffers");
        }
        for (ascendc_host::LocalBuf* b : bufs) {
            b->owner = this;
        }
        bufs_ = std::move(bufs);
    }

private:
    ascendc_host::LocalBuf* own(const char* op, ascendc_host::LocalBuf* b) const
    {
        if (b == nullptr) {
            ascendc_host::fault("%s: the tensor has no buffer", op);
        }
        if (b->owner != this) {
            ascendc_host::fault("%s: the tensor belongs to another queue or buffer", op);
        }
        return b;
    }

    std::vector<ascendc_host::LocalBuf*> bufs_;
    std::deque<ascendc_host::LocalBuf*> queue_;
};

template <TPosition POS, int32_t DEPTH, auto MASK = 0>
class TQue : public TQueBind<POS, POS, DEPTH, MASK> {};

template <TPosition POS = TPosition::LCM>
class TBuf {
public:
    TBuf() = default;
    TBuf(const TBuf&) = delete;
    TBuf& operator=(const TBuf&) = delete;

    // The whole buffer as a tensor.
    template <typename T>
    LocalTensor<T> Get()
    {
        ascendc_host::LocalBuf* b = buf("TBuf::Get");
        return LocalTensor<T>(b, POS, 0, b->bytes / static_cast<uint32_t>(sizeof(T)));
    }

    // The first `len` elements of the buffer as a tensor.
    template <typename T>
    LocalTensor<T> Get(uint32_t len)
    {
        ascendc_host::LocalBuf* b = buf("TBuf::Get");
        if (static_cast<uint64_t>(len) * sizeof(T) > b->bytes) {
            ascendc_host::fault("TBuf::Get: %u elements of %zu bytes exceed the buffer's %u bytes",
                                len, sizeof(T), b->bytes);
        }
        return LocalTensor<T>(b, POS, 0, len);
    }

    // `size` elements starting `offset` bytes into the buffer.
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t offset)
    {
        ascendc_host::LocalBuf* b = buf("TBuf::GetWithOffset");
        if (static_cast<uint64_t>(offset) + static_cast<uint64_t>(size) * sizeof(T) > b->bytes) {
            ascendc_host::fault("TBuf::GetWithOffset: %u elements at byte %u exceed the buffer's "
                                "%u bytes",
                                size, offset, b->bytes);
        }
        return LocalTensor<T>(b, POS, offset, size);
    }

    // Host layer: the buffer the TBuf's memory is in, and TPipe::InitBuffer's call.
    static constexpr Hardware host_hw() { return ascendc_host::hw_of(POS); }
    void host_attach(ascendc_host::LocalBuf* b)
    {
        if (buf_ != nullptr) {
            ascendc_host::fault("TPipe::InitBuffer: the TBuf already has a buffer");
        }
        b->owner = this;
        b->state = ascendc_host::BufState::Allocated;
        buf_ = b;
    }

private:
    ascendc_host::LocalBuf* buf(const char* op) const
    {
        if (buf_ == nullptr) {
            ascendc_host::fault("%s: the TBuf has no buffer (TPipe::InitBuffer first)", op);
        }
        return buf_;
    }

    ascendc_host::LocalBuf* buf_ = nullptr;
};

class TPipe {
public:
    TPipe()
    {
        if (ascendc_host::current != nullptr) {
            saved_ = ascendc_host::current->pipe;
            ascendc_host::current->pipe = this;
        }
    }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;
    ~TPipe()
    {
        Destroy();
        if (ascendc_host::current != nullptr && ascendc_host::current->pipe == this) {
            ascendc_host::current->pipe = saved_;
        }
    }

    // `num` buffers of `len` bytes for a queue (each takes `len` rounded up to 32 bytes of the
    // queue's buffer).
    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len)
    {
        if (num == 0) {
            ascendc_host::fault("TPipe::InitBuffer: 0 buffers for a queue");
        }
        std::vector<ascendc_host::LocalBuf*> bufs;
        for (uint8_t i = 0; i < num; ++i) {
            bufs.push_back(allocate(Q::host_hw(), len));
        }
        que.host_attach(std::move(bufs));
        return true;
    }

    // One buffer of `len` bytes for a TBuf.
    template <TPosition POS>
    bool InitBuffer(TBuf<POS>& buf, uint32_t len)
    {
        buf.host_attach(allocate(TBuf<POS>::host_hw(), len));
        return true;
    }

    void Init() {}
    void Reset()
    {
        bufs_.clear();
        for (uint32_t& u : used_) {
            u = 0;
        }
    }
    void Destroy() { Reset(); }

    // Event ids for SetFlag/WaitFlag (0..7, as the device's).
    template <HardEvent EVT>
    TEventID FetchEventID()
    {
        return static_cast<TEventID>(next_event_[static_cast<uint32_t>(EVT)]);
    }
    TEventID FetchEventID(HardEvent evt)
    {
        return static_cast<TEventID>(next_event_[static_cast<uint32_t>(evt)]);
    }
    template <HardEvent EVT>
    TEventID AllocEventID()
    {
        uint32_t& n = next_event_[static_cast<uint32_t>(EVT)];
        if (n >= ascendc_host::kEventIds) {
            ascendc_host::fault("TPipe::AllocEventID<HardEvent::%s>: all %u event ids are in use",
                                ascendc_host::event_name(EVT), ascendc_host::kEventIds);
        }
        return static_cast<TEventID>(n++);
    }
    template <HardEvent EVT>
    void ReleaseEventID(TEventID id)
    {
        uint32_t& n = next_event_[static_cast<uint32_t>(EVT)];
        if (n > 0 && static_cast<uint32_t>(id) == n - 1) {
            --n;
        }
    }

    // Bytes handed out so far in the Unified Buffer (or in buffer `hw`).
    uint64_t host_used(Hardware hw = Hardware::UB) const { return used_[static_cast<uint32_t>(hw)]; }

private:
    ascendc_host::LocalBuf* allocate(Hardware hw, uint32_t len)
    {
        if (len == 0) {
            ascendc_host::fault("TPipe::InitBuffer: a buffer of 0 bytes");
        }
        const uint32_t h = static_cast<uint32_t>(hw);
        const uint64_t rounded =
            (static_cast<uint64_t>(len) + ascendc_host::kBlockBytes - 1) /
            ascendc_host::kBlockBytes * ascendc_host::kBlockBytes;
        const uint32_t cap = ascendc_host::hw_capacity(hw);
        if (used_[h] + rounded > cap) {
            ascendc_host::fault("TPipe::InitBuffer: %llu more bytes exceed the %u bytes of %s "
                                "(%u already in use)",
                                static_cast<unsigned long long>(rounded), cap,
                                ascendc_host::hw_name(hw), used_[h]);
        }
        ascendc_host::LocalBuf b;
        b.hw = hw;
        b.addr = used_[h];
        b.bytes = len;
        used_[h] += static_cast<uint32_t>(rounded);
        bufs_.push_back(b);
        return &bufs_.back();
    }

    std::deque<ascendc_host::LocalBuf> bufs_;  // stable addresses
    uint32_t used_[ascendc_host::kHardwareKinds] = {};
    uint32_t next_event_[ascendc_host::kEventKinds] = {};
    void* saved_ = nullptr;
};

// The kernel's TPipe (the one it created last).
inline TPipe* GetTPipePtr()
{
    return static_cast<TPipe*>(ascendc_host::here("GetTPipePtr").pipe);
}

}  // namespace AscendC

// Kernels call it unqualified too.
using AscendC::GetTPipePtr;

#endif
