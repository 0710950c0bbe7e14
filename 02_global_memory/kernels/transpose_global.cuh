// Matrix transposes that use global memory only: chapter 02's lesson beyond the naive transposes — the
// column copy bound, the unrolled and diagonally ordered versions and the L2-only load path. The tile
// orders, launch helpers, copy_row and the two naive transposes are in common/transpose.cuh, shared with
// 03_shared_memory.
//
// Convention (see common/transpose.hpp): `in` is rows x cols, row-major; `out` is cols x rows:
//   out[c * rows + r] = in[r * cols + c].
// Every kernel handles any shape (1 x N, N x 1, non-multiples of the block): each element is guarded.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/cuda_check.hpp"
#include "common/transpose.cuh"

namespace cml::ch02 {

// The shared machinery under the names chapter 02 has always used for it.
using transpose::BlockOrder;
using transpose::kGroupBand;
using transpose::LoadPath;
using transpose::TileIndex;
using transpose::tile_of;
using transpose::TileGrid;
using transpose::thread_xy;
using transpose::kDefaultBlock;
using transpose::tile_grid;
using transpose::make_tile_grid;
using transpose::launch_tiles;
using transpose::launch_copy_row;
using transpose::launch_transpose_naive_row;
using transpose::launch_transpose_naive_col;

namespace {

// Lower bound: consecutive threads walk down a column, so both the read and the write are strided.
__global__ void copy_col_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                std::size_t cols, TileGrid g) {
  std::size_t r, c;
  thread_xy<BlockOrder::kRowMajor>(g, 1, r, c);
  if (r < rows && c < cols) out[r * cols + c] = in[r * cols + c];
}

// ---- Unrolled naive transposes: four elements per thread, blockDim.x apart ------------------------
// The grid has a quarter of the blocks along x (the blog posts' version that forgot to shrink the grid wrote
// every element four times). All four loads are issued before the first store, so each thread has four
// requests in flight; each element has its own guard, so no tail is dropped.

inline constexpr unsigned kUnroll = 4;

template <BlockOrder kOrder>
__global__ void transpose_unroll4_row_kernel(const float* __restrict__ in, float* __restrict__ out,
                                             std::size_t rows, std::size_t cols, TileGrid g) {
  std::size_t c0, r;
  thread_xy<kOrder>(g, kUnroll, c0, r);
  float v[kUnroll];
#pragma unroll
  for (unsigned k = 0; k < kUnroll; ++k) {
    const std::size_t c = c0 + k * blockDim.x;
    if (r < rows && c < cols) v[k] = in[r * cols + c];
  }
#pragma unroll
  for (unsigned k = 0; k < kUnroll; ++k) {
    const std::size_t c = c0 + k * blockDim.x;
    if (r < rows && c < cols) out[c * rows + r] = v[k];
  }
}

template <BlockOrder kOrder>
__global__ void transpose_unroll4_col_kernel(const float* __restrict__ in, float* __restrict__ out,
                                             std::size_t rows, std::size_t cols, TileGrid g) {
  std::size_t r0, c;
  thread_xy<kOrder>(g, kUnroll, r0, c);
  float v[kUnroll];
#pragma unroll
  for (unsigned k = 0; k < kUnroll; ++k) {
    const std::size_t r = r0 + k * blockDim.x;
    if (r < rows && c < cols) v[k] = in[r * cols + c];
  }
#pragma unroll
  for (unsigned k = 0; k < kUnroll; ++k) {
    const std::size_t r = r0 + k * blockDim.x;
    if (r < rows && c < cols) out[c * rows + r] = v[k];
  }
}

// ---- Launchers ------------------------------------------------------------------------------------

inline void launch_copy_col(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                            dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(copy_col_kernel, in, out, rows, cols, make_tile_grid(rows, cols, block), block, s);
}

inline void launch_transpose_unroll4_row(const float* in, float* out, std::size_t rows, std::size_t cols,
                                         cudaStream_t s, dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(transpose_unroll4_row_kernel<BlockOrder::kRowMajor>, in, out, rows, cols,
               make_tile_grid(cols, rows, block, kUnroll), block, s);
}

inline void launch_transpose_unroll4_col(const float* in, float* out, std::size_t rows, std::size_t cols,
                                         cudaStream_t s, dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(transpose_unroll4_col_kernel<BlockOrder::kRowMajor>, in, out, rows, cols,
               make_tile_grid(rows, cols, block, kUnroll), block, s);
}

inline void launch_transpose_diagonal_row(const float* in, float* out, std::size_t rows, std::size_t cols,
                                          cudaStream_t s, dim3 block = kDefaultBlock) {
  launch_transpose_naive_row<BlockOrder::kDiagonal>(in, out, rows, cols, s, block);
}

inline void launch_transpose_diagonal_col(const float* in, float* out, std::size_t rows, std::size_t cols,
                                          cudaStream_t s, dim3 block = kDefaultBlock) {
  launch_transpose_naive_col<BlockOrder::kDiagonal>(in, out, rows, cols, s, block);
}

inline void launch_transpose_naive_col_l2only(const float* in, float* out, std::size_t rows, std::size_t cols,
                                              cudaStream_t s, dim3 block = kDefaultBlock) {
  launch_transpose_naive_col<BlockOrder::kRowMajor, LoadPath::kL2Only>(in, out, rows, cols, s, block);
}

}  // namespace
}  // namespace cml::ch02
