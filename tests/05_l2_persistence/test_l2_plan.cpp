// Host-only logic of the L2 persistence chapter: window clamping, Best Practices' hitRatio tuning, the sweep,
// balanced grids, the traffic model, and the CPU references against brute-force definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "05_l2_persistence/kernels/sliding_window_reference.hpp"
#include "05_l2_persistence/l2_plan.hpp"

namespace {

using namespace cml::ch05;
using cml::kMiB;

// A set-aside and a maximum window of the kind drivers report: neither is a power of two, so rounding in the
// planning code shows.
constexpr std::size_t kSetAside = 39321600;       // 37.5 MiB
constexpr std::size_t kMaxWindow = 134213632;     // 128 MiB - 4 KiB
void* const kBase = reinterpret_cast<void*>(0x7f0000000000);

bool same_element(const uint4& a, const uint4& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(L2Plan, HitRatioIsPinnedIntoTheUnitInterval) {
  EXPECT_EQ(clamp_hit_ratio(-0.5), 0.0f);
  EXPECT_EQ(clamp_hit_ratio(0.0), 0.0f);
  EXPECT_EQ(clamp_hit_ratio(1.0), 1.0f);
  EXPECT_EQ(clamp_hit_ratio(1.5), 1.0f);
  EXPECT_EQ(clamp_hit_ratio(std::nan("")), 0.0f);
  EXPECT_FLOAT_EQ(clamp_hit_ratio(0.6), 0.6f);
}

TEST(L2Plan, WindowBytesAreCappedAtTheMaximumWindow) {
  const cudaAccessPolicyWindow big = make_window(kBase, 2 * kMaxWindow, 3.0, kMaxWindow);
  EXPECT_EQ(big.num_bytes, kMaxWindow);
  EXPECT_EQ(big.hitRatio, 1.0f);
  EXPECT_EQ(big.base_ptr, kBase);
  EXPECT_EQ(big.hitProp, cudaAccessPropertyPersisting);
  EXPECT_EQ(big.missProp, cudaAccessPropertyStreaming);

  const cudaAccessPolicyWindow small = make_window(kBase, 1000, 0.6, kMaxWindow, cudaAccessPropertyNormal,
                                                   cudaAccessPropertyNormal);
  EXPECT_EQ(small.num_bytes, 1000u);
  EXPECT_FLOAT_EQ(small.hitRatio, 0.6f);
  EXPECT_EQ(small.hitProp, cudaAccessPropertyNormal);
  EXPECT_EQ(small.missProp, cudaAccessPropertyNormal);

  EXPECT_EQ(make_window(kBase, kMaxWindow, 1.0, kMaxWindow).num_bytes, kMaxWindow);  // the maximum itself is fine
}

TEST(L2Plan, SetAsideIsCappedAtThePersistingMaximum) {
  EXPECT_EQ(clamp_set_aside(64 * kMiB, kSetAside), kSetAside);
  EXPECT_EQ(clamp_set_aside(5 * kMiB, kSetAside), 5 * kMiB);
  EXPECT_EQ(clamp_set_aside(kSetAside, kSetAside), kSetAside);
  EXPECT_EQ(clamp_set_aside(kSetAside, 0), 0u);  // MIG or pre-Ampere: nothing to set aside
}

TEST(L2Plan, SetAsideOptionTakesZeroMaxFitAndSizesUpToTheMaximum) {
  EXPECT_EQ(parse_set_aside("0", kSetAside, false), std::optional<std::size_t>(0));
  EXPECT_EQ(parse_set_aside("00", kSetAside, false), std::optional<std::size_t>(0));
  EXPECT_EQ(parse_set_aside("max", kSetAside, false), std::optional<std::size_t>(kSetAside));
  EXPECT_EQ(parse_set_aside("4M", kSetAside, false), std::optional<std::size_t>(4u << 20));
  EXPECT_EQ(parse_set_aside(std::to_string(kSetAside), kSetAside, false), std::optional<std::size_t>(kSetAside));
  EXPECT_EQ(parse_set_aside("fit", kSetAside, true), std::nullopt);
}

TEST(L2Plan, SetAsideOptionRefusesWhatTheDeviceCannotHave) {
  for (const char* bad : {"-1", "", "1e400", "max1", "0x10", "1G", "37.5M", "fit "})
    EXPECT_THROW(parse_set_aside(bad, kSetAside, true), cml::CliError) << "'" << bad << "'";
  EXPECT_THROW(parse_set_aside(std::to_string(kSetAside + 1), kSetAside, true), cml::CliError);
  EXPECT_THROW(parse_set_aside("fit", kSetAside, false), cml::CliError);  // a demo that cannot size it
}

TEST(L2Plan, TunedHitRatioIsOneWhileTheRegionFits) {
  EXPECT_EQ(tuned_hit_ratio(kSetAside / 8, kSetAside), 1.0);
  EXPECT_EQ(tuned_hit_ratio(kSetAside, kSetAside), 1.0);
}

TEST(L2Plan, TunedHitRatioKeepsExactlyTheSetAsidePersisting) {
  // Best Practices' example: 16 KB set aside, a 32 KB window -> hitRatio 0.5.
  EXPECT_DOUBLE_EQ(tuned_hit_ratio(32 * 1024, 16 * 1024), 0.5);
  for (const double factor : {1.125, 1.25, 1.5, 2.0, 3.0}) {
    const auto region = static_cast<std::size_t>(factor * kSetAside);
    const double r = tuned_hit_ratio(region, kSetAside);
    EXPECT_LT(r, 1.0) << factor;
    EXPECT_NEAR(r * static_cast<double>(region), static_cast<double>(kSetAside), 1.0) << factor;
  }
}

TEST(L2Plan, TunedHitRatioEdgeCases) {
  EXPECT_EQ(tuned_hit_ratio(0, kSetAside), 0.0);  // empty window: nothing to persist
  EXPECT_EQ(tuned_hit_ratio(kSetAside, 0), 0.0);  // no set-aside: nothing can persist
}

TEST(L2Plan, TunedWindowCoversTheRegionUpToTheMaximumWindow) {
  const cudaAccessPolicyWindow w = tuned_window(kBase, 60 * kMiB, kSetAside, kMaxWindow);
  EXPECT_EQ(w.num_bytes, 60 * kMiB);
  EXPECT_NEAR(w.hitRatio * static_cast<double>(w.num_bytes), static_cast<double>(kSetAside), 16.0);
  EXPECT_EQ(w.missProp, cudaAccessPropertyStreaming);

  const cudaAccessPolicyWindow capped = tuned_window(kBase, 300 * kMiB, kSetAside, kMaxWindow);
  EXPECT_EQ(capped.num_bytes, kMaxWindow);
  EXPECT_NEAR(capped.hitRatio, static_cast<double>(kSetAside) / kMaxWindow, 1e-6);

  const cudaAccessPolicyWindow fits = tuned_window(kBase, 10 * kMiB, kSetAside, kMaxWindow);
  EXPECT_EQ(fits.num_bytes, 10 * kMiB);
  EXPECT_EQ(fits.hitRatio, 1.0f);
}

TEST(L2Plan, ClearedWindowIsAllZeroAndNormal) {
  const cudaAccessPolicyWindow w = cleared_window();
  EXPECT_EQ(w.base_ptr, nullptr);
  EXPECT_EQ(w.num_bytes, 0u);
  EXPECT_EQ(w.hitRatio, 0.0f);
  EXPECT_EQ(w.hitProp, cudaAccessPropertyNormal);
  EXPECT_EQ(w.missProp, cudaAccessPropertyNormal);
  cudaAccessPolicyWindow zero;
  std::memset(&zero, 0, sizeof zero);
  EXPECT_TRUE(same_window(w, zero));
}

TEST(L2Plan, SameWindowComparesEveryField) {
  const cudaAccessPolicyWindow a = make_window(kBase, 4096, 0.5, kMaxWindow);
  cudaAccessPolicyWindow b = a;
  EXPECT_TRUE(same_window(a, b));
  b.num_bytes = 8192;
  EXPECT_FALSE(same_window(a, b));
  b = a;
  b.hitRatio = 0.25f;
  EXPECT_FALSE(same_window(a, b));
  b = a;
  b.hitProp = cudaAccessPropertyNormal;
  EXPECT_FALSE(same_window(a, b));
  b = a;
  b.missProp = cudaAccessPropertyNormal;
  EXPECT_FALSE(same_window(a, b));
  b = a;
  b.base_ptr = nullptr;
  EXPECT_FALSE(same_window(a, b));
}

TEST(L2Plan, DefaultSweepSpansTheSetAside) {
  const std::vector<std::size_t> sizes = default_persist_sizes(kSetAside);
  ASSERT_EQ(sizes.size(), 10u);
  int fit = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(sizes[i] % 4096, 0u);
    if (i > 0) {
      EXPECT_GT(sizes[i], sizes[i - 1]);
    }
    if (sizes[i] <= kSetAside) ++fit;
  }
  EXPECT_EQ(fit, 7);
  EXPECT_NEAR(static_cast<double>(sizes.front()), kSetAside / 8.0, 4096.0);
  EXPECT_NEAR(static_cast<double>(sizes.back()), kSetAside * 1.5, 4096.0);
  EXPECT_EQ(default_persist_sizes(100).front(), 4096u);  // never empty
}

TEST(L2Plan, ParsesPersistSizeLists) {
  EXPECT_EQ(parse_persist_sizes("5M,10M"), (std::vector<std::size_t>{5 * kMiB, 10 * kMiB}));
  EXPECT_EQ(parse_persist_sizes("1000"), (std::vector<std::size_t>{992}));  // whole 16-byte elements
  EXPECT_EQ(parse_persist_sizes("64k"), (std::vector<std::size_t>{65536}));
  for (const char* bad : {"", "5M,", ",5M", "abc", "5M,,6M", "8", "-1M", "5T"})
    EXPECT_THROW(parse_persist_sizes(bad), cml::CliError) << bad;
}

TEST(L2Plan, BalancedBlocksGiveEveryThreadTheSameShare) {
  EXPECT_EQ(balanced_blocks(1000, 100, 256), 4u);      // fewer items than threads: one each
  EXPECT_EQ(balanced_blocks(2816, 10, 256), 6u);       // 1.1x the threads: two each, on 1408 threads
  EXPECT_EQ(balanced_blocks(1u << 30, 1056, 256), 1056u);
  EXPECT_EQ(balanced_blocks(0, 1056, 256), 1u);
  EXPECT_EQ(balanced_blocks(5, 0, 256), 1u);
  for (std::size_t items : {1ul, 255ul, 256ul, 257ul, 270336ul, 270337ul, 307200ul, 1000003ul, 2457600ul}) {
    const unsigned max_blocks = 1056;
    const unsigned blocks = balanced_blocks(items, max_blocks, 256);
    EXPECT_LE(blocks, max_blocks) << items;
    const std::size_t threads = static_cast<std::size_t>(blocks) * 256;
    const std::size_t per_thread = (items + threads - 1) / threads;
    const std::size_t best = (items + std::size_t{max_blocks} * 256 - 1) / (std::size_t{max_blocks} * 256);
    EXPECT_EQ(per_thread, best) << items;  // shrinking the grid never adds work per thread
    EXPECT_GE(threads * per_thread, items) << items;
    EXPECT_LT((threads - 256) * per_thread, items) << items;  // one block fewer would not be enough
  }
}

TEST(L2Plan, TrafficModel) {
  const SlidingShape s{10 * kMiB, 60 * kMiB, 8};
  const double mib = static_cast<double>(kMiB);
  EXPECT_DOUBLE_EQ(model_dram_bytes(s, 0), 8 * (60 + 20) * mib);
  EXPECT_DOUBLE_EQ(model_dram_bytes(s, 10 * kMiB), (8 * 60 + 10) * mib);
  EXPECT_DOUBLE_EQ(model_dram_bytes(s, 4 * kMiB), (8 * (60 + 12) + 4) * mib);
  EXPECT_DOUBLE_EQ(model_dram_bytes(s, 50 * kMiB), model_dram_bytes(s, 10 * kMiB));  // resident <= table
  EXPECT_DOUBLE_EQ(model_speedup(s, 0), 1.0);
  EXPECT_DOUBLE_EQ(model_speedup(s, 10 * kMiB), 640.0 / 490.0);
  // The bound the README explains: no window saves more than 2 x table per pass.
  EXPECT_LT(model_speedup(s, 10 * kMiB), 1.0 + 2.0 * 10 / 60);
}

TEST(L2Plan, ResidentBytesModel) {
  EXPECT_EQ(model_resident_bytes(10 * kMiB, 1.0, kSetAside), 10 * kMiB);        // fits
  EXPECT_EQ(model_resident_bytes(kSetAside + 4096, 1.0, kSetAside), 0u);        // hitRatio 1 beyond: thrash
  const std::size_t region = 60 * kMiB;
  EXPECT_NEAR(static_cast<double>(model_resident_bytes(region, tuned_hit_ratio(region, kSetAside), kSetAside)),
              static_cast<double>(kSetAside), 16.0);                            // tuned: the whole set-aside
  EXPECT_EQ(model_resident_bytes(0, 1.0, kSetAside), 0u);                       // no window
  // Two concurrent windows over set-aside-sized tables share one set-aside.
  EXPECT_NEAR(static_cast<double>(model_resident_bytes(kSetAside, 0.5, kSetAside, 2)), kSetAside / 2.0, 1.0);
  EXPECT_EQ(model_resident_bytes(kSetAside, 1.0, kSetAside, 2), 0u);
}

TEST(L2Reference, WordValuesDependOnIndexAndSeed) {
  EXPECT_NE(word_value(0, kStreamSeed), word_value(1, kStreamSeed));
  EXPECT_NE(word_value(0, kStreamSeed), word_value(0, kTableSeed));
  EXPECT_NE(word_value(1ull << 32, kStreamSeed), word_value(0, kStreamSeed));  // the high half counts too
  const uint4 e = element_value(5, kTableSeed);
  EXPECT_EQ(e.x, word_value(20, kTableSeed));
  EXPECT_EQ(e.w, word_value(23, kTableSeed));
}

// The kernels, the references and the definitions below share add_to and fold_into: pin them to literal
// arithmetic, so that a change to either cannot pass every test by changing all sides at once.
TEST(L2Reference, AddAndFoldAreTheArithmeticTheyName) {
  uint4 a{1, 2, 3, 0xffffffffu};
  add_to(a, uint4{10, 20, 30, 2});
  EXPECT_TRUE(same_element(a, uint4{11, 22, 33, 1}));  // wraps modulo 2^32
  uint4 f{1, 2, 3, 4};
  fold_into(f, uint4{5, 6, 7, 8});
  EXPECT_TRUE(same_element(f, uint4{38, 72, 106, 140}));  // a * 33 + b
  // The fold is order-dependent (unlike a sum), so a kernel that reads its elements in another order fails.
  uint4 ab{0, 0, 0, 0}, ba{0, 0, 0, 0};
  fold_into(ab, uint4{1, 1, 1, 1});
  fold_into(ab, uint4{2, 2, 2, 2});
  fold_into(ba, uint4{2, 2, 2, 2});
  fold_into(ba, uint4{1, 1, 1, 1});
  EXPECT_FALSE(same_element(ab, ba));
}

// The reference takes a shortcut (per-position sums); this is the definition, element by element.
std::vector<uint4> sliding_by_definition(std::size_t table_n, std::size_t chunk_n, int passes) {
  std::vector<uint4> table(table_n);
  for (std::size_t k = 0; k < table_n; ++k) table[k] = element_value(k, kTableSeed);
  for (int r = 0; r < passes; ++r)
    for (std::size_t i = 0; i < chunk_n; ++i)
      add_to(table[i % table_n], element_value(static_cast<std::uint64_t>(r) * chunk_n + i, kStreamSeed));
  return table;
}

TEST(L2Reference, SlidingWindowMatchesItsDefinition) {
  struct Case {
    std::size_t table_n, chunk_n;
    int passes;
  };
  for (const Case c : {Case{1, 0, 1}, Case{1, 31, 3}, Case{31, 1000, 2}, Case{1000, 31, 2}, Case{257, 4099, 3}}) {
    const auto got = sliding_window_reference(chunk_sums(c.chunk_n, c.passes), c.table_n);
    const auto want = sliding_by_definition(c.table_n, c.chunk_n, c.passes);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t k = 0; k < got.size(); ++k)
      ASSERT_TRUE(same_element(got[k], want[k])) << c.table_n << " " << c.chunk_n << " " << k;
  }
}

TEST(L2Reference, RereadMatchesItsDefinition) {
  struct Case {
    std::size_t n;
    int passes;
    std::size_t threads;
  };
  for (const Case c : {Case{1, 1, 4}, Case{31, 2, 32}, Case{1000, 3, 7}, Case{4097, 2, 256}}) {
    std::vector<uint4> want(c.threads, uint4{0, 0, 0, 0});
    // Pass by pass over the whole range: thread k % threads sees its elements in the same order.
    for (int r = 0; r < c.passes; ++r)
      for (std::size_t k = 0; k < c.n; ++k) fold_into(want[k % c.threads], element_value(k, kRereadSeed));
    const auto got = reread_reference(c.n, c.passes, c.threads);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t t = 0; t < got.size(); ++t) ASSERT_TRUE(same_element(got[t], want[t])) << c.n << " " << t;
  }
  // A thread without elements keeps zero.
  const auto idle = reread_reference(3, 2, 8);
  EXPECT_TRUE(same_element(idle[5], uint4{0, 0, 0, 0}));
}

}  // namespace
