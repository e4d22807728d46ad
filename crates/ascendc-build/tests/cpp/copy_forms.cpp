// Tests of the data-movement forms of the host layer beyond the plain copies: ND and DN to Nz
// (Nd2NzParams, Dn2NzParams, the zero columns of a partial block), local to local in blocks,
// and the atomic write modes of several blocks into the same global memory. Built and run by
// tests/it/host_layer.rs.
#include "harness.h"

#include <cstdint>
#include <vector>

using namespace AscendC;

namespace {

void test_nd_and_dn_to_nz()
{
    // A 4 x 20 half matrix (row-major) into Nz: column blocks of 16 elements, 4 rows each.
    std::vector<half> nd(4 * 20);
    std::vector<half> dn(4 * 20);  // the same matrix column-major
    for (uint32_t r = 0; r < 4; ++r) {
        for (uint32_t c = 0; c < 20; ++c) {
            nd[r * 20 + c] = half(static_cast<float>(r * 100 + c));
            dn[c * 4 + r] = half(static_cast<float>(r * 100 + c));
        }
    }
    half* pn = nd.data();
    half* pd = dn.data();
    std::string failure = launch(
        1,
        [=] {
            TPipe pipe;
            TBuf<TPosition::A1> buf;
            pipe.InitBuffer(buf, 1024);
            LocalTensor<half> nz = buf.Get<half>();
            GlobalTensor<half> gn, gd;
            gn.SetGlobalBuffer(pn, 80);
            gd.SetGlobalBuffer(pd, 80);
            for (int pass = 0; pass < 2; ++pass) {
                Duplicate(nz.ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0xFFFF), 256);
                if (pass == 0) {
                    DataCopy(nz, gn, Nd2NzParams{1, 4, 20, 0, 20, 4, 1, 0});
                } else {
                    DataCopy(nz, gd, Dn2NzParams{1, 20, 4, 0, 4, 4, 1, 0});
                }
                // Block 0: rows 0..3 of columns 0..15; block 1: columns 16..19, then zeros.
                CHECK(static_cast<float>(nz.GetValue(0)) == 0.0f);
                CHECK(static_cast<float>(nz.GetValue(15)) == 15.0f);
                CHECK(static_cast<float>(nz.GetValue(16)) == 100.0f);
                CHECK(static_cast<float>(nz.GetValue(63)) == 315.0f);
                CHECK(static_cast<float>(nz.GetValue(64)) == 16.0f);
                CHECK(static_cast<float>(nz.GetValue(67)) == 19.0f);
                CHECK(static_cast<float>(nz.GetValue(68)) == 0.0f);
                CHECK(static_cast<float>(nz.GetValue(64 + 48 + 3)) == 319.0f);
                CHECK(nz.ReinterpretCast<uint16_t>().GetValue(128) == 0xFFFF);  // untouched
            }
        },
        {region(pn, 160, false), region(pd, 160, false)});
    CHECK_EQ_STR(failure, "");
}

void test_local_copies_in_blocks()
{
    std::string failure = launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 2048);
        LocalTensor<int32_t> src = buf.GetWithOffset<int32_t>(256, 0);
        LocalTensor<int32_t> dst = buf.GetWithOffset<int32_t>(256, 1024);
        CreateVecIndex(src, 0, 256);
        Duplicate(dst, -1, 256);
        // 3 blocks of 2 units (16 ints), a gap of 1 unit in the source and 2 in the destination.
        DataCopy(dst, src, DataCopyParams{3, 2, 1, 2});
        CHECK(dst.GetValue(0) == 0 && dst.GetValue(15) == 15 && dst.GetValue(16) == -1);
        CHECK(dst.GetValue(32) == 24 && dst.GetValue(47) == 39);
        CHECK(dst.GetValue(64) == 48 && dst.GetValue(80) == -1);
    });
    CHECK_EQ_STR(failure, "");
}

void test_atomic_writes()
{
    // 8 blocks each add their index + 1 into the same 64 floats, take the maximum into 8 more
    // and the minimum into 8 more; without the atomic mode the last writer would win.
    std::vector<float> out(80, 0.0f);
    for (uint32_t i = 64; i < 72; ++i) {
        out[i] = -100.0f;
    }
    for (uint32_t i = 72; i < 80; ++i) {
        out[i] = 100.0f;
    }
    float* po = out.data();
    std::string failure = launch(
        8,
        [=] {
            TPipe pipe;
            TBuf<TPosition::VECOUT> buf;
            pipe.InitBuffer(buf, 256);
            LocalTensor<float> t = buf.Get<float>();
            GlobalTensor<float> g;
            g.SetGlobalBuffer(po, 80);
            const float v = static_cast<float>(GetBlockIdx() + 1);
            Duplicate(t, v, 64);
            SetAtomicAdd<float>();
            for (int round = 0; round < 10; ++round) {
                DataCopy(g, t, 64);
            }
            SetAtomicMax<float>();
            DataCopy(g[64], t, 8);
            SetAtomicMin<float>();
            DataCopy(g[72], t, 8);
            SetAtomicNone();
        },
        {region(po, out.size() * 4, true)});
    CHECK_EQ_STR(failure, "");
    CHECK(out[0] == 360.0f && out[63] == 360.0f);  // 10 * (1 + ... + 8)
    CHECK(out[64] == 8.0f && out[71] == 8.0f);
    CHECK(out[72] == 1.0f && out[79] == 1.0f);
}

}  // namespace

int main()
{
    test_nd_and_dn_to_nz();
    test_local_copies_in_blocks();
    test_atomic_writes();
    return finish();
}
