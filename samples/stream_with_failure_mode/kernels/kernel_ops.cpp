// The kernels of the runtime's stream samples: EasyOP adds 1 to x[0]; ErrorOP stops the core
// (Trap: the task fails with a vector-core exception); LongOP keeps a core busy for a while.
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

extern "C" __global__ __aicore__ void LongOP(__gm__ uint32_t* x)
{
    AscendC::GlobalTensor<uint32_t> g;
    g.SetGlobalBuffer(x, 1);
    for (uint32_t i = 0; i < 50u * 1000u * 1000u; ++i) {
        g.SetValue(0, i);
    }
}
