// AscendC host layer: the kernel binary ABI. A host-mode kernel binary is a shared object that
// exports one symbol, `ascendc_host_binary_v1` (an `ascendc_host_binary`): the table of its
// kernels, each with an entry the runtime calls once per block and the description of its
// parameters. The runtime (the emulator's aclrtBinaryLoad* / aclrtLaunchKernel*) loads the
// object, finds a kernel by name, and runs a launch's blocks on its own threads; printf output
// and failures come back through the block record. docs/kernels.md describes the ABI in full.
//
// Plain C types only: the runtime that reads these structures is not C++.
#ifndef ASCENDC_HOST_BINARY_H
#define ASCENDC_HOST_BINARY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// The ABI version, in `ascendc_host_binary::abi` and `ascendc_host_block::abi`.
#define ASCENDC_HOST_ABI 1u

// The text at the start of `ascendc_host_binary::magic` (NUL-terminated). A runtime also
// finds it in the file before it loads one, to refuse objects that are not kernel binaries.
#define ASCENDC_HOST_MAGIC "ascendc-hostbin"

// Parameter kinds.
#define ASCENDC_HOST_PARAM_VALUE 0u     // a value (scalar or struct) of `size` bytes
#define ASCENDC_HOST_PARAM_GM_READ 1u   // a global-memory address the kernel only reads (`const`)
#define ASCENDC_HOST_PARAM_GM_WRITE 2u  // a global-memory address the kernel may write

// Failure kinds (`ascendc_host_block::fault_kind`).
#define ASCENDC_HOST_FAULT_NONE 0u
#define ASCENDC_HOST_FAULT_KERNEL 1u  // a failed check of the kernel itself (local buffer, trap)
#define ASCENDC_HOST_FAULT_MEMORY 2u  // global memory outside every live allocation

// Core types (`ascendc_host_block::core`), from KERNEL_TASK_TYPE_DEFAULT.
#define ASCENDC_HOST_CORE_VECTOR 0u  // AIV: a failure is a vector-core exception
#define ASCENDC_HOST_CORE_CUBE 1u    // AIC or mixed: a failure is an AI-core exception

// One block of a launch, filled in by the runtime for each call of an entry.
typedef struct ascendc_host_block {
    uint32_t abi;        // ASCENDC_HOST_ABI
    uint32_t block_idx;  // in [0, block_num)
    uint32_t block_num;
    uint32_t reserved;
    // The launch's arguments: each parameter in order, at the next offset that is a multiple of
    // 8 (the AI Core layout of aclrtKernelArgsAppend), `args_size` bytes in all.
    const uint8_t* args;
    uint64_t args_size;
    // Passed back to the two functions below.
    void* runtime;
    // Where global-memory address `p` lies: 0 with the first byte and the length of the live
    // allocation holding it (device memory of the launch's device or a placeholder buffer), or
    // non-zero when no live allocation holds it. `*writable` is 0 for read-only memory.
    int (*find_memory)(void* runtime, const void* p, const void** base, uint64_t* bytes,
                       uint32_t* writable);
    // Appends `bytes` bytes of kernel output to the block's print buffer.
    void (*print)(void* runtime, const char* data, uint64_t bytes);
    // Out, when the entry returns non-zero: what failed (NUL-terminated, at most `fault_capacity`
    // bytes), the kind, the core type, and for a memory fault the access.
    char* fault;
    uint64_t fault_capacity;
    uint32_t fault_kind;
    uint32_t core;
    uint64_t fault_addr;
    uint64_t fault_bytes;
} ascendc_host_block;

// Runs one block: 0 when it completed, non-zero when it failed (the `fault*` fields say why).
// Never unwinds.
typedef int (*ascendc_host_entry)(ascendc_host_block* block);

// One parameter of a kernel.
typedef struct ascendc_host_param {
    uint32_t size;  // sizeof of the C++ type
    uint32_t kind;  // ASCENDC_HOST_PARAM_*
} ascendc_host_param;

// One kernel.
typedef struct ascendc_host_kernel {
    const char* name;  // the function name, as aclrtBinaryGetFunction takes it
    ascendc_host_entry entry;
    uint32_t param_count;
    uint32_t reserved;
    const ascendc_host_param* params;
} ascendc_host_kernel;

// The table a binary exports as `ascendc_host_binary_v1`.
typedef struct ascendc_host_binary {
    char magic[16];  // ASCENDC_HOST_MAGIC
    uint32_t abi;    // ASCENDC_HOST_ABI
    uint32_t kernel_count;
    const ascendc_host_kernel* kernels;
} ascendc_host_binary;

#ifdef __cplusplus
}
#endif

#endif
