// Host compatibility header: just enough of CANN's "kernel_operator.h" for the kernels of this
// crate to compile with the host C++ compiler (host mode, ASCENDC_KERNELS_HOST defined).
//
// - The address-space and function qualifiers expand to nothing.
// - `block_idx` / `block_num` are thread-local: the launcher (host_runtime.cpp) sets them before
//   each call, so every emulated block sees its own index, as every AI core does on the NPU.
// - `AscendC::printf` formats its line and hands it to the Rust crate, which writes it to stdout
//   with `print!`: kernel lines interleave in order with the program's own output, and tests
//   capture them like any other output (`cargo test -- --nocapture` shows them).
#ifndef ASCENDC_KERNELS_HOST_KERNEL_OPERATOR_H
#define ASCENDC_KERNELS_HOST_KERNEL_OPERATOR_H

#ifndef ASCENDC_KERNELS_HOST
#error "cpp/host/kernel_operator.h is the host-mode stand-in; build with ASCENDC_KERNELS_HOST defined"
#endif

#include <cstdint>

#define __global__
#define __aicore__
#define __gm__

// Index of the block being run on this thread, in [0, block_num).
extern thread_local int64_t block_idx;
// Number of blocks of the launch being run on this thread (the launch's blockDim).
extern thread_local int64_t block_num;

namespace AscendC {

// Index of the current block (the AI core's logical index on the NPU).
inline int64_t GetBlockIdx() { return block_idx; }

// Number of blocks of the current launch.
inline int64_t GetBlockNum() { return block_num; }

// Device printf: formats one line and writes it through the Rust side's stdout.
void printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace AscendC

#endif
