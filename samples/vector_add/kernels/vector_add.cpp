// vector_add: dst[i] = a[i] + alpha * b[i] for i < n.
//
// Each block takes a contiguous, 32-byte aligned share of the n elements and walks it in tiles:
// copy a tile of a and b into local memory, scale b by alpha, add a, copy the tile out. The last
// tile of a share may be shorter than 32 bytes' multiple: it moves with DataCopyPad.
#include "kernel_operator.h"

namespace {

constexpr uint32_t TILE = 512;  // floats per tile

class VectorAdd {
public:
    __aicore__ inline void Init(__gm__ const float* a, __gm__ const float* b, __gm__ float* dst,
                                float alpha, uint32_t n)
    {
        const uint32_t blocks = static_cast<uint32_t>(AscendC::GetBlockNum());
        const uint32_t idx = static_cast<uint32_t>(AscendC::GetBlockIdx());
        uint32_t share = (n + blocks - 1) / blocks;
        share = (share + 7) / 8 * 8;  // whole 32-byte units
        const uint32_t start = idx * share < n ? idx * share : n;
        length_ = n - start < share ? n - start : share;
        alpha_ = alpha;
        aGm_.SetGlobalBuffer(const_cast<__gm__ float*>(a) + start, length_);
        bGm_.SetGlobalBuffer(const_cast<__gm__ float*>(b) + start, length_);
        dstGm_.SetGlobalBuffer(dst + start, length_);
        pipe_.InitBuffer(inA_, 2, TILE * sizeof(float));
        pipe_.InitBuffer(inB_, 2, TILE * sizeof(float));
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
    __aicore__ inline void Load(const AscendC::LocalTensor<float>& dst,
                                const AscendC::GlobalTensor<float>& src, uint32_t count)
    {
        if (count % 8 == 0) {
            AscendC::DataCopy(dst, src, count);
        } else {
            AscendC::DataCopyExtParams params{1, count * static_cast<uint32_t>(sizeof(float)), 0,
                                              0, 0};
            AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
            AscendC::DataCopyPad(dst, src, params, pad);
        }
    }

    __aicore__ inline void CopyIn(uint32_t offset, uint32_t count)
    {
        AscendC::LocalTensor<float> a = inA_.AllocTensor<float>();
        AscendC::LocalTensor<float> b = inB_.AllocTensor<float>();
        Load(a, aGm_[offset], count);
        Load(b, bGm_[offset], count);
        inA_.EnQue(a);
        inB_.EnQue(b);
    }

    __aicore__ inline void Compute(uint32_t count)
    {
        AscendC::LocalTensor<float> a = inA_.DeQue<float>();
        AscendC::LocalTensor<float> b = inB_.DeQue<float>();
        AscendC::LocalTensor<float> dst = out_.AllocTensor<float>();
        AscendC::Muls(dst, b, alpha_, count);
        AscendC::Add(dst, a, dst, count);
        out_.EnQue(dst);
        inA_.FreeTensor(a);
        inB_.FreeTensor(b);
    }

    __aicore__ inline void CopyOut(uint32_t offset, uint32_t count)
    {
        AscendC::LocalTensor<float> dst = out_.DeQue<float>();
        if (count % 8 == 0) {
            AscendC::DataCopy(dstGm_[offset], dst, count);
        } else {
            AscendC::DataCopyExtParams params{1, count * static_cast<uint32_t>(sizeof(float)), 0,
                                              0, 0};
            AscendC::DataCopyPad(dstGm_[offset], dst, params);
        }
        out_.FreeTensor(dst);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inA_, inB_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> out_;
    AscendC::GlobalTensor<float> aGm_, bGm_, dstGm_;
    uint32_t length_ = 0;
    float alpha_ = 0.0f;
};

}  // namespace

extern "C" __global__ __aicore__ void vector_add(__gm__ const float* a, __gm__ const float* b,
                                                 __gm__ float* dst, float alpha, uint32_t n)
{
    VectorAdd op;
    op.Init(a, b, dst, alpha, n);
    op.Process();
}
