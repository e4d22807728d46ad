// AscendC host layer: the runtime part. The state of the block a thread runs (index, printf
// buffer, the launch's global memory), failed checks turned into a reported block failure, the
// entry side of the kernel binary ABI (ascendc_host/binary.h: a runtime calls a kernel's entry
// once per block), the `<<<...>>>` launcher that host-side wrappers are rewritten to, and a
// stand-alone block runner for C++ tests of kernels without a runtime.
//
// Header-only: every kernels library compiles it into its own objects; the inline definitions
// are merged by the linker when several libraries end up in one program.
#ifndef ASCENDC_HOST_RUNTIME_H
#define ASCENDC_HOST_RUNTIME_H

#include "binary.h"

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
// A global-memory range a block may access (a buffer argument of a launch).
struct ascendc_host_region {
    const void* base;
    uint64_t bytes;
    uint32_t writable;
};

#ifdef ASCENDC_HOST_ENQUEUE
// Defined by the generated Rust module: launches kernel `name` of this library on `stream` with
// `blocks` blocks and the packed arguments (ascendc_host/binary.h layout) through the runtime.
// Returns the runtime's code.
int ASCENDC_HOST_ENQUEUE(void* stream, const char* name, uint32_t blocks, const void* args,
                         size_t bytes);
#endif
}

// Index of the block this thread runs, in [0, block_num); and the launch's block count.
inline thread_local int64_t block_idx = 0;
inline thread_local int64_t block_num = 1;

namespace ascendc_host {

// What a failed check throws; the block's entry catches it at the block boundary.
struct KernelFault {
    std::string message;
    uint32_t kind = ASCENDC_HOST_FAULT_KERNEL;
    uint64_t addr = 0;
    uint64_t bytes = 0;
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

[[noreturn]] inline void vfault(uint32_t kind, uint64_t addr, uint64_t bytes, const char* fmt,
                                va_list args)
{
    KernelFault f;
    f.kind = kind;
    f.addr = addr;
    f.bytes = bytes;
    append_vformat(f.message, fmt, args);
    throw f;
}

// Fails the running block with a message (printf format).
[[noreturn]] inline void fault(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fault(const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vfault(ASCENDC_HOST_FAULT_KERNEL, 0, 0, fmt, args);
}

// Fails the running block for an access to global memory no live allocation holds.
[[noreturn]] inline void memory_fault(const void* p, uint64_t bytes, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
[[noreturn]] inline void memory_fault(const void* p, uint64_t bytes, const char* fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vfault(ASCENDC_HOST_FAULT_MEMORY, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)), bytes,
           fmt, args);
}

// The state of the block a thread is running.
struct BlockContext {
    uint32_t idx = 0;
    uint32_t num = 1;
    std::string out;  // printf output, handed over after the block
    const ascendc_host_region* regions = nullptr;
    uint32_t region_count = 0;
    // Stand-alone runner: accesses outside `regions` fail (a runtime's launch asks `rt`).
    bool check_regions = false;
    // The runtime's block record (launches through a runtime), else null.
    const ascendc_host_block* rt = nullptr;
    // The core type the kernel declared (KERNEL_TASK_TYPE_DEFAULT).
    uint32_t core = ASCENDC_HOST_CORE_VECTOR;
};

inline thread_local BlockContext* current = nullptr;

// Fails the block unless [p, p + bytes) may be accessed: inside a buffer argument of the launch
// that may be written, for a write (a `const` pointer parameter may not); otherwise, in a launch
// through a runtime, inside a live allocation the runtime knows. Nothing is checked outside a
// block, nor in a stand-alone launch without buffer information.
inline void check_gm(const char* op, const void* p, uint64_t bytes, bool write)
{
    BlockContext* c = current;
    if (c == nullptr || bytes == 0 || (!c->check_regions && c->rt == nullptr)) {
        return;
    }
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    bool read_only = false;
    for (uint32_t i = 0; i < c->region_count; ++i) {
        const ascendc_host_region& r = c->regions[i];
        uintptr_t base = reinterpret_cast<uintptr_t>(r.base);
        if (a >= base && a - base <= r.bytes && bytes <= r.bytes - (a - base)) {
            if (!write || r.writable != 0) {
                return;
            }
            read_only = true;
        }
    }
    if (read_only) {
        fault("%s: writes global memory of a read-only kernel argument (a `const` pointer "
              "parameter)",
              op);
    }
    if (c->rt != nullptr) {
        const void* base = nullptr;
        uint64_t len = 0;
        uint32_t writable = 0;
        if (c->rt->find_memory(c->rt->runtime, p, &base, &len, &writable) == 0) {
            uintptr_t b = reinterpret_cast<uintptr_t>(base);
            if (a >= b && bytes <= len - (a - b)) {
                if (write && writable == 0) {
                    fault("%s: writes read-only global memory at %p", op, p);
                }
                return;
            }
            memory_fault(p, bytes,
                         "%s: global memory [%p, +%llu bytes) runs past the end of the allocation "
                         "of %llu bytes at %p",
                         op, p, static_cast<unsigned long long>(bytes),
                         static_cast<unsigned long long>(len), base);
        }
        memory_fault(p, bytes,
                     "%s: global memory [%p, +%llu bytes) is outside every live allocation of "
                     "the device",
                     op, p, static_cast<unsigned long long>(bytes));
    }
    memory_fault(p, bytes,
                 "%s: global memory [%p, +%llu bytes) is outside every buffer argument of the "
                 "launch",
                 op, p, static_cast<unsigned long long>(bytes));
}

// KERNEL_TASK_TYPE_DEFAULT inside a kernel: records the core type its failures are reported for.
inline void declare_core(int kernel_type)
{
    if (current != nullptr) {
        // KERNEL_TYPE_AIV_ONLY (0) runs on vector cores; every other type uses the cube core.
        current->core = kernel_type == 0 ? ASCENDC_HOST_CORE_VECTOR : ASCENDC_HOST_CORE_CUBE;
    }
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

// Runs `body` as block `idx` of `num` with the given buffer arguments; returns 0, or 1 with the
// failure in `f`. The block's printf output is appended to `out`.
template <typename Body>
inline int run_block(uint32_t idx, uint32_t num, const ascendc_host_region* regions,
                     uint32_t region_count, bool check, const ascendc_host_block* rt,
                     std::string& out, KernelFault& f, uint32_t& core, Body&& body) noexcept
{
    BlockContext ctx;
    ctx.idx = idx;
    ctx.num = num;
    ctx.regions = regions;
    ctx.region_count = region_count;
    ctx.check_regions = check;
    ctx.rt = rt;
    BlockContext* saved = current;
    int64_t saved_idx = block_idx;
    int64_t saved_num = block_num;
    current = &ctx;
    block_idx = idx;
    block_num = num;
    int rc = 0;
    try {
        body();
    } catch (KernelFault& e) {
        f = std::move(e);
        rc = 1;
    } catch (const std::exception& e) {
        f.kind = ASCENDC_HOST_FAULT_KERNEL;
        f.message = std::string("C++ exception: ") + e.what();
        rc = 1;
    } catch (...) {
        f.kind = ASCENDC_HOST_FAULT_KERNEL;
        f.message = "unknown C++ exception";
        rc = 1;
    }
    current = saved;
    block_idx = saved_idx;
    block_num = saved_num;
    core = ctx.core;
    try {
        out += ctx.out;
    } catch (...) {
    }
    return rc;
}

// The value of a kernel argument from its bytes.
template <typename T>
inline std::remove_cv_t<std::remove_reference_t<T>> arg(const void* p)
{
    std::remove_cv_t<std::remove_reference_t<T>> v;
    std::memcpy(static_cast<void*>(&v), p, sizeof(v));
    return v;
}

// Offset of the parameter after one that ends at `end`: the next multiple of 8.
constexpr uint64_t next_slot(uint64_t end) { return (end + 7u) & ~uint64_t{7}; }

// The most parameters a kernel may have (the runtime's limit of aclrtKernelArgsAppend).
constexpr uint32_t MAX_PARAMS = 128;

inline void set_fault(ascendc_host_block* b, const KernelFault& f, uint32_t core) noexcept
{
    b->fault_kind = f.kind;
    b->core = core;
    b->fault_addr = f.addr;
    b->fault_bytes = f.bytes;
    if (b->fault != nullptr && b->fault_capacity > 0) {
        std::snprintf(b->fault, b->fault_capacity, "%s", f.message.c_str());
    }
}

// The entry of a kernel (ascendc_host/binary.h): unpacks the argument buffer into one pointer
// per parameter, makes every global-memory parameter a buffer argument of the block (from its
// address to the end of its allocation, writable only for a non-`const` pointer), runs the
// block and hands its printf output and failure to the runtime. `call` calls the kernel with
// the arguments at the pointers.
inline int run_entry(ascendc_host_block* b, const char* kernel, const ascendc_host_param* params,
                     uint32_t count, void (*call)(const uint8_t* const* args)) noexcept
{
    (void)kernel;
    if (b == nullptr || b->abi != ASCENDC_HOST_ABI) {
        return 1;
    }
    KernelFault f;
    uint32_t core = ASCENDC_HOST_CORE_VECTOR;
    const uint8_t* ptrs[MAX_PARAMS];
    ascendc_host_region regions[MAX_PARAMS];
    uint32_t region_count = 0;
    uint64_t offset = 0;
    for (uint32_t i = 0; i < count && i < MAX_PARAMS; ++i) {
        offset = next_slot(offset);
        if (offset + params[i].size > b->args_size) {
            f.message = "the launch passes " + std::to_string(b->args_size) +
                        " byte(s) of arguments, but parameter " + std::to_string(i) +
                        " ends at byte " + std::to_string(offset + params[i].size) +
                        " (the kernel takes " + std::to_string(count) + " parameter(s))";
            set_fault(b, f, core);
            return 1;
        }
        ptrs[i] = b->args + offset;
        if (params[i].kind != ASCENDC_HOST_PARAM_VALUE && params[i].size == sizeof(void*)) {
            const void* p = arg<const void*>(ptrs[i]);
            const void* base = nullptr;
            uint64_t len = 0;
            uint32_t writable = 0;
            if (p != nullptr && b->find_memory(b->runtime, p, &base, &len, &writable) == 0) {
                uint64_t skip = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p) -
                                                      reinterpret_cast<uintptr_t>(base));
                regions[region_count++] = ascendc_host_region{
                    p, len - skip,
                    (writable != 0 && params[i].kind == ASCENDC_HOST_PARAM_GM_WRITE) ? 1u : 0u};
            }
        }
        offset += params[i].size;
    }
    std::string out;
    int rc = run_block(b->block_idx, b->block_num, regions, region_count, false, b, out, f, core,
                       [&] { call(ptrs); });
    if (!out.empty()) {
        b->print(b->runtime, out.data(), out.size());
    }
    if (rc != 0) {
        set_fault(b, f, core);
    }
    return rc;
}

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
// launch on the pool. Returns 0, or 1 with a description of the first failed block in `message`
// (NUL-terminated, truncated to `capacity`). Kernel printf output is written to stdout
// afterwards, block 0 first. With `check`, global memory outside `regions` fails the block.
inline int run_blocks(const char* kernel, uint32_t block_dim, const std::function<void()>& entry,
                      const ascendc_host_region* regions, uint32_t region_count, bool check,
                      char* message, size_t capacity)
{
    std::vector<std::string> out(block_dim);
    std::vector<KernelFault> faults(block_dim);
    std::vector<char> failed(block_dim, 0);
    Pool::get().run(block_dim, [&](uint32_t b) {
        uint32_t core = 0;
        failed[b] = static_cast<char>(run_block(b, block_dim, regions, region_count, check,
                                                nullptr, out[b], faults[b], core, entry));
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
                          first, block_dim, faults[first].message.c_str(), count - 1);
        } else {
            std::snprintf(message, capacity, "block %u of %u: %s", first, block_dim,
                          faults[first].message.c_str());
        }
    }
    (void)kernel;
    return 1;
}

// Appends the value of one argument to a packed argument buffer, at the next 8-byte slot.
template <typename T>
inline void pack(std::vector<uint8_t>& buf, const T& v)
{
    size_t at = static_cast<size_t>(next_slot(buf.size()));
    buf.resize(at + sizeof(T));
    std::memcpy(buf.data() + at, static_cast<const void*>(&v), sizeof(T));
}

template <typename F>
struct Launcher;

// A `kernel<<<blockDim, l2ctrl, stream>>>(args...)` launch from C++ code: the arguments are
// converted to the kernel's parameter types, packed, and launched through the runtime on
// `stream` (ASCENDC_HOST_ENQUEUE); without a runtime hook, run at once by the stand-alone
// runner.
template <typename... P>
struct Launcher<void(P...)> {
    void (*kernel)(P...);
    const char* name;
    uint32_t block_dim;
    void* stream;

    void operator()(P... args) const
    {
        if (block_dim == 0) {
            std::fprintf(stderr, "ascendc host: kernel %s launched with blockDim 0: not run\n",
                         name);
            return;
        }
#ifdef ASCENDC_HOST_ENQUEUE
        std::vector<uint8_t> buf;
        (pack(buf, args), ...);
        int rc = ASCENDC_HOST_ENQUEUE(stream, name, block_dim, buf.data(), buf.size());
        if (rc != 0) {
            std::fprintf(stderr, "ascendc host: kernel %s not launched: the runtime returned %d\n",
                         name, rc);
        }
#else
        // No runtime to order the launch on: run it now.
        (void)stream;
        char message[1024] = {0};
        auto k = kernel;
        if (run_blocks(name, block_dim, [&]() { k(args...); }, nullptr, 0, false, message,
                       sizeof(message)) != 0) {
            std::fprintf(stderr, "ascendc host: kernel %s failed: %s\n", name, message);
        }
#endif
    }
};

// What `kernel<<<blockDim, l2ctrl, stream>>>` is rewritten to: `launcher(kernel, "kernel",
// blockDim, l2ctrl, stream)`, then called with the kernel's arguments.
template <typename... P>
inline Launcher<void(P...)> launcher(void (*kernel)(P...), const char* name, uint32_t block_dim,
                                     void* l2ctrl, void* stream)
{
    (void)l2ctrl;
    return Launcher<void(P...)>{kernel, name, block_dim, stream};
}

}  // namespace ascendc_host

#endif
