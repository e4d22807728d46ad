// add: out[i] = self[i] + alpha * other[i] for i < n (what the reference sample asks of the
// aclnnAdd operator), elements strided over the blocks.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void add(__gm__ const float* self, __gm__ const float* other,
                                          __gm__ float* out, float alpha, uint32_t n)
{
    AscendC::GlobalTensor<float> s, o, r;
    s.SetGlobalBuffer(const_cast<__gm__ float*>(self), n);
    o.SetGlobalBuffer(const_cast<__gm__ float*>(other), n);
    r.SetGlobalBuffer(out, n);
    const uint32_t blocks = static_cast<uint32_t>(AscendC::GetBlockNum());
    for (uint32_t i = static_cast<uint32_t>(AscendC::GetBlockIdx()); i < n; i += blocks) {
        r.SetValue(i, s.GetValue(i) + alpha * o.GetValue(i));
    }
}
