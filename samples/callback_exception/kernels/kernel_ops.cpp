// The kernels of the runtime's callback samples: EasyOP adds 1 to x[0]; ErrorOP stops the core
// (Trap: the task fails with a vector-core exception).
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void EasyOP(__gm__ uint32_t* x)
{
    AscendC::GlobalTensor<uint32_t> g;
    g.SetGlobalBuffer(x, 1);
    g.SetValue(0, g.GetValue(0) + 1);
}

extern "C" __global__ __aicore__ void ErrorOP()
{
    AscendC::Trap();
}
