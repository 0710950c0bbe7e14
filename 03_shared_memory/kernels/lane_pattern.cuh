// A warp reading shared memory with a fixed lane -> element pattern (stride, broadcast, permutation,
// random, padded or swizzled column), many times over, so the kernel's time is set by the number of
// shared-memory wavefronts each request needs. Used by bank_conflicts, bank_width and smem_vs_global.
//
// Why the kernel looks the way it does:
//   - kPatternUnroll independent loads per round, accumulated into registers (and stored at the end, so
//     nothing is dead code): each warp keeps many requests in flight and the banks, not latency, limit it.
//   - Each round shifts every lane's element by the same amount. A common shift only rotates which banks
//     are used, so the conflict degree stays the pattern's, while the address changes every round: the
//     compiler cannot hoist the loads out of the loop as loop-invariant.
//   - One add per loaded word: the instruction issue needed per load stays well below the shared-memory
//     rate (1 wavefront per clock per SM), so even the conflict-free pattern is bound by the banks.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "03_shared_memory/kernels/lane_pattern_reference.hpp"
#include "common/cuda_check.hpp"

namespace cml::ch03 {
namespace {

__device__ __forceinline__ void accumulate(unsigned& acc, unsigned v) { acc += v; }
__device__ __forceinline__ void accumulate(uint2& acc, uint2 v) {
  acc.x += v.x;
  acc.y += v.y;
}
__device__ __forceinline__ void accumulate(uint4& acc, uint4 v) {
  acc.x += v.x;
  acc.y += v.y;
  acc.z += v.z;
  acc.w += v.w;
}

// T = unsigned, uint2 or uint4: 4-, 8- or 16-byte shared loads (LDS.32 / .64 / .128).
// init: kPatternBufferElems elements; lane_offsets: 32 ints; out: one T per thread of the grid.
template <class T>
__global__ void __launch_bounds__(kPatternBlock)
    lane_pattern_read_kernel(const T* __restrict__ init, const int* __restrict__ lane_offsets, int rounds,
                             T* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char lane_pattern_smem[];
  T* const buf = reinterpret_cast<T*>(lane_pattern_smem);
  for (int i = threadIdx.x; i < kPatternBufferElems; i += blockDim.x) buf[i] = init[i];
  __syncthreads();

  // [doc:lane_pattern_loop]
  const int lane_offset = lane_offsets[threadIdx.x % 32];
  T acc{};
  for (int k = 0; k < rounds; ++k) {
    const int base = (lane_offset + k * kPatternUnroll) & (kWindow - 1);
#pragma unroll
    for (int j = 0; j < kPatternUnroll; ++j) accumulate(acc, buf[base + j]);
  }
  // [/doc:lane_pattern_loop]
  out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = acc;
}

template <class T>
constexpr std::size_t lane_pattern_smem_bytes() {
  return static_cast<std::size_t>(kPatternBufferElems) * sizeof(T);
}

// `out` holds blocks * kPatternBlock elements; `rounds` rounds of kPatternUnroll loads per thread.
template <class T>
inline void launch_lane_pattern_read(const T* init, const int* lane_offsets, int rounds, T* out, int blocks,
                                     cudaStream_t s) {
  // The kernel uses no L1 for data: ask for the largest shared-memory carve-out so kPatternBlocksPerSm
  // blocks (up to 4 x 33 KB for 16-byte elements) fit on every SM.
  // Set once per process: a property of the kernel on its one device, not of a run, and this launch is timed.
  static const bool carveout_set = [] {
    CUDA_CHECK(cudaFuncSetAttribute(lane_pattern_read_kernel<T>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
    return true;
  }();
  (void)carveout_set;
  lane_pattern_read_kernel<T><<<blocks, kPatternBlock, lane_pattern_smem_bytes<T>(), s>>>(init, lane_offsets, rounds, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch03
