// vector_add_kernel: out[i] = self[i] + alpha * other[i] for i < n.
//
// The quickstart's kernel is small on purpose: each block takes every blocks-th element,
// reading and writing global memory directly (for the 8 elements of the sample, one block).
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void vector_add_kernel(__gm__ const float* self,
                                                        __gm__ const float* other,
                                                        __gm__ float* out, float alpha,
                                                        uint32_t n)
{
    const uint32_t blocks = static_cast<uint32_t>(AscendC::GetBlockNum());
    for (uint32_t i = static_cast<uint32_t>(AscendC::GetBlockIdx()); i < n; i += blocks) {
        out[i] = self[i] + alpha * other[i];
    }
}
