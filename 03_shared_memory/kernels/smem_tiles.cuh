// Shared-memory tiles written and read row-wise or column-wise: the book's checkSmemSquare (one 32x32
// block) and checkSmemRectangle (one 32x16 block), with static 2-D arrays or one dynamic 1-D array, with
// and without padding.
//
// "Row" means the 32 lanes of a warp walk along one tile row (consecutive words: 32 banks, one
// wavefront); "col" means they walk down one column (words one row pitch apart: with a pitch of 32 words
// all 32 lanes hit the same bank, 32 wavefronts). A pad of one word makes the pitch 33, so a column
// touches 32 different banks.
//
// Each block is an independent copy of the book's single block with its own tile, and repeats the
// write-barrier-read-barrier round `rounds` times, so the time reflects the access pattern rather than
// the launch. Thread t writes t + r * threads in round r and adds up what it reads; the output is the sum,
// which the CPU reference predicts in closed form (identity for row/row and col/col, the transpose for the
// mixed orders).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>

#include "03_shared_memory/kernels/smem_tiles_reference.hpp"
#include "common/cuda_check.hpp"

namespace cml::ch03 {
namespace {

template <unsigned Pad>
__global__ void __launch_bounds__(kSquareThreads) square_static_kernel(unsigned* __restrict__ out, Order write,
                                                                       Order read, int rounds) {
  __shared__ unsigned tile[kSquareDim][kSquareDim + Pad];
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  const unsigned idx = ty * kSquareDim + tx;
  // Pick the element once; the loop then issues exactly one store and one load per round.
  // [doc:square_rounds]
  unsigned* const w = write == Order::kRow ? &tile[ty][tx] : &tile[tx][ty];
  const unsigned* const rd = read == Order::kRow ? &tile[ty][tx] : &tile[tx][ty];
  unsigned acc = 0;
  for (int r = 0; r < rounds; ++r) {
    *w = idx + static_cast<unsigned>(r) * kSquareThreads;
    __syncthreads();  // every write of this round lands before anyone reads
    acc += *rd;
    __syncthreads();  // the next round overwrites the tile: everyone must have read it first
  }
  // [/doc:square_rounds]
  out[blockIdx.x * kSquareThreads + idx] = acc;
}

// The same with a dynamic tile: one 1-D array, so the 2-D index is computed by hand with the padded pitch.
__global__ void __launch_bounds__(kSquareThreads) square_dynamic_kernel(unsigned* __restrict__ out, unsigned pad,
                                                                        Order write, Order read, int rounds) {
  extern __shared__ unsigned square_dyn_tile[];
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  const unsigned idx = ty * kSquareDim + tx;
  const unsigned pitch = kSquareDim + pad;
  const unsigned at_row = ty * pitch + tx;  // tile[ty][tx]
  const unsigned at_col = tx * pitch + ty;  // tile[tx][ty]
  const unsigned w = write == Order::kRow ? at_row : at_col;
  const unsigned rd = read == Order::kRow ? at_row : at_col;
  unsigned acc = 0;
  for (int r = 0; r < rounds; ++r) {
    square_dyn_tile[w] = idx + static_cast<unsigned>(r) * kSquareThreads;
    __syncthreads();
    acc += square_dyn_tile[rd];
    __syncthreads();
  }
  out[blockIdx.x * kSquareThreads + idx] = acc;
}

// Rectangle, static: tile[16][32 + Pad] for row_row and row_col, tile[32][16 + Pad] for col_col.
template <unsigned Pad>
__global__ void __launch_bounds__(kRectThreads) rect_static_kernel(unsigned* __restrict__ out, RectPattern p,
                                                                   int rounds) {
  __shared__ unsigned wide[kRectY][kRectX + Pad];  // 16 rows of 32 (+ pad)
  __shared__ unsigned tall[kRectX][kRectY + Pad];  // 32 rows of 16 (+ pad), for col_col only
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  const unsigned idx = ty * kRectX + tx;
  const unsigned irow = idx / kRectY, icol = idx % kRectY;  // this thread's (row, col) in the 32 x 16 output
  unsigned* const w = p == RectPattern::kColCol ? &tall[tx][ty] : &wide[ty][tx];
  const unsigned* const rd = p == RectPattern::kRowRow   ? &wide[ty][tx]
                             : p == RectPattern::kColCol ? &tall[tx][ty]
                                                         : &wide[icol][irow];
  unsigned acc = 0;
  for (int r = 0; r < rounds; ++r) {
    *w = idx + static_cast<unsigned>(r) * kRectThreads;
    __syncthreads();
    acc += *rd;
    __syncthreads();
  }
  out[blockIdx.x * kRectThreads + idx] = acc;
}

__global__ void __launch_bounds__(kRectThreads) rect_dynamic_kernel(unsigned* __restrict__ out, RectPattern p,
                                                                    unsigned pad, int rounds) {
  extern __shared__ unsigned rect_dyn_tile[];
  const unsigned tx = threadIdx.x, ty = threadIdx.y;
  const unsigned idx = ty * kRectX + tx;
  // [doc:rect_offsets]
  const unsigned irow = idx / kRectY, icol = idx % kRectY;
  unsigned w = 0, rd = 0;
  if (p == RectPattern::kColCol) {
    w = rd = tx * (kRectY + pad) + ty;  // tile[tx][ty], pitch 16 + pad
  } else {
    w = ty * (kRectX + pad) + tx;  // tile[ty][tx], pitch 32 + pad
    rd = p == RectPattern::kRowRow ? w : icol * (kRectX + pad) + irow;
  }
  // [/doc:rect_offsets]
  unsigned acc = 0;
  for (int r = 0; r < rounds; ++r) {
    rect_dyn_tile[w] = idx + static_cast<unsigned>(r) * kRectThreads;
    __syncthreads();
    acc += rect_dyn_tile[rd];
    __syncthreads();
  }
  out[blockIdx.x * kRectThreads + idx] = acc;
}

// `out` holds blocks * kSquareThreads words. Static tiles support pad 0 or 1 (the book's IPAD 1).
inline void launch_square_static(unsigned* out, unsigned pad, Order write, Order read, int blocks, int rounds,
                                 cudaStream_t s) {
  const dim3 block(kSquareDim, kSquareDim);
  if (pad == 0) square_static_kernel<0><<<blocks, block, 0, s>>>(out, write, read, rounds);
  else if (pad == 1) square_static_kernel<1><<<blocks, block, 0, s>>>(out, write, read, rounds);
  else throw std::invalid_argument("square static tile: pad must be 0 or 1");
  CUDA_CHECK_LAUNCH();
}

inline void launch_square_dynamic(unsigned* out, unsigned pad, Order write, Order read, int blocks, int rounds,
                                  cudaStream_t s) {
  const dim3 block(kSquareDim, kSquareDim);
  square_dynamic_kernel<<<blocks, block, square_dynamic_bytes(pad), s>>>(out, pad, write, read, rounds);
  CUDA_CHECK_LAUNCH();
}

// `out` holds blocks * kRectThreads words. Static tiles support pad 0, 1 or 2 (the book's IPAD 2).
inline void launch_rect_static(unsigned* out, RectPattern p, unsigned pad, int blocks, int rounds, cudaStream_t s) {
  const dim3 block(kRectX, kRectY);
  if (pad == 0) rect_static_kernel<0><<<blocks, block, 0, s>>>(out, p, rounds);
  else if (pad == 1) rect_static_kernel<1><<<blocks, block, 0, s>>>(out, p, rounds);
  else if (pad == 2) rect_static_kernel<2><<<blocks, block, 0, s>>>(out, p, rounds);
  else throw std::invalid_argument("rectangle static tile: pad must be 0, 1 or 2");
  CUDA_CHECK_LAUNCH();
}

inline void launch_rect_dynamic(unsigned* out, RectPattern p, unsigned pad, int blocks, int rounds, cudaStream_t s) {
  const dim3 block(kRectX, kRectY);
  rect_dynamic_kernel<<<blocks, block, rect_dynamic_bytes(p, pad), s>>>(out, p, pad, rounds);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch03
