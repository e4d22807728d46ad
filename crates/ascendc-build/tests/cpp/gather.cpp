// Tests of the gathering family of the host layer: GatherMask with the built-in patterns and a
// pattern tensor, in Normal and Counter (reduceMode) form, Gather by byte offsets and Gatherb
// by 32-byte blocks. Built and run by tests/it/host_layer.rs.
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

void test_gather_mask()
{
    std::string failure = launch(1, [] {
        Scratch s(8192);
        LocalTensor<float> src = s.at<float>(0, 256);
        LocalTensor<float> dst = s.at<float>(1024, 256);
        for (uint32_t i = 0; i < 256; ++i) {
            src.SetValue(i, static_cast<float>(i));
        }
        uint64_t kept = 0;
        // Pattern 1, the even elements of 2 repeats of 64.
        GatherMask(dst, src, static_cast<uint8_t>(1), false, 0, {1, 2, 8, 0}, kept);
        CHECK(kept == 64);
        CHECK(dst.GetValue(0) == 0.0f && dst.GetValue(1) == 2.0f && dst.GetValue(63) == 126.0f);
        // Pattern 6, the fourth of every four; a source repeat stride of 16 blocks.
        GatherMask(dst, src, static_cast<uint8_t>(6), false, 0, {1, 2, 16, 0}, kept);
        CHECK(kept == 32);
        CHECK(dst.GetValue(0) == 3.0f && dst.GetValue(15) == 63.0f && dst.GetValue(16) == 131.0f);
        // Counter mode (reduceMode): the first 10 elements of each repeat, pattern 7 (all).
        GatherMask(dst, src, static_cast<uint8_t>(7), true, 10, {1, 2, 8, 0}, kept);
        CHECK(kept == 20);
        CHECK(dst.GetValue(9) == 9.0f && dst.GetValue(10) == 64.0f && dst.GetValue(19) == 73.0f);
        // A pattern tensor: its bits, the second repeat's 8 blocks (256 bytes) further on.
        LocalTensor<uint32_t> pat = s.at<uint32_t>(2048, 128);
        Duplicate(pat, 0u, 128);
        pat.SetValue(0, 0x80000001u);                      // elements 0 and 31 of repeat 0
        pat.SetValue(64, 0x2u);                            // element 1 of repeat 1
        GatherMask(dst, src, pat, false, 0, {1, 2, 8, 8}, kept);
        CHECK(kept == 3);
        CHECK(dst.GetValue(0) == 0.0f && dst.GetValue(1) == 31.0f && dst.GetValue(2) == 65.0f);
    });
    CHECK_EQ_STR(failure, "");

    failure = launch(1, [] {
        Scratch s(1024);
        LocalTensor<float> src = s.at<float>(0, 64);
        uint64_t kept = 0;
        GatherMask(src, src, static_cast<uint8_t>(9), false, 0, {1, 1, 8, 0}, kept);
    });
    CHECK(contains(failure, "GatherMask: built-in pattern 9 is not one of 1-7"));
}

void test_gather_by_offsets()
{
    std::string failure = launch(1, [] {
        Scratch s(8192);
        LocalTensor<half> src = s.at<half>(0, 128);
        LocalTensor<half> dst = s.at<half>(512, 128);
        LocalTensor<uint32_t> off = s.at<uint32_t>(1024, 128);
        for (uint32_t i = 0; i < 128; ++i) {
            src.SetValue(i, half(static_cast<float>(i)));
            off.SetValue(i, (127 - i) * 2);  // reversed, in bytes
        }
        Gather(dst, src, off, 0, 128);
        CHECK(static_cast<float>(dst.GetValue(0)) == 127.0f);
        CHECK(static_cast<float>(dst.GetValue(127)) == 0.0f);
        // With a base address of 32 bytes (16 halves) and the repeat form, 8 elements.
        for (uint32_t i = 0; i < 128; ++i) {
            off.SetValue(i, i * 2);
        }
        Duplicate(dst, half(-1.0f), 128);
        Gather(dst, src, off, 32, static_cast<uint64_t>(8), 1, 8);
        CHECK(static_cast<float>(dst.GetValue(0)) == 16.0f);
        CHECK(static_cast<float>(dst.GetValue(7)) == 23.0f);
        CHECK(static_cast<float>(dst.GetValue(8)) == -1.0f);

        // Gatherb: block j of a repeat from byte offset[j].
        LocalTensor<float> fs = s.at<float>(2048, 64);
        LocalTensor<float> fd = s.at<float>(4096, 64);
        LocalTensor<uint32_t> bo = s.at<uint32_t>(6144, 8);
        for (uint32_t i = 0; i < 64; ++i) {
            fs.SetValue(i, static_cast<float>(i));
        }
        for (uint32_t j = 0; j < 8; ++j) {
            bo.SetValue(j, (7 - j) * 32);
        }
        Gatherb(fd, fs, bo, 1, {1, 8});
        CHECK(fd.GetValue(0) == 56.0f && fd.GetValue(7) == 63.0f && fd.GetValue(63) == 7.0f);
    });
    CHECK_EQ_STR(failure, "");

    failure = launch(1, [] {
        Scratch s(1024);
        LocalTensor<float> src = s.at<float>(0, 8);
        LocalTensor<uint32_t> off = s.at<uint32_t>(512, 8);
        Duplicate(off, 2u, 8);
        Gather(src, src, off, 0, 8);
    });
    CHECK(contains(failure, "Gather: element 0's offset 2 is not aligned to an element of src"));
}

}  // namespace

int main()
{
    test_gather_mask();
    test_gather_by_offsets();
    return finish();
}
