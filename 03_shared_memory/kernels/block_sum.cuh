// Warp- and block-wide sums with warp shuffles, shared by the reductions (reduce.cuh) and the
// "last block finishes the job" kernels (sync.cuh).
#pragma once

#include <cuda_runtime.h>

namespace cml::ch03 {

inline constexpr unsigned kFullMask = 0xffffffffu;  // all 32 lanes take part in every shuffle below

namespace {

// Butterfly: after log2(32) steps every lane holds the warp's sum. The _sync shuffles name the lanes that
// take part; a mask that leaves out a lane that executes the shuffle is undefined behaviour (a common
// mistake is 0xffff on full warps), so every lane runs it with the full mask.
template <class T>
__device__ __forceinline__ T warp_sum_xor(T v) {
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) v += __shfl_xor_sync(kFullMask, v, mask);
  return v;
}

// Tree towards lane 0: only lane 0 ends with the warp's sum; the other lanes hold partial sums.
template <class T>
__device__ __forceinline__ T warp_sum_down(T v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

// Sum over the block, returned in thread 0 (other threads get partial values). Needs blockDim.x a
// multiple of 32 and at most 1024, and every thread of the block must call it (it has a barrier).
// Calling it twice in a row needs a barrier in between: the second call's writes to `warp_sums` must not
// overtake the first call's reads.
template <class T>
__device__ __forceinline__ T block_sum(T v) {
  __shared__ T warp_sums[32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum_down(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();  // outside the if: every thread reaches it
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_sums[lane] : T{0};
    v = warp_sum_down(v);  // the whole of warp 0 is here, so the full mask is right
  }
  return v;
}

}  // namespace
}  // namespace cml::ch03
