// The book's 1-D 9-point stencil as the vehicle for constant memory vs the read-only (LDG) path vs
// plain global loads, with the coefficients read uniformly (one address per warp) or divergently (one
// address per lane). stencil_1d_reference.hpp holds the CPU side.
//
// Constant memory is served by a per-SM constant cache that delivers ONE address per cycle to a warp:
// a uniform read is a broadcast, a read with k distinct addresses is replayed k times. The L1/read-only
// path instead serves all of a warp's addresses in one request (the 32-byte sectors they touch), so
// divergent addresses cost far less there.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "01_memory_model/kernels/stencil_1d_reference.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {
namespace {

inline constexpr int kStencilBlock = 256;

__constant__ float c_stencil_coeffs[kStencilTaps];              // the book's single coefficient set
__constant__ float c_stencil_table[kCoeffRows * kStencilTaps];  // 32 sets, for the uniform/divergent reads

// Where the coefficients come from.
enum class CoeffSource {
  constant_memory,  // __constant__ (c_stencil_coeffs for RowPick::fixed, else c_stencil_table)
  ldg,              // a global table read with __ldg: the read-only (non-coherent) path through L1
  global,           // the same global table through an ordinary load (no const __restrict__)
};

// Fills this translation unit's __constant__ symbols (each unit including the header has its own).
inline void upload_stencil_coefficients(const std::vector<float>& table) {
  CUDA_CHECK(cudaMemcpyToSymbol(c_stencil_table, table.data(), sizeof(float) * kCoeffRows * kStencilTaps));
  CUDA_CHECK(cudaMemcpyToSymbol(c_stencil_coeffs, table.data(), sizeof(float) * kStencilTaps));
  // From pageable memory the copies may return before they land, and non-blocking streams do not wait for them.
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

// [doc:device_stencil_row]
template <RowPick P>
__device__ __forceinline__ int device_stencil_row(std::size_t i) {
  if constexpr (P == RowPick::fixed) return 0;
  else if constexpr (P == RowPick::warp_uniform) return static_cast<int>((i / 32) % kCoeffRows);
  else return static_cast<int>((i / 32 + i % 32) % kCoeffRows);
}
// [/doc:device_stencil_row]

template <CoeffSource S, RowPick P>
// [doc:stencil_coeff]
__device__ __forceinline__ float stencil_coeff(const float* table, int row, int k) {
  if constexpr (S == CoeffSource::constant_memory) {
    if constexpr (P == RowPick::fixed) return c_stencil_coeffs[k];  // compile-time offset after unrolling
    else return c_stencil_table[row * kStencilTaps + k];
  } else if constexpr (S == CoeffSource::ldg) {
    return __ldg(table + row * kStencilTaps + k);
  } else {
    return table[row * kStencilTaps + k];
  }
}
// [/doc:stencil_coeff]

// [doc:no_restrict]
// No __restrict__ on any pointer: with `out` restricted, the compiler may prove the table read-only and
// turn the "plain global" loads into the same non-coherent loads as __ldg, erasing the comparison.
// [/doc:no_restrict]
//
// Grid-stride over tiles of kStencilBlock outputs. The shared tile is reused by every iteration, so it
// is fenced on BOTH sides: the book's loop has only the barrier after the load, and a thread that
// finishes its outputs early may then overwrite the tile while slower threads of its block still read
// the previous tile's halo (a latent race that only shows when a block runs more than one iteration).
template <CoeffSource S, RowPick P>
__global__ void __launch_bounds__(kStencilBlock)
    stencil_1d_kernel(const float* in, float* out, std::size_t n, const float* table) {
  __shared__ float tile[kStencilBlock + 2 * kStencilRadius];
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kStencilBlock;
  // [doc:fenced_tile_load]
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * kStencilBlock; base < n; base += stride) {
    __syncthreads();  // (1) everyone is done reading the previous tile before it is overwritten
    const std::size_t i = base + threadIdx.x;
    tile[kStencilRadius + threadIdx.x] = i < n ? in[i] : 0.0f;
    if (threadIdx.x < kStencilRadius) {
      // Halo: kStencilRadius elements on each side, 0 outside the array.
      const std::size_t left = base + threadIdx.x;  // the element kStencilRadius to the left of this
      tile[threadIdx.x] = left >= kStencilRadius ? in[left - kStencilRadius] : 0.0f;
      const std::size_t right = base + kStencilBlock + threadIdx.x;
      tile[kStencilRadius + kStencilBlock + threadIdx.x] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();  // (2) the whole tile, halo included, is written before anyone reads a neighbour
    // [/doc:fenced_tile_load]
    if (i < n) {
      const int row = device_stencil_row<P>(i);
      float sum = 0.0f;
#pragma unroll
      for (int k = 0; k < kStencilTaps; ++k) sum += stencil_coeff<S, P>(table, row, k) * tile[threadIdx.x + k];
      out[i] = sum;
    }
  }
}

// `max_blocks` caps the grid (the grid-stride loop covers the rest); the demo uses one wave of blocks,
// the tests a handful so that every block runs many iterations of the loop.
template <CoeffSource S, RowPick P>
inline void launch_stencil_1d(const float* in, float* out, std::size_t n, const float* table, unsigned max_blocks,
                              cudaStream_t s) {
  if (n == 0) return;
  const std::size_t cap = max_blocks != 0 ? max_blocks : 0x7fffffffu;
  const std::size_t tiles = ceil_div<std::size_t>(n, kStencilBlock);
  const auto grid = static_cast<unsigned>(tiles < cap ? tiles : cap);
  stencil_1d_kernel<S, P><<<grid, kStencilBlock, 0, s>>>(in, out, n, table);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch01
