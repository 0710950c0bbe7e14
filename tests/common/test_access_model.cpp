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
