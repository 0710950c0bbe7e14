// Many threads streaming reads: every block sums the uint4 elements of its range (stream_sum.hpp explains
// the replicated and partitioned layouts) and stores one 32-bit sum, so the loads cannot be eliminated
// and the result can be checked exactly against the CPU. Integer sums wrap identically on both sides.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "01_memory_model/kernels/stream_sum.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {
namespace {

inline constexpr int kStreamBlock = 256;

__device__ __forceinline__ unsigned sum_range(const uint4* __restrict__ buf, unsigned lo, unsigned hi) {
  unsigned acc = 0;
#pragma unroll 4
  for (unsigned i = lo + threadIdx.x; i < hi; i += kStreamBlock) {
    const uint4 v = buf[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  return acc;
}

// `Tag` only makes distinct copies of the kernel, so that per-function attributes (carveout, cache
// config) set by one demo variant cannot leak into another.
template <int Tag = 0>
__global__ void __launch_bounds__(kStreamBlock)
    stream_sum_kernel(const uint4* __restrict__ buf, StreamLayout L, int passes, unsigned* __restrict__ block_sums) {
  unsigned acc = 0;
  for (int p = 0; p < passes; ++p) {
    // [doc:replicated_or_split]
    if (L.replicate) {
      // The whole buffer from this block's start, wrapping once: two contiguous ranges.
      const unsigned start = replicated_start(blockIdx.x, L.n4);
      acc += sum_range(buf, start, L.n4) + sum_range(buf, 0, start);
    } else {
      const unsigned lo = blockIdx.x * L.chunk4;  // < n4 for every block of the layout's grid
      const unsigned hi = L.n4 - lo > L.chunk4 ? lo + L.chunk4 : L.n4;
      acc += sum_range(buf, lo, hi);
    }
    // [/doc:replicated_or_split]
  }
  // Block reduction: warp shuffles, then one value per warp through shared memory.
  __shared__ unsigned warp_sums[kStreamBlock / 32];
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < kStreamBlock / 32 ? warp_sums[threadIdx.x] : 0u;
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (threadIdx.x == 0) block_sums[blockIdx.x] = acc;
  }
}

template <int Tag = 0>
inline void launch_stream_sum(const uint4* buf, const StreamLayout& L, int passes, unsigned* block_sums,
                              cudaStream_t s) {
  stream_sum_kernel<Tag><<<L.grid, kStreamBlock, 0, s>>>(buf, L, passes, block_sums);
  CUDA_CHECK_LAUNCH();
}

// Blocks that fill every SM once (one wave): the grid the demos use.
template <int Tag = 0>
inline unsigned stream_sum_full_grid(int sm_count) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, stream_sum_kernel<Tag>, kStreamBlock, 0));
  return static_cast<unsigned>(sm_count * (per_sm > 0 ? per_sm : 1));
}

}  // namespace
}  // namespace cml::ch01
