// zero_copy_add: z = x + y over TOTAL_LENGTH halves that stay in host memory: the three
// arguments are the device mapping addresses of registered host buffers, so every load and store
// of the kernel goes to the host's pages (zero copy).
//
// USE_CORE_NUM blocks each take BLOCK_LENGTH elements and walk them in TILE_LENGTH tiles through
// VECIN/VECOUT queues: copy in, add, copy out.
#include "kernel_operator.h"

constexpr uint32_t TOTAL_LENGTH = 8 * 2048;
constexpr uint32_t USE_CORE_NUM = 8;
constexpr uint32_t BLOCK_LENGTH = TOTAL_LENGTH / USE_CORE_NUM;
constexpr uint32_t TILE_LENGTH = 256;

class ZeroCopyAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z)
    {
        const uint32_t start = BLOCK_LENGTH * static_cast<uint32_t>(AscendC::GetBlockIdx());
        xGm_.SetGlobalBuffer((__gm__ half*)x + start, BLOCK_LENGTH);
        yGm_.SetGlobalBuffer((__gm__ half*)y + start, BLOCK_LENGTH);
        zGm_.SetGlobalBuffer((__gm__ half*)z + start, BLOCK_LENGTH);
        pipe_.InitBuffer(inX_, 2, TILE_LENGTH * sizeof(half));
        pipe_.InitBuffer(inY_, 2, TILE_LENGTH * sizeof(half));
        pipe_.InitBuffer(outZ_, 2, TILE_LENGTH * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t offset = 0; offset < BLOCK_LENGTH; offset += TILE_LENGTH) {
            AscendC::LocalTensor<half> x = inX_.AllocTensor<half>();
            AscendC::LocalTensor<half> y = inY_.AllocTensor<half>();
            AscendC::DataCopy(x, xGm_[offset], TILE_LENGTH);
            AscendC::DataCopy(y, yGm_[offset], TILE_LENGTH);
            inX_.EnQue(x);
            inY_.EnQue(y);

            x = inX_.DeQue<half>();
            y = inY_.DeQue<half>();
            AscendC::LocalTensor<half> z = outZ_.AllocTensor<half>();
            AscendC::Add(z, x, y, TILE_LENGTH);
            outZ_.EnQue<half>(z);
            inX_.FreeTensor(x);
            inY_.FreeTensor(y);

            z = outZ_.DeQue<half>();
            AscendC::DataCopy(zGm_[offset], z, TILE_LENGTH);
            outZ_.FreeTensor(z);
        }
    }

private:
    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inX_, inY_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outZ_;
    AscendC::GlobalTensor<half> xGm_, yGm_, zGm_;
};

extern "C" __global__ __aicore__ void zero_copy_add(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    ZeroCopyAdd op;
    op.Init(x, y, z);
    op.Process();
}
