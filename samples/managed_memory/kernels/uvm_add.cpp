// uvm_add: z[i] = x[i] + y[i] over n floats in managed (unified) memory. The kernel sees global
// memory as any other: the pages migrate to the device when it touches them.
//
// Each block takes n / blocks elements (the caller makes that a multiple of 8, whole 32-byte
// units) and walks them in tiles through VECIN/VECOUT queues: copy in, add, copy out.
#include "kernel_operator.h"

namespace {

constexpr uint32_t TILE = 256;  // floats per tile

class UvmAdd {
public:
    __aicore__ inline void Init(__gm__ const float* x, __gm__ const float* y, __gm__ float* z,
                                uint32_t n)
    {
        const uint32_t blocks = static_cast<uint32_t>(AscendC::GetBlockNum());
        const uint32_t idx = static_cast<uint32_t>(AscendC::GetBlockIdx());
        length_ = n / blocks;
        const uint32_t start = idx * length_;
        xGm_.SetGlobalBuffer(const_cast<__gm__ float*>(x) + start, length_);
        yGm_.SetGlobalBuffer(const_cast<__gm__ float*>(y) + start, length_);
        zGm_.SetGlobalBuffer(z + start, length_);
        pipe_.InitBuffer(inX_, 2, TILE * sizeof(float));
        pipe_.InitBuffer(inY_, 2, TILE * sizeof(float));
        pipe_.InitBuffer(outZ_, 2, TILE * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t offset = 0; offset < length_; offset += TILE) {
            const uint32_t count = length_ - offset < TILE ? length_ - offset : TILE;
            AscendC::LocalTensor<float> x = inX_.AllocTensor<float>();
            AscendC::LocalTensor<float> y = inY_.AllocTensor<float>();
            AscendC::DataCopy(x, xGm_[offset], count);
            AscendC::DataCopy(y, yGm_[offset], count);
            inX_.EnQue(x);
            inY_.EnQue(y);

            x = inX_.DeQue<float>();
            y = inY_.DeQue<float>();
            AscendC::LocalTensor<float> z = outZ_.AllocTensor<float>();
            AscendC::Add(z, x, y, count);
            outZ_.EnQue(z);
            inX_.FreeTensor(x);
            inY_.FreeTensor(y);

            z = outZ_.DeQue<float>();
            AscendC::DataCopy(zGm_[offset], z, count);
            outZ_.FreeTensor(z);
        }
    }

private:
    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inX_, inY_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outZ_;
    AscendC::GlobalTensor<float> xGm_, yGm_, zGm_;
    uint32_t length_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void uvm_add(__gm__ const float* x, __gm__ const float* y,
                                              __gm__ float* z, uint32_t n)
{
    UvmAdd op;
    op.Init(x, y, z, n);
    op.Process();
}
