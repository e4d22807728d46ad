// kernel_add: dst[i] = a[i] + b[i] over n floats, on as many blocks as the launch gives it (the
// sample launches it on the device's vector-core limit). Each block adds one contiguous share
// of n / blocks elements (the caller makes that a multiple of 8: whole 32-byte units), in tiles
// that pass through a VECIN and a VECOUT queue: copy in, add, copy out.
#include "kernel_operator.h"

namespace {

constexpr uint32_t TILE = 256;  // floats per tile

class KernelAdd {
public:
    __aicore__ inline void Init(__gm__ const float* a, __gm__ const float* b, __gm__ float* dst,
                                uint32_t n)
    {
        share_ = n / static_cast<uint32_t>(AscendC::GetBlockNum());
        const uint32_t first = share_ * static_cast<uint32_t>(AscendC::GetBlockIdx());
        aGm_.SetGlobalBuffer(const_cast<__gm__ float*>(a) + first, share_);
        bGm_.SetGlobalBuffer(const_cast<__gm__ float*>(b) + first, share_);
        dstGm_.SetGlobalBuffer(dst + first, share_);
        pipe_.InitBuffer(in_, 2, 2 * TILE * sizeof(float));
        pipe_.InitBuffer(out_, 1, TILE * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t done = 0; done < share_; done += TILE) {
            const uint32_t len = share_ - done < TILE ? share_ - done : TILE;
            // One local buffer holds a tile of each input side by side.
            AscendC::LocalTensor<float> ab = in_.AllocTensor<float>();
            AscendC::DataCopy(ab, aGm_[done], len);
            AscendC::DataCopy(ab[TILE], bGm_[done], len);
            in_.EnQue(ab);

            ab = in_.DeQue<float>();
            AscendC::LocalTensor<float> sum = out_.AllocTensor<float>();
            AscendC::Add(sum, ab, ab[TILE], len);
            in_.FreeTensor(ab);
            out_.EnQue(sum);

            sum = out_.DeQue<float>();
            AscendC::DataCopy(dstGm_[done], sum, len);
            out_.FreeTensor(sum);
        }
    }

private:
    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> in_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> out_;
    AscendC::GlobalTensor<float> aGm_, bGm_, dstGm_;
    uint32_t share_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void kernel_add(__gm__ const float* a, __gm__ const float* b,
                                                 __gm__ float* dst, uint32_t n)
{
    KernelAdd op;
    op.Init(a, b, dst, n);
    op.Process();
}
