// Tests of the AscendC host layer on its own (no Rust, no runtime): numbers, conversions,
// queues, checks and the block runner. Built and run by tests/it/host_layer.rs; prints one line
// per failed check and exits non-zero when any failed.
#include "harness.h"

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace AscendC;

static uint16_t bits(half h) { return h.bits; }

static void test_half_and_bfloat16()
{
    // Every finite half survives half -> float -> half.
    for (uint32_t b = 0; b < 0x10000; ++b) {
        half h(ascendc_host::FromBits{}, static_cast<uint16_t>(b));
        float f = h;
        if (std::isnan(f)) {
            CHECK(std::isnan(static_cast<float>(half(f))));
            continue;
        }
        if (bits(half(f)) != b) {
            std::fprintf(stderr, "half %04x -> %g -> %04x\n", b, f, bits(half(f)));
            ++failures;
            break;
        }
    }
    CHECK(bits(half(1.0f)) == 0x3C00);
    CHECK(bits(half(-2.0f)) == 0xC000);
    CHECK(bits(half(65504.0f)) == 0x7BFF);
    CHECK(bits(half(65520.0f)) == 0x7C00);     // rounds to infinity
    CHECK(bits(half(5.9604645e-8f)) == 0x0001);  // smallest subnormal
    CHECK(bits(half(2049.0f)) == 0x6800);      // tie to even: 2048
    CHECK(bits(half(2051.0f)) == 0x6802);      // tie to even: 2052
    CHECK(static_cast<float>(half(0.1f)) == 0.0999755859375f);
    half h = 1.5f;
    h += 1.0f;
    CHECK(static_cast<float>(h) == 2.5f);
    CHECK(h > 2.0f && h < 3);

    CHECK(bfloat16_t(1.0f).bits == 0x3F80);
    CHECK(bfloat16_t(3.0e38f).bits == 0x7F62);
    CHECK(static_cast<float>(bfloat16_t(1.00390625f)) == 1.0f);  // tie to even
    CHECK(static_cast<float>(bfloat16_t(1.01171875f)) == 1.015625f);
}

static void test_cast_modes()
{
    using ascendc_host::convert;
    // float -> half, 1 + 2^-11 + 2^-13 lies between 1 and 1 + 2^-10, above the midpoint.
    const float above = 1.0f + 0.00048828125f + 0.0001220703125f;
    CHECK(bits(convert<half>(above, RoundMode::CAST_RINT)) == 0x3C01);
    CHECK(bits(convert<half>(above, RoundMode::CAST_TRUNC)) == 0x3C00);
    CHECK(bits(convert<half>(above, RoundMode::CAST_FLOOR)) == 0x3C00);
    CHECK(bits(convert<half>(above, RoundMode::CAST_CEIL)) == 0x3C01);
    CHECK(bits(convert<half>(-above, RoundMode::CAST_FLOOR)) == 0xBC01);
    CHECK(bits(convert<half>(-above, RoundMode::CAST_CEIL)) == 0xBC00);
    const float tie = 1.0f + 0.00048828125f;  // exactly between 0x3C00 and 0x3C01
    CHECK(bits(convert<half>(tie, RoundMode::CAST_RINT)) == 0x3C00);
    CHECK(bits(convert<half>(tie, RoundMode::CAST_ROUND)) == 0x3C01);
    CHECK(bits(convert<half>(tie, RoundMode::CAST_ODD)) == 0x3C01);
    CHECK(bits(convert<half>(1.0f, RoundMode::CAST_ODD)) == 0x3C00);  // exact stays
    CHECK(bits(convert<half>(1.0e6f, RoundMode::CAST_TRUNC)) == 0x7BFF);
    CHECK(bits(convert<half>(1.0e6f, RoundMode::CAST_RINT)) == 0x7C00);
    // float -> int32
    CHECK((convert<int32_t>(2.5f, RoundMode::CAST_RINT)) == 2);
    CHECK((convert<int32_t>(2.5f, RoundMode::CAST_ROUND)) == 3);
    CHECK((convert<int32_t>(-2.5f, RoundMode::CAST_FLOOR)) == -3);
    CHECK((convert<int32_t>(-2.5f, RoundMode::CAST_CEIL)) == -2);
    CHECK((convert<int32_t>(-2.7f, RoundMode::CAST_TRUNC)) == -2);
    CHECK((convert<int32_t>(3.0e10f, RoundMode::CAST_RINT)) == INT32_MAX);
    CHECK((convert<int32_t>(std::nanf(""), RoundMode::CAST_RINT)) == 0);
    // half -> float exact, int -> float.
    CHECK((convert<float>(half(0.1f), RoundMode::CAST_NONE)) == 0.0999755859375f);
    CHECK((convert<float>(16777217, RoundMode::CAST_RINT)) == 16777216.0f);
    CHECK((convert<float>(16777217, RoundMode::CAST_CEIL)) == 16777218.0f);
}

// A pipe with one input queue and a scratch buffer, as kernels hold them.
struct Stage {
    TPipe pipe;
    TQue<TPosition::VECIN, 2> in;
    TBuf<TPosition::VECCALC> calc;
};

static void test_vector_instructions()
{
    std::string failure = launch(1, [] {
        Stage s;
        s.pipe.InitBuffer(s.in, 2, 64 * sizeof(float));
        s.pipe.InitBuffer(s.calc, 64 * sizeof(float));
        LocalTensor<float> a = s.in.AllocTensor<float>();
        LocalTensor<float> b = s.in.AllocTensor<float>();
        LocalTensor<float> c = s.calc.Get<float>();
        CHECK(a.GetSize() == 64 && c.GetSize() == 64);
        for (uint32_t i = 0; i < 64; ++i) {
            a.SetValue(i, static_cast<float>(i) - 10.0f);
            b.SetValue(i, 2.0f);
        }
        Add(c, a, b, 64);
        CHECK(c.GetValue(0) == -8.0f && c.GetValue(63) == 55.0f);
        Sub(c, a, b, 64);
        CHECK(c.GetValue(0) == -12.0f);
        Mul(c, a, b, 64);
        CHECK(c.GetValue(1) == -18.0f);
        Div(c, a, b, 64);
        CHECK(c.GetValue(1) == -4.5f);
        Max(c, a, b, 64);
        CHECK(c.GetValue(0) == 2.0f && c.GetValue(20) == 10.0f);
        Min(c, a, b, 64);
        CHECK(c.GetValue(0) == -10.0f && c.GetValue(20) == 2.0f);
        Adds(c, a, 0.5f, 64);
        CHECK(c.GetValue(10) == 0.5f);
        Muls(c, a, -3.0f, 64);
        CHECK(c.GetValue(11) == -3.0f);
        Maxs(c, a, 0.0f, 64);
        CHECK(c.GetValue(0) == 0.0f && c.GetValue(15) == 5.0f);
        Mins(c, a, 0.0f, 64);
        CHECK(c.GetValue(0) == -10.0f && c.GetValue(15) == 0.0f);
        Abs(c, a, 64);
        CHECK(c.GetValue(0) == 10.0f);
        Relu(c, a, 64);
        CHECK(c.GetValue(0) == 0.0f && c.GetValue(12) == 2.0f);
        Exp(c, b, 64);
        CHECK(c.GetValue(0) == std::exp(2.0f));
        Ln(c, b, 64);
        CHECK(c.GetValue(0) == std::log(2.0f));
        Sqrt(c, b, 64);
        CHECK(c.GetValue(0) == std::sqrt(2.0f));
        Duplicate(c, 7.0f, 8);
        CHECK(c.GetValue(7) == 7.0f && c.GetValue(8) == std::sqrt(2.0f));
        // In place, and on the second half only.
        Add(a[32], a[32], a[32], 32);
        CHECK(a.GetValue(31) == 21.0f && a.GetValue(32) == 44.0f);
        s.in.FreeTensor(a);
        s.in.FreeTensor(b);
    });
    CHECK_EQ_STR(failure, "");

    failure = launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 256);
        LocalTensor<half> h = buf.Get<half>(32);
        LocalTensor<half> g = buf.GetWithOffset<half>(32, 64);
        Duplicate(h, half(1.5f), 32);
        Duplicate(g, half(0.25f), 32);
        Add(h, h, g, 32);
        CHECK(static_cast<float>(h.GetValue(31)) == 1.75f);
        Exp(g, g, 16);
        CHECK(bits(g.GetValue(0)) == bits(half(std::exp(0.25f))));
        LocalTensor<int32_t> i = buf.GetWithOffset<int32_t>(8, 128);
        Duplicate(i, INT32_MAX, 8);
        Adds(i, i, 1, 8);  // wraps
        CHECK(i.GetValue(0) == INT32_MIN);
        Abs(i, i, 8);
        CHECK(i.GetValue(0) == INT32_MIN);
        LocalTensor<float> f = buf.GetWithOffset<float>(8, 160);
        Cast(f, h, RoundMode::CAST_NONE, 8);
        CHECK(f.GetValue(0) == 1.75f);
        Muls(f, f, 1000.3f, 8);
        Cast(i, f, RoundMode::CAST_FLOOR, 8);
        CHECK(i.GetValue(0) == 1750);
        Cast(h, f, RoundMode::CAST_TRUNC, 8);
        CHECK(static_cast<float>(h.GetValue(0)) == 1750.0f);
        LocalTensor<int16_t> s = buf.GetWithOffset<int16_t>(16, 192);
        Duplicate(s, static_cast<int16_t>(7), 16);
        Duplicate(s, static_cast<int16_t>(0), 1);
        Div(s, s, s, 16);
    });
    CHECK(contains(failure, "Div: integer division by zero"));
}

static void test_queues_and_local_checks()
{
    struct Case {
        const char* expect;
        void (*body)();
    };
    const Case cases[] = {
        {"LocalTensor::GetValue: index 16 out of range [0, 16)",
         [] {
             TPipe p;
             TQue<TPosition::VECIN, 1> q;
             p.InitBuffer(q, 1, 64);
             q.AllocTensor<float>().GetValue(16);
         }},
        {"LocalTensor::SetValue: index 9 out of range [0, 8)",
         [] {
             TPipe p;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(b, 64);
             b.Get<float>()[8].SetValue(9, 1.0f);
         }},
        {"AllocTensor: all 2 buffers of the queue are in use",
         [] {
             TPipe p;
             TQue<TPosition::VECIN, 2> q;
             p.InitBuffer(q, 2, 64);
             q.AllocTensor<float>();
             q.AllocTensor<float>();
             q.AllocTensor<float>();
         }},
        {"DeQue: the queue is empty",
         [] {
             TPipe p;
             TQue<TPosition::VECOUT, 2> q;
             p.InitBuffer(q, 2, 64);
             q.DeQue<float>();
         }},
        {"FreeTensor: the tensor was already freed",
         [] {
             TPipe p;
             TQue<TPosition::VECIN, 1> q;
             p.InitBuffer(q, 1, 64);
             LocalTensor<float> t = q.AllocTensor<float>();
             q.FreeTensor(t);
             q.FreeTensor(t);
         }},
        {"the LocalTensor's buffer was released by FreeTensor",
         [] {
             TPipe p;
             TQue<TPosition::VECIN, 1> q;
             p.InitBuffer(q, 1, 64);
             LocalTensor<float> t = q.AllocTensor<float>();
             q.FreeTensor(t);
             t.SetValue(0, 1.0f);
         }},
        {"the LocalTensor is in a queue (after EnQue, before DeQue)",
         [] {
             TPipe p;
             TQue<TPosition::VECIN, 1> q;
             p.InitBuffer(q, 1, 64);
             LocalTensor<float> t = q.AllocTensor<float>();
             q.EnQue(t);
             Duplicate(t, 1.0f, 16);
         }},
        {"EnQue: the tensor belongs to another queue or buffer",
         [] {
             TPipe p;
             TQue<TPosition::VECIN, 1> a;
             TQue<TPosition::VECIN, 1> b;
             p.InitBuffer(a, 1, 64);
             p.InitBuffer(b, 1, 64);
             b.EnQue(a.AllocTensor<float>());
         }},
        {"TPipe::InitBuffer: 196640 more bytes exceed the 196608 bytes of UB",
         [] {
             TPipe p;
             TQue<TPosition::VECIN, 1> q;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(q, 1, 32);
             p.InitBuffer(b, 196608 + 1);
         }},
        {"Add: 65 elements, but dst has 64",
         [] {
             TPipe p;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(b, 256);
             LocalTensor<float> t = b.Get<float>();
             Add(t, t, t, 65);
         }},
        {"Muls: src does not start on a 32-byte boundary (byte 4 of UB)",
         [] {
             TPipe p;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(b, 256);
             LocalTensor<float> t = b.Get<float>();
             Muls(t, t[1], 2.0f, 8);
         }},
        {"TBuf::Get: 65 elements of 4 bytes exceed the buffer's 256 bytes",
         [] {
             TPipe p;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(b, 256);
             b.Get<float>(65);
         }},
        {"AllocTensor: the queue has no buffers (TPipe::InitBuffer first)",
         [] {
             TQue<TPosition::VECIN, 1> q;
             q.AllocTensor<half>();
         }},
        {"ASSERT(1 + 1 == 3) failed at",
         [] { ASSERT(1 + 1 == 3); }},
    };
    for (const Case& c : cases) {
        std::string failure = launch(1, c.body);
        if (!contains(failure, c.expect)) {
            std::fprintf(stderr, "expected a failure with \"%s\", got \"%s\"\n", c.expect,
                         failure.c_str());
            ++failures;
        }
    }
    // A full queue refuses EnQue (returns false); depth counts tensors, not buffers.
    std::string failure = launch(1, [] {
        TPipe p;
        TQue<TPosition::VECIN, 1> q;
        p.InitBuffer(q, 2, 64);
        LocalTensor<float> a = q.AllocTensor<float>();
        LocalTensor<float> b = q.AllocTensor<float>();
        CHECK(q.EnQue(a));
        CHECK(!q.VacantInQue());
        CHECK(!q.EnQue(b));
        CHECK(q.GetTensorCountInQue() == 1);
        CHECK(!q.HasIdleBuffer());
        LocalTensor<float> x = q.DeQue<float>();
        CHECK(x.GetPhyAddr() == a.GetPhyAddr());
        q.FreeTensor(x);
        q.FreeTensor(b);
        CHECK(q.HasIdleBuffer() && !q.HasTensorInQue());
    });
    CHECK_EQ_STR(failure, "");
}

static void test_data_copy()
{
    std::vector<float> src(256), dst(256, -1.0f);
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = static_cast<float>(i);
    }
    const std::vector<ascendc_host_region> regions = {
        region(src.data(), src.size() * 4, false), region(dst.data(), dst.size() * 4, true)};
    float* s = src.data();
    float* d = dst.data();
    std::string failure = launch(
        1,
        [s, d] {
            TPipe p;
            TBuf<TPosition::VECCALC> b;
            p.InitBuffer(b, 1024);
            LocalTensor<float> t = b.Get<float>();
            GlobalTensor<float> gs, gd;
            gs.SetGlobalBuffer(s, 256);
            gd.SetGlobalBuffer(d, 256);
            DataCopy(t, gs[8], 64);
            DataCopy(gd, t, 64);
            // Two blocks of one 32-byte unit, one unit apart on both sides.
            DataCopyParams strided(2, 1, 1, 1);
            DataCopy(t, gs[128], strided);
            DataCopy(gd[128], t, strided);
            // 3 floats from global memory, padded on the left by 1 with 99.
            DataCopyPadExtParams<float> pad(true, 1, 0, 99.0f);
            DataCopyPad(t, gs[200], DataCopyExtParams(1, 12, 0, 0, 0), pad);
            CHECK(t.GetValue(0) == 99.0f && t.GetValue(1) == 200.0f && t.GetValue(3) == 202.0f);
            DataCopyPad(gd[240], t[8], DataCopyExtParams(2, 8, 0, 4, 0));
        },
        regions);
    CHECK_EQ_STR(failure, "");
    CHECK(dst[0] == 8.0f && dst[63] == 71.0f && dst[64] == -1.0f);
    CHECK(dst[128] == 128.0f && dst[135] == 135.0f && dst[136] == -1.0f && dst[144] == 144.0f);
    CHECK(dst[240] == 16.0f && dst[241] == 17.0f && dst[242] == -1.0f && dst[243] == 144.0f);

    struct Case {
        const char* expect;
        void (*body)(float*, float*);
    };
    const Case cases[] = {
        {"DataCopy (GM to local): 7 elements of 4 bytes are not a multiple of 32 bytes",
         [](float* s, float*) {
             TPipe p;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(b, 64);
             GlobalTensor<float> g;
             g.SetGlobalBuffer(s, 256);
             DataCopy(b.Get<float>(), g, 7);
         }},
        {"DataCopy (local to GM): writes global memory of a read-only kernel argument",
         [](float* s, float*) {
             TPipe p;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(b, 64);
             GlobalTensor<float> g;
             g.SetGlobalBuffer(s);
             DataCopy(g, b.Get<float>(), 8);
         }},
        {"DataCopy (GM to local): global memory",
         [](float* s, float*) {
             TPipe p;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(b, 64);
             GlobalTensor<float> g;
             g.SetGlobalBuffer(s + 256 - 8);
             DataCopy(b.Get<float>(), g, 16);
         }},
        {"GlobalTensor::GetValue: index 256 out of range [0, 256)",
         [](float* s, float*) {
             GlobalTensor<float> g;
             g.SetGlobalBuffer(s, 256);
             g.GetValue(256);
         }},
        {"GlobalTensor::operator[]: offset 300 beyond the 256 elements",
         [](float*, float* d) {
             GlobalTensor<float> g;
             g.SetGlobalBuffer(d, 256);
             g[300];
         }},
        {"DataCopy (local to GM): 16 elements, but SetGlobalBuffer gave 8",
         [](float*, float* d) {
             TPipe p;
             TBuf<TPosition::VECCALC> b;
             p.InitBuffer(b, 64);
             GlobalTensor<float> g;
             g.SetGlobalBuffer(d, 8);
             DataCopy(g, b.Get<float>(), 16);
         }},
    };
    for (const Case& c : cases) {
        std::string f = launch(1, [&] { c.body(s, d); }, regions);
        if (!contains(f, c.expect)) {
            std::fprintf(stderr, "expected a failure with \"%s\", got \"%s\"\n", c.expect,
                         f.c_str());
            ++failures;
        }
    }
    // Without buffer information (a `<<<...>>>` launch) global memory is not checked.
    failure = launch(
        1,
        [s] {
            GlobalTensor<float> g;
            g.SetGlobalBuffer(s);
            g.SetValue(0, 0.5f);
        },
        {}, false);
    CHECK_EQ_STR(failure, "");
    CHECK(src[0] == 0.5f);
}

static void test_blocks()
{
    // Every block sees its own index and the block count; the first failure is reported with
    // the number of others.
    std::vector<int64_t> seen(16, -1);
    int64_t* out = seen.data();
    std::string failure = launch(16, [out] {
        out[GetBlockIdx()] = GetBlockIdx() * 100 + GetBlockNum();
        if (GetBlockIdx() % 5 == 3) {
            ascendc_host::fault("block %d gives up", static_cast<int>(GetBlockIdx()));
        }
    });
    for (int64_t b = 0; b < 16; ++b) {
        CHECK(seen[static_cast<size_t>(b)] == b * 100 + 16);
    }
    CHECK_EQ_STR(failure, "block 3 of 16: block 3 gives up (and 2 more block(s) failed)");

    // Blocks run in parallel: two blocks can wait for each other (needs two threads).
    if (ascendc_host::Pool::get().threads() >= 2) {
        std::atomic<int> arrived{0};
        std::atomic<int> met{0};
        failure = launch(2, [&] {
            arrived.fetch_add(1);
            auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (arrived.load() < 2 && std::chrono::steady_clock::now() < until) {
                std::this_thread::yield();
            }
            if (arrived.load() == 2) {
                met.fetch_add(1);
            }
        });
        CHECK_EQ_STR(failure, "");
        CHECK(met.load() == 2);
    } else {
        std::fprintf(stderr, "the pool has one thread: run with ASCENDC_HOST_THREADS >= 2\n");
        ++failures;
    }

    // Printf output comes out per block, in block order, after the kernel.
    std::fflush(stdout);
    failure = launch(8, [] {
        // Later blocks finish first.
        std::this_thread::sleep_for(std::chrono::milliseconds(2 * (8 - GetBlockIdx())));
        AscendC::printf("block %d line 1\n", static_cast<int>(GetBlockIdx()));
        PRINTF("block %d line 2\n", static_cast<int>(GetBlockIdx()));
    });
    CHECK_EQ_STR(failure, "");
    std::printf("--\n");
    failure = launch(1, [] {
        TPipe p;
        TBuf<TPosition::VECCALC> b;
        p.InitBuffer(b, 64);
        LocalTensor<int32_t> t = b.Get<int32_t>();
        for (int32_t i = 0; i < 16; ++i) {
            t.SetValue(i, i - 2);
        }
        DumpTensor(t, 5, 4);
    });
    CHECK_EQ_STR(failure, "");
    std::fflush(stdout);
}

int main()
{
    test_half_and_bfloat16();
    test_cast_modes();
    test_vector_instructions();
    test_queues_and_local_checks();
    test_data_copy();
    test_blocks();
    return finish();
}
