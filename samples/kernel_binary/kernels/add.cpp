// add: z[i] = x[i] + y[i] for i < n, each block over a contiguous share of the elements, in
// tiles through local memory (the Add custom operator of the runtime's kernel-loading sample).
#include "kernel_operator.h"

namespace {

constexpr uint32_t TILE = 256;  // floats per tile (a multiple of 8: whole 32-byte units)

__aicore__ inline void AddTiles(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t n)
{
    const uint32_t blocks = static_cast<uint32_t>(AscendC::GetBlockNum());
    const uint32_t idx = static_cast<uint32_t>(AscendC::GetBlockIdx());
    uint32_t share = (n + blocks - 1) / blocks;
    share = (share + TILE - 1) / TILE * TILE;
    const uint32_t start = idx * share < n ? idx * share : n;
    const uint32_t length = n - start < share ? n - start : share;

    AscendC::GlobalTensor<float> xGm, yGm, zGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + start, length);
    yGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + start, length);
    zGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z) + start, length);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * TILE * sizeof(float));
    AscendC::LocalTensor<float> xl = buf.GetWithOffset<float>(TILE, 0);
    AscendC::LocalTensor<float> yl = buf.GetWithOffset<float>(TILE, TILE * sizeof(float));
    AscendC::LocalTensor<float> zl = buf.GetWithOffset<float>(TILE, 2 * TILE * sizeof(float));
    for (uint32_t offset = 0; offset < length; offset += TILE) {
        const uint32_t count = length - offset < TILE ? length - offset : TILE;
        if (count % 8 == 0) {
            AscendC::DataCopy(xl, xGm[offset], count);
            AscendC::DataCopy(yl, yGm[offset], count);
            AscendC::Add(zl, xl, yl, count);
            AscendC::DataCopy(zGm[offset], zl, count);
        } else {
            for (uint32_t i = 0; i < count; ++i) {
                zGm.SetValue(offset + i, xGm.GetValue(offset + i) + yGm.GetValue(offset + i));
            }
        }
    }
}

}  // namespace

extern "C" __global__ __aicore__ void add(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t n)
{
    AddTiles(x, y, z, n);
}
