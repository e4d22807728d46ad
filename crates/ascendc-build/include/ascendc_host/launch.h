// AscendC host layer: `kernel<<<numBlocks, dyn, stream>>>(args...)` from host code. ascendc-build
// rewrites each such launch into `::ascendc_host::launch<kernel>(numBlocks, dyn, stream)(args...)`:
// the call converts the arguments to the kernel's parameter types, packs them (each at the next
// multiple of 8 bytes, the layout of aclrtKernelArgsAppend) and hands them to the launch hook
// `ASCENDC_HOST_ENQUEUE` (the generated Rust module of a kernels library, or the runtime glue of
// a C++ program, acl_launch.h), which launches the kernel's entry in the binary through the
// runtime on `stream`. Its value is the runtime's code (0 when the launch was enqueued), as the
// real launch expression has one. Without a hook (C++ tests of kernels), the blocks run at once
// on a pool of threads (`run_blocks`).
#ifndef ASCENDC_HOST_LAUNCH_H
#define ASCENDC_HOST_LAUNCH_H

#include "entry.h"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#ifdef ASCENDC_HOST_GLUE_LAUNCH
extern "C" {
// A C++ program's launch of kernel `name` of this unit's binary (acl_launch.h): as
// ASCENDC_HOST_ENQUEUE, with each parameter's size.
int ASCENDC_HOST_GLUE_LAUNCH(void* stream, const char* name, uint32_t blocks, const void* args,
                             size_t bytes, const uint32_t* sizes, uint32_t count);
}
#endif

#ifdef ASCENDC_HOST_ENQUEUE
extern "C" {
// Launches kernel `name` of the binary on `stream` with `blocks` blocks and the packed arguments;
// returns the runtime's code.
int ASCENDC_HOST_ENQUEUE(void* stream, const char* name, uint32_t blocks, const void* args,
                         size_t bytes);
}
#endif

namespace ascendc_host {

// The threads of the stand-alone runner: `ASCENDC_HOST_THREADS` in total (default: the
// machine's hardware threads), the launching thread being one of them. Never destroyed, so that
// no exit-time destructor waits for a thread. (Launches through a runtime run on the runtime's
// threads instead.)
class Pool {
public:
    static Pool& get()
    {
        static Pool* pool = new Pool();
        return *pool;
    }

    unsigned threads() const { return workers_ + 1; }

    // Runs body(0) ... body(total - 1), on the pool and on the calling thread; returns when all
    // have returned.
    void run(uint32_t total, const std::function<void(uint32_t)>& body)
    {
        if (workers_ == 0 || total <= 1) {
            for (uint32_t i = 0; i < total; ++i) {
                body(i);
            }
            return;
        }
        Job job{&body, total};
        std::unique_lock<std::mutex> lk(m_);
        jobs_.push_back(&job);
        work_.notify_all();
        while (job.next < job.total) {
            uint32_t i = job.next++;
            if (job.next >= job.total) {
                jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
            }
            lk.unlock();
            body(i);
            lk.lock();
            ++job.done;
        }
        done_.wait(lk, [&] { return job.done == job.total; });
    }

private:
    struct Job {
        const std::function<void(uint32_t)>* body;
        uint32_t total;
        uint32_t next = 0;
        uint32_t done = 0;
    };

    Pool()
    {
        unsigned n = std::thread::hardware_concurrency();
        if (const char* env = std::getenv("ASCENDC_HOST_THREADS")) {
            long v = std::strtol(env, nullptr, 10);
            if (v >= 1 && v <= 1024) {
                n = static_cast<unsigned>(v);
            }
        }
        workers_ = n > 1 ? n - 1 : 0;
        for (unsigned i = 0; i < workers_; ++i) {
            std::thread([this] { work(); }).detach();
        }
    }

    void work()
    {
        std::unique_lock<std::mutex> lk(m_);
        for (;;) {
            work_.wait(lk, [&] { return !jobs_.empty(); });
            Job* job = jobs_.front();
            uint32_t i = job->next++;
            if (job->next >= job->total) {
                jobs_.pop_front();
            }
            lk.unlock();
            (*job->body)(i);
            lk.lock();
            if (++job->done == job->total) {
                done_.notify_all();
            }
        }
    }

    unsigned workers_ = 0;
    std::mutex m_;
    std::condition_variable work_;
    std::condition_variable done_;
    std::deque<Job*> jobs_;
};

// The stand-alone runner, for C++ tests of kernels without a runtime: runs every block of a
// launch as one vector core on the pool. Returns 0, or 1 with a description of the first failed
// block in `message` (NUL-terminated, truncated to `capacity`). Kernel printf output is written
// to stdout afterwards, block 0 first. With `check`, global memory outside `regions` fails the
// block.
inline int run_blocks(const char* kernel, uint32_t block_dim, const std::function<void()>& entry,
                      const ascendc_host_region* regions, uint32_t region_count, bool check,
                      char* message, size_t capacity)
{
    (void)kernel;
    std::vector<CoreResult> results(block_dim);
    Pool::get().run(block_dim, [&](uint32_t b) {
        BlockContext proto;
        proto.idx = b;
        proto.block = b;
        proto.num = block_dim;
        proto.regions = regions;
        proto.region_count = region_count;
        proto.check_regions = check;
        run_core(proto, results[b], entry);
    });
    std::string all;
    for (const CoreResult& r : results) {
        all += r.out;
    }
    if (!all.empty()) {
        std::fwrite(all.data(), 1, all.size(), stdout);
        std::fflush(stdout);
    }
    uint32_t first = block_dim;
    uint32_t count = 0;
    for (uint32_t b = 0; b < block_dim; ++b) {
        if (results[b].rc != 0) {
            first = std::min(first, b);
            ++count;
        }
    }
    if (count == 0) {
        return 0;
    }
    if (message != nullptr && capacity > 0) {
        if (count > 1) {
            std::snprintf(message, capacity, "block %u of %u: %s (and %u more block(s) failed)",
                          first, block_dim, results[first].fault.message.c_str(), count - 1);
        } else {
            std::snprintf(message, capacity, "block %u of %u: %s", first, block_dim,
                          results[first].fault.message.c_str());
        }
    }
    return 1;
}

// Appends the value of one argument to a packed argument buffer, at the next 8-byte slot.
template <typename P, typename V>
inline void pack(std::vector<uint8_t>& buf, const V& v)
{
    using D = std::decay_t<P>;
    const D value = v;
    size_t at = static_cast<size_t>(next_slot(buf.size()));
    buf.resize(at + sizeof(D));
    std::memcpy(buf.data() + at, static_cast<const void*>(&value), sizeof(D));
}

// The stream of a launch: `aclrtStream`, `nullptr` or `0` (the default stream).
inline void* launch_stream(void* s) { return s; }
inline void* launch_stream(std::nullptr_t) { return nullptr; }
inline void* launch_stream(int s) { return s == 0 ? nullptr : reinterpret_cast<void*>(s); }
inline void* launch_stream(long s) { return s == 0 ? nullptr : reinterpret_cast<void*>(s); }

template <auto K, typename F = decltype(K)>
struct KernelCall;

// A `<<<...>>>` launch of kernel K, waiting for its arguments.
template <auto K, typename... P>
struct KernelCall<K, void (*)(P...)> {
    KernelCall(uint32_t b, void* s) : blocks(b), stream(s) {}
    uint32_t blocks;
    void* stream;

    int32_t operator()(P... args) const
    {
        (void)registrar<K>::done;
        if (blocks == 0) {
            std::fprintf(stderr, "ascendc host: kernel %s launched with 0 blocks: not run\n",
                         kernel_name<K>());
            return 100000;  // ACL_ERROR_INVALID_PARAM
        }
#if defined(ASCENDC_HOST_GLUE_LAUNCH) || defined(ASCENDC_HOST_ENQUEUE)
        std::vector<uint8_t> buf;
        (pack<P>(buf, args), ...);
#ifdef ASCENDC_HOST_GLUE_LAUNCH
        static const uint32_t sizes[sizeof...(P) + 1] = {param_abi<P>::size..., 0};
        int rc = ASCENDC_HOST_GLUE_LAUNCH(stream, kernel_name<K>(), blocks, buf.data(), buf.size(),
                                          sizes, static_cast<uint32_t>(sizeof...(P)));
#else
        int rc = ASCENDC_HOST_ENQUEUE(stream, kernel_name<K>(), blocks, buf.data(), buf.size());
#endif
        if (rc != 0) {
            std::fprintf(stderr, "ascendc host: kernel %s not launched: the runtime returned %d\n",
                         kernel_name<K>(), rc);
        }
        return rc;
#else
        // No runtime to order the launch on: run it now.
        char message[1024] = {0};
        if (run_blocks(kernel_name<K>(), blocks, [&]() { K(args...); }, nullptr, 0, false,
                       message, sizeof(message)) != 0) {
            std::fprintf(stderr, "ascendc host: kernel %s failed: %s\n", kernel_name<K>(),
                         message);
            return 507035;  // ACL_ERROR_RT_VECTOR_CORE_EXCEPTION
        }
        return 0;
#endif
    }
};

template <auto K, typename... P>
struct KernelCall<K, void (*)(P...) noexcept> : KernelCall<K, void (*)(P...)> {
    using KernelCall<K, void (*)(P...)>::KernelCall;
};

// What `kernel<<<numBlocks, dyn, stream>>>` is rewritten to: `dyn` (dynamic UB bytes, or the
// older l2ctrl pointer) is not used on the host.
template <auto K, typename D = std::nullptr_t, typename S = std::nullptr_t>
inline KernelCall<K> launch(uint32_t blocks, D dyn = D(), S stream = S())
{
    (void)dyn;
    return KernelCall<K>{blocks, launch_stream(stream)};
}

}  // namespace ascendc_host

#endif
