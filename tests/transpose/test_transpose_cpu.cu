// Host-only checks for the transposes (no GPU needed): the CPU reference, the input values, the block
// orders, the launchers' argument checks, the index maps of the 64 x 64 kernels, and what the access
// model predicts for each shared-memory layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "02_global_memory/kernels/transpose_global.cuh"
#include "03_shared_memory/kernels/tma_copy_kernels.cuh"
#include "03_shared_memory/kernels/tma_transpose.cuh"
#include "03_shared_memory/kernels/transpose_launch_model.hpp"
#include "03_shared_memory/kernels/transpose_shared.cuh"
#include "common/access_model.hpp"
#include "common/transpose.hpp"

namespace {

using namespace cml::ch02;
using namespace cml::ch03;
using cml::transpose::element_value;
using cml::transpose::transpose_reference;

TEST(Reference, SmallExample) {
  // 2 x 3  ->  3 x 2
  const std::vector<float> in = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(transpose_reference(in, 2, 3), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

// The reference of tile_move_64x8: with 1 x 1 tiles it is the transpose; with one tile as large as the
// matrix it is a copy; in between, a 4 x 6 matrix of 2 x 2 tiles worked out by hand.
TEST(Reference, TileMoveBetweenTransposeAndCopy) {
  const std::vector<float> in = cml::transpose::make_input(8, 12);
  EXPECT_EQ(cml::transpose::tile_move_reference(in, 8, 12, 1), transpose_reference(in, 8, 12));
  const std::vector<float> square = cml::transpose::make_input(16, 16);
  EXPECT_EQ(cml::transpose::tile_move_reference(square, 16, 16, 16), square);
  // in (4 x 6):   0  1 |  2  3 |  4  5      out (6 x 4): tile (tr, tc) of in becomes tile (tc, tr)
  //               6  7 |  8  9 | 10 11                   0  1 | 12 13
  //              ------+-------+------                   6  7 | 18 19
  //              12 13 | 14 15 | 16 17                   2  3 | 14 15
  //              18 19 | 20 21 | 22 23                   8  9 | 20 21
  //                                                      4  5 | 16 17
  //                                                     10 11 | 22 23
  std::vector<float> small(24);
  for (int i = 0; i < 24; ++i) small[i] = float(i);
  EXPECT_EQ(cml::transpose::tile_move_reference(small, 4, 6, 2),
            (std::vector<float>{0, 1, 12, 13, 6, 7, 18, 19, 2, 3, 14, 15, 8, 9, 20, 21, 4, 5, 16, 17, 10, 11, 22, 23}));
}

// Where a side is no multiple of the tile, the whole tiles move and the partial ones are transposed: every
// input element lands exactly once, at its moved place inside the whole tiles and at its transposed place
// in the last row and column of tiles.
TEST(Reference, TileMoveTransposesThePartialTiles) {
  for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{5, 7}, {6, 4}, {1, 9}, {3, 3}}) {
    const std::size_t side = 2;
    std::vector<float> in(rows * cols);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i);
    const std::vector<float> out = cml::transpose::tile_move_reference(in, rows, cols, side);
    std::vector<float> sorted = out;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, in) << rows << "x" << cols << ": not a permutation of the input";
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) {
        const bool whole = r < rows / side * side && c < cols / side * side;
        const std::size_t at = whole ? (c / side * side + r % side) * rows + r / side * side + c % side : c * rows + r;
        EXPECT_EQ(out[at], in[r * cols + c]) << rows << "x" << cols << " element " << r << "," << c;
      }
  }
}

TEST(Reference, MatchesTheDefinitionAcrossBlockEdges) {
  for (std::size_t m : {1, 2, 31, 32, 33, 65, 100})
    for (std::size_t n : {1, 3, 32, 33, 64, 97}) {
      const std::vector<float> in = cml::transpose::make_input(m, n);
      const std::vector<float> out = transpose_reference(in, m, n);
      for (std::size_t r = 0; r < m; ++r)
        for (std::size_t c = 0; c < n; ++c) ASSERT_EQ(out[c * m + r], in[r * n + c]) << m << "x" << n;
      EXPECT_EQ(transpose_reference(out, n, m), in) << "transposing twice gives the input back";
    }
}

// The input is the suite's benchmark data, whose properties (distinct, finite, never the poison, random-looking)
// tests/common/test_pattern.cpp checks; here, that every transpose's input is that data, to the bit.
TEST(Reference, InputIsTheSuitesRandomData) {
  const auto same_bits = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  const std::vector<float> in = cml::transpose::make_input(64, 96);
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(same_bits(in[i], cml::random_float(i))) << i;
  const std::uint64_t far = std::uint64_t{1} << 29;
  EXPECT_TRUE(same_bits(element_value(far), cml::random_float(far)));
}

// Every tile is visited exactly once, in every order, for any grid shape (and any band height).
TEST(BlockOrder, EveryOrderVisitsEveryTileOnce) {
  const auto visits_once = [](auto order, unsigned tx, unsigned ty, unsigned band) {
    std::vector<int> seen(tx * ty);
    for (unsigned b = 0; b < tx * ty; ++b) {
      const TileIndex t = tile_of<decltype(order)::value>(b, tx, ty, band);
      if (t.x >= tx || t.y >= ty) return false;
      ++seen[t.y * tx + t.x];
    }
    for (int v : seen)
      if (v != 1) return false;
    return true;
  };
  using RowMajor = std::integral_constant<BlockOrder, BlockOrder::kRowMajor>;
  using Diagonal = std::integral_constant<BlockOrder, BlockOrder::kDiagonal>;
  using Grouped = std::integral_constant<BlockOrder, BlockOrder::kGrouped>;
  using ColumnMajor = std::integral_constant<BlockOrder, BlockOrder::kColumnMajor>;
  for (unsigned tx = 1; tx <= 40; ++tx)
    for (unsigned ty = 1; ty <= 40; ++ty) {
      ASSERT_TRUE(visits_once(RowMajor{}, tx, ty, kGroupBand)) << tx << "x" << ty;
      ASSERT_TRUE(visits_once(ColumnMajor{}, tx, ty, kGroupBand)) << tx << "x" << ty;
      ASSERT_TRUE(visits_once(Diagonal{}, tx, ty, kGroupBand)) << tx << "x" << ty;
      for (unsigned band : {1u, 3u, 8u, 16u, 64u})
        ASSERT_TRUE(visits_once(Grouped{}, tx, ty, band)) << tx << "x" << ty << " band " << band;
    }
}

// The point of the grouped order: band x band consecutive blocks cover a band x band patch of tiles, where
// row-major order spreads them along one tile row.
TEST(BlockOrder, GroupedBlocksCoverASquarePatch) {
  const unsigned tx = 100, ty = 50, band = 8;
  unsigned max_x = 0, max_y = 0;
  for (unsigned b = 0; b < band * band; ++b) {
    const TileIndex t = tile_of<BlockOrder::kGrouped>(b, tx, ty, band);
    max_x = std::max(max_x, t.x);
    max_y = std::max(max_y, t.y);
  }
  EXPECT_EQ(max_x, band - 1);
  EXPECT_EQ(max_y, band - 1);
  // The last band is 50 - 48 = 2 rows high: its blocks go down those two rows, column by column.
  const TileIndex first_of_last = tile_of<BlockOrder::kGrouped>(48 * tx, tx, ty, band);
  const TileIndex next = tile_of<BlockOrder::kGrouped>(48 * tx + 2, tx, ty, band);
  EXPECT_EQ(first_of_last.y, 48u);
  EXPECT_EQ(first_of_last.x, 0u);
  EXPECT_EQ(next.x, 1u);
  EXPECT_EQ(next.y, 48u);
}

// Column-major order goes down a column of tiles before it moves right, so consecutive blocks of a transpose
// write neighbouring tiles of the same output rows.
TEST(BlockOrder, ColumnMajorWalksDownEachColumn) {
  const unsigned tx = 7, ty = 5;
  for (unsigned b = 0; b + 1 < tx * ty; ++b) {
    const TileIndex t = tile_of<BlockOrder::kColumnMajor>(b, tx, ty);
    const TileIndex n = tile_of<BlockOrder::kColumnMajor>(b + 1, tx, ty);
    if (t.y + 1 < ty) {
      EXPECT_EQ(n.x, t.x) << b;
      EXPECT_EQ(n.y, t.y + 1) << b;
    } else {
      EXPECT_EQ(n.x, t.x + 1) << b;
      EXPECT_EQ(n.y, 0u) << b;
    }
  }
}

// On a square grid the diagonal order is the blog posts' mapping: launch (bx, by) -> tile ((bx + by) % T, bx).
TEST(BlockOrder, DiagonalIsTheSeedsMappingOnSquareGrids) {
  for (unsigned t = 1; t <= 16; ++t)
    for (unsigned by = 0; by < t; ++by)
      for (unsigned bx = 0; bx < t; ++bx) {
        const TileIndex d = tile_of<BlockOrder::kDiagonal>(by * t + bx, t, t);
        EXPECT_EQ(d.x, (bx + by) % t);
        EXPECT_EQ(d.y, bx);
      }
}

// Claims read the matrix back from a row's params, which Bench::run starts with Shape::label().
TEST(Reference, ShapeOfRowReadsTheLabelBack) {
  cml::Row row;
  row.params = cml::transpose::Shape{8192, 1000}.label() + " tile=64x64 threads=256";
  const auto s = cml::transpose::shape_of(row);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->rows, 8192u);
  EXPECT_EQ(s->cols, 1000u);
  row.params = "block=32x8";
  EXPECT_FALSE(cml::transpose::shape_of(row).has_value());
}

TEST(Launchers, TileMoveNeedsWholeTiles) {
  EXPECT_EQ(tile_move_shape_unsupported(8192, 64), "");
  EXPECT_NE(tile_move_shape_unsupported(8192, 8200), "");
  EXPECT_NE(tile_move_shape_unsupported(1000, 1000), "");
}

TEST(Launchers, RejectBadBlocksAndOversizedGrids) {
  EXPECT_THROW(make_tile_grid(100, 100, dim3(64, 32)), std::invalid_argument);  // 2048 threads
  EXPECT_THROW(make_tile_grid(100, 100, dim3(0, 8)), std::invalid_argument);
  EXPECT_THROW(make_tile_grid(100, 100, dim3(8, 8, 2)), std::invalid_argument);
  EXPECT_THROW(tile_grid(std::size_t{1} << 40, std::size_t{1} << 20, 32, 32), std::invalid_argument);
  // The launcher checks before touching the GPU, so this runs anywhere.
  EXPECT_THROW(launch_transpose_naive_row(nullptr, nullptr, 10, 10, nullptr, dim3(33, 32)), std::invalid_argument);
}

TEST(Launchers, TileGridCoversTheMatrix) {
  const TileGrid g = make_tile_grid(1000, 777, dim3(32, 8));
  EXPECT_EQ(g.tiles_x, 32u);   // ceil(1000 / 32)
  EXPECT_EQ(g.tiles_y, 98u);   // ceil(777 / 8)
  const TileGrid u = make_tile_grid(1000, 777, dim3(32, 8), kUnroll);
  EXPECT_EQ(u.tiles_x, 8u);    // ceil(1000 / 128): the unrolled grid is a quarter as wide
  EXPECT_EQ(tile_grid(1, 4097, 64, 64).blocks(), 65u);
}

// The 64 x 64 kernels: every element has its own shared-memory word, chunks stay 16-byte aligned, and
// the thread -> data maps of both phases cover the tile exactly once.
TEST(Tile64, IndexMapsCoverTheTileOnce) {
  std::set<int> words;
  for (int r = 0; r < kWide; ++r)
    for (int c = 0; c < kWide; ++c) {
      const int w = wide_offset(r, c);
      ASSERT_TRUE(w >= 0 && w < kWide * kWide);
      ASSERT_TRUE(words.insert(w).second) << r << "," << c;
      if (c % 4 == 0) ASSERT_EQ(w % 4, 0);
      ASSERT_EQ(wide_offset(r, c) - wide_offset(r, c & ~3), c & 3) << "a chunk stays contiguous";
    }
  std::set<std::pair<int, int>> loaded, blocks;
  for (int t = 0; t < kWideThreads; ++t) {
    for (int k = 0; k < kWidePasses; ++k) loaded.insert({load_row(t, k), load_chunk(t)});
    blocks.insert({block_row(t), block_chunk(t)});
  }
  EXPECT_EQ(loaded.size(), std::size_t(kWide * kChunks));
  EXPECT_EQ(blocks.size(), std::size_t(kWide / 4 * kChunks));  // 4 x 4 blocks
}

// What the access model says about each layout, computed from the kernels' own index functions.
template <class Offset>
cml::model::SharedAccess column_reads(Offset offset) {
  return cml::model::shared_pattern(kTile, sizeof(float), [&](std::uint64_t w, unsigned l) {
    return std::optional<std::uint64_t>(std::uint64_t(offset(int(l), int(w))) * sizeof(float));
  });
}

TEST(AccessModel, TiledLayouts) {
  EXPECT_EQ(column_reads(tile_offset<TileLayout::kUnpadded>).wavefronts_per_request(), 32.0);
  EXPECT_EQ(column_reads(tile_offset<TileLayout::kPadded>).wavefronts_per_request(), 1.0);
  EXPECT_EQ(column_reads(tile_offset<TileLayout::kSwizzled>).wavefronts_per_request(), 1.0);
  // The same numbers as the common model's generic tile helper.
  EXPECT_EQ(cml::model::shared_tile_access(32, 32, 0, 4, false).wavefronts_per_request(), 32.0);
  EXPECT_EQ(cml::model::shared_tile_access(32, 32, 1, 4, false).wavefronts_per_request(), 1.0);
  EXPECT_EQ(cml::model::shared_tile_access(32, 32, 0, 4, false, true).wavefronts_per_request(), 1.0);
}

TEST(AccessModel, Tile64SwizzleMakesSixteenByteAccessesConflictFree) {
  const auto phase2 = [](auto offset) {
    return cml::model::shared_pattern(kWideThreads / 32, 16, [&](std::uint64_t w, unsigned l) {
      const int t = int(w * 32 + l);
      return std::optional<std::uint64_t>(std::uint64_t(offset(block_row(t), 4 * block_chunk(t))) * 4);
    });
  };
  const auto phase1 = cml::model::shared_pattern(kWideThreads / 32, 16, [](std::uint64_t w, unsigned l) {
    const int t = int(w * 32 + l);
    return std::optional<std::uint64_t>(std::uint64_t(wide_offset(load_row(t, 0), 4 * load_chunk(t))) * 4);
  });
  // 16-byte accesses are served 8 lanes at a time: 4 wavefronts is the conflict-free minimum.
  EXPECT_EQ(phase1.wavefronts_per_request(), 4.0);
  EXPECT_EQ(phase2(wide_offset).wavefronts_per_request(), 4.0);
  // Without the swizzle the 8 lanes of a quarter-warp read the same chunk of 8 rows: 8-way conflicts.
  EXPECT_EQ(phase2([](int r, int c) { return r * kWide + c; }).wavefronts_per_request(), 32.0);
  // The smallest padding that keeps rows 16-byte aligned (4 words) only halves that: 4-way conflicts.
  EXPECT_EQ(phase2([](int r, int c) { return r * (kWide + 4) + c; }).wavefronts_per_request(), 16.0);
}

// The TMA transposes' block assignment: block numbers 0 .. (kSide / 4)^2 - 1 name every 4 x 4 block once.
template <int kSide>
std::size_t distinct_blocks() {
  std::set<std::pair<int, int>> blocks;
  for (int b = 0; b < kSide * kSide / 16; ++b) {
    const cml::tma::Block4 k = cml::tma::block4_of<kSide>(b);
    if (k.rb < 0 || k.rb >= kSide / 4 || k.q < 0 || k.q >= kSide / 4) return 0;
    blocks.insert({k.rb, k.q});
  }
  return blocks.size();
}

TEST(TmaTranspose, BlocksCoverTheTileOnce) {
  EXPECT_EQ(distinct_blocks<64>(), std::size_t(64 * 64 / 16));
  EXPECT_EQ(distinct_blocks<128>(), std::size_t(128 * 128 / 16));
}

// Wavefronts per warp request of the float4 reads of the input tile (rows 4 rb + i, column q) and the
// float4 writes of the output tile (rows 4 q + i, column rb), over every pass of the 256 threads, for a
// block assignment and a layout.
template <int kSide, class Assign, class Layout>
std::pair<double, double> block_accesses(Assign assign, Layout layout, int i) {
  const auto pattern = [&](bool write) {
    return cml::model::shared_pattern(kSide * kSide / 16 / 32, 16, [&](std::uint64_t w, unsigned l) {
      const cml::tma::Block4 b = assign(int(w * 32 + l));
      const int r = write ? 4 * b.q + i : 4 * b.rb + i, c = write ? 4 * b.rb : 4 * b.q;
      return std::optional<std::uint64_t>(std::uint64_t(layout(r, c)) * 4);
    });
  };
  return {pattern(false).wavefronts_per_request(), pattern(true).wavefronts_per_request()};
}

template <int kSide>
void expect_conflict_free() {
  constexpr int kCols = kSide / 4;  // 4 x 4 blocks per tile row
  const auto rows_by_lane = [](int b) { return cml::tma::Block4{b % kCols, b / kCols}; };
  const auto cols_by_lane = [](int b) { return cml::tma::Block4{b / kCols, b % kCols}; };
  for (int i = 0; i < 4; ++i) {
    // 16-byte accesses are served 8 lanes at a time: 4 wavefronts per request is the conflict-free minimum.
    EXPECT_EQ(block_accesses<kSide>(cml::tma::block4_of<kSide>, cml::tma::tile_word<kSide>, i),
              std::make_pair(4.0, 4.0))
        << kSide << " " << i;
    // Without the XOR, lanes walk down a column of blocks on one side: 8 float4s in one bank group.
    EXPECT_EQ(block_accesses<kSide>(rows_by_lane, cml::tma::tile_word<kSide>, i), std::make_pair(32.0, 4.0)) << i;
    EXPECT_EQ(block_accesses<kSide>(cols_by_lane, cml::tma::tile_word<kSide>, i), std::make_pair(4.0, 32.0)) << i;
  }
}

TEST(TmaTranspose, XorAssignedBlocksAreConflictFree) {
  expect_conflict_free<64>();
  expect_conflict_free<128>();
}

// The launchers refuse what a tensor map cannot describe, and devices without the TMA get the reason.
TEST(TmaTranspose, ShapesAndDevices) {
  EXPECT_EQ(cml::tma::transpose_tma_shape_unsupported(8192, 8192), "");
  EXPECT_EQ(cml::tma::transpose_tma_shape_unsupported(4, 1028), "");
  EXPECT_NE(cml::tma::transpose_tma_shape_unsupported(1000, 777), "");
  EXPECT_NE(cml::tma::transpose_tma_shape_unsupported(777, 1000), "");
  EXPECT_EQ(cml::tma::tma_unsupported(9, 0), "");
  EXPECT_EQ(cml::tma::tma_unsupported(10, 0), "");
  EXPECT_EQ(cml::tma::tma_unsupported(8, 9),
            "the Tensor Memory Accelerator needs compute capability 9.0 or newer; this GPU is 8.9");
}

// A bulk request is a multiple of 16 bytes and fits twice in the ring; the ring holds as many stages as fit.
TEST(TmaCopy, BulkPlans) {
  EXPECT_EQ(cml::tma::bulk_plan(256).stages, 256u);
  EXPECT_EQ(cml::tma::bulk_plan(1024).stages, 64u);
  EXPECT_EQ(cml::tma::bulk_plan(16384).stages, 4u);
  EXPECT_EQ(cml::tma::bulk_plan(32768).stages, 2u);
  EXPECT_EQ(cml::tma::bulk_plan(16).stages, cml::tma::kMaxStages);
  EXPECT_THROW(cml::tma::bulk_plan(0), std::invalid_argument);
  EXPECT_THROW(cml::tma::bulk_plan(100), std::invalid_argument);
  EXPECT_THROW(cml::tma::bulk_plan(65536), std::invalid_argument);
  EXPECT_EQ(cml::tma::ring_request_unsupported(cml::tma::kRingBytes / 2), "");
  EXPECT_NE(cml::tma::ring_request_unsupported(cml::tma::kRingBytes / 2 + 16), "");
}

TEST(AccessModel, NaiveKernelsSectorsPerRequest) {
  // naive_row with 32x8 blocks: loads along a row (4 sectors), stores down a column (32 sectors).
  EXPECT_EQ(cml::model::tile_access(32, 8, 8192, 4, true).sectors_per_request(), 4.0);
  EXPECT_EQ(cml::model::tile_access(32, 8, 8192, 4, false).sectors_per_request(), 32.0);
  // The thin 8-wide blocks of the blog posts' table: a column request covers 8 rows x 16 bytes.
  EXPECT_EQ(cml::model::tile_access(8, 32, 8192, 4, false).sectors_per_request(), 8.0);
}

// ---- Whole launches (transpose_launch_model.hpp) against Nsight Compute's own counts ----------------------
// Every number below was counted by ncu 2025.3.1 on an H200 (transpose_shared --profile under
// scripts/profile.sh's metrics): l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_{ld,st}.sum for the global
// side, and for shared memory smsp__sass_inst_executed_op_shared_{st,ld}.sum (instructions with a lane at
// work) and smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_{st,ld}.sum (ncu's wavefronts from each
// instruction's addresses). The model must give them exactly, edge tiles and idle warps included.
struct Counts {
  std::uint64_t ld_req, ld_sec, st_req, st_sec, smem_st_req, smem_st_wf, smem_ld_req, smem_ld_wf;
};

void expect_counts(const cml::transpose::LaunchAccesses& a, const Counts& c, const char* what) {
  EXPECT_EQ(a.ld.requests, c.ld_req) << what;
  EXPECT_EQ(a.ld.sectors, c.ld_sec) << what;
  EXPECT_EQ(a.st.requests, c.st_req) << what;
  EXPECT_EQ(a.st.sectors, c.st_sec) << what;
  EXPECT_EQ(a.smem_st.requests, c.smem_st_req) << what;
  EXPECT_EQ(a.smem_st.wavefronts, c.smem_st_wf) << what;
  EXPECT_EQ(a.smem_ld.requests, c.smem_ld_req) << what;
  EXPECT_EQ(a.smem_ld.wavefronts, c.smem_ld_wf) << what;
}

int padded33(int r, int c) { return r * 33 + c; }
int padded65(int r, int c) { return r * 65 + c; }

// 1000 x 1000 (--quick): sides multiples of 4 (the float4 path inside) and of 8 (rows 32-byte aligned), but
// not of 32 or 64, so the last row and column of tiles are partial.
TEST(LaunchModel, QuickShapeMatchesNcu) {
  const cml::transpose::Shape s{1000, 1000};
  // copy_row and naive_row, 32 x 8 blocks: 3.91 sectors per request, not 4 (the last block column has 8 lanes).
  expect_counts(cml::transpose::element_launch(s, 32, 8, true, false), {32000, 125000, 32000, 125000, 0, 0, 0, 0},
                "copy_row");
  expect_counts(cml::transpose::element_launch(s, 32, 8, true, true), {32000, 125000, 32000, 1000000, 0, 0, 0, 0},
                "naive_row");
  // unroll4_row: four elements per thread, 32 columns apart. The last tile column's 104 columns are three
  // full passes and one of 8 lanes: the same instructions and sectors as naive_row, grouped differently.
  expect_counts(cml::transpose::element_launch(s, 32, 8, true, true, 4), {32000, 125000, 32000, 1000000, 0, 0, 0, 0},
                "unroll4_row");
  // naive_col reads columns: 31.25 sectors per load request at 32 x 8 blocks, 8 at 8 x 32.
  expect_counts(cml::transpose::element_launch(s, 32, 8, false, true), {32000, 1000000, 32000, 125000, 0, 0, 0, 0},
                "naive_col 32x8");
  expect_counts(cml::transpose::element_launch(s, 8, 32, false, true), {31250, 250000, 31250, 125000, 0, 0, 0, 0},
                "naive_col 8x32");
  // Every 4-byte tile: 32000 warp instructions of each kind with a lane at work (the plain instruction
  // counter says 32768 for some of them: the idle warps of the last tile row, predicated off).
  const Counts tiled{32000, 125000, 32000, 125000, 32000, 32000, 32000, 32000};
  expect_counts(two_phase_launch<32, 32>(s, tile_offset<TileLayout::kPadded>), tiled, "tiled_padded");
  expect_counts(two_phase_launch<32, 32>(s, tile_offset<TileLayout::kSwizzled>), tiled, "tiled_swizzled");
  expect_counts(two_phase_launch<32, 8>(s, tile_offset<TileLayout::kPadded>), tiled, "tiled_multi");
  expect_counts(two_phase_launch<32, 4>(s, padded33), tiled, "tiled_32x4");
  expect_counts(two_phase_launch<64, 8>(s, padded65), tiled, "tiled_64x8");
  expect_counts(two_phase_launch<64, 4>(s, padded65), tiled, "tiled_64x4");
  Counts unpadded = tiled;
  unpadded.smem_ld_wf = 1000000;  // 32-way column reads; 8-way in the 8-column edge tiles
  expect_counts(two_phase_launch<32, 32>(s, tile_offset<TileLayout::kUnpadded>), unpadded, "tiled_unpadded");
  // The float4 tiles: 225 interior tiles of 32 float4 requests (16 sectors, 4 wavefronts) and 31 edge tiles
  // of 4-byte requests: 12 sectors per request on average, 3.08 wavefronts per shared store.
  expect_counts(wide_launch(s, false), {10400, 125000, 10400, 125000, 10400, 32000, 10400, 41600}, "tile64_vec4");
  // tile_move_vec4_*: the same requests; phase 2 reads tile rows instead of 4 x 4 blocks, also 4 wavefronts
  // per 16-byte request, and the partial edge tiles are transposed as in tile64_vec4.
  expect_counts(wide_launch(s, false, true), {10400, 125000, 10400, 125000, 10400, 32000, 10400, 41600},
                "tile_move_vec4");
  // tile64_async: cp.async fills the interior tiles; the only shared stores are the edge tiles' 4-byte ones.
  expect_counts(wide_launch(s, true), {10400, 125000, 10400, 125000, 3200, 3200, 10400, 41600}, "tile64_async");
}

// 4001 x 3999: no side a multiple of 4 (every float4 tile takes its 4-byte path) and rows 32-byte aligned
// only one in eight times (4.87 sectors per request).
TEST(LaunchModel, OddShapeMatchesNcu) {
  const cml::transpose::Shape s{4001, 3999};
  expect_counts(cml::transpose::element_launch(s, 32, 8, true, false),
                {500125, 2437500, 500125, 2437500, 0, 0, 0, 0}, "copy_row");
  expect_counts(cml::transpose::element_launch(s, 32, 8, true, true),
                {500125, 2437500, 500125, 15999999, 0, 0, 0, 0}, "naive_row");
  expect_counts(cml::transpose::element_launch(s, 32, 8, false, true),
                {503874, 15999999, 503874, 2440874, 0, 0, 0, 0}, "naive_col 32x8");
  expect_counts(cml::transpose::element_launch(s, 8, 32, false, true),
                {501000, 5500500, 501000, 3752999, 0, 0, 0, 0}, "naive_col 8x32");
  const Counts tiled{500125, 2437500, 503874, 2440874, 500125, 500125, 503874, 503874};
  expect_counts(two_phase_launch<32, 8>(s, tile_offset<TileLayout::kPadded>), tiled, "tiled_multi");
  expect_counts(two_phase_launch<32, 2>(s, padded33), tiled, "tiled_32x2");
  expect_counts(two_phase_launch<64, 8>(s, padded65), tiled, "tiled_64x8");
  Counts unpadded = tiled;
  unpadded.smem_ld_wf = 15999999;
  expect_counts(two_phase_launch<32, 32>(s, tile_offset<TileLayout::kUnpadded>), unpadded, "tiled_unpadded");
  const Counts wide{500125, 2437500, 503874, 2440874, 500125, 500125, 503874, 2003499};
  expect_counts(wide_launch(s, false), wide, "tile64_vec4");
  expect_counts(wide_launch(s, true), wide, "tile64_async");
  // tile_move_vec4_* on the 4-byte path: the 62 x 62 whole tiles read tile rows (128 requests of 1 wavefront
  // each, against 4 for a transposed column), the partial tiles are transposed: 1968128 of the transpose's
  // wavefronts become 492032.
  Counts moved = wide;
  moved.smem_ld_wf = 2003499 - 1968128 + 492032;
  expect_counts(wide_launch(s, false, true), moved, "tile_move_vec4");
}

// On whole tiles the launch is its interior tile times the tile count: the per-tile numbers of the
// reference tables (4 and 16 sectors, 1 and 4 wavefronts), and no shared store at all in tile64_async.
TEST(LaunchModel, WholeTilesKeepThePerTileNumbers) {
  const cml::transpose::Shape s{2048, 2048};
  const auto tiled = two_phase_launch<64, 8>(s, padded65);
  EXPECT_EQ(tiled.ld.sectors_per_request(), 4.0);
  EXPECT_EQ(tiled.st.sectors_per_request(), 4.0);
  EXPECT_EQ(tiled.smem_st.wavefronts_per_request(), 1.0);
  EXPECT_EQ(tiled.smem_ld.wavefronts_per_request(), 1.0);
  const auto wide = wide_launch(s, false);
  EXPECT_EQ(wide.ld.sectors_per_request(), 16.0);
  EXPECT_EQ(wide.st.sectors_per_request(), 16.0);
  EXPECT_EQ(wide.smem_st.wavefronts_per_request(), 4.0);
  EXPECT_EQ(wide.smem_ld.wavefronts_per_request(), 4.0);
  EXPECT_EQ(wide.ld.requests, std::uint64_t(32 * 32 * 32));  // 1024 tiles of 8 warps x 4 passes
  const auto async = wide_launch(s, true);
  EXPECT_EQ(async.smem_st.requests, 0u);
  EXPECT_EQ(async.smem_ld.wavefronts_per_request(), 4.0);
  // A matrix smaller than one tile is its own corner tile.
  const auto one = cml::transpose::element_launch({3, 5}, 32, 8, true, false);
  EXPECT_EQ(one.ld.requests, 3u);  // one warp per row with a lane at work
  EXPECT_EQ(one.ld.sectors, 4u);   // rows of 20 bytes at 0, 20, 40: the middle one straddles two sectors
  EXPECT_THROW(cml::transpose::launch_accesses(s, 4, 32, [](std::size_t, std::size_t) {
                 return cml::transpose::LaunchAccesses{};
               }),
               std::invalid_argument);
}

// The carveout asked for: enough shared memory for the blocks, each with the bytes the system reserves per
// block, in whole percent rounded up, never more than all of it.
TEST(Tile64, CarveoutPercentFitsTheBlocksAndNoMore) {
  constexpr std::size_t kMax = 228 * 1024, kReserved = 1024, kTile = 16 * 1024;  // compute capability 9.0
  EXPECT_EQ(carveout_percent(8, kTile, kReserved, kMax), 60);  // 8 x 17 KB = 59.6 %
  EXPECT_EQ(carveout_percent(3, kTile, kReserved, kMax), 23);  // 3 x 17 KB = 22.4 %
  EXPECT_EQ(carveout_percent(0, kTile, kReserved, kMax), 0);
  EXPECT_EQ(carveout_percent(20, kTile, kReserved, kMax), 100);
  EXPECT_EQ(carveout_percent(1, kTile, kReserved, 0), 100);
  for (std::size_t blocks = 1; blocks <= 13; ++blocks) {
    const int p = carveout_percent(blocks, kTile, kReserved, kMax);
    EXPECT_GE(p * kMax, 100 * blocks * (kTile + kReserved)) << blocks << " blocks do not fit in " << p << " %";
    EXPECT_LT((p - 1) * kMax, 100 * blocks * (kTile + kReserved)) << p << " % is more than " << blocks << " need";
  }
}

// tile64_async is cp.async: a device older than compute capability 8.0 gets the reason, never the kernel.
TEST(Tile64, AsyncNeedsComputeCapability80) {
  EXPECT_EQ(tile64_async_unsupported(7, 5), "cp.async needs compute capability 8.0 or newer; this GPU is 7.5");
  EXPECT_EQ(tile64_async_unsupported(7, 0), "cp.async needs compute capability 8.0 or newer; this GPU is 7.0");
  EXPECT_EQ(tile64_async_unsupported(8, 0), "");
  EXPECT_EQ(tile64_async_unsupported(8, 6), "");
  EXPECT_EQ(tile64_async_unsupported(9, 0), "");
  EXPECT_EQ(tile64_async_unsupported(10, 0), "");
}

// tile64_vec4_3pb_col_pf's prefetch hint: the same rule, its own reason.
TEST(Tile64, L2PrefetchNeedsComputeCapability80) {
  EXPECT_EQ(l2_prefetch_unsupported(7, 5),
            "prefetch.global.L2::evict_last needs compute capability 8.0 or newer; this GPU is 7.5");
  EXPECT_EQ(l2_prefetch_unsupported(8, 0), "");
  EXPECT_EQ(l2_prefetch_unsupported(9, 0), "");
}

// Its blocks prefetch a sixth of the resident blocks ahead, and at least one.
TEST(Tile64, PrefetchDistanceIsASixthOfTheResidentBlocks) {
  EXPECT_EQ(prefetch_ahead(396), 66u);  // 132 SMs, 3 blocks each
  EXPECT_EQ(prefetch_ahead(13), 2u);
  EXPECT_EQ(prefetch_ahead(6), 1u);
  EXPECT_EQ(prefetch_ahead(5), 1u);
  EXPECT_EQ(prefetch_ahead(0), 1u);
}

// --size N needs four N x N fp32 matrices: input and output, and the copy ceiling's two at the matrix's size;
// the largest side accepted is the largest whose four fit.
TEST(Sizes, DeviceBytesOfHugeSidesStayExact) {
  const cml::DemoMemory m = cml::transpose::device_bytes_square(8192);
  EXPECT_DOUBLE_EQ(m.own, 8.0 * 8192.0 * 8192.0);
  EXPECT_TRUE(m.measures_ceiling);
  EXPECT_DOUBLE_EQ(m.ceiling_buffer, 4.0 * 8192.0 * 8192.0);
  // 500G: (500 * 2^30)^2 * 4 = 1e6 * 2^60 bytes per matrix, about 1.15e24 (no integer type holds it).
  const double n = 500.0 * 1073741824.0;
  EXPECT_DOUBLE_EQ(cml::transpose::matrix_bytes_square(std::uint64_t{500} << 30), 4.0 * n * n);
  EXPECT_GT(cml::transpose::device_bytes_square(std::uint64_t{500} << 30).own, 2.3e24);
}

TEST(Sizes, MaxSideIsTheLargestWhoseFourMatricesFit) {
  for (std::size_t mem : {std::size_t{0}, std::size_t{16}, std::size_t{1} << 30, std::size_t{80} * 1000 * 1000 * 1000,
                          std::size_t{143771} * 1024 * 1024, std::size_t{1} << 40}) {
    cml::DeviceInfo dev;
    dev.total_memory = mem;
    const std::uint64_t n = cml::transpose::max_side_square(dev);
    EXPECT_LE(4.0 * cml::transpose::matrix_bytes_square(n), static_cast<double>(mem)) << mem;
    EXPECT_GT(4.0 * cml::transpose::matrix_bytes_square(n + 1), static_cast<double>(mem)) << mem;
  }
  cml::DeviceInfo h100;
  h100.total_memory = std::size_t{80} * 1000 * 1000 * 1000;
  EXPECT_EQ(cml::transpose::max_side_square(h100), 70710u);  // floor(sqrt(80e9 / 16))
}

}  // namespace
