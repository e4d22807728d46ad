// AscendC host layer: the Cube path of an A2/A3 AI Core. Matrices move in 512-byte fractals:
// L1 holds them as the copies put them (usually Nz: column blocks of 32 bytes, each every row);
// `LoadData` moves fractals from L1 (or GM) to L0A / L0B, transposing each 16 x 16 fractal on
// request; `Mmad` multiplies L0A (Zz: fractals of 16 rows x 32 bytes, row-major, in row-major
// order) by L0B (Zn: fractals of 32 bytes x 16 columns stored column by column, in row-major
// order) into L0C (Nz: 16-column blocks of every row, 16 x 16 fractals), accumulating in float
// (int32 for int8); `Fixpipe` converts L0C to GM or L1 (ND or Nz, with quantisation and ReLU).
// Documentation: docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）(矩阵计算分形介绍, 矩阵计算的搬入,
// Mmad计算, 矩阵计算的搬出).
#ifndef ASCENDC_HOST_CUBE_H
#define ASCENDC_HOST_CUBE_H

#include "copy.h"
#include "memory.h"
#include "tensor.h"
#include "types.h"

#include <cstdint>
#include <cstring>
#include <vector>

// Quantisation of Fixpipe (global, as the compiler's).
enum class QuantMode_t : uint8_t {
    NoQuant = 0,
    F322F16,
    F322BF16,
    DEQF16,
    VDEQF16,
    QF322B8_PRE,
    VQF322B8_PRE,
    REQ8,
    VREQ8,
    DEQS16,
    VDEQS16,
    QF322F16_PRE,
    QF322BF16_PRE,
    QF322F32_PRE,
};

namespace AscendC {

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };

struct FixpipeConfig {
    CO2Layout format;
    constexpr FixpipeConfig(CO2Layout f) : format(f) {}
    constexpr FixpipeConfig(CO2Layout f, bool) : format(f) {}
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct LoadData2DParams {
    LoadData2DParams() {}
    LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn,
                     const uint16_t srcStrideIn, const uint8_t sidIn, const uint16_t dstGapIn,
                     const bool ifTransposeIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn),
          ifTranspose(ifTransposeIn), repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn)
    {
    }
    uint16_t startIndex = 0;
    uint16_t dstGap = 0;
    uint16_t srcStride = 0;
    bool ifTranspose = false;
    uint8_t repeatTimes = 0;
    uint8_t sid = 0;
    uint8_t addrMode = 0;
};
using LoadData2dParams = LoadData2DParams;

struct LoadData2dTransposeParams {
    LoadData2dTransposeParams() {}
    LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn,
                              const uint16_t srcStrideIn, const uint16_t dstGapIn,
                              const uint16_t dstfracGapIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn),
          dstGap(dstGapIn), dstFracGap(dstfracGapIn), addrMode(addrModeIn)
    {
    }
    LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn,
                              const uint16_t srcStrideIn, const uint16_t dstGapIn,
                              const uint16_t dstfracGapIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn),
          dstGap(dstGapIn), dstFracGap(dstfracGapIn)
    {
    }
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
};

struct MmadParams {
    MmadParams() {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn,
               const int32_t fmOffsetIn, const bool enSsparseIn, const bool enWinogradAIn,
               const bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn)
    {
    }
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn,
               const uint8_t unitFlagIn, const bool cmatrixSourceIn, const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
          cmatrixInitVal(cmatrixInitValIn)
    {
    }
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
};

struct FixpipeParamsV220 {
    FixpipeParamsV220() {}
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn),
          reluEn(reluEnIn)
    {
    }
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn,
                      const QuantMode_t quantPreIn, const int64_t deqScalarIn,
                      const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                      const uint16_t dstNdStrideIn, const uint8_t unitFlagIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn),
          reluEn(reluEnIn), quantPre(quantPreIn), deqScalar(deqScalarIn), ndNum(ndNumIn),
          srcNdStride(srcNdStrideIn), dstNdStride(dstNdStrideIn), unitFlag(unitFlagIn)
    {
    }
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn,
                      const QuantMode_t quantPreIn, const int64_t deqScalarIn,
                      const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                      const uint16_t dstNdStrideIn, const uint8_t unitFlagIn,
                      const bool isChannelSplitIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn),
          reluEn(reluEnIn), quantPre(quantPreIn), deqScalar(deqScalarIn), ndNum(ndNumIn),
          srcNdStride(srcNdStrideIn), dstNdStride(dstNdStrideIn), unitFlag(unitFlagIn),
          isChannelSplit(isChannelSplitIn)
    {
    }
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    bool reluEn = false;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    int64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};
using FixpipeParams = FixpipeParamsV220;

}  // namespace AscendC

namespace ascendc_host {

// Elements of a type in 32 bytes (the K0 of a fractal, the C0 of Nz).
template <typename T>
constexpr uint32_t c0_of()
{
    return 32u / static_cast<uint32_t>(sizeof(T));
}

constexpr uint32_t kFractalBytes = 512;

inline void check_pos(const char* op, AscendC::Hardware have, std::initializer_list<AscendC::Hardware> want,
                      const char* role)
{
    for (AscendC::Hardware w : want) {
        if (have == w) {
            return;
        }
    }
    fault("%s: %s is in %s, which this instruction does not take", op, role, hw_name(have));
}

// Copies 512-byte fractals: repeat r reads fractal startIndex + r * srcStride of `src` (after
// `src_base`) and writes fractal r * (1 + dstGap) of `dst`, transposing 16 x 16 fractals.
inline void move_fractals(const char* op, uint8_t* dst, uint64_t dst_room, const uint8_t* src,
                          uint64_t src_room, uint32_t start, uint32_t repeat, uint32_t stride,
                          uint32_t gap, bool transpose, uint32_t elem, bool decrement)
{
    for (uint32_t r = 0; r < repeat; ++r) {
        const int64_t fi = decrement ? int64_t{start} - int64_t{r} * stride
                                     : int64_t{start} + int64_t{r} * stride;
        const uint64_t so = static_cast<uint64_t>(fi) * kFractalBytes;
        const uint64_t dof = uint64_t{r} * (1u + gap) * kFractalBytes;
        if (fi < 0 || so + kFractalBytes > src_room) {
            fault("%s: repeat %u reads fractal %lld, past the source (%llu bytes)", op, r,
                  static_cast<long long>(fi), static_cast<unsigned long long>(src_room));
        }
        if (dof + kFractalBytes > dst_room) {
            fault("%s: repeat %u writes past the destination (%llu bytes)", op, r,
                  static_cast<unsigned long long>(dst_room));
        }
        if (!transpose) {
            std::memcpy(dst + dof, src + so, kFractalBytes);
            continue;
        }
        if (elem != 2) {
            fault("%s: ifTranspose takes 16-bit data (a %u-byte type here)", op, elem);
        }
        for (uint32_t i = 0; i < 16; ++i) {
            for (uint32_t j = 0; j < 16; ++j) {
                std::memcpy(dst + dof + (j * 16 + i) * 2, src + so + (i * 16 + j) * 2, 2);
            }
        }
    }
}

template <typename T>
inline uint64_t f32_bits(float f)
{
    uint32_t b;
    std::memcpy(&b, &f, sizeof(b));
    return b;
}

// The scale of a Fixpipe's deqScalar (a float in its low 32 bits).
inline float deq_scale(int64_t deq)
{
    uint32_t b = static_cast<uint32_t>(static_cast<uint64_t>(deq) & 0xffffffffu);
    float f;
    std::memcpy(&f, &b, sizeof(f));
    return f;
}

// One L0C value out through the fixpipe: ReLU, then the quantisation the mode says.
template <typename D, typename S>
inline D fix_convert(S v, const AscendC::FixpipeParamsV220& p)
{
    using ascendc_host::compute_t;
    double x = static_cast<double>(compute_t<S>(v));
    if (p.reluEn && x < 0) {
        x = 0;
    }
    switch (p.quantPre) {
        case QuantMode_t::DEQF16:
        case QuantMode_t::REQ8:
        case QuantMode_t::QF322B8_PRE:
        case QuantMode_t::DEQS16:
        case QuantMode_t::QF322F16_PRE:
        case QuantMode_t::QF322BF16_PRE:
        case QuantMode_t::QF322F32_PRE:
            x *= deq_scale(p.deqScalar);
            break;
        default:
            break;
    }
    if constexpr (std::is_integral_v<D>) {
        return convert<D, double>(x, AscendC::RoundMode::CAST_RINT);
    } else if constexpr (std::is_same_v<D, float>) {
        return static_cast<float>(x);
    } else {
        return D(static_cast<float>(x));
    }
}

}  // namespace ascendc_host

namespace AscendC {

// L1 (or GM) to L0A / L0B, in fractals.
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                     const LoadData2DParams& p)
{
    const char* op = "LoadData (2D)";
    ascendc_host::check_pos(op, dst.host_hw(), {Hardware::L0A, Hardware::L0B}, "dst");
    ascendc_host::check_pos(op, src.host_hw(), {Hardware::L1}, "src");
    uint8_t* d = dst.host_data(op);
    const uint8_t* s = src.host_data(op);
    ascendc_host::move_fractals(op, d, dst.host_room(), s, src.host_room(), p.startIndex,
                                p.repeatTimes, p.srcStride, p.dstGap, p.ifTranspose, sizeof(T),
                                p.addrMode == 1);
}

template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                     const LoadData2DParams& p)
{
    const char* op = "LoadData (2D from GM)";
    ascendc_host::check_pos(op, dst.host_hw(), {Hardware::L0A, Hardware::L0B, Hardware::L1},
                            "dst");
    uint8_t* d = dst.host_data(op);
    const int64_t last = p.addrMode == 1 ? p.startIndex
                                         : int64_t{p.startIndex} +
                                               int64_t{p.repeatTimes > 0 ? p.repeatTimes - 1 : 0} *
                                                   p.srcStride;
    const uint64_t bytes = static_cast<uint64_t>(last + 1) * ascendc_host::kFractalBytes;
    const uint8_t* s = src.host_bytes(op, 0, bytes, false);
    ascendc_host::move_fractals(op, d, dst.host_room(), s, bytes, p.startIndex, p.repeatTimes,
                                p.srcStride, p.dstGap, p.ifTranspose, sizeof(T), p.addrMode == 1);
}

// L1 to L0B with each 32 x 32-byte square transposed, for 8- and 32-bit data (int8: one 32x32
// fractal pair, float: two 8x16 fractals): `dstGap` fractals between repeats' outputs,
// `dstFracGap` between the two halves of one.
template <typename T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                  const LoadData2dTransposeParams& p)
{
    const char* op = "LoadDataWithTranspose";
    ascendc_host::check_pos(op, dst.host_hw(), {Hardware::L0A, Hardware::L0B}, "dst");
    ascendc_host::check_pos(op, src.host_hw(), {Hardware::L1}, "src");
    uint8_t* d = dst.host_data(op);
    const uint8_t* s = src.host_data(op);
    if constexpr (sizeof(T) == 2) {
        ascendc_host::move_fractals(op, d, dst.host_room(), s, src.host_room(), p.startIndex,
                                    p.repeatTimes, p.srcStride, p.dstGap, true, 2, false);
    } else {
        // A square of 32 bytes x (32 bytes / sizeof(T)) rows... as two fractals: the square of
        // n x n elements (n = 16 for float: 2 fractals of 16 x 8; n = 32 for int8: 2 of 16 x 32)
        // read row-major from `src` and written transposed.
        constexpr uint32_t n = sizeof(T) == 4 ? 16 : 32;
        constexpr uint32_t c0 = 32 / sizeof(T);
        for (uint32_t r = 0; r < p.repeatTimes; ++r) {
            const uint64_t so = (uint64_t{p.startIndex} + uint64_t{r} * p.srcStride) * 2 *
                                ascendc_host::kFractalBytes;
            const uint64_t dof =
                uint64_t{r} * (2u + p.dstGap + p.dstFracGap) * ascendc_host::kFractalBytes;
            if (so + 2 * ascendc_host::kFractalBytes > src.host_room() ||
                dof + (2u + p.dstFracGap) * ascendc_host::kFractalBytes > dst.host_room()) {
                ascendc_host::fault("%s: repeat %u runs past its operands", op, r);
            }
            // Source square: Nz, column blocks of c0 elements: element (i, j) of the n x n
            // square at (j / c0) * n * c0 + i * c0 + j % c0.
            for (uint32_t i = 0; i < n; ++i) {
                for (uint32_t j = 0; j < n; ++j) {
                    const uint64_t from = (j / c0) * n * c0 + i * c0 + j % c0;
                    // Transposed: element (j, i) in the same layout, the second half after
                    // dstFracGap fractals.
                    const uint64_t blk = i / c0;
                    const uint64_t to = blk * (n * c0 + p.dstFracGap * (ascendc_host::kFractalBytes / sizeof(T))) +
                                        j * c0 + i % c0;
                    std::memcpy(d + dof + to * sizeof(T), s + so + from * sizeof(T), sizeof(T));
                }
            }
        }
    }
}

// C = A * B (+ C, or initialised from the bias table).
template <typename C, typename A, typename B>
inline void mmad_impl(const LocalTensor<C>& dst, const LocalTensor<A>& fm,
                      const LocalTensor<B>& filter, const C* bias, const MmadParams& p)
{
    const char* op = "Mmad";
    ascendc_host::check_pos(op, dst.host_hw(), {Hardware::L0C}, "dst");
    ascendc_host::check_pos(op, fm.host_hw(), {Hardware::L0A}, "fm");
    ascendc_host::check_pos(op, filter.host_hw(), {Hardware::L0B}, "filter");
    constexpr uint32_t k0 = ascendc_host::c0_of<A>();
    const uint32_t m = p.m, n = p.n, k = p.k;
    const uint32_t mb = (m + 15) / 16;
    const uint32_t nb = (n + 15) / 16;
    const uint32_t kalign = (sizeof(A) == 4 && p.kDirectionAlign) ? 16 : k0;
    const uint32_t kb = (k + kalign - 1) / kalign * kalign / k0;
    const uint64_t a_bytes = m == 1 ? uint64_t{k} * sizeof(A) : uint64_t{mb} * kb * 16 * k0 * sizeof(A);
    const uint64_t b_bytes = uint64_t{kb} * nb * 16 * k0 * sizeof(B);
    const uint64_t c_bytes = uint64_t{mb} * nb * 256 * sizeof(C);
    if (a_bytes > fm.host_room() || b_bytes > filter.host_room() || c_bytes > dst.host_room()) {
        ascendc_host::fault("%s: m=%u n=%u k=%u needs %llu, %llu and %llu bytes of L0A, L0B and "
                            "L0C from the operands' addresses",
                            op, m, n, k, static_cast<unsigned long long>(a_bytes),
                            static_cast<unsigned long long>(b_bytes),
                            static_cast<unsigned long long>(c_bytes));
    }
    const A* a = reinterpret_cast<const A*>(fm.host_data(op));
    const B* b = reinterpret_cast<const B*>(filter.host_data(op));
    C* c = reinterpret_cast<C*>(dst.host_data(op));
    using Acc = std::conditional_t<std::is_integral_v<C>, int64_t, double>;
    const bool init_zero = p.cmatrixInitVal && !p.isBias;
    std::vector<Acc> row(n);
    for (uint32_t i = 0; i < m; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
            Acc acc = 0;
            for (uint32_t kk = 0; kk < k; ++kk) {
                // GEMV (m = 1): the row vector lies contiguously in L0A.
                const A av = m == 1 ? a[kk]
                                    : a[((i / 16) * kb + kk / k0) * 16 * k0 + (i % 16) * k0 + kk % k0];
                const B bv = b[((kk / k0) * nb + j / 16) * 16 * k0 + (j % 16) * k0 + kk % k0];
                acc += static_cast<Acc>(ascendc_host::compute_t<A>(av)) *
                       static_cast<Acc>(ascendc_host::compute_t<B>(bv));
            }
            row[j] = acc;
        }
        for (uint32_t j = 0; j < n; ++j) {
            C& out = c[(j / 16) * mb * 256 + i * 16 + j % 16];
            Acc base = 0;
            if (bias != nullptr) {
                base = static_cast<Acc>(bias[j]);
            } else if (!init_zero) {
                base = static_cast<Acc>(out);
            }
            out = static_cast<C>(base + row[j]);
        }
    }
}

template <typename C, typename A, typename B>
inline void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& fm, const LocalTensor<B>& filter,
                 const MmadParams& p)
{
    const C* bias = nullptr;
    if (p.cmatrixSource && !p.isBias) {
        bias = reinterpret_cast<const C*>(ascendc_host::hw_base(Hardware::BIAS, "Mmad"));
    }
    mmad_impl(dst, fm, filter, bias, p);
}

template <typename C, typename A, typename B, typename U>
inline void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& fm, const LocalTensor<B>& filter,
                 const LocalTensor<U>& bias, const MmadParams& p)
{
    const char* op = "Mmad (bias)";
    if (bias.host_hw() == Hardware::BIAS) {
        if (uint64_t{p.n} * sizeof(U) > bias.host_room()) {
            ascendc_host::fault("%s: the bias of %u elements runs past its buffer", op, p.n);
        }
        std::vector<C> b(p.n);
        const U* src = reinterpret_cast<const U*>(bias.host_data(op));
        for (uint32_t j = 0; j < p.n; ++j) {
            b[j] = static_cast<C>(ascendc_host::compute_t<U>(src[j]));
        }
        mmad_impl(dst, fm, filter, b.data(), p);
    } else {
        // A bias in L0C: accumulate onto it.
        MmadParams q = p;
        q.cmatrixInitVal = false;
        mmad_impl(dst, fm, filter, static_cast<const C*>(nullptr), q);
    }
}

// L0C to global memory: ND rows (dstStride elements apart), ND columns, or Nz (16-column
// blocks dstStride 32-byte blocks apart); srcStride rows between the 16-column blocks of L0C.
template <typename D, typename S, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<D>& dst, const LocalTensor<S>& src,
                    const FixpipeParamsV220& p)
{
    const char* op = "Fixpipe (L0C to GM)";
    ascendc_host::check_pos(op, src.host_hw(), {Hardware::L0C}, "src");
    const uint32_t nd = p.ndNum == 0 ? 1 : p.ndNum;
    const uint64_t nb = (uint64_t{p.nSize} + 15) / 16;
    const uint64_t src_elems = (nd - 1) * uint64_t{p.srcNdStride} * 256 +
                               (nb - 1) * uint64_t{p.srcStride} * 16 + uint64_t{p.mSize} * 16;
    if (src_elems * sizeof(S) > src.host_room()) {
        ascendc_host::fault("%s: %u x %u from L0C runs past its buffer", op, p.mSize, p.nSize);
    }
    const S* s = reinterpret_cast<const S*>(src.host_data(op));
    uint64_t dst_elems = 0;
    auto index = [&](uint64_t k, uint64_t i, uint64_t j) -> uint64_t {
        if (config.format == CO2Layout::ROW_MAJOR) {
            return k * p.dstNdStride + i * p.dstStride + j;
        }
        if (config.format == CO2Layout::COLUMN_MAJOR) {
            return k * p.dstNdStride + j * p.dstStride + i;
        }
        // Nz: 16-column blocks dstStride data blocks (32 bytes) apart, rows of 16 elements.
        return k * p.dstNdStride + (j / 16) * (uint64_t{p.dstStride} * 32 / sizeof(D)) + i * 16 +
               j % 16;
    };
    for (uint64_t k = 0; k < nd; ++k) {
        dst_elems = std::max(dst_elems, index(k, p.mSize - 1, p.nSize - 1) + 1);
    }
    if (p.mSize == 0 || p.nSize == 0) {
        return;
    }
    uint8_t* d = dst.host_bytes(op, 0, dst_elems * sizeof(D), true);
    for (uint64_t k = 0; k < nd; ++k) {
        for (uint64_t i = 0; i < p.mSize; ++i) {
            for (uint64_t j = 0; j < p.nSize; ++j) {
                const S v = s[k * p.srcNdStride * 256 + (j / 16) * uint64_t{p.srcStride} * 16 +
                              i * 16 + j % 16];
                const D out = ascendc_host::fix_convert<D, S>(v, p);
                ascendc_host::gm_write(d + index(k, i, j) * sizeof(D),
                                       reinterpret_cast<const uint8_t*>(&out), sizeof(D));
            }
        }
    }
}

// L0C to L1 (or UB): as to GM, into a local buffer.
template <typename D, typename S, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const LocalTensor<D>& dst, const LocalTensor<S>& src,
                    const FixpipeParamsV220& p)
{
    const char* op = "Fixpipe (L0C to local)";
    ascendc_host::check_pos(op, src.host_hw(), {Hardware::L0C}, "src");
    ascendc_host::check_pos(op, dst.host_hw(), {Hardware::L1, Hardware::UB}, "dst");
    const S* s = reinterpret_cast<const S*>(src.host_data(op));
    D* d = reinterpret_cast<D*>(dst.host_data(op));
    const uint32_t nd = p.ndNum == 0 ? 1 : p.ndNum;
    for (uint64_t k = 0; k < nd; ++k) {
        for (uint64_t i = 0; i < p.mSize; ++i) {
            for (uint64_t j = 0; j < p.nSize; ++j) {
                const uint64_t si = k * p.srcNdStride * 256 + (j / 16) * uint64_t{p.srcStride} * 16 +
                                    i * 16 + j % 16;
                uint64_t di;
                if (config.format == CO2Layout::ROW_MAJOR) {
                    di = k * p.dstNdStride + i * p.dstStride + j;
                } else if (config.format == CO2Layout::COLUMN_MAJOR) {
                    di = k * p.dstNdStride + j * p.dstStride + i;
                } else {
                    di = k * p.dstNdStride + (j / 16) * (uint64_t{p.dstStride} * 32 / sizeof(D)) +
                         i * 16 + j % 16;
                }
                if ((si + 1) * sizeof(S) > src.host_room() || (di + 1) * sizeof(D) > dst.host_room()) {
                    ascendc_host::fault("%s: element (%llu, %llu) runs past its operands", op,
                                        static_cast<unsigned long long>(i),
                                        static_cast<unsigned long long>(j));
                }
                d[di] = ascendc_host::fix_convert<D, S>(s[si], p);
            }
        }
    }
}

// Fixpipe's configuration registers: nothing the host's Fixpipe reads besides its parameters.
inline void SetFixpipeNz2ndFlag(uint16_t, uint16_t, uint16_t) {}
inline void SetFixpipePreQuantFlag(uint64_t) {}
template <typename T>
inline void SetFixPipeConfig(const LocalTensor<T>&, bool = false)
{
}

// L1 to the bias table with a conversion (half bias into float): blocks of 64 bytes of the
// destination.
template <typename D, typename S>
inline void DataCopy(const LocalTensor<D>& dst, const LocalTensor<S>& src, const DataCopyParams& p,
                     std::enable_if_t<!std::is_same_v<D, S>, int> = 0)
{
    const char* op = "DataCopy (L1 to BiasTable)";
    ascendc_host::check_pos(op, dst.host_hw(), {Hardware::BIAS}, "dst");
    const uint64_t n = uint64_t{p.blockCount} * p.blockLen * 64 / sizeof(D);
    const S* s = reinterpret_cast<const S*>(ascendc_host::local_range(op, src, n * sizeof(S), "src"));
    D* d = reinterpret_cast<D*>(ascendc_host::local_range(op, dst, n * sizeof(D), "dst"));
    for (uint64_t i = 0; i < n; ++i) {
        d[i] = static_cast<D>(ascendc_host::compute_t<S>(s[i]));
    }
}

}  // namespace AscendC

#endif
