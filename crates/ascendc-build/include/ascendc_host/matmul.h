// AscendC host layer: the Matmul high-level API (`Matmul<A, B, C, Bias, CFG>`,
// `REGIST_MATMUL_OBJ`). A Matmul object computes its core's part of C = A x B (+ bias): the
// single-core shape of its tiling (or SetSingleShape / SetTail), A and B from global memory or
// a local buffer, ND (row-major; transposed when asked) or Nz, C to global memory
// (`IterateAll`) or base block by base block (`Iterate` + `GetTensorC`, M first unless the
// tiling's iterateOrder says N), accumulating in float (int32 for int8) and rounding once to C's
// type. On the device the cube core runs the matrix work for the vector cores of a mixed
// kernel: here the vector core computes it itself, and in a mixed kernel
// `REGIST_MATMUL_OBJ` ends the cube core's part of the kernel (its only job is serving the
// vector cores), unless the kernel is cube-only (`ASCENDC_CUBE_ONLY`). Every global range is
// checked. Documentation: docs/zh/api/SIMD-API/高阶API/矩阵计算/Matmul.
#ifndef ASCENDC_HOST_MATMUL_H
#define ASCENDC_HOST_MATMUL_H

#include "copy.h"
#include "pipe.h"
#include "sysvar.h"
#include "tensor.h"
#include "../kernel_tiling/kernel_tiling.h"

#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

// The matrices' formats (global, as the library declares them).
enum class CubeFormat : int32_t {
    ND = 0,
    NZ,
    ZN,
    ZZ,
    NN,
    ND_ALIGN,
    SCALAR,
    VECTOR,
    ROW_MAJOR = ND,
    COLUMN_MAJOR = 8,
};

enum class LayoutMode : uint8_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };

namespace AscendC {

enum class MatmulConfigMode : uint8_t {
    CONFIG_NORM = 0,
    CONFIG_MDL,
    CONFIG_SPECIALMDL,
    CONFIG_IBSHARE,
};

enum class IterateOrder : uint8_t { ORDER_M = 0, ORDER_N, UNDEF };
enum class ScheduleType : uint8_t { INNER_PRODUCT = 0, OUTER_PRODUCT };
enum class MatmulVersion : uint8_t { NORMAL = 0, MULTI_DATA_LOAD, BASIC_BLOCK, IBSHARE_NORM };

// The configuration of a Matmul (what the host layer reads of it: nothing changes results).
struct MatmulConfig {
    bool doNorm = true;
    bool doBasicBlock = false;
    bool doMultiDataLoad = false;
    uint32_t basicM = 0;
    uint32_t basicN = 0;
    uint32_t basicK = 0;
    bool intrinsicsCheck = false;
    bool isNBatch = false;
    bool enVecND2NZ = false;
    bool doSpecialBasicBlock = false;
    uint32_t doMTE2Preload = 0;
    uint32_t singleCoreM = 0;
    uint32_t singleCoreN = 0;
    uint32_t singleCoreK = 0;
    uint32_t stepM = 0;
    uint32_t stepN = 0;
    uint32_t baseMN = 0;
    uint32_t singleCoreMN = 0;
    bool enUnitFlag = true;
    bool isPerTensor = false;
    bool hasAntiQuantOffset = false;
    bool doIBShareNorm = false;
    bool doSpecialMDL = false;
    bool enableInit = true;
    uint32_t batchMode = 0;
    bool enableEnd = true;
    bool enableGetTensorC = true;
    bool enableSetOrgShape = true;
    bool enableSetBias = true;
    bool enableSetTail = true;
    bool enableQuantVector = true;
    bool enableSetDefineData = true;
    uint8_t iterateMode = 0;
    bool enableReuse = true;
    bool enableUBReuse = false;
    bool enableL1CacheUB = false;
    bool intraBlockPartSum = false;
    IterateOrder iterateOrder = IterateOrder::UNDEF;
    ScheduleType scheduleType = ScheduleType::INNER_PRODUCT;
    bool enableDoubleCache = false;
    bool isBiasBatch = true;
    bool enableStaticPadZeros = false;
    bool isPartialOutput = false;
    bool enableMixDualMaster = false;
    bool isA2B2Shared = false;
    bool isEnableChannelSplit = false;
    bool enableKdimReorderLoad = false;
};

constexpr MatmulConfig CFG_NORM = {};
constexpr MatmulConfig CFG_MDL = {false, false, true};
constexpr MatmulConfig CFG_IBSHARE_NORM = {};
constexpr MatmulConfig MM_CFG_BB = {false, true};
constexpr MatmulConfig CFG_MDL_REORDER = {false, false, true};
constexpr MatmulConfig CFG_MDL_OUTER_PRODUCT_ORDER_M = {false, false, true};
constexpr MatmulConfig CFG_PRELOAD = {false, false, true};
constexpr MatmulConfig CFG_MM = {};
constexpr MatmulConfig CFG_NORM_A = {};

constexpr MatmulConfig GetNormalConfig(bool intrinsicsLimit = false, bool batchLoop = false,
                                       bool isVecND2NZ = false, uint32_t = 0,
                                       bool = false, bool = false, bool = false)
{
    MatmulConfig c{};
    c.intrinsicsCheck = intrinsicsLimit;
    c.isNBatch = batchLoop;
    c.enVecND2NZ = isVecND2NZ;
    return c;
}
constexpr MatmulConfig GetMDLConfig(bool intrinsicsLimit = false, bool batchLoop = false,
                                    uint32_t doMTE2Preload = 0, bool isVecND2NZ = false,
                                    bool = false, bool = false, bool = false)
{
    MatmulConfig c{false, false, true};
    c.intrinsicsCheck = intrinsicsLimit;
    c.isNBatch = batchLoop;
    c.doMTE2Preload = doMTE2Preload;
    c.enVecND2NZ = isVecND2NZ;
    return c;
}
constexpr MatmulConfig GetSpecialMDLConfig() { return MatmulConfig{false, false, true}; }
constexpr MatmulConfig GetIBShareNormConfig() { return MatmulConfig{}; }
constexpr MatmulConfig GetBasicConfig(uint32_t basicM, uint32_t basicN, uint32_t basicK)
{
    MatmulConfig c{false, true};
    c.basicM = basicM;
    c.basicN = basicN;
    c.basicK = basicK;
    return c;
}

// One matrix of a Matmul: where it is, its format, element type, whether it is transposed.
template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
    constexpr static TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    using T = TYPE;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
    constexpr static bool ibShare = IBSHARE;
};

template <void (*DataCopyOut)(const __gm__ void*, const LocalTensor<int8_t>&, const void*,
                              const uint64_t, const uint32_t) = nullptr,
          void (*CopyA1)(const LocalTensor<int8_t>&, const __gm__ void*, int, int, int, int, int,
                         int) = nullptr,
          void (*CopyB1)(const LocalTensor<int8_t>&, const __gm__ void*, int, int, int, int, int,
                         int) = nullptr>
struct MatmulCallBackFunc {
};

}  // namespace AscendC

namespace ascendc_host {

// Where a Matmul's operand is: global memory, or a local buffer.
template <typename T>
struct MatmulSrc {
    bool set = false;
    bool local = false;
    bool trans = false;
    AscendC::GlobalTensor<T> gm;
    AscendC::LocalTensor<T> lt;
    bool scalar = false;
    T value = T();
};

// Element (r, c) of a rows x cols matrix stored ND (row stride `ld`) or Nz (column blocks of
// 32 bytes, `ld` rows each aligned to 16).
template <typename T>
inline uint64_t matrix_index(CubeFormat f, uint64_t r, uint64_t c, uint64_t ld)
{
    if (f == CubeFormat::NZ) {
        constexpr uint64_t c0 = 32 / sizeof(T);
        const uint64_t rows = (ld + 15) / 16 * 16;
        return (c / c0) * rows * c0 + r * c0 + c % c0;
    }
    return r * ld + c;
}

}  // namespace ascendc_host

namespace AscendC {

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE,
          const MatmulConfig& MM_CFG = CFG_NORM, class MM_CB = MatmulCallBackFunc<>,
          class = void>
class Matmul {
public:
    using SrcAT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    using Acc = std::conditional_t<std::is_integral_v<DstT> && std::is_integral_v<SrcAT>, int64_t, double>;

    Matmul() = default;

    void Init(const TCubeTiling* tiling, TPipe* tpipe = nullptr)
    {
        (void)tpipe;
        if (tiling == nullptr) {
            ascendc_host::fault("Matmul::Init: no tiling");
        }
        t_ = *tiling;
        M_ = t_.M;
        N_ = t_.N;
        Ka_ = t_.Ka;
        Kb_ = t_.Kb;
        sM_ = t_.singleCoreM;
        sN_ = t_.singleCoreN;
        sK_ = t_.singleCoreK;
        ready_ = true;
    }
    void Init(const TCubeTiling& tiling, TPipe* tpipe = nullptr) { Init(&tiling, tpipe); }

    void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK, orgN); }
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0)
    {
        M_ = orgM;
        N_ = orgN;
        Ka_ = orgKa;
        Kb_ = orgKb;
        Nc_ = orgKc;
    }
    void SetSingleShape(int singleM, int singleN, int singleK)
    {
        sM_ = singleM;
        sN_ = singleN;
        sK_ = singleK;
    }
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1)
    {
        if (tailM > 0) {
            sM_ = tailM;
        }
        if (tailN > 0) {
            sN_ = tailN;
        }
        if (tailK > 0) {
            sK_ = tailK;
        }
    }

    void SetTensorA(const GlobalTensor<SrcAT>& gm, bool isTransposeA = false)
    {
        a_.set = true;
        a_.local = false;
        a_.scalar = false;
        a_.gm = gm;
        a_.trans = isTransposeA || A_TYPE::isTrans;
        reset_iteration();
    }
    void SetTensorA(const LocalTensor<SrcAT>& lt, bool isTransposeA = false)
    {
        a_.set = true;
        a_.local = true;
        a_.scalar = false;
        a_.lt = lt;
        a_.trans = isTransposeA || A_TYPE::isTrans;
        reset_iteration();
    }
    void SetTensorA(SrcAT aScalar)
    {
        a_.set = true;
        a_.scalar = true;
        a_.value = aScalar;
        reset_iteration();
    }
    void SetTensorB(const GlobalTensor<SrcBT>& gm, bool isTransposeB = false)
    {
        b_.set = true;
        b_.local = false;
        b_.scalar = false;
        b_.gm = gm;
        b_.trans = isTransposeB || B_TYPE::isTrans;
        reset_iteration();
    }
    void SetTensorB(const LocalTensor<SrcBT>& lt, bool isTransposeB = false)
    {
        b_.set = true;
        b_.local = true;
        b_.scalar = false;
        b_.lt = lt;
        b_.trans = isTransposeB || B_TYPE::isTrans;
        reset_iteration();
    }
    void SetTensorB(SrcBT bScalar)
    {
        b_.set = true;
        b_.scalar = true;
        b_.value = bScalar;
        reset_iteration();
    }
    void SetBias(const GlobalTensor<BiasT>& gm)
    {
        bias_.set = true;
        bias_.local = false;
        bias_.gm = gm;
        reset_iteration();
    }
    void SetBias(const LocalTensor<BiasT>& lt)
    {
        bias_.set = true;
        bias_.local = true;
        bias_.lt = lt;
        reset_iteration();
    }
    void DisableBias() { bias_.set = false; }
    void ClearBias() { bias_.set = false; }
    void SetQuantScalar(const uint64_t quantScalar)
    {
        uint32_t b = static_cast<uint32_t>(quantScalar & 0xffffffffu);
        std::memcpy(&quant_, &b, sizeof(quant_));
        quant_set_ = true;
    }
    void SetQuantVector(const GlobalTensor<uint64_t>& quantTensor)
    {
        quant_vec_ = quantTensor;
        quant_vec_set_ = true;
    }
    void SetHF32(bool, int32_t = 0) {}
    void SetSubBlockIdx(uint8_t) {}
    template <class T>
    void SetWorkspace(GlobalTensor<T>&)
    {
    }
    template <class T>
    void SetWorkspace(__gm__ const T*, int)
    {
    }
    void SetLocalWorkspace(const LocalTensor<uint8_t>&) {}
    void SetUserDefInfo(const uint64_t) {}
    void SetSelfDefineData(const uint64_t) {}
    template <class T>
    void SetSelfDefineData(T)
    {
    }
    void SetBatchNum(int32_t batchA, int32_t batchB)
    {
        batchA_ = batchA;
        batchB_ = batchB;
    }
    void End() { ready_ = false; }
    void WaitIterateAll() {}
    void WaitIterateBatch() {}

    // The whole single-core C into global memory (row stride N), added to what is there with
    // enAtomic 1.
    template <bool sync = true>
    void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0,
                    bool enSequentialWrite = false, bool waitIterateAll = false,
                    bool fakeMsg = false)
    {
        (void)enSequentialWrite;
        (void)waitIterateAll;
        (void)fakeMsg;
        compute_block(0, 0, sM_, sN_, [&](uint64_t i, uint64_t j, const DstT& v) {
            store_gm(gm, i, j, v, enAtomic);
        });
    }

    // The whole single-core C into a local buffer (ND rows of sN elements, or Nz).
    template <bool sync = true>
    void IterateAll(const LocalTensor<DstT>& ub, uint8_t enAtomic = 0)
    {
        (void)enAtomic;
        DstT* d = reinterpret_cast<DstT*>(ub.host_data("Matmul::IterateAll"));
        const uint64_t room = ub.host_room() / sizeof(DstT);
        compute_block(0, 0, sM_, sN_, [&](uint64_t i, uint64_t j, const DstT& v) {
            const uint64_t k = ascendc_host::matrix_index<DstT>(C_TYPE::format, i, j,
                                                                C_TYPE::format == CubeFormat::NZ ? sM_ : sN_);
            if (k >= room) {
                ascendc_host::fault("Matmul::IterateAll: C runs past the local buffer");
            }
            d[k] = v;
        });
    }

    // Moves to the next base block of C; false when every block was taken.
    template <bool sync = true>
    bool Iterate(bool enPartialSum = false)
    {
        (void)enPartialSum;
        const int64_t mIter = (sM_ + t_.baseM - 1) / std::max(t_.baseM, 1);
        const int64_t nIter = (sN_ + t_.baseN - 1) / std::max(t_.baseN, 1);
        if (next_ >= mIter * nIter) {
            return false;
        }
        if (t_.iterateOrder == 1) {
            cur_n_ = next_ % nIter;
            cur_m_ = next_ / nIter;
        } else {
            cur_m_ = next_ % mIter;
            cur_n_ = next_ / mIter;
        }
        ++next_;
        return true;
    }

    // The current base block into a local buffer (rows of baseN elements; Nz when C is Nz).
    template <bool sync = true>
    void GetTensorC(const LocalTensor<DstT>& c, uint8_t enAtomic = 0,
                    bool enSequentialWrite = false)
    {
        (void)enAtomic;
        (void)enSequentialWrite;
        const int64_t m0 = cur_m_ * t_.baseM, n0 = cur_n_ * t_.baseN;
        const int64_t bm = std::min<int64_t>(t_.baseM, sM_ - m0);
        const int64_t bn = std::min<int64_t>(t_.baseN, sN_ - n0);
        DstT* d = reinterpret_cast<DstT*>(c.host_data("Matmul::GetTensorC"));
        const uint64_t room = c.host_room() / sizeof(DstT);
        compute_block(m0, n0, bm, bn, [&](uint64_t i, uint64_t j, const DstT& v) {
            const uint64_t k = ascendc_host::matrix_index<DstT>(
                C_TYPE::format, i - m0, j - n0, C_TYPE::format == CubeFormat::NZ ? t_.baseM : t_.baseN);
            if (k >= room) {
                ascendc_host::fault("Matmul::GetTensorC: the block runs past the local buffer");
            }
            d[k] = v;
        });
    }

    template <bool sync = true>
    void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0,
                    bool enSequentialWrite = false)
    {
        const int64_t m0 = cur_m_ * t_.baseM, n0 = cur_n_ * t_.baseN;
        const int64_t bm = std::min<int64_t>(t_.baseM, sM_ - m0);
        const int64_t bn = std::min<int64_t>(t_.baseN, sN_ - n0);
        compute_block(m0, n0, bm, bn, [&](uint64_t i, uint64_t j, const DstT& v) {
            if (enSequentialWrite) {
                store_gm_at(gm, (i - m0) * bn + (j - n0), v, enAtomic);
            } else {
                store_gm(gm, i, j, v, enAtomic);
            }
        });
    }

    template <bool sync = true>
    void GetTensorC(const GlobalTensor<DstT>& gm, const LocalTensor<DstT>& c, uint8_t enAtomic = 0,
                    bool enSequentialWrite = false)
    {
        GetTensorC<sync>(c, enAtomic, enSequentialWrite);
        GetTensorC<sync>(gm, enAtomic, enSequentialWrite);
    }

    // Batches: `batchA` x (A, B) pairs one after another, C likewise.
    template <bool sync = true, bool waitIterateBatch = false>
    void IterateBatch(const GlobalTensor<DstT>& gm, uint32_t batchA, uint32_t batchB,
                      bool enSequentialWrite, const uint32_t matrixStrideA = 0,
                      const uint32_t matrixStrideB = 0, const uint32_t matrixStrideC = 0)
    {
        (void)enSequentialWrite;
        const uint32_t batch = std::max(batchA, batchB);
        const GlobalTensor<SrcAT> a0 = a_.gm;
        const GlobalTensor<SrcBT> b0 = b_.gm;
        const uint64_t sa = matrixStrideA ? matrixStrideA : uint64_t(M_) * Ka_;
        const uint64_t sb = matrixStrideB ? matrixStrideB : uint64_t(Kb_) * N_;
        const uint64_t sc = matrixStrideC ? matrixStrideC : uint64_t(M_) * N_;
        for (uint32_t i = 0; i < batch; ++i) {
            a_.gm = a0[(batchA > 1 ? i : 0) * sa];
            b_.gm = b0[(batchB > 1 ? i : 0) * sb];
            GlobalTensor<DstT> c = gm[i * sc];
            IterateAll(c);
        }
        a_.gm = a0;
        b_.gm = b0;
    }

    template <bool sync = true>
    void IterateNBatch(const uint32_t batchLoop, uint32_t batchA, uint32_t batchB,
                       bool enSequentialWrite, const uint32_t matrixStrideA = 0,
                       const uint32_t matrixStrideB = 0, const uint32_t matrixStrideC = 0)
    {
        (void)batchLoop;
        (void)batchA;
        (void)batchB;
        (void)enSequentialWrite;
        (void)matrixStrideA;
        (void)matrixStrideB;
        (void)matrixStrideC;
        ascendc_host::fault("Matmul::IterateNBatch: not provided by the host layer");
    }

private:
    void reset_iteration()
    {
        next_ = 0;
        cur_m_ = cur_n_ = 0;
    }

    void store_gm_at(const GlobalTensor<DstT>& gm, uint64_t k, const DstT& v, uint8_t enAtomic)
    {
        uint8_t* p = gm.host_bytes("Matmul (C to GM)", k * sizeof(DstT), sizeof(DstT), true);
        if (enAtomic == 1) {
            std::lock_guard<std::mutex> lk(ascendc_host::atomic_mutex());
            DstT old = ascendc_host::load<DstT>(p);
            ascendc_host::store<DstT>(p, DstT(ascendc_host::compute_t<DstT>(old) +
                                              ascendc_host::compute_t<DstT>(v)));
        } else {
            ascendc_host::gm_write(p, reinterpret_cast<const uint8_t*>(&v), sizeof(DstT));
        }
    }

    void store_gm(const GlobalTensor<DstT>& gm, uint64_t i, uint64_t j, const DstT& v,
                  uint8_t enAtomic)
    {
        const uint64_t ld = C_TYPE::format == CubeFormat::NZ ? uint64_t(M_) : uint64_t(N_);
        store_gm_at(gm, ascendc_host::matrix_index<DstT>(C_TYPE::format, i, j, ld), v, enAtomic);
    }

    template <typename T, typename Type>
    T element(const ascendc_host::MatmulSrc<T>& s, uint64_t r, uint64_t c, uint64_t ld,
              const char* op)
    {
        if (s.scalar) {
            return s.value;
        }
        const uint64_t k = ascendc_host::matrix_index<T>(Type::format, r, c, ld);
        if (s.local) {
            if (k >= s.lt.GetSize() && (k + 1) * sizeof(T) > s.lt.host_room()) {
                ascendc_host::fault("%s: element (%llu, %llu) past the local tensor", op,
                                    static_cast<unsigned long long>(r),
                                    static_cast<unsigned long long>(c));
            }
            return reinterpret_cast<const T*>(s.lt.host_data(op))[k];
        }
        return ascendc_host::load<T>(s.gm.host_bytes(op, k * sizeof(T), sizeof(T), false));
    }

    // Computes C[m0 .. m0 + bm, n0 .. n0 + bn) of this core and hands each value to `out`.
    template <typename Out>
    void compute_block(int64_t m0, int64_t n0, int64_t bm, int64_t bn, Out&& out)
    {
        const char* op = "Matmul";
        if (!a_.set || !b_.set) {
            ascendc_host::fault("%s: SetTensorA and SetTensorB first", op);
        }
        if (bm <= 0 || bn <= 0) {
            return;
        }
        const int64_t K = sK_;
        // Leading dimensions: A is M x Ka (or Ka x M transposed), B Kb x N (or N x Kb).
        const uint64_t lda = A_TYPE::format == CubeFormat::NZ ? uint64_t(a_.trans ? Ka_ : M_)
                                                              : uint64_t(a_.trans ? M_ : Ka_);
        const uint64_t ldb = B_TYPE::format == CubeFormat::NZ ? uint64_t(b_.trans ? N_ : Kb_)
                                                              : uint64_t(b_.trans ? Kb_ : N_);
        // The rows of A and columns of B this block uses, read once.
        std::vector<Acc> A(static_cast<size_t>(bm * K)), B(static_cast<size_t>(K * bn));
        for (int64_t i = 0; i < bm; ++i) {
            for (int64_t k = 0; k < K; ++k) {
                const SrcAT v = a_.trans ? element<SrcAT, A_TYPE>(a_, k, m0 + i, lda, op)
                                         : element<SrcAT, A_TYPE>(a_, m0 + i, k, lda, op);
                A[i * K + k] = static_cast<Acc>(ascendc_host::compute_t<SrcAT>(v));
            }
        }
        for (int64_t k = 0; k < K; ++k) {
            for (int64_t j = 0; j < bn; ++j) {
                const SrcBT v = b_.trans ? element<SrcBT, B_TYPE>(b_, n0 + j, k, ldb, op)
                                         : element<SrcBT, B_TYPE>(b_, k, n0 + j, ldb, op);
                B[k * bn + j] = static_cast<Acc>(ascendc_host::compute_t<SrcBT>(v));
            }
        }
        std::vector<Acc> bias(static_cast<size_t>(bn), Acc(0));
        if (bias_.set) {
            for (int64_t j = 0; j < bn; ++j) {
                BiasT v = bias_.local
                              ? reinterpret_cast<const BiasT*>(bias_.lt.host_data(op))[n0 + j]
                              : ascendc_host::load<BiasT>(bias_.gm.host_bytes(
                                    op, uint64_t(n0 + j) * sizeof(BiasT), sizeof(BiasT), false));
                bias[j] = static_cast<Acc>(ascendc_host::compute_t<BiasT>(v));
            }
        }
        std::vector<Acc> row(static_cast<size_t>(bn));
        for (int64_t i = 0; i < bm; ++i) {
            for (int64_t j = 0; j < bn; ++j) {
                row[j] = bias[j];
            }
            for (int64_t k = 0; k < K; ++k) {
                const Acc a = A[i * K + k];
                const Acc* b = &B[k * bn];
                for (int64_t j = 0; j < bn; ++j) {
                    row[j] += a * b[j];
                }
            }
            for (int64_t j = 0; j < bn; ++j) {
                double v = static_cast<double>(row[j]);
                if (quant_vec_set_) {
                    uint64_t q = ascendc_host::load<uint64_t>(quant_vec_.host_bytes(
                        op, uint64_t(n0 + j) * 8, 8, false));
                    uint32_t bits = static_cast<uint32_t>(q & 0xffffffffu);
                    float s;
                    std::memcpy(&s, &bits, sizeof(s));
                    v *= s;
                } else if (quant_set_) {
                    v *= quant_;
                }
                DstT d;
                if constexpr (std::is_integral_v<DstT>) {
                    d = ascendc_host::convert<DstT, double>(v, RoundMode::CAST_RINT);
                } else if constexpr (std::is_same_v<DstT, float>) {
                    d = static_cast<float>(v);
                } else {
                    d = DstT(static_cast<float>(v));
                }
                out(static_cast<uint64_t>(m0 + i), static_cast<uint64_t>(n0 + j), d);
            }
        }
    }

    TCubeTiling t_{};
    bool ready_ = false;
    int M_ = 0, N_ = 0, Ka_ = 0, Kb_ = 0, Nc_ = 0;
    int sM_ = 0, sN_ = 0, sK_ = 0;
    int32_t batchA_ = 1, batchB_ = 1;
    ascendc_host::MatmulSrc<SrcAT> a_;
    ascendc_host::MatmulSrc<SrcBT> b_;
    ascendc_host::MatmulSrc<BiasT> bias_;
    float quant_ = 1.0f;
    bool quant_set_ = false;
    GlobalTensor<uint64_t> quant_vec_;
    bool quant_vec_set_ = false;
    int64_t next_ = 0;
    int64_t cur_m_ = 0, cur_n_ = 0;
};

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE,
          const MatmulConfig& MM_CFG = CFG_NORM, class MM_CB = MatmulCallBackFunc<>>
using MatmulImpl = Matmul<A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE, MM_CFG, MM_CB>;

}  // namespace AscendC

namespace ascendc_host {

// In a kernel with cube and vector cores, the cube core serves the vector cores' Matmul
// objects on the device: here they compute themselves, and the cube core's part ends at
// REGIST_MATMUL_OBJ. A cube-only kernel (ASCENDC_CUBE_ONLY) computes on its cube core.
inline bool matmul_cube_core_serves()
{
#ifdef ASCENDC_CUBE_ONLY
    return false;
#else
    return current != nullptr && current->type == CoreType::AIC && current->launch != nullptr &&
           current->launch->vector > 0;
#endif
}

inline void regist_matmul(AscendC::TPipe*, __gm__ uint8_t*) {}

template <typename MM, typename... Rest>
inline void regist_matmul(AscendC::TPipe* pipe, __gm__ uint8_t* ws, MM& mm,
                          const TCubeTiling* tiling, Rest&&... rest)
{
    if (tiling != nullptr) {
        mm.Init(tiling, pipe);
    }
    regist_matmul(pipe, ws, std::forward<Rest>(rest)...);
}

template <typename MM, typename... Rest>
inline void regist_matmul(AscendC::TPipe* pipe, __gm__ uint8_t* ws, MM& mm, std::nullptr_t,
                          Rest&&... rest)
{
    regist_matmul(pipe, ws, std::forward<Rest>(rest)...);
}

}  // namespace ascendc_host

// Registers Matmul objects (obj, &tiling pairs) with the kernel's pipe and workspace.
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)                                     \
    if (::ascendc_host::matmul_cube_core_serves()) {                                 \
        return;                                                                      \
    }                                                                                \
    ::ascendc_host::regist_matmul(                                                   \
        tpipe,                                                                       \
        reinterpret_cast<__gm__ uint8_t*>([&] {                                      \
            using namespace AscendC;                                                 \
            return (workspace);                                                      \
        }()),                                                                        \
        __VA_ARGS__)

// The older namespace of the API (which brings AscendC's names with it, as the library's does).
namespace matmul {
using namespace AscendC;
}  // namespace matmul

#endif
