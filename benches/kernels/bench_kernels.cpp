// Kernels of the launch and throughput benchmarks (benches/kernels.rs).
//
// empty: does nothing (launch + synchronise cost).
// touch: writes one word of its buffer through the raw pointer (the cost of reaching device
// memory from a kernel, benches/address_space.rs).
// vector_add: dst[i] = a[i] + alpha * b[i] for i < n; each block takes a contiguous share and
// walks it in tiles of 2048 floats through local memory (DataCopy, Muls, Add), as an AscendC
// vector kernel does. n must be a multiple of 8 * the block count (whole 32-byte units).
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void empty() {}

extern "C" __global__ __aicore__ void touch(__gm__ uint32_t* p) { p[AscendC::GetBlockIdx()] += 1; }

namespace {
constexpr uint32_t TILE = 2048;
}

extern "C" __global__ __aicore__ void vector_add(__gm__ const float* a, __gm__ const float* b,
                                                 __gm__ float* dst, float alpha, uint32_t n)
{
    const uint32_t blocks = static_cast<uint32_t>(AscendC::GetBlockNum());
    const uint32_t idx = static_cast<uint32_t>(AscendC::GetBlockIdx());
    const uint32_t share = n / blocks;
    const uint32_t start = idx * share;
    AscendC::GlobalTensor<float> ag, bg, dg;
    ag.SetGlobalBuffer(const_cast<__gm__ float*>(a) + start, share);
    bg.SetGlobalBuffer(const_cast<__gm__ float*>(b) + start, share);
    dg.SetGlobalBuffer(dst + start, share);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * TILE * sizeof(float));
    AscendC::LocalTensor<float> x = buf.GetWithOffset<float>(TILE, 0);
    AscendC::LocalTensor<float> y = buf.GetWithOffset<float>(TILE, TILE * sizeof(float));
    for (uint32_t off = 0; off < share; off += TILE) {
        const uint32_t count = share - off < TILE ? share - off : TILE;
        AscendC::DataCopy(x, ag[off], count);
        AscendC::DataCopy(y, bg[off], count);
        AscendC::Muls(y, y, alpha, count);
        AscendC::Add(x, x, y, count);
        AscendC::DataCopy(dg[off], x, count);
    }
}
