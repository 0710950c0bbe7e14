// Host-only checks of chapter 03's CPU references and access models: the closed forms the GPU results are
// compared with are checked here against direct simulations, and the models against hand-counted cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "03_shared_memory/kernels/lane_pattern_reference.hpp"
#include "03_shared_memory/kernels/latency_reference.hpp"
#include "03_shared_memory/kernels/reduce_reference.hpp"
#include "03_shared_memory/kernels/smem_tiles_reference.hpp"
#include "03_shared_memory/kernels/sync_reference.hpp"

namespace {

using namespace cml::ch03;

// ---- Tiles ---------------------------------------------------------------------------------------------

// Simulates `rounds` rounds of a block writing tile[w(idx)] = idx + r*threads and reading tile[rd(idx)].
template <class W, class R>
std::vector<std::uint32_t> simulate_tile(unsigned threads, std::size_t tile_words, int rounds, W w, R rd) {
  std::vector<std::uint32_t> tile(tile_words, 0), out(threads, 0);
  for (int r = 0; r < rounds; ++r) {
    for (unsigned i = 0; i < threads; ++i) tile[w(i)] = i + static_cast<std::uint32_t>(r) * threads;
    for (unsigned i = 0; i < threads; ++i) out[i] += tile[rd(i)];
  }
  return out;
}

TEST(Ch03Tiles, SquareClosedFormMatchesSimulation) {
  for (unsigned pad : {0u, 1u})
    for (Order write : {Order::kRow, Order::kCol})
      for (Order read : {Order::kRow, Order::kCol})
        for (int rounds : {1, 3}) {
          const unsigned pitch = kSquareDim + pad;
          auto at = [&](Order o) {
            return [=](unsigned i) {
              const unsigned tx = i % kSquareDim, ty = i / kSquareDim;
              return o == Order::kRow ? ty * pitch + tx : tx * pitch + ty;
            };
          };
          const auto sim = simulate_tile(kSquareThreads, kSquareDim * pitch, rounds, at(write), at(read));
          EXPECT_EQ(square_expected(write, read, rounds, 1), sim)
              << order_name(write) << "/" << order_name(read) << " pad " << pad << " rounds " << rounds;
        }
}

TEST(Ch03Tiles, RectangleClosedFormMatchesSimulation) {
  for (unsigned pad : {0u, 1u, 2u})
    for (RectPattern p : {RectPattern::kRowRow, RectPattern::kColCol, RectPattern::kRowCol})
      for (int rounds : {1, 4}) {
        auto write = [&](unsigned i) {
          const unsigned tx = i % kRectX, ty = i / kRectX;
          return p == RectPattern::kColCol ? tx * (kRectY + pad) + ty : ty * (kRectX + pad) + tx;
        };
        auto read = [&](unsigned i) {
          if (p != RectPattern::kRowCol) return write(i);
          const unsigned irow = i / kRectY, icol = i % kRectY;
          return icol * (kRectX + pad) + irow;
        };
        const std::size_t words = rect_dynamic_bytes(p, pad) / 4;
        const auto sim = simulate_tile(kRectThreads, words, rounds, write, read);
        EXPECT_EQ(rect_expected(p, rounds, 1), sim) << rect_pattern_name(p) << " pad " << pad;
      }
}

TEST(Ch03Tiles, ExpectedRepeatsPerBlockAndWrapsLikeTheGpu) {
  const auto one = square_expected(Order::kRow, Order::kCol, 1, 1);
  EXPECT_EQ(one[1], 32u);  // thread 1 reads tile[1][0], written by thread 32
  EXPECT_EQ(one[32], 1u);
  const auto three = square_expected(Order::kRow, Order::kRow, 1, 3);
  ASSERT_EQ(three.size(), 3u * kSquareThreads);
  EXPECT_EQ(three[2 * kSquareThreads + 5], 5u);
  // 100000 rounds: the true sum exceeds 2^32; the GPU's 32-bit sum wraps, and so does the reference.
  const auto big = square_expected(Order::kRow, Order::kRow, 100000, 1);
  const std::uint64_t r = 100000, t = 1023;
  EXPECT_EQ(big[1023], static_cast<std::uint32_t>(r * t + kSquareThreads * (r * (r - 1) / 2)));
}

TEST(Ch03Tiles, DynamicBytesIncludeThePad) {
  EXPECT_EQ(square_dynamic_bytes(0), 4096u);
  EXPECT_EQ(square_dynamic_bytes(1), 32u * 33u * 4u);
  EXPECT_EQ(rect_dynamic_bytes(RectPattern::kRowCol, 2), 16u * 34u * 4u);
  EXPECT_EQ(rect_dynamic_bytes(RectPattern::kColCol, 1), 32u * 17u * 4u);
}

TEST(Ch03Tiles, ModelWavefronts) {
  EXPECT_EQ(square_access_model(Order::kRow, 0).wavefronts_per_request(), 1.0);
  EXPECT_EQ(square_access_model(Order::kCol, 0).wavefronts_per_request(), 32.0);
  EXPECT_EQ(square_access_model(Order::kCol, 1).wavefronts_per_request(), 1.0);
  EXPECT_EQ(rect_store_model(RectPattern::kRowCol, 0).wavefronts_per_request(), 1.0);
  EXPECT_EQ(rect_load_model(RectPattern::kRowRow, 0).wavefronts_per_request(), 1.0);
  EXPECT_EQ(rect_load_model(RectPattern::kColCol, 0).wavefronts_per_request(), 16.0);
  EXPECT_EQ(rect_load_model(RectPattern::kColCol, 1).wavefronts_per_request(), 1.0);
  // The rectangle's transposed read needs two words of padding, the square one.
  EXPECT_EQ(rect_load_model(RectPattern::kRowCol, 0).wavefronts_per_request(), 16.0);
  EXPECT_EQ(rect_load_model(RectPattern::kRowCol, 1).wavefronts_per_request(), 2.0);
  EXPECT_EQ(rect_load_model(RectPattern::kRowCol, 2).wavefronts_per_request(), 1.0);
}

// ---- Lane patterns ---------------------------------------------------------------------------------------

std::vector<LanePattern> all_patterns() {
  std::vector<LanePattern> v;
  for (int s = 1; s <= 33; ++s) v.push_back(stride_pattern(s));
  v.push_back(broadcast_pattern());
  v.push_back(permutation_pattern(2024));
  v.push_back(random_pattern(2024));
  v.push_back(column_pad_pattern());
  v.push_back(column_swizzle_pattern());
  return v;
}

TEST(Ch03LanePattern, ModelMatchesHandCounts) {
  EXPECT_EQ(pattern_model(stride_pattern(1), 4).wavefronts, 1u);
  EXPECT_EQ(pattern_model(stride_pattern(2), 4).wavefronts, 2u);
  EXPECT_EQ(pattern_model(stride_pattern(3), 4).wavefronts, 1u);
  EXPECT_EQ(pattern_model(stride_pattern(32), 4).wavefronts, 32u);
  EXPECT_EQ(pattern_model(stride_pattern(1), 8).wavefronts, 2u);
  EXPECT_EQ(pattern_model(stride_pattern(16), 8).wavefronts, 32u);
  EXPECT_EQ(pattern_model(stride_pattern(1), 16).wavefronts, 4u);
  EXPECT_EQ(pattern_model(stride_pattern(2), 16).wavefronts, 8u);
  EXPECT_EQ(pattern_model(broadcast_pattern(), 4).wavefronts, 1u);
  EXPECT_EQ(pattern_model(permutation_pattern(7), 4).wavefronts, 1u);
  for (unsigned w : {4u, 8u, 16u}) {
    const unsigned ideal = w / 4;
    EXPECT_EQ(pattern_model(column_pad_pattern(), w).wavefronts, ideal) << w;
    EXPECT_EQ(pattern_model(column_swizzle_pattern(), w).wavefronts, ideal) << w;
  }
}

TEST(Ch03LanePattern, PermutationIsAPermutation) {
  const auto p = permutation_pattern(99);
  const std::set<int> s(p.offsets.begin(), p.offsets.end());
  EXPECT_EQ(s.size(), 32u);
  EXPECT_EQ(*s.begin(), 0);
  EXPECT_EQ(*s.rbegin(), 31);
}

// The kernel's per-round shift and the modulo window must not change a pattern's wavefronts.
TEST(Ch03LanePattern, ShiftAndWrapPreserveWavefronts) {
  for (const auto& p : all_patterns())
    for (unsigned w : {4u, 8u, 16u}) {
      const auto base = pattern_model(p, w).wavefronts;
      for (int k : {1, 7, 64, 127, 128, 129, 1000})
        for (int j : {0, 5, 15}) EXPECT_EQ(pattern_model(p, w, k, j).wavefronts, base) << p.name << " w" << w;
    }
}

TEST(Ch03LanePattern, ElementsStayInsideTheBuffer) {
  for (const auto& p : all_patterns())
    for (int lane = 0; lane < 32; ++lane)
      for (int k : {0, 1, 127, 128})
        for (int j = 0; j < kPatternUnroll; ++j) {
          const int e = pattern_element(p.offsets[lane], k, j);
          EXPECT_GE(e, 0);
          EXPECT_LT(e, kPatternBufferElems);
        }
}

TEST(Ch03LanePattern, LaneSumsByHand) {
  const auto words = pattern_init_words(8);
  const LanePattern p = stride_pattern(3);
  const auto sums = pattern_lane_sums(p, 8, 1, words);
  ASSERT_EQ(sums.size(), 64u);
  std::uint32_t x = 0, y = 0;
  for (int j = 0; j < kPatternUnroll; ++j) {
    x += words[2 * (5 * 3 + j)];
    y += words[2 * (5 * 3 + j) + 1];
  }
  EXPECT_EQ(sums[2 * 5], x);
  EXPECT_EQ(sums[2 * 5 + 1], y);
  const auto full = pattern_expected(p, 8, 1, 70, words);
  ASSERT_EQ(full.size(), 140u);
  EXPECT_EQ(full[2 * 37], x);  // thread 37 is lane 5
}

TEST(Ch03LanePattern, RejectsBadInput) {
  EXPECT_THROW(stride_pattern(0), std::invalid_argument);
  EXPECT_THROW(stride_pattern(100), std::invalid_argument);
  EXPECT_THROW(pattern_init_words(2), std::invalid_argument);
}

// ---- Pointer chase and read kernel ------------------------------------------------------------------------

TEST(Ch03Chain, IsOneCycleThroughDistinctSlots) {
  for (auto [slots, length] : {std::pair<std::size_t, std::size_t>{64, 64}, {65536, 4096}, {1000, 1}, {100, 70}}) {
    const Chain c = random_chain(slots, kLineWords, length, 5);
    std::set<std::uint32_t> seen;
    std::uint32_t off = c.start;
    for (std::size_t h = 0; h < length; ++h) {
      EXPECT_EQ(off % (kLineWords * 4), 0u);
      EXPECT_TRUE(seen.insert(off).second) << "slot visited twice";
      off = c.words[off / 4];
    }
    EXPECT_EQ(off, c.start) << "not a cycle of the requested length";
    EXPECT_EQ(chase_end(c, length), c.start);
    EXPECT_EQ(chase_end(c, 2 * length + 1), chase_end(c, 1));
  }
  EXPECT_THROW(random_chain(10, 1, 11, 1), std::invalid_argument);
}

TEST(Ch03ReadKernelReference, XorPerThread) {
  const auto words = read_words(4 * 5);
  const auto out = read_xor_expected(words, 5, 2);
  ASSERT_EQ(out.size(), 2u);
  std::uint32_t t1 = 0;
  for (std::size_t i : {1u, 3u}) t1 ^= words[4 * i] ^ words[4 * i + 1] ^ words[4 * i + 2] ^ words[4 * i + 3];
  EXPECT_EQ(out[1], t1);
}

// ---- Reductions and barriers ---------------------------------------------------------------------------------

TEST(Ch03Reduce, InputsAreBytesAndTheSumIsExact) {
  const auto v = reduce_input(100000);
  std::uint64_t s = 0;
  std::uint32_t mx = 0;
  for (auto x : v) {
    s += x;
    mx = std::max(mx, x);
  }
  EXPECT_LE(mx, 255u);
  EXPECT_GT(mx, 200u);  // not degenerate
  EXPECT_EQ(reduce_cpu(v), s);
}

TEST(Ch03Reduce, Geometry) {
  EXPECT_EQ(reduce_blocks(1), 1u);
  EXPECT_EQ(reduce_blocks(256), 1u);
  EXPECT_EQ(reduce_blocks(257), 2u);
  EXPECT_EQ(reduce_unrolled_blocks(1024), 1u);
  EXPECT_EQ(reduce_unrolled_blocks(1025), 2u);
  EXPECT_EQ(inplace_scratch_elems(31), 256u);
  EXPECT_EQ(inplace_scratch_elems(1000003), 3907u * 256u);
}

TEST(Ch03Sync, SegmentReverse) {
  std::vector<std::uint32_t> in(kSyncBlock + 3);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint32_t>(i);
  const auto out = segment_reverse_expected(in);
  EXPECT_EQ(out[0], kSyncBlock - 1);
  EXPECT_EQ(out[kSyncBlock - 1], 0u);
  EXPECT_EQ(out[kSyncBlock], kSyncBlock + 2);  // the short last segment, reversed over its 3 elements
  EXPECT_EQ(out[kSyncBlock + 2], kSyncBlock);
}

TEST(Ch03Sync, VoteCoversAllOutcomes) {
  const auto in = vote_input(5 * kSyncBlock + 10);
  const auto out = vote_expected(in);
  ASSERT_EQ(out.size(), 3u * 6u);
  EXPECT_EQ(out[0], kSyncBlock);  // block 0: all pass
  EXPECT_EQ(out[1], 1u);
  EXPECT_EQ(out[3 + 0], 0u);  // block 1: none
  EXPECT_EQ(out[3 + 2], 0u);
  EXPECT_GT(out[6], 0u);  // block 2: some
  EXPECT_LT(out[6], kSyncBlock);
  EXPECT_EQ(out[15 + 1], 0u);  // block 5 is short (10 threads in range): never "all"
}

}  // namespace
