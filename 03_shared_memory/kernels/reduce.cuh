// Integer sum reductions: the book's ladder (chapters 3 and 5 of "Professional CUDA C Programming") and
// a fast kernel, with CUB's BlockReduce and DeviceReduce as baselines.
//
// Every launcher computes the complete sum into `*total` (it zeroes it first, then each block adds its
// partial with one 64-bit atomicAdd), so every rung does the same job as cub::DeviceReduce::Sum.
// Inputs are unsigned integers < 256 (reduce_reference.hpp): the book-style kernels keep the book's 32-bit
// block partials, which cannot overflow at these values; the fast kernels accumulate in 64 bits.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <cub/cub.cuh>

#include "03_shared_memory/kernels/block_sum.cuh"
#include "03_shared_memory/kernels/reduce_reference.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch03 {
namespace {

// The book's "unrolled last warp": warp 0 folds the last 64 partial sums without __syncthreads(). The
// book relied on the 32 lanes running in lock step and marked the memory volatile. Since Volta the lanes
// of a warp may interleave freely, so volatile alone is a race: each step now reads, __syncwarp()s,
// writes, and __syncwarp()s again before the next step reads. Lane 0 ends with s[0] = the block's sum.
// [doc:warp_fold_last64]
__device__ __forceinline__ void warp_fold_last64(volatile unsigned* s, unsigned lane) {
  unsigned v = s[lane];
#pragma unroll
  for (unsigned offset = 32; offset > 0; offset /= 2) {
    v += s[lane + offset];
    __syncwarp();
    s[lane] = v;
    __syncwarp();
  }
}
// [/doc:warp_fold_last64]

// 1. In place in global memory, neighbouring pairs (book ch.3 reduceNeighbored). Only threads whose
// index is a multiple of 2*stride work, so every warp stays busy but most of its lanes idle.
// `data` is the zero-padded scratch copy (inplace_scratch_elems): no tail test, no early return.
__global__ void __launch_bounds__(kReduceBlock) reduce_gmem_neighbored_kernel(unsigned* data, Sum* total) {
  unsigned* const block = data + static_cast<std::size_t>(blockIdx.x) * blockDim.x;
  const unsigned tid = threadIdx.x;
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    if (tid % (2 * stride) == 0) block[tid] += block[tid + stride];
    __syncthreads();  // outside the if: every thread of the block reaches every barrier
  }
  if (tid == 0) atomicAdd(total, static_cast<Sum>(block[0]));
}

// 2. In place in global memory, interleaved pairs (book ch.5 reduceGmem): the working threads are the
// first `stride` ones, so whole warps retire early; the last 64 values are folded by warp 0.
__global__ void __launch_bounds__(kReduceBlock) reduce_gmem_interleaved_kernel(unsigned* data, Sum* total) {
  unsigned* const block = data + static_cast<std::size_t>(blockIdx.x) * blockDim.x;
  const unsigned tid = threadIdx.x;
  for (unsigned stride = blockDim.x / 2; stride > 32; stride /= 2) {
    if (tid < stride) block[tid] += block[tid + stride];
    __syncthreads();
  }
  if (tid < 32) warp_fold_last64(block, tid);
  if (tid == 0) atomicAdd(total, static_cast<Sum>(block[0]));
}

// The shared-memory tree that rungs 3-5 share: kReduceBlock values in s -> s[0].
__device__ __forceinline__ void block_tree_smem(unsigned* s) {
  const unsigned tid = threadIdx.x;
  for (unsigned stride = blockDim.x / 2; stride > 32; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) warp_fold_last64(s, tid);
}

// Sum of this thread's kReduceUnroll elements, blockDim.x apart, in the block's slice of
// blockDim.x * kReduceUnroll elements (book reduceSmemUnroll: each block first adds four blocks' worth).
__device__ __forceinline__ unsigned unrolled_load_sum(const unsigned* __restrict__ in, std::size_t n) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kReduceUnroll + threadIdx.x;
  unsigned v = 0;
#pragma unroll
  for (unsigned k = 0; k < kReduceUnroll; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) v += in[i];
  }
  return v;
}

// 3. The same tree in shared memory (book reduceSmem): global memory is read once and never written.
__global__ void __launch_bounds__(kReduceBlock)
    reduce_smem_kernel(const unsigned* __restrict__ in, std::size_t n, Sum* total) {
  __shared__ unsigned s[kReduceBlock];
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0;  // the tail test covers the load only...
  __syncthreads();                     // ...the barrier is reached by every thread
  block_tree_smem(s);
  if (threadIdx.x == 0) atomicAdd(total, static_cast<Sum>(s[0]));
}

// 4. Shared memory, 4x unrolled loads (book reduceSmemUnroll): a quarter of the blocks, 4 loads in flight.
__global__ void __launch_bounds__(kReduceBlock)
    reduce_smem_unroll_kernel(const unsigned* __restrict__ in, std::size_t n, Sum* total) {
  __shared__ unsigned s[kReduceBlock];
  s[threadIdx.x] = unrolled_load_sum(in, n);
  __syncthreads();
  block_tree_smem(s);
  if (threadIdx.x == 0) atomicAdd(total, static_cast<Sum>(s[0]));
}

// 5. The same with dynamic shared memory (book reduceSmemUnrollDyn): blockDim.x words, set at launch.
__global__ void __launch_bounds__(kReduceBlock)
    reduce_smem_unroll_dyn_kernel(const unsigned* __restrict__ in, std::size_t n, Sum* total) {
  extern __shared__ unsigned reduce_dyn_smem[];
  reduce_dyn_smem[threadIdx.x] = unrolled_load_sum(in, n);
  __syncthreads();
  block_tree_smem(reduce_dyn_smem);
  if (threadIdx.x == 0) atomicAdd(total, static_cast<Sum>(reduce_dyn_smem[0]));
}

// 6. Warp shuffles (book reduceShfl, with the _sync shuffles and full masks): each warp sums in registers,
// one shared word per warp, and warp 0 sums those. Two barriers-worth of shared traffic instead of eight.
__global__ void __launch_bounds__(kReduceBlock)
    reduce_shfl_kernel(const unsigned* __restrict__ in, std::size_t n, Sum* total) {
  __shared__ unsigned warp_sums[kReduceBlock / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned v = warp_sum_xor(unrolled_load_sum(in, n));
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_sum_xor(lane < blockDim.x / 32 ? warp_sums[lane] : 0u);
    if (lane == 0) atomicAdd(total, static_cast<Sum>(v));
  }
}

// This thread's 64-bit sum for the fast kernels: 16-byte loads, kReduceVecLoads of them issued before
// any is used, grid-stride over the whole input (the grid is sized to the GPU, not to n). `in` must be
// 16-byte aligned; the n % 4 trailing elements go to the first threads of the grid.
__device__ __forceinline__ Sum thread_sum_vec4(const unsigned* __restrict__ in, std::size_t n) {
  const std::size_t n4 = n / 4;
  const uint4* const in4 = reinterpret_cast<const uint4*>(in);
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  Sum acc = 0;
  std::size_t i = t;
  for (; i + (kReduceVecLoads - 1) * stride < n4; i += kReduceVecLoads * stride) {
    uint4 v[kReduceVecLoads];
#pragma unroll
    for (unsigned k = 0; k < kReduceVecLoads; ++k) v[k] = in4[i + k * stride];
#pragma unroll
    for (unsigned k = 0; k < kReduceVecLoads; ++k) acc += static_cast<Sum>(v[k].x) + v[k].y + v[k].z + v[k].w;
  }
  for (; i < n4; i += stride) {
    const uint4 v = in4[i];
    acc += static_cast<Sum>(v.x) + v.y + v.z + v.w;
  }
  if (t < n - n4 * 4) acc += in[n4 * 4 + t];
  return acc;
}

// 7. The fast kernel: vectorized grid-stride loads, warp shuffles, one atomicAdd per block.
__global__ void __launch_bounds__(kReduceBlock)
    reduce_vec4_kernel(const unsigned* __restrict__ in, std::size_t n, Sum* total) {
  const Sum v = block_sum(thread_sum_vec4(in, n));
  if (threadIdx.x == 0) atomicAdd(total, v);
}

// 8. The same loads with cub::BlockReduce doing the block-wide sum.
__global__ void __launch_bounds__(kReduceBlock)
    reduce_vec4_cub_block_kernel(const unsigned* __restrict__ in, std::size_t n, Sum* total) {
  using BlockReduce = cub::BlockReduce<Sum, kReduceBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  const Sum v = BlockReduce(temp).Sum(thread_sum_vec4(in, n));
  if (threadIdx.x == 0) atomicAdd(total, v);
}

// ---- Launchers: *total = sum of the n inputs ------------------------------------------------------

inline void zero_total(Sum* total, cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(Sum), s)); }

inline unsigned grid_of(std::size_t blocks) {
  if (blocks > static_cast<std::size_t>(INT_MAX)) throw std::invalid_argument("reduction too large for one grid");
  return static_cast<unsigned>(blocks);
}

// In place: `scratch` is a copy of the input padded with zeros to inplace_scratch_elems(n); it is destroyed.
inline void launch_reduce_gmem_neighbored(unsigned* scratch, std::size_t n, Sum* total, cudaStream_t s) {
  zero_total(total, s);
  reduce_gmem_neighbored_kernel<<<grid_of(reduce_blocks(n)), kReduceBlock, 0, s>>>(scratch, total);
  CUDA_CHECK_LAUNCH();
}

inline void launch_reduce_gmem_interleaved(unsigned* scratch, std::size_t n, Sum* total, cudaStream_t s) {
  zero_total(total, s);
  reduce_gmem_interleaved_kernel<<<grid_of(reduce_blocks(n)), kReduceBlock, 0, s>>>(scratch, total);
  CUDA_CHECK_LAUNCH();
}

inline void launch_reduce_smem(const unsigned* in, std::size_t n, Sum* total, cudaStream_t s) {
  zero_total(total, s);
  reduce_smem_kernel<<<grid_of(reduce_blocks(n)), kReduceBlock, 0, s>>>(in, n, total);
  CUDA_CHECK_LAUNCH();
}

inline void launch_reduce_smem_unroll(const unsigned* in, std::size_t n, Sum* total, cudaStream_t s) {
  zero_total(total, s);
  reduce_smem_unroll_kernel<<<grid_of(reduce_unrolled_blocks(n)), kReduceBlock, 0, s>>>(in, n, total);
  CUDA_CHECK_LAUNCH();
}

inline void launch_reduce_smem_unroll_dyn(const unsigned* in, std::size_t n, Sum* total, cudaStream_t s) {
  zero_total(total, s);
  reduce_smem_unroll_dyn_kernel<<<grid_of(reduce_unrolled_blocks(n)), kReduceBlock, kReduceBlock * sizeof(unsigned),
                                  s>>>(in, n, total);
  CUDA_CHECK_LAUNCH();
}

inline void launch_reduce_shfl(const unsigned* in, std::size_t n, Sum* total, cudaStream_t s) {
  zero_total(total, s);
  reduce_shfl_kernel<<<grid_of(reduce_unrolled_blocks(n)), kReduceBlock, 0, s>>>(in, n, total);
  CUDA_CHECK_LAUNCH();
}

// Blocks of `kernel` that fit on the GPU at once (one wave).
template <class Kernel>
inline std::size_t resident_blocks(Kernel kernel) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kReduceBlock, 0));
  return static_cast<std::size_t>(sms) * static_cast<std::size_t>(per_sm > 0 ? per_sm : 1);
}

// The fast kernels' grid: one wave of blocks, or fewer when there are not enough 16-byte loads for them.
inline unsigned vec4_grid(std::size_t resident, std::size_t n) {
  const std::size_t needed = ceil_div<std::size_t>(n / 4 + 1, kReduceBlock);
  return grid_of(std::min(needed, resident));
}

inline void check_aligned16(const void* p) {
  if (reinterpret_cast<std::uintptr_t>(p) % 16 != 0) throw std::invalid_argument("input must be 16-byte aligned");
}

inline void launch_reduce_vec4(const unsigned* in, std::size_t n, Sum* total, cudaStream_t s) {
  check_aligned16(in);
  // A fact of the kernel on the process's one device, not of a run: asked once, since this launch is timed.
  static const std::size_t resident = resident_blocks(reduce_vec4_kernel);
  zero_total(total, s);
  reduce_vec4_kernel<<<vec4_grid(resident, n), kReduceBlock, 0, s>>>(in, n, total);
  CUDA_CHECK_LAUNCH();
}

inline void launch_reduce_vec4_cub_block(const unsigned* in, std::size_t n, Sum* total, cudaStream_t s) {
  check_aligned16(in);
  // A fact of the kernel on the process's one device, not of a run: asked once, since this launch is timed.
  static const std::size_t resident = resident_blocks(reduce_vec4_cub_block_kernel);
  zero_total(total, s);
  reduce_vec4_cub_block_kernel<<<vec4_grid(resident, n), kReduceBlock, 0, s>>>(in, n, total);
  CUDA_CHECK_LAUNCH();
}

// cub::DeviceReduce::Sum with its temporary storage owned here (sized once for this n).
class CubDeviceSum {
 public:
  CubDeviceSum(const unsigned* in, Sum* total, std::size_t n) : in_(in), total_(total), n_(n) {
    CUDA_CHECK(call(nullptr, temp_bytes_, nullptr));
    temp_ = DeviceBuffer<unsigned char>(temp_bytes_ > 0 ? temp_bytes_ : 1);
  }
  void launch(cudaStream_t s) {
    CUDA_CHECK(call(temp_.data(), temp_bytes_, s));
    CUDA_CHECK_LAUNCH();
  }

 private:
  cudaError_t call(void* temp, std::size_t& bytes, cudaStream_t s) const {
    // CUB picks its offset type from the count's type: give it 32-bit counts when they fit (its fastest
    // configuration), 64-bit otherwise.
    if (n_ <= static_cast<std::size_t>(INT_MAX))
      return cub::DeviceReduce::Sum(temp, bytes, in_, total_, static_cast<int>(n_), s);
    return cub::DeviceReduce::Sum(temp, bytes, in_, total_, static_cast<std::int64_t>(n_), s);
  }
  const unsigned* in_;
  Sum* total_;
  std::size_t n_;
  std::size_t temp_bytes_ = 0;
  DeviceBuffer<unsigned char> temp_;
};

}  // namespace
}  // namespace cml::ch03
