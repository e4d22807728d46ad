// AscendC host layer: memory management and queues. `TPipe` hands out local buffers (within
// the unified buffer's capacity), `TQue`/`TQueBind` pass them between the copy-in, compute and
// copy-out stages, `TBuf` holds scratch memory. Misuse — no free buffer, an empty DeQue, a
// tensor freed twice or enqueued on the wrong queue — fails the block.
#ifndef ASCENDC_HOST_PIPE_H
#define ASCENDC_HOST_PIPE_H

#include "tensor.h"

#include <deque>
#include <memory>
#include <new>
#include <vector>

// Bytes of local memory a TPipe may hand out (the unified buffer of the core): 192 KiB unless
// the build defines another size.
#ifndef ASCENDC_HOST_UB_BYTES
#define ASCENDC_HOST_UB_BYTES (192u * 1024u)
#endif

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
                return LocalTensor<T>(b, 0, b->bytes / static_cast<uint32_t>(sizeof(T)));
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
        return LocalTensor<T>(b, 0, b->bytes / static_cast<uint32_t>(sizeof(T)));
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

    // Host layer: called by TPipe::InitBuffer.
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
        return LocalTensor<T>(b, 0, b->bytes / static_cast<uint32_t>(sizeof(T)));
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
        return LocalTensor<T>(b, 0, len);
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
        return LocalTensor<T>(b, offset, size);
    }

    // Host layer: called by TPipe::InitBuffer.
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
    TPipe() = default;
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;
    ~TPipe() { Destroy(); }

    // `num` buffers of `len` bytes for a queue (each takes `len` rounded up to 32 bytes of the
    // local memory).
    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len)
    {
        if (num == 0) {
            ascendc_host::fault("TPipe::InitBuffer: 0 buffers for a queue");
        }
        std::vector<ascendc_host::LocalBuf*> bufs;
        for (uint8_t i = 0; i < num; ++i) {
            bufs.push_back(allocate(len));
        }
        que.host_attach(std::move(bufs));
        return true;
    }

    // One buffer of `len` bytes for a TBuf.
    template <TPosition POS>
    bool InitBuffer(TBuf<POS>& buf, uint32_t len)
    {
        buf.host_attach(allocate(len));
        return true;
    }

    void Init() {}
    void Reset() {}
    void Destroy()
    {
        for (ascendc_host::LocalBuf& b : bufs_) {
            ::operator delete[](b.data, std::align_val_t(ascendc_host::kBlockBytes));
            b.data = nullptr;
        }
        bufs_.clear();
        used_ = 0;
    }

    // Bytes handed out so far.
    uint64_t host_used() const { return used_; }

private:
    ascendc_host::LocalBuf* allocate(uint32_t len)
    {
        if (len == 0) {
            ascendc_host::fault("TPipe::InitBuffer: a buffer of 0 bytes");
        }
        const uint64_t rounded =
            (static_cast<uint64_t>(len) + ascendc_host::kBlockBytes - 1) /
            ascendc_host::kBlockBytes * ascendc_host::kBlockBytes;
        if (used_ + rounded > ASCENDC_HOST_UB_BYTES) {
            ascendc_host::fault("TPipe::InitBuffer: %llu more bytes exceed the %u bytes of local "
                                "memory (%llu already in use)",
                                static_cast<unsigned long long>(rounded),
                                static_cast<unsigned>(ASCENDC_HOST_UB_BYTES),
                                static_cast<unsigned long long>(used_));
        }
        used_ += rounded;
        ascendc_host::LocalBuf b;
        b.data = static_cast<uint8_t*>(
            ::operator new[](rounded, std::align_val_t(ascendc_host::kBlockBytes)));
        // Fresh local memory holds garbage on the device: all ones (NaN for floats) here.
        std::memset(b.data, 0xFF, rounded);
        b.bytes = len;
        bufs_.push_back(b);
        return &bufs_.back();
    }

    std::deque<ascendc_host::LocalBuf> bufs_;  // stable addresses
    uint64_t used_ = 0;
};

}  // namespace AscendC

#endif
