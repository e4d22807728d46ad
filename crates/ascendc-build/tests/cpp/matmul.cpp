// Tests of the Matmul high-level API of the host layer with the host tiling: a multi-core
// tiling (MultiCoreMatmulTiling) for C = A x B^T + bias, each block computing its part with
// IterateAll, and again base block by base block with Iterate + GetTensorC into global memory;
// both checked against a plain triple loop. Built and run by tests/it/host_layer.rs.
#include "harness.h"

#include "lib/matmul_intf.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

#include <cstdint>
#include <vector>

using namespace AscendC;

namespace {

constexpr int32_t M = 64;
constexpr int32_t N = 96;
constexpr int32_t K = 48;

float a_value(int32_t r, int32_t c) { return static_cast<float>((r * 5 + c) % 9 - 4); }
float b_value(int32_t r, int32_t c) { return static_cast<float>((r + c * 3) % 7 - 3); }  // B[k][n]
float bias_value(int32_t c) { return static_cast<float>(c % 11) - 5.0f; }

using MM = Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half>,
                  MatmulType<TPosition::GM, CubeFormat::ND, half, true>,
                  MatmulType<TPosition::GM, CubeFormat::ND, float>,
                  MatmulType<TPosition::GM, CubeFormat::ND, float>>;

TCubeTiling make_tiling(int32_t cores)
{
    TCubeTiling tiling;
    matmul_tiling::MultiCoreMatmulTiling api(*platform_ascendc::PlatformAscendCManager::GetInstance());
    api.SetDim(cores);
    api.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                 matmul_tiling::DataType::DT_FLOAT16, false);
    api.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                 matmul_tiling::DataType::DT_FLOAT16, true);
    api.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                 matmul_tiling::DataType::DT_FLOAT);
    api.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                    matmul_tiling::DataType::DT_FLOAT);
    api.SetOrgShape(M, N, K);
    api.SetShape(M, N, K);
    api.EnableBias(true);
    api.SetBufferSpace(-1, -1, -1);
    CHECK(api.GetTiling(tiling) != -1);
    return tiling;
}

// Block b's part: its row and column offsets in C.
void part(const TCubeTiling& t, int32_t& row, int32_t& col)
{
    const int32_t m_parts = (t.M + t.singleCoreM - 1) / t.singleCoreM;
    row = (GetBlockIdx() % m_parts) * t.singleCoreM;
    col = (GetBlockIdx() / m_parts) * t.singleCoreN;
}

void run(bool base_blocks)
{
    const TCubeTiling tiling = make_tiling(2);
    CHECK(tiling.usedCoreNum >= 1 && tiling.usedCoreNum <= 2);
    CHECK(tiling.baseM > 0 && tiling.baseN > 0 && tiling.baseK > 0);
    std::vector<half> a(M * K);
    std::vector<half> bt(N * K);  // B transposed: N x K
    std::vector<float> bias(N);
    std::vector<float> c(M * N, -999.0f);
    for (int32_t r = 0; r < M; ++r) {
        for (int32_t k = 0; k < K; ++k) {
            a[r * K + k] = half(a_value(r, k));
        }
    }
    for (int32_t n = 0; n < N; ++n) {
        for (int32_t k = 0; k < K; ++k) {
            bt[n * K + k] = half(b_value(k, n));
        }
        bias[n] = bias_value(n);
    }
    half* pa = a.data();
    half* pb = bt.data();
    float* pbias = bias.data();
    float* pc = c.data();
    std::string failure = launch(
        tiling.usedCoreNum,
        [=] {
            TPipe pipe;
            GlobalTensor<half> ga, gb;
            GlobalTensor<float> gbias, gc;
            ga.SetGlobalBuffer(pa, M * K);
            gb.SetGlobalBuffer(pb, N * K);
            gbias.SetGlobalBuffer(pbias, N);
            gc.SetGlobalBuffer(pc, M * N);
            MM mm;
            REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
            int32_t row = 0;
            int32_t col = 0;
            part(tiling, row, col);
            mm.SetTensorA(ga[row * K], false);
            mm.SetTensorB(gb[col * K], true);
            mm.SetBias(gbias[col]);
            if (!base_blocks) {
                mm.IterateAll(gc[row * N + col]);
            } else {
                // Base blocks in the tiling's order (M first): block i of the part lands at
                // its own place in C.
                const int32_t m_blocks = (tiling.singleCoreM + tiling.baseM - 1) / tiling.baseM;
                int32_t i = 0;
                while (mm.Iterate()) {
                    const int32_t br = row + (i % m_blocks) * tiling.baseM;
                    const int32_t bc = col + (i / m_blocks) * tiling.baseN;
                    mm.GetTensorC(gc[br * N + bc]);
                    ++i;
                }
            }
            mm.End();
        },
        {region(pa, a.size() * 2, false), region(pb, bt.size() * 2, false),
         region(pbias, bias.size() * 4, false), region(pc, c.size() * 4, true)});
    CHECK_EQ_STR(failure, "");
    int wrong = 0;
    for (int32_t r = 0; r < M; ++r) {
        for (int32_t n = 0; n < N; ++n) {
            float want = bias_value(n);
            for (int32_t k = 0; k < K; ++k) {
                want += a_value(r, k) * b_value(k, n);
            }
            if (c[r * N + n] != want && wrong++ < 4) {
                std::fprintf(stderr, "%s: C[%d][%d] = %g, want %g\n",
                             base_blocks ? "Iterate" : "IterateAll", r, n, c[r * N + n], want);
            }
        }
    }
    CHECK(wrong == 0);
}

}  // namespace

int main()
{
    run(false);
    run(true);
    return finish();
}
