// Tests of the vector instruction model of the host layer: the mask register (Normal mode's
// bit and length masks, Counter mode), the repeat forms with block and repeat strides, the
// isSetMask = false forms that use the register as the kernel left it, and the element-wise
// families beyond the basic arithmetic. Built and run by tests/it/host_layer.rs.
#include "harness.h"

#include <cmath>
#include <cstdint>

using namespace AscendC;

namespace {

// A scratch buffer of `bytes` bytes, its tensors taken at byte offsets.
struct Scratch {
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    explicit Scratch(uint32_t bytes) { pipe.InitBuffer(buf, bytes); }
    template <typename T>
    LocalTensor<T> at(uint32_t offset, uint32_t count)
    {
        return buf.GetWithOffset<T>(count, offset);
    }
};

template <typename T>
void fill(const LocalTensor<T>& t, uint32_t n, T first, T step)
{
    for (uint32_t i = 0; i < n; ++i) {
        t.SetValue(i, static_cast<T>(first + static_cast<T>(i) * step));
    }
}

void test_length_mask_and_repeats()
{
    std::string failure = launch(1, [] {
        Scratch s(3 * 1024);
        LocalTensor<float> a = s.at<float>(0, 256);
        LocalTensor<float> b = s.at<float>(1024, 256);
        LocalTensor<float> d = s.at<float>(2048, 256);
        fill(a, 256, 0.0f, 1.0f);
        fill(b, 256, 1000.0f, 0.0f);
        Duplicate(d, -1.0f, 256);
        // The first 16 elements of each of 3 repeats of 64 floats.
        Add(d, a, b, 16, 3, {1, 1, 1, 8, 8, 8});
        CHECK(d.GetValue(0) == 1000.0f && d.GetValue(15) == 1015.0f);
        CHECK(d.GetValue(16) == -1.0f && d.GetValue(63) == -1.0f);
        CHECK(d.GetValue(64) == 1064.0f && d.GetValue(143) == 1143.0f);
        CHECK(d.GetValue(144) == -1.0f && d.GetValue(192) == -1.0f);
        // A destination repeat stride of 16 blocks: repeat r lands at element 128 r.
        Duplicate(d, -1.0f, 256);
        Muls(d, a, 2.0f, 64, 2, {1, 1, 16, 8});
        CHECK(d.GetValue(63) == 126.0f && d.GetValue(64) == -1.0f);
        CHECK(d.GetValue(128) == 128.0f && d.GetValue(191) == 254.0f);
        // A source block stride of 2: element i of a repeat reads block (i / 8) * 2.
        Duplicate(d, -1.0f, 256);
        Adds(d, a, 0.0f, 64, 1, {1, 2, 8, 16});
        CHECK(d.GetValue(0) == 0.0f && d.GetValue(7) == 7.0f && d.GetValue(8) == 16.0f);
        CHECK(d.GetValue(63) == 119.0f);
        // The mask left full: the next "first n" form is unaffected.
        Add(d, a, b, 256);
        CHECK(d.GetValue(255) == 1255.0f);
    });
    CHECK_EQ_STR(failure, "");
}

void test_bit_mask()
{
    std::string failure = launch(1, [] {
        Scratch s(2048);
        LocalTensor<half> a = s.at<half>(0, 256);
        LocalTensor<half> d = s.at<half>(1024, 256);
        for (uint32_t i = 0; i < 256; ++i) {
            a.SetValue(i, half(static_cast<float>(i)));
        }
        Duplicate(d, half(-1.0f), 256);
        // Even elements of the low 64, element 64 and element 127 of each of 2 repeats of 128.
        uint64_t mask[2] = {0x5555555555555555ull, 0x8000000000000001ull};
        Abs(d, a, mask, 2, {1, 1, 8, 8});
        CHECK(static_cast<float>(d.GetValue(0)) == 0.0f);
        CHECK(static_cast<float>(d.GetValue(1)) == -1.0f);
        CHECK(static_cast<float>(d.GetValue(62)) == 62.0f);
        CHECK(static_cast<float>(d.GetValue(63)) == -1.0f);
        CHECK(static_cast<float>(d.GetValue(64)) == 64.0f);
        CHECK(static_cast<float>(d.GetValue(65)) == -1.0f);
        CHECK(static_cast<float>(d.GetValue(127)) == 127.0f);
        CHECK(static_cast<float>(d.GetValue(128)) == 128.0f);
        CHECK(static_cast<float>(d.GetValue(255)) == 255.0f);
        CHECK(static_cast<float>(d.GetValue(254)) == -1.0f);
    });
    CHECK_EQ_STR(failure, "");
}

void test_register_forms()
{
    std::string failure = launch(1, [] {
        Scratch s(3 * 1024);
        LocalTensor<float> a = s.at<float>(0, 256);
        LocalTensor<float> b = s.at<float>(1024, 256);
        LocalTensor<float> d = s.at<float>(2048, 256);
        fill(a, 256, 0.0f, 1.0f);
        fill(b, 256, 0.5f, 0.0f);
        Duplicate(d, 0.0f, 256);
        // Counter mode: 100 elements, the repeats following from the count.
        SetMaskCount();
        SetVectorMask<float, MaskMode::COUNTER>(0, 100);
        Add<float, false>(d, a, b, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
        SetMaskNorm();
        ResetMask();
        CHECK(d.GetValue(99) == 99.5f && d.GetValue(100) == 0.0f);
        // Normal mode, a mask the kernel set: 8 elements per repeat.
        SetVectorMask<float>(0, 0xFF);
        Sub<float, false>(d, a, b, MASK_PLACEHOLDER, 2, {1, 1, 1, 8, 8, 8});
        CHECK(d.GetValue(7) == 6.5f && d.GetValue(8) == 8.5f && d.GetValue(71) == 70.5f);
        // The count form without setting the mask: one repeat under the register's mask.
        Mul<float, false>(d, a, a, 64);
        CHECK(d.GetValue(7) == 49.0f && d.GetValue(8) == 8.5f);
        ResetMask();
        Mul(d, a, a, 64);
        CHECK(d.GetValue(8) == 64.0f);
    });
    CHECK_EQ_STR(failure, "");
}

void test_element_wise_families()
{
    std::string failure = launch(1, [] {
        Scratch s(4 * 1024);
        LocalTensor<float> a = s.at<float>(0, 64);
        LocalTensor<float> b = s.at<float>(256, 64);
        LocalTensor<float> d = s.at<float>(512, 64);
        fill(a, 64, -8.0f, 0.25f);
        fill(b, 64, 2.0f, 0.0f);
        AddRelu(d, a, b, 64);
        CHECK(d.GetValue(0) == 0.0f && d.GetValue(63) == 9.75f);
        Duplicate(d, 1.0f, 64);
        MulAddDst(d, a, b, 64);  // a * b + d
        CHECK(d.GetValue(0) == -15.0f);
        Duplicate(d, 3.0f, 64);
        FusedMulAdd(d, a, b, 64);  // a * d + b
        CHECK(d.GetValue(0) == -22.0f);
        LeakyRelu(d, a, 0.5f, 64);
        CHECK(d.GetValue(0) == -4.0f && d.GetValue(63) == 7.75f);
        Reciprocal(d, b, 64);
        CHECK(d.GetValue(5) == 0.5f);
        Rsqrt(d, b, 64);
        CHECK(std::fabs(d.GetValue(5) - 1.0f / std::sqrt(2.0f)) < 1e-7f);
        Duplicate(d, 1.0f, 64);
        Axpy(d, a, 2.0f, 64);  // a * 2 + d
        CHECK(d.GetValue(0) == -15.0f);

        LocalTensor<int16_t> x = s.at<int16_t>(1024, 128);
        LocalTensor<int16_t> y = s.at<int16_t>(1280, 128);
        LocalTensor<int16_t> z = s.at<int16_t>(1536, 128);
        fill<int16_t>(x, 128, -64, 1);
        Duplicate(y, static_cast<int16_t>(0x0F0F), 128);
        And(z, x, y, 128);
        CHECK(z.GetValue(0) == static_cast<int16_t>(-64 & 0x0F0F));
        Or(z, x, y, 128);
        CHECK(z.GetValue(127) == static_cast<int16_t>(63 | 0x0F0F));
        Not(z, x, 128);
        CHECK(z.GetValue(0) == 63);
        ShiftRight(z, x, static_cast<int16_t>(2), 128);
        CHECK(z.GetValue(0) == -16);  // arithmetic
        ShiftLeft(z, x, static_cast<int16_t>(10), 128);
        CHECK(z.GetValue(127) == static_cast<int16_t>(63 << 10 & 0xFFFF));  // wraps

        // Half in, float out: Axpy accumulates in the wider type.
        LocalTensor<half> h = s.at<half>(2048, 64);
        LocalTensor<float> f = s.at<float>(2304, 64);
        Duplicate(h, half(0.5f), 64);
        Duplicate(f, 1.0f, 64);
        Axpy(f, h, half(3.0f), 64);
        CHECK(f.GetValue(63) == 2.5f);
    });
    CHECK_EQ_STR(failure, "");
}

void test_convert_family()
{
    std::string failure = launch(1, [] {
        Scratch s(4 * 1024);
        LocalTensor<int32_t> idx = s.at<int32_t>(0, 128);
        CreateVecIndex(idx, 5, 128);
        CHECK(idx.GetValue(0) == 5 && idx.GetValue(127) == 132);
        // Brcb: each of the first 8 elements fills a 32-byte block.
        LocalTensor<float> src = s.at<float>(512, 8);
        LocalTensor<float> dst = s.at<float>(1024, 64);
        fill(src, 8, 1.0f, 1.0f);
        Brcb(dst, src, 1, {1, 8});
        CHECK(dst.GetValue(0) == 1.0f && dst.GetValue(7) == 1.0f && dst.GetValue(8) == 2.0f);
        CHECK(dst.GetValue(63) == 8.0f);
        // Cast's repeat form: float to half, the first 4 of each of 2 repeats of 64.
        LocalTensor<half> h = s.at<half>(2048, 128);
        LocalTensor<float> f = s.at<float>(2560, 128);
        fill(f, 128, 0.0f, 1.5f);
        Duplicate(h, half(-1.0f), 128);
        Cast(h, f, RoundMode::CAST_ROUND, 4, 2, {1, 1, 4, 8});
        CHECK(static_cast<float>(h.GetValue(1)) == 1.5f);
        CHECK(static_cast<float>(h.GetValue(4)) == -1.0f);
        CHECK(static_cast<float>(h.GetValue(64)) == 96.0f);
        // Copy: the first 16 of each of 2 repeats, the source read every other block.
        Duplicate(f, -1.0f, 128);
        LocalTensor<float> from = s.at<float>(3072, 256);
        fill(from, 256, 0.0f, 1.0f);
        Copy(f, from, static_cast<uint64_t>(16), 2, {1, 2, 8, 16});
        CHECK(f.GetValue(7) == 7.0f && f.GetValue(8) == 16.0f && f.GetValue(15) == 23.0f);
        CHECK(f.GetValue(16) == -1.0f && f.GetValue(64) == 128.0f && f.GetValue(72) == 144.0f);
        // Duplicate under a mask.
        Duplicate(f, 0.0f, 128);
        Duplicate(f, 9.0f, 2, 2, 1, 8);
        CHECK(f.GetValue(1) == 9.0f && f.GetValue(2) == 0.0f && f.GetValue(65) == 9.0f);
    });
    CHECK_EQ_STR(failure, "");
}

void test_faults()
{
    // A repeat that runs past the unified buffer (192 KiB): per element, and as a whole run.
    std::string failure = launch(1, [] {
        Scratch s(192 * 1024);
        LocalTensor<float> a = s.at<float>(0, 128);
        LocalTensor<float> d = s.at<float>(192 * 1024 - 512, 128);
        Adds(d, a, 1.0f, 32, 3, {1, 1, 8, 8});
    });
    CHECK_EQ_STR(failure, "block 0 of 1: Adds: repeat 2, element 0 of dst is byte 512, past its "
                          "buffer (512 bytes)");
    failure = launch(1, [] {
        Scratch s(192 * 1024);
        LocalTensor<float> d = s.at<float>(192 * 1024 - 512, 128);
        Adds(d, d, 1.0f, 64, 3, {1, 1, 8, 8});
    });
    CHECK(contains(failure, "Adds: 192 elements of dst run past its buffer (512 bytes)"));
    // An operand off a 32-byte boundary.
    failure = launch(1, [] {
        Scratch s(1024);
        LocalTensor<float> a = s.at<float>(0, 128);
        Adds(a[1], a, 1.0f, 8);
    });
    CHECK(contains(failure, "Adds: dst does not start on a 32-byte boundary"));
}

}  // namespace

int main()
{
    test_length_mask_and_repeats();
    test_bit_mask();
    test_register_forms();
    test_element_wise_families();
    test_convert_family();
    test_faults();
    return finish();
}
