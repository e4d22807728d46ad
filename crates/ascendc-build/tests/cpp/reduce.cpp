// Tests of the reduction family of the host layer: ReduceSum/ReduceMax/ReduceMin over a whole
// input (with the index of the extreme value), ReduceRepeat per repeat in its result orders,
// ReduceDataBlock per 32-byte block, ReducePairElem per pair, the pairwise order of sums and the
// result registers. Built and run by tests/it/host_layer.rs.
#include "harness.h"

#include <cstdint>
#include <cstring>

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

template <typename T>
uint32_t bits32(T v)
{
    uint32_t out = 0;
    std::memcpy(&out, &v, sizeof(T));
    return out;
}

void test_whole_reductions()
{
    std::string failure = launch(1, [] {
        Scratch s(8192);
        LocalTensor<float> src = s.at<float>(0, 256);
        LocalTensor<float> dst = s.at<float>(1024, 8);
        LocalTensor<float> work = s.at<float>(2048, 256);
        for (uint32_t i = 0; i < 256; ++i) {
            src.SetValue(i, static_cast<float>(i % 100));
        }
        ReduceSum(dst, src, work, 100);
        CHECK(dst.GetValue(0) == 4950.0f);
        CHECK(GetReduceRepeatSumSpr<float>() == 4950.0f);
        // The maximum 99 is at 99 and 199: the first index counts.
        ReduceMax(dst, src, work, 256, true);
        CHECK(dst.GetValue(0) == 99.0f && bits32(dst.GetValue(1)) == 99u);
        float value = 0;
        float index = 0;
        GetReduceRepeatMaxMinSpr(value, index);
        CHECK(value == 99.0f && bits32(index) == 99u);
        src.SetValue(150, -3.0f);
        ReduceMin(dst, src, work, 256, true);
        CHECK(dst.GetValue(0) == -3.0f && bits32(dst.GetValue(1)) == 150u);
        // The repeat form: the first 8 elements of each of 3 repeats.
        ReduceSum(dst, src, work, static_cast<int32_t>(8), 3, 8);
        CHECK(dst.GetValue(0) == 28.0f + 540.0f + 252.0f);  // 0..7, 64..71, 28..35

        // half: an index in the bits of a half slot.
        LocalTensor<half> h = s.at<half>(4096, 256);
        LocalTensor<half> hd = s.at<half>(5120, 16);
        LocalTensor<half> hw = s.at<half>(6144, 256);
        for (uint32_t i = 0; i < 256; ++i) {
            h.SetValue(i, half(static_cast<float>((i + 3) % 7) - 3.0f));
        }
        ReduceMin(hd, h, hw, 256, true);
        CHECK(static_cast<float>(hd.GetValue(0)) == -3.0f);
        uint16_t idx = 0;
        half slot = hd.GetValue(1);
        std::memcpy(&idx, &slot, 2);
        CHECK(idx == 4);
    });
    CHECK_EQ_STR(failure, "");
}

void test_sums_are_pairwise_in_the_type()
{
    // 2048 + 1 + 1 in half: summed left to right, 2048 + 1 rounds back to 2048 each time; the
    // pairwise tree adds 1 + 1 first.
    std::string failure = launch(1, [] {
        Scratch s(4096);
        LocalTensor<half> h = s.at<half>(0, 128);
        LocalTensor<half> d = s.at<half>(512, 16);
        LocalTensor<half> w = s.at<half>(1024, 128);
        Duplicate(h, half(0.0f), 128);
        h.SetValue(0, half(2048.0f));
        h.SetValue(2, half(1.0f));
        h.SetValue(3, half(1.0f));
        ReduceSum(d, h, w, 128);
        CHECK(static_cast<float>(d.GetValue(0)) == 2050.0f);
    });
    CHECK_EQ_STR(failure, "");
}

void test_per_repeat_reductions()
{
    std::string failure = launch(1, [] {
        Scratch s(8192);
        LocalTensor<float> src = s.at<float>(0, 192);
        LocalTensor<float> dst = s.at<float>(1024, 64);
        for (uint32_t i = 0; i < 192; ++i) {
            src.SetValue(i, static_cast<float>((i * 37) % 64));
        }
        src.SetValue(70, 1000.0f);
        // One sum per repeat, results 2 elements apart.
        Duplicate(dst, -1.0f, 64);
        ReduceRepeat<ReduceType::SUM>(dst, src, 64, 3, 2, 1, 8);
        CHECK(dst.GetValue(0) == 2016.0f && dst.GetValue(1) == -1.0f);
        CHECK(dst.GetValue(2) == 2016.0f - static_cast<float>((70 * 37) % 64) + 1000.0f);
        CHECK(dst.GetValue(4) == 2016.0f);
        // Max with its index in the repeat, value then index; the register has the overall one.
        ReduceRepeat<ReduceType::MAX>(dst, src, 64, 3, 1, 1, 8, ReduceOrder::ORDER_VALUE_INDEX);
        CHECK(dst.GetValue(0) == 63.0f && dst.GetValue(2) == 1000.0f && bits32(dst.GetValue(3)) == 6u);
        float v = 0;
        float i = 0;
        GetReduceRepeatMaxMinSpr(v, i);
        CHECK(v == 1000.0f && bits32(i) == 70u);
        // Index first, then value only.
        ReduceRepeat<ReduceType::MIN>(dst, src, 64, 1, 1, 1, 8, ReduceOrder::ORDER_INDEX_VALUE);
        CHECK(bits32(dst.GetValue(0)) == 0u && dst.GetValue(1) == 0.0f);
        ReduceRepeat<ReduceType::MAX>(dst, src, 64, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
        CHECK(dst.GetValue(0) == 63.0f && dst.GetValue(1) == 1000.0f);

        // Per 32-byte block, and per pair of neighbours.
        for (uint32_t k = 0; k < 64; ++k) {
            src.SetValue(k, static_cast<float>(k));
        }
        ReduceDataBlock<ReduceType::SUM>(dst, src, 64, 1, 1, 1, 8);
        CHECK(dst.GetValue(0) == 28.0f && dst.GetValue(7) == 476.0f);
        ReduceDataBlock<ReduceType::MAX>(dst, src, 64, 1, 1, 1, 8);
        CHECK(dst.GetValue(0) == 7.0f && dst.GetValue(7) == 63.0f);
        ReducePairElem<ReduceType::SUM>(dst, src, 64, 1, 1, 1, 8);
        CHECK(dst.GetValue(0) == 1.0f && dst.GetValue(31) == 125.0f);
    });
    CHECK_EQ_STR(failure, "");

    failure = launch(1, [] {
        Scratch s(1024);
        LocalTensor<float> t = s.at<float>(0, 64);
        ReduceRepeat<ReduceType::SUM>(t, t, 64, 300, 1, 1, 8);
    });
    CHECK(contains(failure, "ReduceRepeat: repeatTime 300 is outside [0, 255]"));
}

}  // namespace

int main()
{
    test_whole_reductions();
    test_sums_are_pairwise_in_the_type();
    test_per_repeat_reductions();
    return finish();
}
