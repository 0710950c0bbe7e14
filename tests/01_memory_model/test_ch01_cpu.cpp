// Host-only logic of chapter 01: the pointer-chase builder of the latency ladder, the streaming-read
// layouts, the stencil reference, the register cap of __launch_bounds__ and the documented unified
// L1/shared sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "01_memory_model/kernels/launch_bounds.hpp"
#include "01_memory_model/kernels/pointer_chase.hpp"
#include "01_memory_model/kernels/stencil_1d_reference.hpp"
#include "01_memory_model/kernels/stream_sum.hpp"
#include "01_memory_model/kernels/unified_l1.hpp"

namespace {

using namespace cml::ch01;

// ---- pointer chase -----------------------------------------------------------------------------------

class SingleCycle : public testing::TestWithParam<std::size_t> {};

TEST_P(SingleCycle, IsAPermutation) {
  const std::size_t n = GetParam();
  const auto next = make_single_cycle(n, 42);
  ASSERT_EQ(next.size(), n);
  std::vector<std::uint32_t> sorted = next;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i) << "value " << i << " missing or repeated";
}

TEST_P(SingleCycle, VisitsEveryElementOnceThenReturns) {
  const std::size_t n = GetParam();
  const auto next = make_single_cycle(n, 7);
  std::vector<char> seen(n, 0);
  std::uint32_t p = 0;
  for (std::size_t k = 0; k < n; ++k) {
    ASSERT_FALSE(seen[p]) << "node " << p << " visited twice after " << k << " hops";
    seen[p] = 1;
    p = next[p];
  }
  EXPECT_EQ(p, 0u) << "the chase does not close after n hops";
  EXPECT_EQ(cycle_length(next, 0), n);
  // From any start: one cycle through everything.
  EXPECT_EQ(cycle_length(next, static_cast<std::uint32_t>(n / 2)), n);
}

TEST_P(SingleCycle, ConsecutiveHopsLandOnDifferentLines) {
  const std::size_t n = GetParam();
  const auto next = make_single_cycle(n, 3);
  if (n == 1) {
    EXPECT_EQ(next[0], 0u);  // the only possible cycle of one node
    return;
  }
  for (std::size_t i = 0; i < n; ++i) ASSERT_NE(next[i], i) << "fixed point at " << i;
  EXPECT_GE(min_hop_distance_bytes(next, kChaseLineBytes), kChaseLineBytes);
}

TEST_P(SingleCycle, WalkMatchesStepping) {
  const std::size_t n = GetParam();
  const auto next = make_single_cycle(n, 11);
  EXPECT_EQ(walk_chain(next, 0, 0), 0u);
  EXPECT_EQ(walk_chain(next, 0, n), 0u);
  EXPECT_EQ(walk_chain(next, 0, 2 * n + 1), next[0]);
  EXPECT_EQ(walk_chain(next, 0, 3), next[next[next[0]]]);
}

INSTANTIATE_TEST_SUITE_P(OddSizes, SingleCycle, testing::Values(1, 2, 3, 31, 1000, 1000003));

TEST(SingleCycleBuilder, DeterministicPerSeed) {
  EXPECT_EQ(make_single_cycle(1000, 5), make_single_cycle(1000, 5));
  EXPECT_NE(make_single_cycle(1000, 5), make_single_cycle(1000, 6));
}

TEST(SingleCycleBuilder, RejectsEmpty) { EXPECT_THROW(make_single_cycle(0, 1), std::invalid_argument); }

TEST(SingleCycleBuilder, CycleLengthDetectsTwoCycles) {
  // Two 2-cycles: a chase from 0 never sees nodes 2 and 3, which is what the builder must avoid.
  const std::vector<std::uint32_t> two_cycles = {1, 0, 3, 2};
  EXPECT_EQ(cycle_length(two_cycles, 0), 2u);
  // A chain that never comes back to its start.
  const std::vector<std::uint32_t> tail = {1, 2, 1};
  EXPECT_EQ(cycle_length(tail, 0), 0u);
}

TEST(LogSpacedSizes, EndpointsAlignmentAndOrder) {
  const auto s = log_spaced_sizes(4096, 400u << 20, 20);
  ASSERT_EQ(s.size(), 20u);
  EXPECT_EQ(s.front(), 4096u);
  EXPECT_EQ(s.back(), 400u << 20);
  for (std::size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i] % kChaseLineBytes, 0u) << i;
    if (i > 0) {
      EXPECT_GT(s[i], s[i - 1]) << i;
      // Even log spacing: each step about (400M / 4K)^(1/19) = 1.83x.
      EXPECT_NEAR(static_cast<double>(s[i]) / static_cast<double>(s[i - 1]), 1.83, 0.05) << i;
    }
  }
}

TEST(LogSpacedSizes, RoundsToLinesAndDropsDuplicates) {
  const auto s = log_spaced_sizes(128, 300, 10);
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_GT(s[i], s[i - 1]);
  EXPECT_EQ(s.front(), 128u);
  EXPECT_EQ(s.back(), 256u);  // 300 rounded down to whole lines
  EXPECT_EQ(log_spaced_sizes(4096, 8192, 1), std::vector<std::uint64_t>{8192});
  EXPECT_THROW(log_spaced_sizes(0, 8192, 4), std::invalid_argument);
  EXPECT_THROW(log_spaced_sizes(8192, 4096, 4), std::invalid_argument);
}

TEST(Plateaus, BySizeAndCore) {
  const std::uint64_t l1 = 228 * 1024, l2 = 50u << 20;
  EXPECT_EQ(plateau_by_size(4096, l1, l2), "L1");
  EXPECT_EQ(plateau_by_size(l1, l1, l2), "L1");
  EXPECT_EQ(plateau_by_size(l1 + 128, l1, l2), "L2");
  EXPECT_EQ(plateau_by_size(l2, l1, l2), "L2");
  EXPECT_EQ(plateau_by_size(l2 + 128, l1, l2), "DRAM");
  EXPECT_EQ(plateau_core(l1 / 2, l1, l2), "L1");
  EXPECT_EQ(plateau_core(l1, l1, l2), "");  // too close to the boundary
  EXPECT_EQ(plateau_core(2 * l1, l1, l2), "L2");
  EXPECT_EQ(plateau_core(l2, l1, l2), "");
  EXPECT_EQ(plateau_core(2 * l2, l1, l2), "DRAM");
}

// ---- streaming-read layouts ----------------------------------------------------------------------------

class Layouts : public testing::TestWithParam<std::size_t> {};

TEST_P(Layouts, PartitionedCoversEveryElementOnce) {
  const std::size_t n4 = GetParam();
  for (const unsigned grid : {1u, 7u, 1056u}) {
    const StreamLayout L = make_stream_layout(n4, grid, false);
    EXPECT_EQ(L.chunk4 % kStreamAlign4, 0u);
    std::size_t covered = 0;
    for (unsigned b = 0; b < L.grid; ++b) {
      const std::size_t lo = std::size_t{b} * L.chunk4;
      ASSERT_LT(lo, n4) << "block " << b << " of " << L.grid << " would idle";
      covered += std::min<std::size_t>(L.chunk4, n4 - lo);
    }
    EXPECT_EQ(covered, n4) << "grid " << grid;
    EXPECT_DOUBLE_EQ(stream_bytes(L, 2), 2.0 * 16.0 * static_cast<double>(n4));
  }
}

TEST_P(Layouts, ReplicatedStartsAreAlignedAndInside) {
  const std::size_t n4 = GetParam();
  const StreamLayout L = make_stream_layout(n4, 1056, true);
  EXPECT_EQ(L.grid, 1056u);
  for (unsigned b = 0; b < L.grid; ++b) {
    const unsigned s = replicated_start(b, L.n4);
    ASSERT_LT(s, std::max<unsigned>(L.n4, 1u));
    ASSERT_EQ(s % kStreamAlign4, 0u);
  }
}

TEST_P(Layouts, ReferenceMatchesBruteForce) {
  const std::size_t n4 = std::min<std::size_t>(GetParam(), 5000);
  std::vector<std::uint32_t> words(4 * n4);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 2654435761u);
  for (const bool replicate : {false, true}) {
    const StreamLayout L = make_stream_layout(n4, 7, replicate);
    const auto sums = stream_sum_reference(words, L, 3);
    for (unsigned b = 0; b < L.grid; ++b) {
      std::uint32_t want = 0;
      for (int pass = 0; pass < 3; ++pass) {
        if (replicate) {
          const unsigned start = replicated_start(b, L.n4);
          for (std::size_t k = 0; k < n4; ++k) {
            const std::size_t i = (start + k) % n4;
            want += words[4 * i] + words[4 * i + 1] + words[4 * i + 2] + words[4 * i + 3];
          }
        } else {
          for (std::size_t i = std::size_t{b} * L.chunk4; i < std::min<std::size_t>(n4, (b + 1) * std::size_t{L.chunk4}); ++i)
            want += words[4 * i] + words[4 * i + 1] + words[4 * i + 2] + words[4 * i + 3];
        }
      }
      EXPECT_EQ(sums[b], want) << "block " << b << (replicate ? " replicated" : " partitioned");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, Layouts, testing::Values(1, 31, 33, 1000003));

TEST(Layouts, RejectsEmpty) {
  EXPECT_THROW(make_stream_layout(0, 4, true), std::invalid_argument);
  EXPECT_THROW(make_stream_layout(4, 0, true), std::invalid_argument);
}

// ---- stencil reference ----------------------------------------------------------------------------------

TEST(StencilReference, CentreTapIsIdentityAndBordersReadZero) {
  std::vector<float> table(kCoeffRows * kStencilTaps, 0.0f);
  for (int r = 0; r < kCoeffRows; ++r) table[r * kStencilTaps + kStencilRadius] = 1.0f;
  const std::vector<float> in = make_stencil_input(1000);
  EXPECT_EQ(stencil_1d_reference(in, table, RowPick::per_lane), in);
  // Rightmost tap only: out[i] = in[i + 4], zero past the end.
  std::fill(table.begin(), table.end(), 0.0f);
  table[kStencilTaps - 1] = 1.0f;
  const auto out = stencil_1d_reference(in, table, RowPick::fixed);
  EXPECT_EQ(out[0], in[4]);
  EXPECT_EQ(out[995], in[999]);
  EXPECT_EQ(out[996], 0.0f);
}

// Counted by hand for a 256-thread tile: 8 input loads of 4 sectors, 2 halo loads of 1 sector; with a global
// coefficient table 72 more loads (9 taps x 8 warps) of 1 sector (one set per warp) or 32 (a set per lane,
// 36 bytes apart: every lane in its own sector). scripts/profile.sh constant_memory prints these beside ncu's.
TEST(StencilModel, KernelLoadsAsTheProfilerCountsThem) {
  const auto constant = stencil_tile_loads(256, false, RowPick::fixed);
  EXPECT_EQ(constant.requests, 10u);
  EXPECT_EQ(constant.sectors, 34u);
  const auto uniform = stencil_tile_loads(256, true, RowPick::warp_uniform);
  EXPECT_EQ(uniform.requests, 82u);
  EXPECT_EQ(uniform.sectors, 34u + 72u);
  const auto per_lane = stencil_tile_loads(256, true, RowPick::per_lane);
  EXPECT_EQ(per_lane.requests, 82u);
  EXPECT_EQ(per_lane.sectors, 34u + 72u * 32u);
  EXPECT_NEAR(per_lane.sectors_per_request(), 28.51, 0.01);
}

TEST(StencilReference, RowsAndValueRanges) {
  EXPECT_EQ(stencil_row(RowPick::fixed, 12345), 0);
  EXPECT_EQ(stencil_row(RowPick::per_lane, 33), 2);  // warp 1, lane 1
  // Within any warp the per-lane sets are all different; the warp-uniform set is shared.
  for (std::size_t warp : {0u, 1u, 77u}) {
    std::vector<int> rows;
    for (std::size_t lane = 0; lane < 32; ++lane) {
      rows.push_back(stencil_row(RowPick::per_lane, warp * 32 + lane));
      EXPECT_EQ(stencil_row(RowPick::warp_uniform, warp * 32 + lane), stencil_row(RowPick::warp_uniform, warp * 32));
    }
    std::sort(rows.begin(), rows.end());
    EXPECT_EQ(std::unique(rows.begin(), rows.end()), rows.end()) << "warp " << warp;
  }
  EXPECT_EQ(stencil_row(RowPick::warp_uniform, 31), 0);
  EXPECT_EQ(stencil_row(RowPick::warp_uniform, 32), 1);
  EXPECT_EQ(stencil_row(RowPick::warp_uniform, 32 * 32), 0);
  for (float c : make_stencil_table()) EXPECT_TRUE(c >= -4.0f && c <= 4.0f && c == static_cast<int>(c));
  for (float v : make_stencil_input(4096)) EXPECT_TRUE(v >= -8.0f && v <= 8.0f && v == static_cast<int>(v));
}

// ---- __launch_bounds__ register cap ------------------------------------------------------------------

TEST(LaunchBoundsCap, TwoThousandThreadsPerSmHoldEightBlocksOf256) {
  const LaunchBoundsCap c = launch_bounds_register_cap(256, 8, 65536, 2048);
  EXPECT_EQ(c.blocks_per_sm, 8);
  EXPECT_TRUE(c.honoured);
  EXPECT_EQ(c.registers_per_thread, 32);  // 65536 / 2048
}

// Where the SM cannot hold the promised blocks, ptxas drops the promise instead of scaling it down (sm_86,
// 1536 threads: __launch_bounds__(256, 8) compiles with ".minnctapersm will be ignored" and a kernel that
// wants 128 registers gets them; __launch_bounds__(256, 6) holds it to 40). Only one block must fit.
TEST(LaunchBoundsCap, FifteenHundredThreadsPerSmDropAPromiseOfEight) {
  const LaunchBoundsCap c = launch_bounds_register_cap(256, 8, 65536, 1536);
  EXPECT_FALSE(c.honoured);
  EXPECT_EQ(c.blocks_per_sm, 1);
  EXPECT_EQ(c.registers_per_thread, 255);  // 65536 / 8 warps = 8192 per warp, 256 per thread, at most 255
}

TEST(LaunchBoundsCap, FifteenHundredThreadsPerSmKeepAPromiseOfSix) {
  const LaunchBoundsCap c = launch_bounds_register_cap(256, 6, 65536, 1536);
  EXPECT_TRUE(c.honoured);
  EXPECT_EQ(c.blocks_per_sm, 6);
  // 65536 / 48 warps = 1365 per warp, down to 1280 (5 x 256): 40 per thread.
  EXPECT_EQ(c.registers_per_thread, 40);
}

TEST(LaunchBoundsCap, ThousandThreadsPerSmKeepFourAndDropFive) {
  const LaunchBoundsCap four = launch_bounds_register_cap(256, 4, 65536, 1024);
  EXPECT_TRUE(four.honoured);
  EXPECT_EQ(four.registers_per_thread, 64);
  const LaunchBoundsCap five = launch_bounds_register_cap(256, 5, 65536, 1024);
  EXPECT_FALSE(five.honoured);
  EXPECT_EQ(five.blocks_per_sm, 1);
  EXPECT_EQ(five.registers_per_thread, 255);
}

TEST(LaunchBoundsCap, GranularityCeilingAndEdges) {
  // One block of 256: 8192 registers per warp would be 256 per thread, but no thread gets more than 255.
  EXPECT_EQ(launch_bounds_register_cap(256, 1, 65536, 2048).registers_per_thread, 255);
  // A block larger than the SM's thread limit still counts as one block.
  const LaunchBoundsCap big = launch_bounds_register_cap(2048, 2, 65536, 1536);
  EXPECT_EQ(big.blocks_per_sm, 1);
  EXPECT_FALSE(big.honoured);
  EXPECT_EQ(big.registers_per_thread, 32);
  // A partial warp is a whole warp: 3 blocks of 100 threads = 12 warps, 5461 -> 5376 per warp, 168 each.
  EXPECT_EQ(launch_bounds_register_cap(100, 3, 65536, 2048).registers_per_thread, 168);
  EXPECT_EQ(launch_bounds_register_cap(0, 8, 65536, 2048).registers_per_thread, 0);
}

// ---- unified L1/shared sizes ---------------------------------------------------------------------------

TEST(UnifiedL1, DocumentedSizes) {
  EXPECT_EQ(documented_unified_l1_bytes(7, 5), 96u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(8, 0), 192u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(8, 6), 128u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(8, 7), 192u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(8, 9), 128u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(9, 0), 256u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(10, 0), 256u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(10, 3), 256u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(11, 0), 256u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(12, 0), 128u * 1024);
  EXPECT_EQ(documented_unified_l1_bytes(12, 1), 128u * 1024);
}

TEST(UnifiedL1, UnknownArchitectureIsNotGuessed) {
  EXPECT_EQ(documented_unified_l1_bytes(6, 1), 0u);
  EXPECT_EQ(documented_unified_l1_bytes(9, 9), 0u);
  EXPECT_EQ(documented_unified_l1_bytes(13, 0), 0u);
  EXPECT_EQ(unified_l1_source(13, 0), "not documented for sm_130");
  EXPECT_EQ(unified_l1_source(12, 1).find("not documented"), std::string::npos);
}

}  // namespace
