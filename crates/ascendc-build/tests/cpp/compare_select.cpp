// Tests of the comparison and selection family of the host layer: Compare and Compares into
// bit tensors, Compare into the CMPMASK register (GetCmpMask, SetCmpMask), and Select in its
// three modes, in the count and the repeat forms. Built and run by tests/it/host_layer.rs.
#include "harness.h"

#include <cstdint>

using namespace AscendC;

namespace {

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

void test_compare_into_bits()
{
    std::string failure = launch(1, [] {
        Scratch s(4096);
        LocalTensor<float> a = s.at<float>(0, 128);
        LocalTensor<float> b = s.at<float>(512, 128);
        LocalTensor<uint8_t> bits = s.at<uint8_t>(1024, 32);
        for (uint32_t i = 0; i < 128; ++i) {
            a.SetValue(i, static_cast<float>(i));
            b.SetValue(i, 50.0f);
        }
        Duplicate(bits.ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0xAAAA), 16);
        Compare(bits, a, b, CMPMODE::LT, 128);  // two whole repeats of 64 floats: 16 bytes
        for (uint32_t k = 0; k < 6; ++k) {
            CHECK(bits.GetValue(k) == 0xFF);
        }
        CHECK(bits.GetValue(6) == 0x03);
        CHECK(bits.GetValue(7) == 0x00 && bits.GetValue(15) == 0x00);
        CHECK(bits.GetValue(16) == 0xAA);  // past the compared bits: untouched
        Compare(bits, a, b, CMPMODE::EQ, 64);
        CHECK(bits.GetValue(6) == 0x04 && bits.GetValue(0) == 0x00);

        // Compares against a scalar; the repeat form with a source repeat stride of 16 blocks.
        Compares(bits, a, 100.0f, CMPMODE::GE, 128);
        CHECK(bits.GetValue(12) == 0xF0 && bits.GetValue(11) == 0x00 && bits.GetValue(15) == 0xFF);
        Compares(bits, a, 3.0f, CMPMODE::LE, static_cast<uint64_t>(64), 2, {1, 1, 8, 16});
        CHECK(bits.GetValue(0) == 0x0F && bits.GetValue(8) == 0x00);
        Compares(bits, a, 0.0f, CMPMODE::NE, static_cast<uint64_t>(64), 1, {1, 1, 8, 8});
        CHECK(bits.GetValue(0) == 0xFE);

        // half: 128 elements a repeat.
        LocalTensor<half> h = s.at<half>(2048, 128);
        LocalTensor<half> g = s.at<half>(2560, 128);
        for (uint32_t i = 0; i < 128; ++i) {
            h.SetValue(i, half(static_cast<float>(i % 3)));
            g.SetValue(i, half(1.0f));
        }
        Compare(bits, h, g, CMPMODE::GT, 128);
        CHECK(bits.GetValue(0) == 0x24);  // elements 2 and 5
        CHECK(bits.GetValue(15) == 0x24);  // elements 122 and 125
    });
    CHECK_EQ_STR(failure, "");
}

void test_compare_into_register()
{
    std::string failure = launch(1, [] {
        Scratch s(4096);
        LocalTensor<float> a = s.at<float>(0, 64);
        LocalTensor<float> b = s.at<float>(256, 64);
        LocalTensor<uint8_t> m = s.at<uint8_t>(512, 32);
        for (uint32_t i = 0; i < 64; ++i) {
            a.SetValue(i, static_cast<float>(i));
            b.SetValue(i, static_cast<float>(i % 2 == 0 ? i : 0));
        }
        LocalTensor<float> d = s.at<float>(1024, 64);
        Duplicate(d, -1.0f, 64);
        // Only the first 16 elements take part: bits of the others are 0.
        Compare(a, b, CMPMODE::EQ, static_cast<uint64_t>(16), {1, 1, 1, 8, 8, 8});
        GetCmpMask(m);
        CHECK(m.GetValue(0) == 0x55 && m.GetValue(1) == 0x55 && m.GetValue(2) == 0x00);
        CHECK(m.GetValue(15) == 0x00);
        // SetCmpMask loads it back: Select mode 0 without a selection tensor uses it.
        m.SetValue(0, 0x0F);
        SetCmpMask(m);
        Select<float, SELMODE::VSEL_CMPMASK_SPR>(d, a, b, 1, {1, 1, 1, 8, 8, 8});
        CHECK(d.GetValue(3) == 3.0f && d.GetValue(4) == 4.0f && d.GetValue(5) == 0.0f);
        CHECK(d.GetValue(8) == 8.0f && d.GetValue(9) == 0.0f);  // CMPMASK byte 1 is 0x55
        CHECK(d.GetValue(16) == -1.0f);  // the mask Compare set (16 elements) still applies
    });
    CHECK_EQ_STR(failure, "");
}

void test_select_modes()
{
    std::string failure = launch(1, [] {
        Scratch s(8192);
        LocalTensor<float> a = s.at<float>(0, 256);
        LocalTensor<float> b = s.at<float>(1024, 256);
        LocalTensor<float> d = s.at<float>(2048, 256);
        LocalTensor<uint8_t> sel = s.at<uint8_t>(3072, 64);
        for (uint32_t i = 0; i < 256; ++i) {
            a.SetValue(i, static_cast<float>(i));
            b.SetValue(i, -static_cast<float>(i));
        }
        for (uint32_t k = 0; k < 32; ++k) {
            sel.SetValue(k, static_cast<uint8_t>(k < 8 ? 0x01 : 0x80));
        }
        // Mode 2: the bits are used up across the elements.
        Select(d, sel, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 256);
        CHECK(d.GetValue(0) == 0.0f && d.GetValue(1) == -1.0f && d.GetValue(8) == 8.0f);
        CHECK(d.GetValue(71) == 71.0f && d.GetValue(64) == -64.0f && d.GetValue(255) == 255.0f);
        // Mode 1: a scalar for the 0 bits.
        Select(d, sel, a, 7.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 256);
        CHECK(d.GetValue(0) == 0.0f && d.GetValue(1) == 7.0f && d.GetValue(199) == 199.0f);
        // Mode 0: every repeat takes the first 64 bits again.
        Select(d, sel, a, b, SELMODE::VSEL_CMPMASK_SPR, 256);
        CHECK(d.GetValue(64) == 64.0f && d.GetValue(65) == -65.0f && d.GetValue(135) == -135.0f);
        // The repeat form with a mask: the first 4 elements of each of 2 repeats.
        Duplicate(d, 100.0f, 256);
        Select(d, sel, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, static_cast<uint64_t>(4), 2,
               {1, 1, 1, 8, 8, 8});
        CHECK(d.GetValue(0) == 0.0f && d.GetValue(1) == -1.0f && d.GetValue(4) == 100.0f);
        CHECK(d.GetValue(64) == -64.0f && d.GetValue(68) == 100.0f);
    });
    CHECK_EQ_STR(failure, "");

    // Mode 1 without a mask: the scalar is CMPMASK's first element (half here).
    failure = launch(1, [] {
        Scratch s(4096);
        LocalTensor<half> a = s.at<half>(0, 128);
        LocalTensor<half> d = s.at<half>(256, 128);
        LocalTensor<uint8_t> sel = s.at<uint8_t>(512, 32);
        LocalTensor<half> scalar = s.at<half>(1024, 16);
        Duplicate(a, half(2.0f), 128);
        Duplicate(scalar, half(-0.5f), 16);
        Duplicate(sel.ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0x00FF), 16);
        SetCmpMask(scalar);
        Select(d, sel, a, 1, {1, 1, 1, 8, 8, 8});
        CHECK(static_cast<float>(d.GetValue(7)) == 2.0f);
        CHECK(static_cast<float>(d.GetValue(8)) == -0.5f);
        CHECK(static_cast<float>(d.GetValue(127)) == -0.5f);
    });
    CHECK_EQ_STR(failure, "");

    // A selection tensor too short for the elements.
    failure = launch(1, [] {
        Scratch s(192 * 1024);
        LocalTensor<float> a = s.at<float>(0, 512);
        LocalTensor<uint8_t> sel = s.at<uint8_t>(192 * 1024 - 32, 16);
        Select(a, sel, a, a, SELMODE::VSEL_TENSOR_TENSOR_MODE, 512);
    });
    CHECK(contains(failure, "Select: 64 bytes of selMask run past its buffer (32 bytes"));
}

}  // namespace

int main()
{
    test_compare_into_bits();
    test_compare_into_register();
    test_select_modes();
    return finish();
}
