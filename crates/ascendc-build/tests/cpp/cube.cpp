// Tests of the Cube path of the host layer: ND to Nz copies into L1 (Nd2Nz), LoadData from L1
// to L0A and L0B (with the transposition B needs), Mmad into L0C (fresh and accumulating) and
// Fixpipe out to global memory (ND, half with F322F16, float, ReLU) and to L1 in Nz; each
// product checked against a plain triple loop. Built and run by tests/it/host_layer.rs.
#include "harness.h"

#include <cstdint>
#include <vector>

using namespace AscendC;

namespace {

constexpr uint32_t M = 32;
constexpr uint32_t K = 48;
constexpr uint32_t N = 64;
constexpr uint32_t FRAC = 16;  // a half fractal is 16 x 16

// Small integers: every product and sum is exact in float and in half up to 2048.
float a_value(uint32_t r, uint32_t c) { return static_cast<float>(static_cast<int>((r * 3 + c) % 7) - 3); }
float b_value(uint32_t r, uint32_t c) { return static_cast<float>(static_cast<int>((r + 2 * c) % 5) - 2); }

float product(uint32_t r, uint32_t c)
{
    float s = 0;
    for (uint32_t k = 0; k < K; ++k) {
        s += a_value(r, k) * b_value(k, c);
    }
    return s;
}

// One core's multiply: A (M x K) and B (K x N) from global memory through L1 and L0 into L0C.
LocalTensor<float> multiply(GlobalTensor<half>& a, GlobalTensor<half>& b, bool accumulate_twice)
{
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0A> l0a;
    LocalMemAllocator<Hardware::L0B> l0b;
    LocalMemAllocator<Hardware::L0C> l0c;
    LocalTensor<half> a1 = l1.Alloc<TPosition::A1, half>(M * K);
    LocalTensor<half> b1 = l1.Alloc<TPosition::B1, half>(K * N);
    LocalTensor<half> a2 = l0a.Alloc<TPosition::A2, half>(M * K);
    LocalTensor<half> b2 = l0b.Alloc<TPosition::B2, half>(K * N);
    LocalTensor<float> c = l0c.Alloc<TPosition::CO1, float>(M * N);
    // Nz in L1: column blocks of 16 elements, every row of the matrix in each.
    DataCopy(a1, a, Nd2NzParams{1, M, K, 0, K, M, 1, 0});
    DataCopy(b1, b, Nd2NzParams{1, K, N, 0, N, K, 1, 0});
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    // A: each band of 16 rows, its K / 16 fractals one column block apart.
    for (uint32_t band = 0; band < M / FRAC; ++band) {
        LoadData(a2[band * K * FRAC], a1[band * FRAC * FRAC],
                 LoadData2DParams{0, K / FRAC, M / FRAC, 0, 0, false, 0});
    }
    // B: each band of 16 rows of K, its fractals transposed.
    for (uint32_t band = 0; band < K / FRAC; ++band) {
        LoadData(b2[band * N * FRAC], b1[band * FRAC * FRAC],
                 LoadData2DParams{0, N / FRAC, K / FRAC, 0, 0, true, 0});
    }
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(c, a2, b2, MmadParams{M, N, K, 0, false, true});
    if (accumulate_twice) {
        Mmad(c, a2, b2, MmadParams{M, N, K, 0, false, false});
    }
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    return c;
}

void test_matmul_to_global_memory()
{
    std::vector<half> a(M * K);
    std::vector<half> b(K * N);
    for (uint32_t r = 0; r < M; ++r) {
        for (uint32_t c = 0; c < K; ++c) {
            a[r * K + c] = half(a_value(r, c));
        }
    }
    for (uint32_t r = 0; r < K; ++r) {
        for (uint32_t c = 0; c < N; ++c) {
            b[r * N + c] = half(b_value(r, c));
        }
    }
    std::vector<half> ch(M * N, half(-999.0f));
    std::vector<float> cf(M * N, -999.0f);
    std::vector<float> cr(M * N, -999.0f);
    half* pa = a.data();
    half* pb = b.data();
    half* pch = ch.data();
    float* pcf = cf.data();
    float* pcr = cr.data();
    std::string failure = launch(
        1,
        [=] {
            InitSocState();
            GlobalTensor<half> ga, gb, gc;
            GlobalTensor<float> gf, gr;
            ga.SetGlobalBuffer(pa, M * K);
            gb.SetGlobalBuffer(pb, K * N);
            gc.SetGlobalBuffer(pch, M * N);
            gf.SetGlobalBuffer(pcf, M * N);
            gr.SetGlobalBuffer(pcr, M * N);
            LocalTensor<float> c = multiply(ga, gb, false);
            Fixpipe(gc, c, FixpipeParamsV220{N, M, M, N, false, QuantMode_t::F322F16, 0, 1, 0, 0, 0});
            Fixpipe(gf, c, FixpipeParamsV220{N, M, M, N, false});
            LocalTensor<float> twice = multiply(ga, gb, true);
            Fixpipe(gr, twice, FixpipeParamsV220{N, M, M, N, true});
        },
        {region(pa, a.size() * 2, false), region(pb, b.size() * 2, false),
         region(pch, ch.size() * 2, true), region(pcf, cf.size() * 4, true),
         region(pcr, cr.size() * 4, true)});
    CHECK_EQ_STR(failure, "");
    uint32_t wrong = 0;
    for (uint32_t r = 0; r < M; ++r) {
        for (uint32_t c = 0; c < N; ++c) {
            const float want = product(r, c);
            const float relu2 = 2 * want > 0 ? 2 * want : 0;
            if (static_cast<float>(ch[r * N + c]) != want || cf[r * N + c] != want ||
                cr[r * N + c] != relu2) {
                if (wrong++ < 4) {
                    std::fprintf(stderr, "C[%u][%u]: want %g (relu(2x) %g), half %g, float %g, relu %g\n",
                                 r, c, want, relu2, static_cast<float>(ch[r * N + c]),
                                 cf[r * N + c], cr[r * N + c]);
                }
            }
        }
    }
    CHECK(wrong == 0);
}

void test_fixpipe_bounds()
{
    // Fixpipe to global memory past the end of the destination's allocation.
    std::vector<float> out(M * N / 2);
    float* po = out.data();
    std::vector<half> a(M * K, half(1.0f));
    std::vector<half> b(K * N, half(1.0f));
    half* pa = a.data();
    half* pb = b.data();
    std::string failure = launch(
        1,
        [=] {
            GlobalTensor<half> ga, gb;
            GlobalTensor<float> go;
            ga.SetGlobalBuffer(pa, M * K);
            gb.SetGlobalBuffer(pb, K * N);
            go.SetGlobalBuffer(po);
            LocalTensor<float> c = multiply(ga, gb, false);
            Fixpipe(go, c, FixpipeParamsV220{N, M, M, N, false});
        },
        {region(pa, a.size() * 2, false), region(pb, b.size() * 2, false),
         region(po, out.size() * 4, true)});
    CHECK(contains(failure, "Fixpipe (L0C to GM): global memory"));
    CHECK(contains(failure, "+8192 bytes) is outside every buffer argument of the launch"));
}

}  // namespace

int main()
{
    test_matmul_to_global_memory();
    test_fixpipe_bounds();
    return finish();
}
