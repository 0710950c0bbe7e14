// Host-only logic of the chapter-02 access-pattern demos: the launch-level model (distinct sectors,
// sectors per request, columns), the sweeps, the CPU references and checks the demos rely on (a check
// that cannot fail proves nothing, so each is shown to catch the errors it is there for).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "02_global_memory/kernels/aos_soa_reference.hpp"
#include "02_global_memory/kernels/data_kinds.hpp"
#include "02_global_memory/kernels/demo_support.hpp"
#include "02_global_memory/kernels/matrix_sum_reference.hpp"
#include "02_global_memory/kernels/offset_add_reference.hpp"
#include "02_global_memory/kernels/offset_add_runner.hpp"
#include "02_global_memory/kernels/pattern_model.hpp"
#include "02_global_memory/kernels/strided_copy_reference.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

std::uint64_t brute_force_sectors(std::uint64_t first, std::uint64_t count, std::uint64_t stride, unsigned elem) {
  std::set<std::uint64_t> s;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t begin = (first + k * stride) * elem;
    for (std::uint64_t b = begin; b < begin + elem; ++b) s.insert(b / 32);
  }
  return s.size();
}

TEST(Ch02DistinctSectors, MatchesBruteForce) {
  for (unsigned elem : {1u, 2u, 4u, 8u, 16u})
    for (std::uint64_t stride : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 16u, 31u, 32u, 64u})
      for (std::uint64_t first : {0u, 1u, 3u, 11u, 128u})
        for (std::uint64_t count : {0u, 1u, 2u, 31u, 100u, 1000u})
          ASSERT_EQ(distinct_sectors(first, count, stride, elem), brute_force_sectors(first, count, stride, elem))
              << "elem " << elem << " stride " << stride << " first " << first << " count " << count;
}

TEST(Ch02DistinctSectors, RejectsBadArguments) {
  EXPECT_THROW(distinct_sectors(0, 10, 0, 4), std::invalid_argument);
  EXPECT_THROW(distinct_sectors(0, 10, 1, 3), std::invalid_argument);
}

TEST(Ch02OffsetTraffic, FiveSectorsPerRequestUnlessAlignedToASector) {
  const std::size_t n = 1 << 20;
  for (unsigned k : offset_sweep(false)) {
    const LaunchModel read = summarize_traffic(offset_add_traffic(n, k, 0));
    const double expected = k % 8 == 0 ? 4.0 : 5.0;  // 8 floats per 32-byte sector
    EXPECT_DOUBLE_EQ(read.ld_sectors_per_req, expected) << "offset " << k;
    EXPECT_DOUBLE_EQ(read.st_sectors_per_req, 4.0) << "offset " << k;
    const LaunchModel write = summarize_traffic(offset_add_traffic(n, 0, k));
    EXPECT_DOUBLE_EQ(write.ld_sectors_per_req, 4.0);
    EXPECT_DOUBLE_EQ(write.st_sectors_per_req, expected);
    // DRAM bytes: each array's sectors at most one more than the aligned case.
    const double aligned = 3.0 * n * sizeof(float);
    EXPECT_GE(read.bytes_moved, aligned);
    EXPECT_LE(read.bytes_moved, aligned + 2 * 32);
  }
  // The blog post's 80% load efficiency at offset 11 (ncu: 4 of 5 sectors used), stores at 100%.
  const LaunchModel m = summarize_traffic(offset_add_traffic(n, 11, 0));
  EXPECT_NEAR(m.efficiency, (2 * 128.0 + 128.0) / (2 * 160.0 + 128.0), 1e-12);
}

TEST(Ch02StrideTraffic, OneSectorPerElementFromStrideEightForFloats) {
  EXPECT_DOUBLE_EQ(model::stride_access(1, 4).sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(model::stride_access(2, 4).sectors_per_request(), 8.0);
  EXPECT_DOUBLE_EQ(model::stride_access(8, 4).sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(model::stride_access(64, 4).sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(model::stride_access(1, 16).sectors_per_request(), 16.0);
  EXPECT_DOUBLE_EQ(model::stride_access(2, 16).sectors_per_request(), 32.0);
  EXPECT_NEAR(model::stride_access(8, 4).efficiency(), 4.0 / 32.0, 1e-12);
  EXPECT_NEAR(model::stride_access(4, 8).efficiency(), 8.0 / 32.0, 1e-12);
  EXPECT_NEAR(model::stride_access(2, 16).efficiency(), 16.0 / 32.0, 1e-12);
}

TEST(Ch02ModelColumns, WrittenOnlyWhenTheyApply) {
  Row timed;
  timed.gb_per_s = 2000.0;
  set_model_columns(timed, 4000.0, offset_add_traffic(1000, 11, 0));
  ASSERT_NE(timed.get("vs_ceiling"), nullptr);
  EXPECT_DOUBLE_EQ(std::stod(*timed.get("vs_ceiling")), 0.5);
  EXPECT_DOUBLE_EQ(std::stod(*timed.get("model_ld_sectors_per_req")), 5.0);
  Row untimed;  // a failed verification: no GB/s, so no ratio
  set_model_columns(untimed, 4000.0, offset_add_traffic(1000, 0, 0));
  EXPECT_EQ(untimed.get("vs_ceiling"), nullptr);
  EXPECT_NE(untimed.get("model_mb_moved"), nullptr);
}

TEST(Ch02Sweeps, AreTheChaptersSweeps) {
  const auto offsets = offset_sweep(false);
  ASSERT_EQ(offsets.size(), 35u);
  EXPECT_EQ(offsets.front(), 0u);
  EXPECT_EQ(offsets[32], 32u);
  EXPECT_EQ(offsets[33], 64u);
  EXPECT_EQ(offsets.back(), 128u);
  const auto strides = stride_sweep(false);
  ASSERT_EQ(strides.size(), 33u);
  EXPECT_EQ(strides.front(), 1u);
  EXPECT_EQ(strides[31], 32u);
  EXPECT_EQ(strides.back(), 64u);
  EXPECT_EQ(block_sweep(false), (std::vector<unsigned>{128, 256, 512, 1024}));
  for (unsigned k : offset_sweep(true)) EXPECT_LE(k, kMaxOffset);
  for (unsigned k : offset_sweep(false)) EXPECT_LE(k, kMaxOffset);
}

// ---- references and checks ------------------------------------------------------------------------------

// What a correct kernel leaves in C: poison, the shifted sums, poison.
std::vector<float> correct_output(const OffsetAddHost& h, std::size_t n, unsigned r, unsigned w) {
  std::vector<float> c(n + kMaxOffset);
  std::memset(c.data(), kPoisonByte, c.size() * sizeof(float));
  for (std::size_t i = 0; i < n; ++i) c[w + i] = h.a[i + r] + h.b[i + r];
  return c;
}

// The inputs are random operands in [1, 2) from two seeds, and a sum read from a neighbouring offset is another
// value: a kernel that reads A or B one element off cannot pass.
TEST(Ch02OffsetAddReference, InputsAreRandomOperandsAndOffsetsChangeTheSum) {
  const OffsetAddHost h = make_offset_add_host(10000);
  ASSERT_EQ(h.sum.size(), 10000u + kMaxOffset);
  std::size_t same_as_neighbour = 0;
  for (std::size_t j = 0; j < h.sum.size(); ++j) {
    ASSERT_GE(h.a[j], 1.0f);
    ASSERT_LT(h.a[j], 2.0f);
    ASSERT_GE(h.b[j], 1.0f);
    ASSERT_LT(h.b[j], 2.0f);
    ASSERT_EQ(h.sum[j], h.a[j] + h.b[j]);
    if (j > 0) same_as_neighbour += h.a[j] + h.b[j - 1] == h.sum[j] || h.a[j - 1] + h.b[j] == h.sum[j];
  }
  EXPECT_LE(same_as_neighbour, 2u);
}

TEST(Ch02OffsetAddReference, AcceptsTheRightOutputAndCatchesEveryKindOfWrongOne) {
  const std::size_t n = 1000;
  const OffsetAddHost h = make_offset_add_host(n);
  for (unsigned r : {0u, 11u}) {
    for (unsigned w : {0u, 5u, 128u}) {
      const auto good = correct_output(h, n, r, w);
      EXPECT_TRUE(verify_offset_add(good.data(), h.sum.data(), n, r, w).ok());
      EXPECT_EQ(verify_offset_add(good.data(), h.sum.data(), n, r, w).checked, n + kMaxOffset);

      auto tail_missing = good;  // the unrolled kernel's classic bug: the last element never written
      std::memset(&tail_missing[w + n - 1], kPoisonByte, sizeof(float));
      EXPECT_FALSE(verify_offset_add(tail_missing.data(), h.sum.data(), n, r, w).ok());

      // Read from the wrong offset.
      EXPECT_FALSE(verify_offset_add(correct_output(h, n, r + 1, w).data(), h.sum.data(), n, r, w).ok());

      auto stray = good;  // a write outside [w, w + n): after it, or before it when it ends the buffer
      stray[w + n < stray.size() ? w + n : w - 1] = 1.0f;
      EXPECT_FALSE(verify_offset_add(stray.data(), h.sum.data(), n, r, w).ok());
    }
  }
}

TEST(Ch02StridedReference, CountsAndChecks) {
  EXPECT_EQ(strided_count(100, 1), 100u);
  EXPECT_EQ(strided_count(100, 3), 34u);  // 0, 3, ..., 99
  EXPECT_EQ(strided_count(100, 64), 2u);
  EXPECT_EQ(strided_count(1, 64), 1u);
  const std::size_t elems = 1000;
  const auto in = strided_input<uint2>(elems);
  EXPECT_EQ(in[3].x, pattern_word(6, 0x57));
  EXPECT_EQ(in[3].y, pattern_word(7, 0x57));
  for (std::size_t s : {1u, 2u, 7u, 64u}) {
    std::vector<uint2> out(elems);
    std::memset(out.data(), kPoisonByte, out.size() * sizeof(uint2));
    const std::size_t n = strided_count(elems, s);
    for (std::size_t i = 0; i < n; ++i) out[i * s] = in[i * s];
    EXPECT_TRUE(verify_strided_copy(out.data(), in.data(), n, s).ok()) << s;
    EXPECT_TRUE(verify_strided_gaps(out.data(), elems, s).ok()) << s;
    auto last_missing = out;
    std::memset(&last_missing[(n - 1) * s], kPoisonByte, sizeof(uint2));
    EXPECT_FALSE(verify_strided_copy(last_missing.data(), in.data(), n, s).ok()) << s;
    if (s > 1) {
      auto gap_written = out;
      gap_written[1] = in[1];
      EXPECT_FALSE(verify_strided_gaps(gap_written.data(), elems, s).ok()) << s;
    }
  }
}

TEST(Ch02LayoutReference, UpdatesBothLayoutsAlike) {
  const LayoutHost h = make_layout_host(777);
  for (std::size_t i = 0; i < 777; ++i) {
    ASSERT_EQ(h.aos_out[i].x, h.aos_in[i].x + 10.0f);
    ASSERT_EQ(h.aos_out[i].y, h.aos_in[i].y + 20.0f);
    ASSERT_EQ(h.aos_x_only[i].y, h.aos_in[i].y);
    ASSERT_EQ(h.x_out[i], h.aos_out[i].x);
    ASSERT_EQ(h.y_out[i], h.aos_out[i].y);
  }
  const float4 p = updated(make_float4(1, 2, 3, 4));
  EXPECT_EQ(p.x, 11.0f);
  EXPECT_EQ(p.y, 22.0f);
  EXPECT_EQ(p.z, 13.0f);
  EXPECT_EQ(p.w, 24.0f);
}

TEST(Ch02MatrixReference, InitAndSumAgree) {
  const std::size_t n = 5000;
  std::vector<float> a(n), b(n), c(n, 7.0f);
  init_matrices(a.data(), b.data(), c.data(), n);
  const auto expected = matrix_sum_reference(n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(c[i], 0.0f);
    ASSERT_EQ(expected[i], a[i] + b[i]);
  }
}

TEST(Ch02Checks, PoisonAndEqualReportAbsoluteIndices) {
  std::vector<float> got(10, 1.0f), want(10, 1.0f);
  got[7] = 2.0f;
  VerifyResult r;
  expect_equal(r, got.data(), want.data(), 10, 100);
  ASSERT_EQ(r.mismatches, 1u);
  EXPECT_NE(r.first[0].find("index 107"), std::string::npos) << r.first[0];
  VerifyResult p;
  std::vector<float> poisoned(4);
  std::memset(poisoned.data(), kPoisonByte, sizeof(float) * 4);
  expect_poison(p, poisoned.data(), 4, 0);
  EXPECT_TRUE(p.ok());
  poisoned[2] = 0.0f;
  expect_poison(p, poisoned.data(), 4, 50);
  ASSERT_EQ(p.mismatches, 1u);
  EXPECT_NE(p.first[0].find("index 52"), std::string::npos);
}

// ---- The data a benchmark fills its buffers with -----------------------------------------------------------

TEST(DataKinds, EachKindIsWhatItsNameSays) {
  std::set<std::uint32_t> random_words;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    EXPECT_EQ(data_word(DataKind::zeros, i), 0u);
    EXPECT_EQ(data_word(DataKind::constant, i), 0x3F800000u);  // 1.0f
    EXPECT_LT(data_word(DataKind::small_ints, i), 16u);
    random_words.insert(data_word(DataKind::random, i));
  }
  // A hash of the index: (almost) no word repeats, so nothing is left for a compressor.
  EXPECT_GT(random_words.size(), 99990u);
  // Words far apart differ too (the upper half of the index is mixed in).
  EXPECT_NE(data_word(DataKind::random, 1), data_word(DataKind::random, (std::uint64_t{1} << 32) + 1));
  EXPECT_EQ(data_kind_name(DataKind::small_ints), "small_ints");
}

}  // namespace
