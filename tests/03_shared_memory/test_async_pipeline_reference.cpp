// Host-only checks of async_pipeline's plan and reference: how the array splits into tiles, which block takes
// which tile, the shared memory and blocks per SM of each variant, and the stencil against hand-worked values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "03_shared_memory/kernels/async_pipeline_reference.hpp"

namespace {

using namespace cml::ch03;

TEST(Ch03PipelinePlan, TilesCoverTheArrayOnce) {
  for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{2047}, std::size_t{2048}, std::size_t{2049},
                        std::size_t{2048} * 7 + 3, std::size_t{100003}}) {
    const std::size_t tiles = pipeline_tiles(n);
    std::size_t words = 0;
    for (std::size_t t = 0; t < tiles; ++t) {
      const unsigned len = pipeline_tile_length(n, t);
      EXPECT_GE(len, 1u) << "n " << n << " tile " << t;
      if (t + 1 < tiles) {
        EXPECT_EQ(len, kPipeTileWords) << "only the last tile may be short";
      }
      words += len;
    }
    EXPECT_EQ(words, n);
  }
  EXPECT_EQ(pipeline_tiles(0), 0u);
  EXPECT_EQ(pipeline_tiles(kPipeTileWords), 1u);
  EXPECT_EQ(pipeline_tiles(kPipeTileWords + 1), 2u);
  EXPECT_EQ(pipeline_tile_length(kPipeTileWords + 1, 1), 1u);
}

// The kernels' block loop, literally: block b takes b, b + grid, ... for pipeline_tiles_of_block(...) tiles.
TEST(Ch03PipelinePlan, EveryTileGoesToExactlyOneBlock) {
  for (std::size_t tiles : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{61440}})
    for (unsigned grid : {1u, 3u, 5u, 132u, 792u}) {
      std::vector<int> seen(tiles, 0);
      std::size_t most = 0, least = tiles;
      for (unsigned b = 0; b < grid; ++b) {
        const std::size_t mine = pipeline_tiles_of_block(tiles, b, grid);
        most = std::max(most, mine);
        least = std::min(least, mine);
        for (std::size_t k = 0; k < mine; ++k) {
          const std::size_t t = b + k * grid;
          ASSERT_LT(t, tiles) << "block " << b << " of " << grid << " steps past the last tile";
          ++seen[t];
        }
      }
      for (std::size_t t = 0; t < tiles; ++t)
        EXPECT_EQ(seen[t], 1) << "tile " << t << " of " << tiles << ", grid " << grid;
      if (tiles > 0) {
        EXPECT_LE(most - least, 1u) << "blocks differ by at most one tile";
      }
    }
}

TEST(Ch03PipelinePlan, SharedMemoryAndBlocksPerSm) {
  EXPECT_EQ(kPipeTileBytes, 8192u);
  EXPECT_EQ(kPipeTileWords, kPipeBlock * kPipeVecsPerThread * 4) << "each thread copies whole 16-byte vectors";
  EXPECT_EQ(pipeline_smem_bytes(0), kPipeTileBytes) << "sync: one tile";
  EXPECT_EQ(pipeline_smem_bytes(1), kPipeTileBytes);
  EXPECT_EQ(pipeline_smem_bytes(4), 4 * kPipeTileBytes);
  EXPECT_THROW(pipeline_smem_bytes(5), std::invalid_argument);
  EXPECT_THROW(pipeline_smem_bytes(-1), std::invalid_argument);
  EXPECT_EQ(pipeline_blocks_per_sm(Occupancy::low, 6), 1u);
  EXPECT_EQ(pipeline_blocks_per_sm(Occupancy::high, 6), 6u);
  EXPECT_EQ(pipeline_blocks_per_sm(Occupancy::high, 1), 1u);
  EXPECT_THROW(pipeline_blocks_per_sm(Occupancy::low, 0), std::invalid_argument);
  EXPECT_STREQ(to_string(Occupancy::low), "low");
  EXPECT_STREQ(to_string(Occupancy::high), "high");
}

TEST(Ch03PipelineReference, StencilByHand) {
  // Five words, one tile: every output reaches past an edge, clamped to the first or last word.
  const std::vector<std::uint32_t> in = {1, 10, 100, 1000, 10000};
  const auto out = pipeline_reference(in);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], 3u * 1 + 5u * 1 + 7u * 1 + 11u * 10 + 13u * 100);
  EXPECT_EQ(out[1], 3u * 1 + 5u * 1 + 7u * 10 + 11u * 100 + 13u * 1000);
  EXPECT_EQ(out[2], 3u * 1 + 5u * 10 + 7u * 100 + 11u * 1000 + 13u * 10000);
  EXPECT_EQ(out[4], 3u * 100 + 5u * 1000 + 7u * 10000 + 11u * 10000 + 13u * 10000);
  // One word: every tap reads it.
  EXPECT_EQ(pipeline_reference({2}), (std::vector<std::uint32_t>{2u * (3 + 5 + 7 + 11 + 13)}));
  // 32-bit wrap-around, as on the GPU.
  EXPECT_EQ(pipeline_reference({0x80000000u})[0], 0x80000000u * (3u + 5u + 7u + 11u + 13u));
}

TEST(Ch03PipelineReference, TilesAreFilteredApart) {
  const std::size_t n = 2 * kPipeTileWords + 5;
  std::vector<std::uint32_t> in = pipeline_input(n);
  const auto before = pipeline_reference(in);
  // A word at the start of tile 1 changes only outputs of tile 1 (the clamp keeps tile 0 from reading it).
  in[kPipeTileWords] ^= 0xFFFFu;
  const auto after = pipeline_reference(in);
  for (std::size_t i = 0; i < n; ++i) {
    const bool tile1_near = i >= kPipeTileWords && i <= kPipeTileWords + kStencilRadius;
    if (tile1_near) {
      EXPECT_NE(after[i], before[i]) << i;
    } else {
      EXPECT_EQ(after[i], before[i]) << i;
    }
  }
  // The short last tile (5 words) is clamped at its own end.
  const std::size_t last = 2 * kPipeTileWords;
  EXPECT_EQ(before[last + 4], 3u * in[last + 2] + 5u * in[last + 3] + (7u + 11u + 13u) * in[last + 4]);
}

TEST(Ch03PipelineReference, InputIsRandomAndRepeatable) {
  const auto a = pipeline_input(4096), b = pipeline_input(4096);
  EXPECT_EQ(a, b);
  EXPECT_NE(pipeline_input(4096, 1), a) << "the seed changes the data";
  const std::set<std::uint32_t> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 4090u) << "random 32-bit words almost never repeat in 4096";
  int high_bits = 0;
  for (std::uint32_t w : a) high_bits += static_cast<int>(w >> 31);
  EXPECT_GT(high_bits, 1800);
  EXPECT_LT(high_bits, 2300);
}

}  // namespace
