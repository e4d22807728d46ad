// scale_add: y[i] = a * x[i] + b for i < n, applied `rounds` times (y = a * y + b again after the
// first), the computation of each chunk of the copy/compute overlap pipeline: `rounds` sets how
// much computing there is per byte copied.
//
// Each block takes a contiguous, 32-byte aligned share of the n elements and walks it in tiles:
// copy a tile of x into local memory, scale it and add b, copy the tile out. The last tile of a
// share may be shorter than a whole 32 bytes: it moves with DataCopyPad.
#include "kernel_operator.h"

namespace {

constexpr uint32_t TILE = 1024;  // floats per tile

class ScaleAdd {
public:
    __aicore__ inline void Init(__gm__ const float* x, __gm__ float* y, float a, float b,
                                uint32_t rounds, uint32_t n)
    {
        rounds_ = rounds;
        const uint32_t blocks = static_cast<uint32_t>(AscendC::GetBlockNum());
        const uint32_t idx = static_cast<uint32_t>(AscendC::GetBlockIdx());
        uint32_t share = (n + blocks - 1) / blocks;
        share = (share + 7) / 8 * 8;  // whole 32-byte units
        const uint32_t start = idx * share < n ? idx * share : n;
        length_ = n - start < share ? n - start : share;
        a_ = a;
        b_ = b;
        xGm_.SetGlobalBuffer(const_cast<__gm__ float*>(x) + start, length_);
        yGm_.SetGlobalBuffer(y + start, length_);
        pipe_.InitBuffer(in_, 2, TILE * sizeof(float));
        pipe_.InitBuffer(out_, 2, TILE * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t offset = 0; offset < length_; offset += TILE) {
            const uint32_t count = length_ - offset < TILE ? length_ - offset : TILE;
            CopyIn(offset, count);
            Compute(count);
            CopyOut(offset, count);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t offset, uint32_t count)
    {
        AscendC::LocalTensor<float> x = in_.AllocTensor<float>();
        if (count % 8 == 0) {
            AscendC::DataCopy(x, xGm_[offset], count);
        } else {
            AscendC::DataCopyExtParams params{1, count * static_cast<uint32_t>(sizeof(float)), 0,
                                              0, 0};
            AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
            AscendC::DataCopyPad(x, xGm_[offset], params, pad);
        }
        in_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        AscendC::LocalTensor<float> x = in_.DeQue<float>();
        AscendC::LocalTensor<float> y = out_.AllocTensor<float>();
        AscendC::Muls(y, x, a_, count);
        AscendC::Adds(y, y, b_, count);
        for (uint32_t r = 1; r < rounds_; ++r) {
            AscendC::Muls(y, y, a_, count);
            AscendC::Adds(y, y, b_, count);
        }
        out_.EnQue(y);
        in_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t offset, uint32_t count)
    {
        AscendC::LocalTensor<float> y = out_.DeQue<float>();
        if (count % 8 == 0) {
            AscendC::DataCopy(yGm_[offset], y, count);
        } else {
            AscendC::DataCopyExtParams params{1, count * static_cast<uint32_t>(sizeof(float)), 0,
                                              0, 0};
            AscendC::DataCopyPad(yGm_[offset], y, params);
        }
        out_.FreeTensor(y);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> in_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> out_;
    AscendC::GlobalTensor<float> xGm_, yGm_;
    uint32_t length_ = 0;
    uint32_t rounds_ = 1;
    float a_ = 0.0f;
    float b_ = 0.0f;
};

}  // namespace

extern "C" __global__ __aicore__ void scale_add(__gm__ const float* x, __gm__ float* y, float a,
                                                float b, uint32_t rounds, uint32_t n)
{
    ScaleAdd op;
    op.Init(x, y, a, b, rounds, n);
    op.Process();
}
