// AscendC host layer: the runtime part. How a launch runs on the host — every block on a pool
// of threads with its own block index, kernel printf buffered per block and written in block
// order afterwards, failed checks turned into a reported kernel failure — plus the `<<<...>>>`
// launcher that host-side wrappers are rewritten to, and the argument unpacking of the
// generated entries.
//
// Header-only: every kernels library compiles it into its own objects; the inline definitions
// are merged by the linker when several libraries end up in one program.
#ifndef ASCENDC_HOST_RUNTIME_H
#define ASCENDC_HOST_RUNTIME_H

#include <algorithm>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

// Address-space and function qualifiers of AscendC: nothing on the host.
#define __global__
#define __aicore__
#define __gm__
#define __ubuf__

extern "C" {
// A global-memory range a launch may access (a buffer argument of a typed launch).
struct ascendc_host_region {
    const void* base;
    uint64_t bytes;
    uint32_t writable;
};

// One launch: the entry unpacks `args` (one pointer to each argument's bytes) and calls the
// kernel; it is called once per block.
struct ascendc_host_launch {
    const char* kernel;
    void (*entry)(void* const* args);
    void* const* args;
    uint32_t block_dim;
    const ascendc_host_region* regions;
    uint32_t region_count;
    uint32_t check_regions;
};

#ifdef ASCENDC_HOST_ENQUEUE
// Defined by the generated Rust module: enqueues `fn(arg)` on the stream (aclrtLaunchHostFunc).
int ASCENDC_HOST_ENQUEUE(void* stream, void (*fn)(void*), void* arg);
#endif
}

// Index of the block this thread runs, in [0, block_num); and the launch's block count.
inline thread_local int64_t block_idx = 0;
inline thread_local int64_t block_num = 1;

namespace ascendc_host {

// What a failed check throws; the runner catches it at the block boundary.
struct KernelFault {
    std::string message;
};

inline void append_vformat(std::string& out, const char* fmt, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    if (n <= 0) {
        return;
    }
    size_t old = out.size();
    out.resize(old + static_cast<size_t>(n) + 1);
    std::vsnprintf(&out[old], static_cast<size_t>(n) + 1, fmt, args);
    out.resize(old + static_cast<size_t>(n));
}

// Fails the running block with a message (printf format).
[[noreturn]] inline void fault(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fault(const char* fmt, ...)
{
    KernelFault f;
    va_list args;
    va_start(args, fmt);
    append_vformat(f.message, fmt, args);
    va_end(args);
    throw f;
}

// The state of the block a thread is running.
struct BlockContext {
    uint32_t idx = 0;
    uint32_t num = 1;
    std::string out;  // printf output, written after the kernel
    const ascendc_host_region* regions = nullptr;
    uint32_t region_count = 0;
    bool check_regions = false;
};

inline thread_local BlockContext* current = nullptr;

// Fails the block unless [p, p + bytes) lies inside one buffer argument of the launch (and that
// buffer may be written, for a write). Launches without buffer information are not checked.
inline void check_gm(const char* op, const void* p, uint64_t bytes, bool write)
{
    BlockContext* c = current;
    if (c == nullptr || !c->check_regions || bytes == 0) {
        return;
    }
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (uint32_t i = 0; i < c->region_count; ++i) {
        const ascendc_host_region& r = c->regions[i];
        uintptr_t base = reinterpret_cast<uintptr_t>(r.base);
        if (a >= base && a - base <= r.bytes && bytes <= r.bytes - (a - base)) {
            if (write && r.writable == 0) {
                fault("%s: writes global memory of a read-only kernel argument (a `const` "
                      "pointer parameter)",
                      op);
            }
            return;
        }
    }
    fault("%s: global memory [%p, +%llu bytes) is outside every buffer argument of the launch",
          op, p, static_cast<unsigned long long>(bytes));
}

// Kernel printf: into the block's buffer inside a launch, else straight to stdout.
inline void vprint(const char* fmt, va_list args)
{
    if (current != nullptr) {
        append_vformat(current->out, fmt, args);
        return;
    }
    std::string s;
    append_vformat(s, fmt, args);
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
}

// The threads blocks run on: `ASCENDC_HOST_THREADS` in total (default: the machine's hardware
// threads), the launching thread being one of them. Never destroyed, so that no exit-time
// destructor waits for a thread.
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

// Runs every block of a launch. Returns 0, or 1 with a description of the first failed block in
// `message` (NUL-terminated, truncated to `capacity`). Kernel printf output is written to
// stdout afterwards, block 0 first.
inline int run_blocks(const char* kernel, uint32_t block_dim, const std::function<void()>& entry,
                      const ascendc_host_region* regions, uint32_t region_count, bool check,
                      char* message, size_t capacity)
{
    std::vector<std::string> out(block_dim);
    std::vector<std::string> faults(block_dim);
    std::vector<char> failed(block_dim, 0);
    Pool::get().run(block_dim, [&](uint32_t b) {
        BlockContext ctx;
        ctx.idx = b;
        ctx.num = block_dim;
        ctx.regions = regions;
        ctx.region_count = region_count;
        ctx.check_regions = check;
        BlockContext* saved = current;
        int64_t saved_idx = block_idx;
        int64_t saved_num = block_num;
        current = &ctx;
        block_idx = b;
        block_num = block_dim;
        try {
            entry();
        } catch (const KernelFault& f) {
            failed[b] = 1;
            faults[b] = f.message;
        } catch (const std::exception& e) {
            failed[b] = 1;
            faults[b] = std::string("C++ exception: ") + e.what();
        } catch (...) {
            failed[b] = 1;
            faults[b] = "unknown C++ exception";
        }
        current = saved;
        block_idx = saved_idx;
        block_num = saved_num;
        out[b] = std::move(ctx.out);
    });
    std::string all;
    for (const std::string& s : out) {
        all += s;
    }
    if (!all.empty()) {
        std::fwrite(all.data(), 1, all.size(), stdout);
        std::fflush(stdout);
    }
    uint32_t first = block_dim;
    uint32_t count = 0;
    for (uint32_t b = 0; b < block_dim; ++b) {
        if (failed[b] != 0) {
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
                          first, block_dim, faults[first].c_str(), count - 1);
        } else {
            std::snprintf(message, capacity, "block %u of %u: %s", first, block_dim,
                          faults[first].c_str());
        }
    }
    (void)kernel;
    return 1;
}

// A launch of a typed Rust launcher. Called from Rust: nothing may unwind out of it.
inline int run_launch(const ascendc_host_launch& l, char* message, size_t capacity) noexcept
{
    try {
        return run_blocks(l.kernel, l.block_dim, [&] { l.entry(l.args); }, l.regions,
                          l.region_count, l.check_regions != 0, message, capacity);
    } catch (...) {
        // Only the runner's own bookkeeping can get here (out of memory, no thread).
        if (message != nullptr && capacity > 0) {
            std::snprintf(message, capacity, "the host block runner failed (out of memory?)");
        }
        return 1;
    }
}

// The value of a kernel argument from its bytes.
template <typename T>
inline std::remove_cv_t<std::remove_reference_t<T>> arg(const void* p)
{
    std::remove_cv_t<std::remove_reference_t<T>> v;
    std::memcpy(static_cast<void*>(&v), p, sizeof(v));
    return v;
}

// A `kernel<<<blockDim, l2ctrl, stream>>>` launch from C++ code, waiting for its arguments.
struct RawJob {
    std::string kernel;
    uint32_t block_dim;
    std::function<void()> entry;
};

inline void run_raw(RawJob& job)
{
    char message[1024] = {0};
    if (run_blocks(job.kernel.c_str(), job.block_dim, job.entry, nullptr, 0, false, message,
                   sizeof(message)) != 0) {
        std::fprintf(stderr, "ascendc host: kernel %s failed: %s\n", job.kernel.c_str(), message);
        std::fflush(stderr);
    }
}

// Called by the runtime's stream thread: nothing may unwind out of it.
inline void raw_trampoline(void* p) noexcept
{
    RawJob* job = static_cast<RawJob*>(p);
    try {
        run_raw(*job);
    } catch (...) {
        std::fprintf(stderr, "ascendc host: kernel %s: the host block runner failed\n",
                     job->kernel.c_str());
    }
    delete job;
}

template <typename F>
struct Launcher {
    F* kernel;
    const char* name;
    uint32_t block_dim;
    void* stream;

    template <typename... Args>
    void operator()(Args... args) const
    {
        F* k = kernel;
        RawJob* job = new RawJob{name, block_dim, [=]() { k(args...); }};
        if (block_dim == 0) {
            std::fprintf(stderr, "ascendc host: kernel %s launched with blockDim 0: not run\n",
                         name);
            delete job;
            return;
        }
#ifdef ASCENDC_HOST_ENQUEUE
        int rc = ASCENDC_HOST_ENQUEUE(stream, &raw_trampoline, job);
        if (rc != 0) {
            std::fprintf(stderr,
                         "ascendc host: kernel %s not launched: aclrtLaunchHostFunc returned %d\n",
                         name, rc);
            delete job;
        }
#else
        // No stream to order the launch on: run it now.
        (void)stream;
        raw_trampoline(job);
#endif
    }
};

// What `kernel<<<blockDim, l2ctrl, stream>>>` is rewritten to: `launcher(kernel, "kernel",
// blockDim, l2ctrl, stream)`, then called with the kernel's arguments.
template <typename F>
inline Launcher<F> launcher(F* kernel, const char* name, uint32_t block_dim, void* l2ctrl,
                            void* stream)
{
    (void)l2ctrl;
    return Launcher<F>{kernel, name, block_dim, stream};
}

}  // namespace ascendc_host

#endif
