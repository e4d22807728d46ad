// AscendC kernels of the CANN runtime's memory samples: DeviceWrite stores a value, DeviceRead
// prints one.
//
// One source, two builds (ascendc-build, see docs/kernels.md): NPU mode compiles it with CANN's
// `ascendc_library()` and generates the `<<<blockDim, nullptr, stream>>>` launchers; host mode
// compiles it with the host C++ compiler against ascendc-build's AscendC host layer into a kernel
// binary the emulator runs. The Rust launchers are generated from the signatures below.

#include "kernel_operator.h"

// Writes `value` at devPtr[block_idx] and reports the value written.
extern "C" __global__ __aicore__ void DeviceWrite(__gm__ int* devPtr, int value)
{
    int32_t idx = static_cast<int32_t>(AscendC::GetBlockIdx());
    devPtr[idx] = value;
    AscendC::printf("Source data: %d\n", value);
}

// Reads devPtr[block_idx] and reports the value read.
extern "C" __global__ __aicore__ void DeviceRead(__gm__ const int* devPtr)
{
    int32_t idx = static_cast<int32_t>(block_idx);
    int value = devPtr[idx];
    AscendC::printf("Destination data: %d\n", value);
}
