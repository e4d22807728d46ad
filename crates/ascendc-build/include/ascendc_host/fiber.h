// AscendC host layer: cores that wait for each other. The cube and vector cores of one block of
// a mixed kernel, and every core of a launch whose blocks synchronise (SyncAll, cross-core
// flags, inter-block barriers), run as fibers on one host thread, each on its own stack: a core
// that waits gives the thread to the next, and resumes once what it waits for holds. When every
// unfinished core waits and none can go on, the launch would hang on the device: each waiting
// core then fails with what it waits for, and what the others wait for.
#ifndef ASCENDC_HOST_FIBER_H
#define ASCENDC_HOST_FIBER_H

#include "core.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

namespace ascendc_host {

// Bytes of stack of each fiber (a core's kernel code and the host layer's calls it makes);
// reserved, not committed, with a guard page below it.
inline size_t fiber_stack_bytes()
{
    static const size_t bytes = [] {
        size_t kib = 1024;
        if (const char* env = std::getenv("ASCENDC_HOST_FIBER_STACK_KB")) {
            long v = std::strtol(env, nullptr, 10);
            if (v >= 64 && v <= 1024 * 1024) {
                kib = static_cast<size_t>(v);
            }
        }
        return kib * 1024;
    }();
    return bytes;
}

class Fibers {
public:
    Fibers() = default;
    Fibers(const Fibers&) = delete;
    Fibers& operator=(const Fibers&) = delete;
    ~Fibers()
    {
        for (auto& f : fibers_) {
            if (f->stack != nullptr) {
                munmap(f->stack, f->stack_bytes);
            }
        }
    }

    // Adds a core: `body` runs on a stack of its own when `run` starts it.
    void add(std::function<void()> body)
    {
        auto f = std::make_unique<Fiber>();
        f->body = std::move(body);
        f->owner = this;
        fibers_.push_back(std::move(f));
    }

    // Runs every core to its end, round robin; a waiting core is passed over until what it waits
    // for holds. Returns when all have finished.
    void run()
    {
        Fibers* saved_running = running_;
        BlockContext* saved_ctx = current;
        running_ = this;
        size_t next = 0;
        for (;;) {
            size_t unfinished = 0;
            bool progressed = false;
            for (size_t n = 0; n < fibers_.size(); ++n) {
                Fiber* f = fibers_[(next + n) % fibers_.size()].get();
                if (f->done) {
                    continue;
                }
                ++unfinished;
                if (f->ready && !f->hung && !f->ready()) {
                    continue;
                }
                resume(f);
                next = (next + n + 1) % fibers_.size();
                progressed = true;
                break;
            }
            if (unfinished == 0) {
                break;
            }
            if (!progressed) {
                hang();
            }
        }
        running_ = saved_running;
        enter(saved_ctx);
    }

    // The fibers running on this thread, or null.
    static Fibers* running() { return running_; }

    // Called by a core: gives the thread away until `ready()` holds. Fails the core when no core
    // of the set could make it hold.
    void wait(std::function<bool()> ready, std::string what)
    {
        Fiber* f = cur_;
        f->ready = std::move(ready);
        f->waiting = std::move(what);
        while (!f->hung && !f->ready()) {
            yield(f);
        }
        bool hung = f->hung && !f->ready();
        std::string message = hung ? f->waiting + ": " + f->hang_report : std::string();
        f->ready = nullptr;
        f->hung = false;
        f->waiting.clear();
        if (hung) {
            fault("%s", message.c_str());
        }
    }

private:
    struct Fiber {
        ucontext_t ctx;
        void* stack = nullptr;
        size_t stack_bytes = 0;
        std::function<void()> body;
        Fibers* owner = nullptr;
        BlockContext* bctx = nullptr;  // the fiber's `current` while it does not run
        bool started = false;
        bool done = false;
        std::function<bool()> ready;  // what a waiting fiber waits for
        std::string waiting;
        bool hung = false;
        std::string hang_report;
    };

    static void trampoline(unsigned hi, unsigned lo)
    {
        uintptr_t p = (static_cast<uintptr_t>(hi) << 32) | static_cast<uintptr_t>(lo);
        Fiber* f = reinterpret_cast<Fiber*>(p);
        try {
            f->body();
        } catch (...) {
        }
        f->done = true;
        f->bctx = nullptr;
        swapcontext(&f->ctx, &f->owner->main_);
    }

    void resume(Fiber* f)
    {
        if (!f->started) {
            f->started = true;
            const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
            f->stack_bytes = fiber_stack_bytes() + page;
            void* mem = mmap(nullptr, f->stack_bytes, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (mem == MAP_FAILED) {
                f->done = true;
                return;
            }
            mprotect(mem, page, PROT_NONE);  // the guard page
            f->stack = mem;
            getcontext(&f->ctx);
            f->ctx.uc_stack.ss_sp = static_cast<char*>(mem) + page;
            f->ctx.uc_stack.ss_size = f->stack_bytes - page;
            f->ctx.uc_link = nullptr;
            uintptr_t p = reinterpret_cast<uintptr_t>(f);
            makecontext(&f->ctx, reinterpret_cast<void (*)()>(&Fibers::trampoline), 2,
                        static_cast<unsigned>(p >> 32), static_cast<unsigned>(p & 0xffffffffu));
        }
        cur_ = f;
        enter(f->bctx);
        swapcontext(&main_, &f->ctx);
        cur_ = nullptr;
    }

    void yield(Fiber* f)
    {
        f->bctx = current;
        swapcontext(&f->ctx, &main_);
        enter(f->bctx);
    }

    // No core can go on: every waiting core fails with what it and the others wait for.
    void hang()
    {
        std::string all;
        size_t finished = 0;
        for (auto& f : fibers_) {
            if (f->done) {
                ++finished;
                continue;
            }
            if (!all.empty()) {
                all += "; ";
            }
            all += f->waiting;
        }
        std::string report = "it waits forever (a hang on the device): no core of the launch can "
                             "go on (" +
                             std::to_string(finished) + " finished; waiting: " + all + ")";
        for (auto& f : fibers_) {
            if (!f->done) {
                f->hung = true;
                f->hang_report = report;
            }
        }
    }

    ucontext_t main_;
    std::vector<std::unique_ptr<Fiber>> fibers_;
    Fiber* cur_ = nullptr;
    static inline thread_local Fibers* running_ = nullptr;
};

// A blocking wait of a kernel: returns once `ready()` holds. With other cores running beside
// this one (fibers) the thread goes to them meanwhile; alone, nothing could make it hold, which
// on the device is a hang: the block fails with `what`.
template <class F>
inline void block_wait(F ready, const std::string& what)
{
    if (ready()) {
        return;
    }
    Fibers* fibers = Fibers::running();
    if (fibers == nullptr) {
        fault("%s: it waits forever (a hang on the device): nothing else runs that could end "
              "the wait",
              what.c_str());
    }
    fibers->wait(std::function<bool()>(std::move(ready)), what);
}

// A point where a kernel expects other cores' writes to become visible (a cache invalidation it
// polls on): the thread goes to the other cores once, when they run beside this one.
inline void block_yield()
{
    Fibers* fibers = Fibers::running();
    if (fibers == nullptr) {
        return;
    }
    bool turned = false;
    fibers->wait([&turned] { return std::exchange(turned, true); }, "a cache invalidation");
}

}  // namespace ascendc_host

#endif
