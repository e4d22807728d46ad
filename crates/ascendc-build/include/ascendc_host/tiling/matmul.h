// AscendC host layer, host side: the Matmul API's tiling (`matmul_tiling::MatmulApiTiling`,
// `MultiCoreMatmulTiling`, `BatchMatmulTiling`). From the matrices' shapes, types and formats,
// the cores asked for and the buffer sizes, it chooses how the M x N output splits over cores
// and the base block (baseM x baseN x baseK) each core computes at a time, and fills a
// TCubeTiling. How the output splits follows the device library's choice for the usual
// multi-core case (M >= 128 and a large M x N): of the ways to factor the cores into mDim x nDim,
// the one whose base blocks compute most per byte loaded, ties going to the one that leaves
// fewer cores' worth of the other dimension idle; otherwise the split that loads the least.
// The kernel side (matmul.h) computes right for any valid tiling; kernels that index by the
// tiling's values follow it. Documentation: docs/zh/api/SIMD-API/高阶API/矩阵计算/Matmul
// (Matmul Tiling类).
#ifndef ASCENDC_HOST_TILING_MATMUL_H
#define ASCENDC_HOST_TILING_MATMUL_H

#include "../../kernel_tiling/kernel_tiling.h"
#include "../../tiling/platform/platform_ascendc.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace matmul_tiling {

enum class TPosition : int32_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    MAX,
};

enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR = ND, COLUMN_MAJOR = 8 };

enum class DataType : int32_t {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_BF16 = 27,
    DT_INT4 = 29,
    DT_FLOAT8_E5M2 = 35,
    DT_FLOAT8_E4M3FN = 36,
    DT_HIFLOAT8 = 34,
};

enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
enum class MatrixMadType : int32_t { NORMAL = 0, HF32 = 1, MXMODE = 2 };
enum class DequantType : int32_t { SCALAR = 0, TENSOR = 1 };
enum class ScheduleType : int32_t { INNER_PRODUCT = 0, OUTER_PRODUCT = 1, N_BUFFER_33 = 2 };

inline int32_t bits_of(DataType t)
{
    switch (t) {
        case DataType::DT_FLOAT:
        case DataType::DT_INT32:
        case DataType::DT_UINT32:
            return 32;
        case DataType::DT_INT8:
        case DataType::DT_UINT8:
        case DataType::DT_FLOAT8_E5M2:
        case DataType::DT_FLOAT8_E4M3FN:
        case DataType::DT_HIFLOAT8:
        case DataType::DT_BOOL:
            return 8;
        case DataType::DT_INT4:
            return 4;
        case DataType::DT_INT64:
        case DataType::DT_UINT64:
        case DataType::DT_DOUBLE:
            return 64;
        default:
            return 16;
    }
}

struct MatmulType {
    TPosition pos = TPosition::GM;
    CubeFormat type = CubeFormat::ND;
    DataType dataType = DataType::DT_FLOAT16;
    bool isTrans = false;
};

struct BufferPool {
    int32_t l1Size = 512 * 1024;
    int32_t l0CSize = 128 * 1024;
    int32_t ubSize = 192 * 1024;
    int32_t l0ASize = 64 * 1024;
    int32_t l0BSize = 64 * 1024;
    int32_t btSize = 1024;
};

struct MatmulConfigParams {
    int32_t mmConfigType = 1;
    bool enableL1CacheUB = false;
    ScheduleType scheduleType = ScheduleType::INNER_PRODUCT;
    MatrixTraverse traverse = MatrixTraverse::NOSET;
    bool enVecND2NZ = false;
};

class MatmulApiTiling {
public:
    MatmulApiTiling() = default;
    explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform)
    {
        uint64_t v = 0;
        ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::L1, v);
        pool_.l1Size = static_cast<int32_t>(v);
        ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, v);
        pool_.l0CSize = static_cast<int32_t>(v);
        ascendcPlatform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, v);
        pool_.ubSize = static_cast<int32_t>(v);
        cores_ = static_cast<int32_t>(ascendcPlatform.GetCoreNumAic());
    }
    virtual ~MatmulApiTiling() = default;

    int32_t SetAType(TPosition pos, CubeFormat format, DataType type, bool isTrans = false)
    {
        a_ = MatmulType{pos, format, type, isTrans};
        return 0;
    }
    int32_t SetBType(TPosition pos, CubeFormat format, DataType type, bool isTrans = false)
    {
        b_ = MatmulType{pos, format, type, isTrans};
        return 0;
    }
    int32_t SetCType(TPosition pos, CubeFormat format, DataType type)
    {
        c_ = MatmulType{pos, format, type, false};
        return 0;
    }
    int32_t SetBiasType(TPosition pos, CubeFormat format, DataType type)
    {
        bias_ = MatmulType{pos, format, type, false};
        return 0;
    }
    int32_t SetDequantType(DequantType) { return 0; }
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKIn)
    {
        return SetOrgShape(orgMIn, orgNIn, orgKIn, orgKIn);
    }
    int32_t SetOrgShape(int32_t orgMIn, int32_t orgNIn, int32_t orgKaIn, int32_t orgKbIn)
    {
        orgM_ = orgMIn;
        orgN_ = orgNIn;
        orgKa_ = orgKaIn;
        orgKb_ = orgKbIn;
        return 0;
    }
    int32_t SetShape(int32_t m, int32_t n, int32_t k)
    {
        m_ = m;
        n_ = n;
        k_ = k;
        return 0;
    }
    int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1)
    {
        fixM_ = baseMIn;
        fixN_ = baseNIn;
        fixK_ = baseKIn;
        return 0;
    }
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1,
                           int32_t btSize = -1)
    {
        if (l1Size > 0) {
            pool_.l1Size = l1Size;
        }
        if (l0CSize > 0) {
            pool_.l0CSize = l0CSize;
        }
        if (ubSize > 0) {
            pool_.ubSize = ubSize;
        }
        if (btSize > 0) {
            pool_.btSize = btSize;
        }
        return 0;
    }
    int32_t SetBias(bool isBiasIn = false)
    {
        isBias_ = isBiasIn;
        return 0;
    }
    int32_t EnableBias(bool isBiasIn = false) { return SetBias(isBiasIn); }
    int32_t SetTraverse(MatrixTraverse traverse)
    {
        traverse_ = traverse;
        return 0;
    }
    int32_t SetMadType(MatrixMadType) { return 0; }
    int32_t SetSplitRange(int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1,
                          int32_t = -1)
    {
        return 0;
    }
    void SetMatmulConfigParams(const MatmulConfigParams& params) { config_ = params; }
    void SetMatmulConfigParams(int32_t mmConfigTypeIn = 1, bool enableL1CacheUBIn = false,
                               ScheduleType scheduleTypeIn = ScheduleType::INNER_PRODUCT,
                               MatrixTraverse traverseIn = MatrixTraverse::NOSET,
                               bool enVecND2NZIn = false)
    {
        config_ = MatmulConfigParams{mmConfigTypeIn, enableL1CacheUBIn, scheduleTypeIn,
                                     traverseIn, enVecND2NZIn};
        if (traverseIn != MatrixTraverse::NOSET) {
            traverse_ = traverseIn;
        }
    }
    int32_t SetSparse(bool) { return 0; }
    void SetHF32(bool, int32_t = 0) {}

    template <typename Tiling>
    int64_t GetTiling(Tiling& tiling)
    {
        return compute(tiling, 1);
    }

    // What GetTiling chose (after a call).
    int32_t GetBaseM() const { return baseM_; }
    int32_t GetBaseN() const { return baseN_; }
    int32_t GetBaseK() const { return baseK_; }

protected:
    // The tiling for `cores` cores (1 for the single-core MatmulApiTiling).
    template <typename Tiling>
    int64_t compute(Tiling& t, int32_t cores)
    {
        const int32_t M = m_ > 0 ? m_ : orgM_;
        const int32_t N = n_ > 0 ? n_ : orgN_;
        const int32_t K = k_ > 0 ? k_ : orgKa_;
        if (M <= 0 || N <= 0 || K <= 0) {
            return -1;
        }
        const int32_t orgM = orgM_ > 0 ? orgM_ : M;
        const int32_t orgN = orgN_ > 0 ? orgN_ : N;
        const int32_t orgKa = orgKa_ > 0 ? orgKa_ : K;
        const int32_t orgKb = orgKb_ > 0 ? orgKb_ : K;
        const int32_t abits = bits_of(a_.dataType);
        const int32_t c0 = 256 / abits;  // elements of the A type in 32 bytes
        int32_t mDim = 1, nDim = 1;
        int32_t singleM = M, singleN = N;
        if (singleM_ > 0 || singleN_ > 0) {
            singleM = singleM_ > 0 ? std::min(singleM_, M) : M;
            singleN = singleN_ > 0 ? std::min(singleN_, N) : N;
            mDim = ceil_div(M, singleM);
            nDim = ceil_div(N, singleN);
        } else if (cores > 1) {
            std::tie(mDim, nDim) = split(M, N, K, cores, abits);
            singleM = ceil_div(M, mDim);
            singleN = ceil_div(N, nDim);
            mDim = ceil_div(M, singleM);
            nDim = ceil_div(N, singleN);
        }
        const int32_t singleK = singleK_ > 0 ? singleK_ : K;
        last_single_[0] = singleM;
        last_single_[1] = singleN;
        last_single_[2] = singleK;
        last_dims_[0] = mDim;
        last_dims_[1] = nDim;
        // The base block.
        int32_t baseM = fixM_ > 0 ? fixM_ : std::min(128, align(singleM, 16));
        int32_t baseN = fixN_ > 0 ? fixN_ : std::min(256, align(singleN, 16));
        int32_t baseK = fixK_;
        if (baseK <= 0) {
            const int32_t l0_elems = 32 * 1024 * 8 / abits;  // half of L0A / L0B: double buffered
            baseK = std::min(l0_elems / std::max(baseM, 1), l0_elems / std::max(baseN, 1));
            baseK = std::max(c0, baseK / c0 * c0);
            baseK = std::min(baseK, align(singleK, c0));
            baseK = std::min(baseK, 256 * 8 / abits * 2);
        }
        while (baseM * baseN * 4 > pool_.l0CSize && baseN > 16) {
            baseN = align(baseN / 2, 16);
        }
        baseM_ = baseM;
        baseN_ = baseN;
        baseK_ = baseK;
        const int32_t kIter = ceil_div(singleK, baseK);
        const int32_t stepK = std::max(1, std::min(kIter, 4));
        t.usedCoreNum = mDim * nDim;
        t.M = orgM;
        t.N = orgN;
        t.Ka = orgKa;
        t.Kb = orgKb;
        t.singleCoreM = singleM;
        t.singleCoreN = singleN;
        t.singleCoreK = singleK;
        t.baseM = baseM;
        t.baseN = baseN;
        t.baseK = baseK;
        t.stepM = 1;
        t.stepN = 1;
        t.stepKa = stepK;
        t.stepKb = stepK;
        t.depthA1 = stepK * 2;
        t.depthB1 = stepK * 2;
        t.isBias = isBias_ ? 1 : 0;
        t.transLength = 0;
        t.iterateOrder = traverse_ == MatrixTraverse::FIRSTN ? 1 : 0;
        t.shareMode = 0;
        t.shareL1Size = (baseM * baseK + baseK * baseN) * abits / 8 * stepK * 2;
        t.shareL0CSize = baseM * baseN * 4;
        t.shareUbSize = 0;
        t.batchM = 1;
        t.batchN = 1;
        t.singleBatchM = 1;
        t.singleBatchN = 1;
        t.dbL0A = 2;
        t.dbL0B = 2;
        t.dbL0C = 1;
        return 0;
    }

    static int32_t ceil_div(int32_t a, int32_t b) { return b == 0 ? 0 : (a + b - 1) / b; }
    static int32_t align(int32_t a, int32_t b) { return ceil_div(a, b) * b; }

    // mDim x nDim for `cores` cores.
    std::pair<int32_t, int32_t> split(int32_t M, int32_t N, int32_t K, int32_t cores,
                                      int32_t abits) const
    {
        const int64_t mn = int64_t{M} * N;
        const bool split_mn = M >= 128 && mn > int64_t{26214} * cores;
        std::vector<std::pair<int32_t, int32_t>> pairs;
        for (int32_t m = 1; m <= cores; ++m) {
            if (cores % m == 0) {
                pairs.emplace_back(m, cores / m);
            }
        }
        if (split_mn) {
            // The device library's choice: compute per byte moved of the base blocks, then
            // (within 1% of compute) the share of each dimension left to the other.
            const int32_t bm = fixM_ > 0 ? fixM_ : 128;
            const int32_t bn = fixN_ > 0 ? fixN_ : 256;
            const int32_t bk = 128 * 8 / abits;
            struct Score {
                std::pair<int32_t, int32_t> f;
                double cycles, intensity, band;
            };
            std::vector<Score> scores;
            for (auto f : pairs) {
                const int32_t sm = ceil_div(M, f.first);
                const int32_t sn = ceil_div(N, f.second);
                double cycles = 0, memory = 0;
                for (int32_t i = 0; i < sm; i += bm) {
                    for (int32_t j = 0; j < sn; j += bn) {
                        const int32_t m = std::min(bm, sm - i);
                        const int32_t n = std::min(bn, sn - j);
                        cycles += double(m) * n * bk;
                        memory += (double(m) * bk + double(n) * bk) * abits / 8;
                    }
                }
                const double band = double((cores - f.first) * bm + (cores - f.second) * bn) /
                                     double((bm + bn) * cores);
                scores.push_back({f, cycles, memory > 0 ? cycles / memory : 0, band});
            }
            std::stable_sort(scores.begin(), scores.end(), [](const Score& a, const Score& b) {
                if (std::fabs(a.intensity - b.intensity) > 1e-6) {
                    return a.intensity > b.intensity;
                }
                if (std::fabs(a.cycles - b.cycles) < 0.01 * b.cycles) {
                    return a.band > b.band;
                }
                return a.cycles < b.cycles;
            });
            return scores.front().f;
        }
        // Otherwise: every core count up to `cores`, the most cores with work, then the least
        // data loaded (each core loads its rows of A and its columns of B).
        std::pair<int32_t, int32_t> best{1, 1};
        int64_t best_load = -1;
        int32_t best_used = 0;
        for (int32_t c = cores; c >= 1; --c) {
            for (int32_t m = 1; m <= c; ++m) {
                if (c % m != 0) {
                    continue;
                }
                const int32_t n = c / m;
                const int32_t sm = ceil_div(M, m), sn = ceil_div(N, n);
                if (sm < 16 && m > 1) {
                    continue;
                }
                if (sn < 16 && n > 1) {
                    continue;
                }
                const int32_t used = ceil_div(M, sm) * ceil_div(N, sn);
                const int64_t load = int64_t{sm} * K * n * m + int64_t{sn} * K * m * n;
                if (used > best_used || (used == best_used && (best_load < 0 || load < best_load))) {
                    best = {m, n};
                    best_used = used;
                    best_load = load;
                }
            }
        }
        return best;
    }

    MatmulType a_, b_, c_, bias_;
    BufferPool pool_;
    MatmulConfigParams config_;
    int32_t cores_ = 24;
    int32_t orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0;
    int32_t m_ = 0, n_ = 0, k_ = 0;
    int32_t fixM_ = -1, fixN_ = -1, fixK_ = -1;
    int32_t singleM_ = -1, singleN_ = -1, singleK_ = -1;
    bool isBias_ = false;
    MatrixTraverse traverse_ = MatrixTraverse::NOSET;
    int32_t baseM_ = 0, baseN_ = 0, baseK_ = 0;
    int32_t last_single_[3] = {0, 0, 0};
    int32_t last_dims_[2] = {1, 1};
};

class MultiCoreMatmulTiling : public MatmulApiTiling {
public:
    MultiCoreMatmulTiling() = default;
    explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform)
        : MatmulApiTiling(ascendcPlatform), dim_(cores_)
    {
    }
    int32_t SetDim(int32_t dim)
    {
        dim_ = dim;
        return 0;
    }
    int32_t SetSingleShape(int32_t singleMIn = -1, int32_t singleNIn = -1, int32_t singleKIn = -1)
    {
        singleM_ = singleMIn;
        singleN_ = singleNIn;
        singleK_ = singleKIn;
        return 0;
    }
    int32_t SetSingleRange(int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1, int32_t = -1,
                           int32_t = -1)
    {
        return 0;
    }
    int32_t EnableMultiCoreSplitK(bool) { return 0; }
    int32_t SetSplitK(bool) { return 0; }
    int32_t SetAlignSplit(int32_t, int32_t, int32_t) { return 0; }
    template <typename Tiling>
    int64_t GetTiling(Tiling& tiling)
    {
        return compute(tiling, std::max(1, dim_));
    }
    int32_t GetSingleShape(int32_t& shapeM, int32_t& shapeN, int32_t& shapeK) const
    {
        shapeM = last_single_[0];
        shapeN = last_single_[1];
        shapeK = last_single_[2];
        return 0;
    }
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) const
    {
        dim = last_dims_[0] * last_dims_[1];
        mDim = last_dims_[0];
        nDim = last_dims_[1];
        return 0;
    }

protected:
    int32_t dim_ = 1;
};

// Batched matmul: the same tiling for each batch.
class BatchMatmulTiling : public MultiCoreMatmulTiling {
public:
    using MultiCoreMatmulTiling::MultiCoreMatmulTiling;
    int32_t SetBatchInfoForNormal(int32_t batchA, int32_t batchB, int32_t m, int32_t n, int32_t k)
    {
        batchA_ = batchA;
        batchB_ = batchB;
        SetOrgShape(m, n, k);
        SetShape(m, n, k);
        return 0;
    }
    int32_t SetBatchNum(int32_t batch)
    {
        batchA_ = batchB_ = batch;
        return 0;
    }
    int32_t SetALayout(int32_t, int32_t, int32_t, int32_t, int32_t) { return 0; }
    int32_t SetBLayout(int32_t, int32_t, int32_t, int32_t, int32_t) { return 0; }
    int32_t SetCLayout(int32_t, int32_t, int32_t, int32_t, int32_t) { return 0; }
    template <typename Tiling>
    int64_t GetTiling(Tiling& tiling)
    {
        int64_t rc = MultiCoreMatmulTiling::GetTiling(tiling);
        tiling.BatchNum = std::max(batchA_, batchB_);
        tiling.batchM = batchA_;
        tiling.batchN = batchB_;
        tiling.singleBatchM = batchA_;
        tiling.singleBatchN = batchB_;
        return rc;
    }

private:
    int32_t batchA_ = 1, batchB_ = 1;
};

}  // namespace matmul_tiling

#endif
