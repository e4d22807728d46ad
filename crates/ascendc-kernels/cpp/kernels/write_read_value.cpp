// AscendC kernels of the h2d_sync sample: DeviceWrite stores a value, DeviceRead prints one.
//
// One source, two builds (see docs/kernels.md):
// - NPU mode: compiled by CANN's `ascendc_library()`; "kernel_operator.h" is CANN's, and the
//   `extern "C"` launchers at the bottom use the `<<<blockDim, l2ctrl, stream>>>` syntax.
// - Host mode: compiled by the host C++ compiler with ASCENDC_KERNELS_HOST defined; the include
//   path puts cpp/host/kernel_operator.h (a small compatibility header) first, and the Rust side
//   calls the kernels once per block from a host function enqueued on the emulator's stream.

#include "kernel_operator.h"

// Writes `value` at devPtr[block_idx] and reports the value written.
extern "C" __global__ __aicore__ void DeviceWrite(__gm__ int* devPtr, int value)
{
    int32_t idx = static_cast<int32_t>(AscendC::GetBlockIdx());
    devPtr[idx] = value;
    AscendC::printf("Source data: %d\n", value);
}

// Reads devPtr[block_idx] and reports the value read.
extern "C" __global__ __aicore__ void DeviceRead(__gm__ int* devPtr)
{
    int32_t idx = static_cast<int32_t>(block_idx);
    int value = devPtr[idx];
    AscendC::printf("Destination data: %d\n", value);
}

#ifndef ASCENDC_KERNELS_HOST
// Host-side launchers for the NPU build: plain C symbols that Rust declares and calls with a real
// aclrtStream. The kernel runs asynchronously; errors surface at the next stream synchronisation.
extern "C" void ascendc_kernels_launch_DeviceWrite(uint32_t blockDim, void* stream, int* devPtr, int value)
{
    DeviceWrite<<<blockDim, nullptr, stream>>>(devPtr, value);
}

extern "C" void ascendc_kernels_launch_DeviceRead(uint32_t blockDim, void* stream, int* devPtr)
{
    DeviceRead<<<blockDim, nullptr, stream>>>(devPtr);
}
#endif
