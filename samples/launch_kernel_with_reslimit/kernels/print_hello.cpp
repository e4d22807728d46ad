// print_hello: every block prints one line and records that it ran.
//
// Block i stores i + 1 at seen[i], so that the host can tell that each of the launch's blocks
// ran once (a block that did not run leaves its zero).
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void print_hello(__gm__ uint32_t* seen)
{
    const uint32_t idx = static_cast<uint32_t>(AscendC::GetBlockIdx());
    seen[idx] = idx + 1;
    AscendC::printf("Hello World\n");
}
