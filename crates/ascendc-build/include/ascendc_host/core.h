// AscendC host layer: the state of the core a host thread is running. AscendC's qualifiers
// (nothing on the host), the failure of a block (a failed check throws; the block's entry
// catches it at the block boundary and reports it), the block context (block and core
// indices, the core's type, its printf output, its local memories, the launch's global
// memory) and the global-memory check every access of a kernel goes through.
//
// Header-only: every kernels library compiles it into its own objects; the inline definitions
// are merged by the linker when several libraries end up in one program.
#ifndef ASCENDC_HOST_CORE_H
#define ASCENDC_HOST_CORE_H

#include "binary.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

// Function and address-space qualifiers of AscendC: nothing on the host. The core kind of a
// kernel (`__vector__`, `__cube__`, `__mix__(c, v)`) is read from the source by ascendc-build,
// which records it with the kernel's entry.
#define __global__
#define __aicore__
#define __host__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#define __ssbuf__
#define __vector__
#define __cube__
#define __mix__(cube, vector)
#define __kfc_workspace__
#define __schedmode__(mode)
#define __simd_vf__
#define __simd_callee__
#define __launch_bounds__(n)

extern "C" {
// A global-memory range a block may access (a buffer argument of a launch).
struct ascendc_host_region {
    const void* base;
    uint64_t bytes;
    uint32_t writable;
};
}

// Index of the logical core this thread runs, in [0, block_num); the launch's block count; in a
// kernel with cube and vector cores per block, the index of this core among the block's cores of
// its type and their count (the built-in variables of AscendC).
inline thread_local int64_t block_idx = 0;
inline thread_local int64_t block_num = 1;
inline thread_local int64_t sub_block_idx = 0;
inline thread_local int64_t sub_block_num = 1;

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

// The two kinds of core of an AI Core on A2/A3 (the separated architecture).
enum class CoreType : uint32_t { AIV = 0, AIC = 1 };

struct CoreMemory;  // memory.h: the local memories of one core
struct CoreSync;    // sync.h: the event flags of one core
struct Launch;      // entry.h: what the cores of one launch share

// The state of the core a thread is running.
struct BlockContext {
    uint32_t idx = 0;        // GetBlockIdx(): the logical index of this core
    uint32_t num = 1;        // GetBlockNum(): the launch's block count
    uint32_t block = 0;      // the launch block this core belongs to
    uint32_t sub_idx = 0;    // GetSubBlockIdx()
    uint32_t sub_num = 1;    // GetSubBlockNum()
    uint32_t ratio = 1;      // GetTaskRation(): cores of this type per block
    CoreType type = CoreType::AIV;
    std::string out;  // printf output, handed over after the block
    const ascendc_host_region* regions = nullptr;
    uint32_t region_count = 0;
    // Stand-alone runner: accesses outside `regions` fail (a runtime's launch asks `rt`).
    bool check_regions = false;
    // The runtime's block record (launches through a runtime), else null.
    const ascendc_host_block* rt = nullptr;
    // The core type the kernel declared (KERNEL_TASK_TYPE_DEFAULT, or its qualifier).
    uint32_t core = ASCENDC_HOST_CORE_VECTOR;
    // The kernel's system workspace (a `__kfc_workspace__` parameter or SetSysWorkspace).
    uint8_t* sys_workspace = nullptr;
    // Created on first use: the core's local memories and its event flags.
    CoreMemory* memory = nullptr;
    CoreSync* sync = nullptr;
    // The TPipe the core created last (GetTPipePtr()).
    void* pipe = nullptr;
    // What the cores of this launch share (cross-core flags, barriers); null for a block run on
    // its own.
    Launch* launch = nullptr;
};

inline thread_local BlockContext* current = nullptr;

// The running core, or a fault when code that needs one runs outside a kernel.
inline BlockContext& here(const char* op)
{
    if (current == nullptr) {
        fault("%s: called outside a kernel", op);
    }
    return *current;
}

// Makes `c` the context of this thread (and the built-in variables its values); returns the
// previous one.
inline BlockContext* enter(BlockContext* c)
{
    BlockContext* saved = current;
    current = c;
    if (c != nullptr) {
        block_idx = c->block;
        block_num = c->num;
        sub_block_idx = c->sub_idx;
        sub_block_num = c->sub_num;
    } else {
        block_idx = 0;
        block_num = 1;
        sub_block_idx = 0;
        sub_block_num = 1;
    }
    return saved;
}

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

// `asm("trap")` in a kernel: the device's trap instruction stops the core, which fails the task.
[[noreturn]] inline void trap_instruction() { fault("trap instruction (asm(\"trap\"))"); }

}  // namespace ascendc_host

#endif
