// The access model against hand-counted cases (these are the numbers the chapters print).
#include <gtest/gtest.h>

#include "common/access_model.hpp"

namespace {

using namespace cml::model;

TEST(GlobalModel, CoalescedFloat) {
  const auto a = offset_access(0, 4);
  EXPECT_DOUBLE_EQ(a.sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(a.efficiency(), 1.0);
}

TEST(GlobalModel, MisalignedFloatTouchesFiveSectors) {
  // offset 11 floats = 44 bytes: 128 bytes starting at byte 44 span sectors 1..5.
  for (unsigned off : {1u, 11u, 31u}) EXPECT_DOUBLE_EQ(offset_access(off, 4).sectors_per_request(), 5.0) << off;
  for (unsigned off : {8u, 16u, 32u, 64u, 128u}) EXPECT_DOUBLE_EQ(offset_access(off, 4).sectors_per_request(), 4.0) << off;
  EXPECT_DOUBLE_EQ(offset_access(11, 4).efficiency(), 0.8);
}

TEST(GlobalModel, StrideUntilOneSectorPerElement) {
  EXPECT_DOUBLE_EQ(stride_access(1, 4).sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(stride_access(2, 4).sectors_per_request(), 8.0);
  EXPECT_DOUBLE_EQ(stride_access(4, 4).sectors_per_request(), 16.0);
  EXPECT_DOUBLE_EQ(stride_access(8, 4).sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(stride_access(32, 4).sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(stride_access(32, 4).efficiency(), 4.0 / 32.0);
  // 16-byte elements: stride 1 is 16 sectors; stride 2 already a sector per element.
  EXPECT_DOUBLE_EQ(stride_access(1, 16).sectors_per_request(), 16.0);
  EXPECT_DOUBLE_EQ(stride_access(2, 16).sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(stride_access(2, 16).efficiency(), 0.5);
}

TEST(GlobalModel, AosFieldHalfUseful) {
  const auto a = aos_field_access(8, 0, 4);
  EXPECT_DOUBLE_EQ(a.sectors_per_request(), 8.0);
  EXPECT_DOUBLE_EQ(a.efficiency(), 0.5);
  EXPECT_DOUBLE_EQ(aos_field_access(8, 0, 8).efficiency(), 1.0);
}

TEST(GlobalModel, VectorWidths) {
  EXPECT_DOUBLE_EQ(vector_access(1).sectors_per_request(), 1.0);
  EXPECT_DOUBLE_EQ(vector_access(2).sectors_per_request(), 2.0);
  EXPECT_DOUBLE_EQ(vector_access(4).sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(vector_access(8).sectors_per_request(), 8.0);
  EXPECT_DOUBLE_EQ(vector_access(16).sectors_per_request(), 16.0);
}

TEST(GlobalModel, TransposeTileRowVsColumn) {
  // 32x32 block on a 4096-wide float matrix: along a row = 4 sectors, down a column = 32.
  EXPECT_DOUBLE_EQ(tile_access(32, 32, 4096, 4, true).sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(tile_access(32, 32, 4096, 4, false).sectors_per_request(), 32.0);
  // 16x16 blocks: a warp covers two rows of 16 floats = 2 x 2 sectors; down a column, lanes x and x+16
  // read adjacent elements of the same row, so 16 sectors.
  EXPECT_DOUBLE_EQ(tile_access(16, 16, 4096, 4, true).sectors_per_request(), 4.0);
  EXPECT_DOUBLE_EQ(tile_access(16, 16, 4096, 4, false).sectors_per_request(), 16.0);
}

TEST(GlobalModel, InactiveLanesAndErrors) {
  std::vector<std::optional<std::uint64_t>> lanes(32);
  EXPECT_EQ(global_warp(lanes, 4).requests, 0u);
  lanes[3] = 12;
  const auto a = global_warp(lanes, 4);
  EXPECT_EQ(a.requests, 1u);
  EXPECT_EQ(a.sectors, 1u);
  EXPECT_EQ(a.bytes_requested, 4u);
  lanes[4] = 13;
  EXPECT_THROW(global_warp(lanes, 4), std::invalid_argument);
  EXPECT_THROW(global_warp(lanes, 3), std::invalid_argument);
}

TEST(SharedModel, StrideConflictDegree) {
  // 4-byte words: stride s gives gcd(s, 32)-way conflicts.
  EXPECT_EQ(shared_stride_access(1, 4).wavefronts, 1u);
  EXPECT_EQ(shared_stride_access(2, 4).wavefronts, 2u);
  EXPECT_EQ(shared_stride_access(3, 4).wavefronts, 1u);
  EXPECT_EQ(shared_stride_access(4, 4).wavefronts, 4u);
  EXPECT_EQ(shared_stride_access(16, 4).wavefronts, 16u);
  EXPECT_EQ(shared_stride_access(32, 4).wavefronts, 32u);
  EXPECT_EQ(shared_stride_access(33, 4).wavefronts, 1u);
  EXPECT_EQ(shared_stride_access(32, 4).conflicts(), 31u);
}

TEST(SharedModel, WideAccesses) {
  EXPECT_EQ(shared_stride_access(1, 8).wavefronts, 2u);
  EXPECT_EQ(shared_stride_access(1, 16).wavefronts, 4u);
  EXPECT_EQ(shared_stride_access(2, 8).wavefronts, 4u);
  EXPECT_EQ(shared_stride_access(16, 8).wavefronts, 32u);
  EXPECT_EQ(shared_stride_access(1, 8).conflicts(), 0u);
}

TEST(SharedModel, Broadcast) {
  const auto s = shared_pattern(1, 4, [](std::uint64_t, unsigned) -> std::optional<std::uint64_t> { return 64; });
  EXPECT_EQ(s.wavefronts, 1u);
  // Two words per bank, each read by 16 lanes: 2 wavefronts.
  const auto t = shared_pattern(1, 4, [](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
    return l < 16 ? 0 : 128;
  });
  EXPECT_EQ(t.wavefronts, 2u);
}

// All 32 lanes loading one 8- or 16-byte address: bank_conflicts' broadcast rows, measured on the H200 and
// the H100 (results/*/profile/bank_conflicts: smem ld wf/req and ncu's ideal both 1 for width8, 2 for
// width16). Lanes that share an address pair up, so a wavefront serves twice the lanes; not the half-warp's
// 2 and the quarter-warp's 4 of distinct addresses.
TEST(SharedModel, WideBroadcastPacksPairsOfLanes) {
  const auto all_at = [](std::uint64_t addr) {
    return [addr](std::uint64_t, unsigned) -> std::optional<std::uint64_t> { return addr; };
  };
  EXPECT_EQ(shared_pattern(1, 8, all_at(0)).wavefronts, 1u);
  EXPECT_EQ(shared_pattern(1, 16, all_at(0)).wavefronts, 2u);
  EXPECT_EQ(shared_pattern(1, 8, all_at(8 * 1000)).wavefronts, 1u);
  EXPECT_EQ(shared_pattern(1, 16, all_at(16 * 1000)).wavefronts, 2u);
  // The conflict-free minimum drops with it: a broadcast has no conflicts.
  EXPECT_EQ(shared_pattern(1, 8, all_at(0)).conflicts(), 0u);
  EXPECT_EQ(shared_pattern(1, 16, all_at(0)).ideal_wavefronts, 2u);
  EXPECT_EQ(shared_pattern(1, 16, all_at(0)).conflicts(), 0u);
  // Stores do not pack: the same broadcast stored took 2 and 4 wavefronts under ncu on the H200 (a probe
  // kernel storing with bank_conflicts' lane patterns), as for distinct addresses.
  EXPECT_EQ(shared_pattern(1, 8, all_at(0), SharedOp::kStore).wavefronts, 2u);
  EXPECT_EQ(shared_pattern(1, 16, all_at(0), SharedOp::kStore).wavefronts, 4u);
  EXPECT_EQ(shared_pattern(1, 16, all_at(0), SharedOp::kStore).conflicts(), 0u);
}

// The rule NVIDIA states for the pairs (lanes n and n ^ 1 at one address, or n and n ^ 2), beyond a
// broadcast: 16 distinct consecutive elements loaded by pairs fill one 8-byte wavefront, or two 16-byte ones.
// Each case below was also measured with ncu on the H200 (a probe kernel loading with these lane patterns).
TEST(SharedModel, PairedLanesHalveWideWavefronts) {
  for (unsigned mask : {1u, 2u}) {
    // Lane l reads element e(l), where e is the same for l and l ^ mask and takes 16 distinct values.
    const auto paired = [mask](unsigned width) {
      return shared_pattern(1, width, [mask, width](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
        const unsigned low = mask == 1 ? 0 : (l & 1);
        return std::uint64_t((l / (2 * mask)) * mask + low) * width;
      });
    };
    EXPECT_EQ(paired(8).wavefronts, 1u) << mask;
    EXPECT_EQ(paired(16).wavefronts, 2u) << mask;
    EXPECT_EQ(paired(4).wavefronts, 1u) << mask;
    // Stored, the same pairs keep the half- and quarter-warp passes.
    const auto stored = [mask](unsigned width) {
      return shared_pattern(
          1, width,
          [mask, width](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
            const unsigned low = mask == 1 ? 0 : (l & 1);
            return std::uint64_t((l / (2 * mask)) * mask + low) * width;
          },
          SharedOp::kStore);
    };
    EXPECT_EQ(stored(8).wavefronts, 2u) << mask;
    EXPECT_EQ(stored(16).wavefronts, 4u) << mask;
  }
  // Lanes n and n ^ 4 (or n ^ 16) at one address are not pairs in NVIDIA's sense: the passes stay.
  EXPECT_EQ(shared_pattern(1, 8, [](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
              return std::uint64_t(l & 15) * 8;
            }).wavefronts,
            2u);
  // One lane out of step breaks the pairing for the whole warp.
  EXPECT_EQ(shared_pattern(1, 8, [](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
              return std::uint64_t(l == 31 ? 100 : l / 2) * 8;
            }).wavefronts,
            2u);
  // An inactive partner does not break a pair: the even lanes alone, at 16 distinct addresses, took 1
  // wavefront of 8 bytes and 2 of 16 (the unpaired passes would be 2 and 4).
  const auto even_lanes = [](unsigned width) {
    return shared_pattern(1, width, [width](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
      if (l % 2) return std::nullopt;
      return std::uint64_t(l / 2) * width;
    });
  };
  EXPECT_EQ(even_lanes(8).wavefronts, 1u);
  EXPECT_EQ(even_lanes(16).wavefronts, 2u);
  // Lanes 0..15 alone, at distinct addresses, are no pairs: one half-warp, 1 and 2 wavefronts as before.
  EXPECT_EQ(shared_pattern(1, 16, [](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
              if (l >= 16) return std::nullopt;
              return std::uint64_t(l) * 16;
            }).wavefronts,
            2u);
  // Pairs still conflict inside the pass: 16 distinct elements 128 bytes apart share two banks.
  EXPECT_EQ(shared_pattern(1, 8, [](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
              return std::uint64_t(l / 2) * 128;
            }).wavefronts,
            16u);
}

TEST(SharedModel, TransposeTiles) {
  // 32x32 float tile: row access conflict-free; column access 32-way; +1 padding or swizzle fixes it.
  EXPECT_DOUBLE_EQ(shared_tile_access(32, 32, 0, 4, true).wavefronts_per_request(), 1.0);
  EXPECT_DOUBLE_EQ(shared_tile_access(32, 32, 0, 4, false).wavefronts_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(shared_tile_access(32, 32, 1, 4, false).wavefronts_per_request(), 1.0);
  EXPECT_DOUBLE_EQ(shared_tile_access(32, 32, 0, 4, false, true).wavefronts_per_request(), 1.0);
  // Rectangular 32x16 tile read down a column of 16-wide rows: 2 rows share a bank row -> 16-way.
  EXPECT_DOUBLE_EQ(shared_tile_access(32, 16, 0, 4, false).wavefronts_per_request(), 16.0);
}

}  // namespace
