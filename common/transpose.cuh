// The transpose machinery both transpose demos (02_global_memory/transpose_global, 03_shared_memory/
// transpose_shared) run on: the tile orders of a one-dimensional grid, the launch helpers, and the three
// global-only kernels chapter 03 measures its tiles against. Those three live here, not in chapter 02,
// because 03's reference rows must be the very kernels 02 teaches (a copy of them could drift and the
// comparison would no longer be with chapter 02); the rest of chapter 02's transposes stay in
// 02_global_memory/kernels/transpose_global.cuh.
//
// Convention (see common/transpose.hpp): `in` is rows x cols, row-major; `out` is cols x rows:
//   out[c * rows + r] = in[r * cols + c].
// Every kernel handles any shape (1 x N, N x 1, non-multiples of the block): each element is guarded.
//
// The grid is one-dimensional: block b works on tile tile_of(b), where a tile is the blockDim.x x
// blockDim.y patch of "thread space" the block covers. A 1-D grid has room for 2^31 - 1 blocks
// (gridDim.y stops at 65535, which would cap the rows), and it makes the block ORDER an explicit, swappable
// function — which is all the diagonal transposes change.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::transpose {

enum class BlockOrder {
  kRowMajor,     // consecutive blocks walk along a row of tiles
  kDiagonal,     // consecutive blocks walk down a (wrapped) diagonal of tiles
  kGrouped,      // consecutive blocks walk down a column of a band of kGroupBand tile rows
  kColumnMajor,  // consecutive blocks walk down a column of tiles
};

// Tile rows per band in the grouped order. The blocks resident at one time then cover a roughly square
// patch of the matrix instead of one long strip of tile rows: in row-major order a full GPU of blocks reads
// a few input rows end to end but writes short pieces of thousands of output rows at once; grouped, both
// sides touch a few hundred rows each. Whether that compromise helps is for the GPU's memory to say, and the
// demos measure it beside row-major and column-major order (chapter 03 discusses what they show).
inline constexpr unsigned kGroupBand = 16;

enum class LoadPath {
  kDefault,  // ordinary loads: cached in L1 and L2
  kL2Only,   // __ldcg: cached in L2 only, so no warp can reuse a sector another warp brought into L1
};

struct TileIndex {
  unsigned x = 0, y = 0;
};

// The tile block `block` works on, in a grid of tiles_x x tiles_y tiles.
// Diagonal order, defined for any grid: block b takes tile row y = b % tiles_y and tile column
// x = (b / tiles_y + y) % tiles_x, so consecutive blocks step one tile down and one to the right. Every tile
// is taken exactly once: b <-> (b / tiles_y, y) is one-to-one, and for each y, q -> (q + y) % tiles_x is a
// cyclic shift. On a square grid of T x T tiles, with b = by * T + bx, this is the blog posts' mapping
// (x = (bx + by) % T, y = bx), which they could only use for square grids.
// Grouped order: bands of `band` tile rows (the last band may be shorter), taken top to bottom; inside a
// band, blocks go down one column of tiles, then the next column. Every tile is taken exactly once.
// Column-major order: block b takes tile row b % tiles_y of tile column b / tiles_y. In a transpose, the
// blocks running at one time then write whole stretches of a few output rows (consecutive tiles of a
// column land side by side in the output) and read short pieces of many input rows: the opposite trade
// to row-major order.
template <BlockOrder kOrder>
__host__ __device__ inline TileIndex tile_of(unsigned block, unsigned tiles_x, unsigned tiles_y,
                                             unsigned band = kGroupBand) {
  if constexpr (kOrder == BlockOrder::kRowMajor) {
    (void)tiles_y, (void)band;
    return {block % tiles_x, block / tiles_x};
  } else if constexpr (kOrder == BlockOrder::kGrouped) {
    const unsigned per_band = band * tiles_x;
    const unsigned first_row = block / per_band * band;
    const unsigned height = tiles_y - first_row < band ? tiles_y - first_row : band;
    const unsigned within = block - first_row * tiles_x;
    return {within / height, first_row + within % height};
  } else if constexpr (kOrder == BlockOrder::kColumnMajor) {
    (void)band;
    return {block / tiles_y, block % tiles_y};
  } else {
    (void)band;
    const unsigned y = block % tiles_y;
    return {(block / tiles_y + y) % tiles_x, y};
  }
}

namespace {

// The tile grid of a launch: how many tiles along x (the fast, thread-x direction) and along y.
struct TileGrid {
  unsigned tiles_x = 0, tiles_y = 0;
  __host__ __device__ unsigned blocks() const { return tiles_x * tiles_y; }
};

// This thread's coordinates in thread space: x follows threadIdx.x (the coalescing direction), y
// follows threadIdx.y. `x_per_thread` > 1 widens a tile along x for the unrolled kernels.
template <BlockOrder kOrder>
__device__ __forceinline__ void thread_xy(TileGrid g, unsigned x_per_thread, std::size_t& x, std::size_t& y) {
  const TileIndex t = tile_of<kOrder>(blockIdx.x, g.tiles_x, g.tiles_y);
  x = static_cast<std::size_t>(t.x) * blockDim.x * x_per_thread + threadIdx.x;
  y = static_cast<std::size_t>(t.y) * blockDim.y + threadIdx.y;
}

template <LoadPath kPath>
__device__ __forceinline__ float load(const float* p) {
  if constexpr (kPath == LoadPath::kL2Only) return __ldcg(p);
  else return *p;
}

// ---- The copy bound: the same bytes as a transpose, without transposing ----------------------------

// Upper bound (the lower one, copy_col, is chapter 02's): consecutive threads read and write consecutive addresses of a row.
__global__ void copy_row_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                std::size_t cols, TileGrid g) {
  std::size_t c, r;
  thread_xy<BlockOrder::kRowMajor>(g, 1, c, r);
  if (r < rows && c < cols) out[r * cols + c] = in[r * cols + c];
}

// ---- Naive transposes -------------------------------------------------------------------------

// Read a row (coalesced), write a column of the output (strided by `rows`).
template <BlockOrder kOrder>
__global__ void transpose_naive_row_kernel(const float* __restrict__ in, float* __restrict__ out,
                                           std::size_t rows, std::size_t cols, TileGrid g) {
  std::size_t c, r;
  thread_xy<kOrder>(g, 1, c, r);
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

// [doc:transpose_naive_col_kernel]
// Read a column (strided by `cols`), write a row of the output (coalesced).
template <BlockOrder kOrder, LoadPath kPath = LoadPath::kDefault>
__global__ void transpose_naive_col_kernel(const float* __restrict__ in, float* __restrict__ out,
                                           std::size_t rows, std::size_t cols, TileGrid g) {
  std::size_t r, c;
  thread_xy<kOrder>(g, 1, r, c);
  if (r < rows && c < cols) out[c * rows + r] = load<kPath>(&in[r * cols + c]);
}
// [/doc:transpose_naive_col_kernel]

// ---- Launchers ------------------------------------------------------------------------------------

inline const dim3 kDefaultBlock{32, 8};

// The tiles covering an x_extent x y_extent space with tile_x x tile_y tiles. Throws std::invalid_argument
// past the 2^31 - 1 block limit of a 1-D grid.
inline TileGrid tile_grid(std::size_t x_extent, std::size_t y_extent, std::size_t tile_x, std::size_t tile_y) {
  const std::size_t tx = ceil_div(x_extent, tile_x), ty = ceil_div(y_extent, tile_y);
  if (tx == 0 || ty == 0 || ty > 0x7fffffffu / tx)
    throw std::invalid_argument("transpose: " + std::to_string(x_extent) + " x " + std::to_string(y_extent) +
                                " needs no blocks or more than the 1-D grid limit of 2^31 - 1");
  return {static_cast<unsigned>(tx), static_cast<unsigned>(ty)};
}

// The tile grid of the kernels above: one tile per block, x_per_thread elements per thread along x.
inline TileGrid make_tile_grid(std::size_t x_extent, std::size_t y_extent, dim3 block, unsigned x_per_thread = 1) {
  if (block.x == 0 || block.y == 0 || block.z != 1 || block.x * block.y > 1024)
    throw std::invalid_argument("transpose: a block must be x * y threads, at most 1024");
  return tile_grid(x_extent, y_extent, std::size_t{block.x} * x_per_thread, block.y);
}

template <class Kernel>
void launch_tiles(Kernel kernel, const float* in, float* out, std::size_t rows, std::size_t cols, TileGrid g,
                  dim3 block, cudaStream_t s) {
  kernel<<<g.blocks(), block, 0, s>>>(in, out, rows, cols, g);
  CUDA_CHECK_LAUNCH();
}

// Every launcher: in is rows x cols, out has rows * cols elements; an empty matrix launches nothing.

inline void launch_copy_row(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                            dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(copy_row_kernel, in, out, rows, cols, make_tile_grid(cols, rows, block), block, s);
}

template <BlockOrder kOrder = BlockOrder::kRowMajor>
void launch_transpose_naive_row(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                                dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(transpose_naive_row_kernel<kOrder>, in, out, rows, cols, make_tile_grid(cols, rows, block), block,
               s);
}

template <BlockOrder kOrder = BlockOrder::kRowMajor, LoadPath kPath = LoadPath::kDefault>
void launch_transpose_naive_col(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                                dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(transpose_naive_col_kernel<kOrder, kPath>, in, out, rows, cols, make_tile_grid(rows, cols, block),
               block, s);
}

}  // namespace
}  // namespace cml::transpose
