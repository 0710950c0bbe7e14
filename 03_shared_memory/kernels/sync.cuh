// Barriers and memory fences.
//
// __syncthreads(): every thread of the block waits until all of them have reached it, and every shared-
// and global-memory write made before it by any of them is visible to all of them after it. "All of them"
// is the contract: a barrier inside an `if` that only some threads of the block take is undefined
// behaviour. Since Volta a barrier completes only when every non-exited thread of the block has arrived,
// so the threads that took the branch wait for threads heading to a different barrier or to none: the
// block hangs, or two unrelated barriers pair up and threads read data that is not written yet.
// compute-sanitizer's synccheck reports it. The kernels here keep every barrier in code that all threads
// of the block execute: tail tests guard the memory accesses, never the barrier.
//
// __threadfence(): orders this thread's memory accesses as seen by the whole device: writes before it are
// visible to any thread that sees writes after it. That is what "the last block finishes the job" needs.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cuda/atomic>

#include "03_shared_memory/kernels/block_sum.cuh"
#include "03_shared_memory/kernels/reduce_reference.hpp"
#include "03_shared_memory/kernels/sync_reference.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch03 {
namespace {

// Reverses each kSyncBlock-element segment through a shared tile, grid-stride over the segments, so each
// block reuses its tile. Two barriers per segment: the first makes the tile complete before anyone reads
// it (read-after-write); the second keeps the next segment's writes from overwriting elements a slower
// thread has not read yet (write-after-read, the barrier that is easy to forget). The loop
// condition depends on the block, not the thread, so every thread of a block runs the same iterations.
__global__ void __launch_bounds__(kSyncBlock)
    segment_reverse_kernel(const unsigned* __restrict__ in, unsigned* __restrict__ out, std::size_t n) {
  __shared__ unsigned tile[kSyncBlock];
  const unsigned t = threadIdx.x;
  // [doc:segment_reverse_loop]
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * kSyncBlock; base < n;
       base += static_cast<std::size_t>(gridDim.x) * kSyncBlock) {
    const unsigned len = n - base < kSyncBlock ? static_cast<unsigned>(n - base) : kSyncBlock;
    if (t < len) tile[t] = in[base + t];  // the tail test guards the access...
    __syncthreads();                      // ...not the barrier
    if (t < len) out[base + t] = tile[len - 1 - t];
    __syncthreads();
  }
  // [/doc:segment_reverse_loop]
}

// __syncthreads_count / _and / _or: a barrier that also combines one predicate per thread.
// out[3b] = how many threads of block b passed, out[3b + 1] = all passed, out[3b + 2] = any passed.
__global__ void __launch_bounds__(kSyncBlock)
    barrier_vote_kernel(const unsigned* __restrict__ in, std::size_t n, unsigned threshold, unsigned* __restrict__ out) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int pass = i < n && in[i] >= threshold;  // threads past the end vote "no"; they still reach the barriers
  const int count = __syncthreads_count(pass);
  const int all = __syncthreads_and(pass);
  const int any = __syncthreads_or(pass);
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = static_cast<unsigned>(count);
    out[3 * blockIdx.x + 1] = all != 0;
    out[3 * blockIdx.x + 2] = any != 0;
  }
}

// A one-kernel sum: every block stores its partial, takes a ticket from a global counter, and the block
// that draws the last ticket adds up all the partials, writes the result and resets the counter for the
// next launch. Correctness rests on the order "partial visible, then ticket taken":
//   AtomicRef = false: the classic form. __threadfence() between the partial's store and atomicAdd on the
//     ticket. Without it the ticket increment may become visible before the partial does (the store can
//     sit in a write buffer or another L2 slice while the atomic completes), the last block then reads a
//     stale partial, and the sum is wrong now and then: rarely, depending on timing, which is what makes
//     the missing fence dangerous. The last block fences again after seeing its ticket, so its loads of
//     the partials are ordered after it, and loads them with ld.global.cg: L2, never a stale L1 line.
//   AtomicRef = true: the same with cuda::atomic_ref: fetch_add with memory_order_acq_rel is a release
//     (publishes the partial stored before it) and an acquire (for the last block) in one operation.
__device__ __forceinline__ Sum grid_stride_sum(const unsigned* __restrict__ in, std::size_t n) {
  Sum v = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    v += in[i];
  return v;
}

template <bool AtomicRef>
__global__ void __launch_bounds__(kSyncBlock)
    reduce_last_block_kernel(const unsigned* __restrict__ in, std::size_t n, Sum* partials, unsigned* ticket,
                             Sum* result) {
  __shared__ bool is_last;
  const Sum partial = block_sum(grid_stride_sum(in, n));
  // [doc:last_block_ticket]
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = partial;
    if constexpr (AtomicRef) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
      is_last = t.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
    } else {
      __threadfence();  // the partial is visible device-wide before the ticket is taken
      is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
  }
  // [/doc:last_block_ticket]
  __syncthreads();       // publishes is_last to the block (and separates the two block_sum calls)
  if (!is_last) return;  // the same value for every thread of the block: no barrier below is divergent
  if constexpr (!AtomicRef) __threadfence();
  Sum s = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) s += __ldcg(&partials[b]);
  s = block_sum(s);
  if (threadIdx.x == 0) {
    *result = s;
    *ticket = 0;  // the next launch (stream-ordered after this one) starts from zero
  }
}

// Blocks for the last-block reduction: a few waves' worth, never more than there are elements' blocks.
inline unsigned last_block_grid(std::size_t n) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t wanted = static_cast<std::size_t>(sms) * 4;
  const std::size_t needed = ceil_div<std::size_t>(n > 0 ? n : 1, kSyncBlock);
  return static_cast<unsigned>(needed < wanted ? needed : wanted);
}

inline unsigned segment_reverse_grid(std::size_t n) { return last_block_grid(n) > 1 ? last_block_grid(n) / 2 : 1; }

inline void launch_segment_reverse(const unsigned* in, unsigned* out, std::size_t n, unsigned blocks, cudaStream_t s) {
  segment_reverse_kernel<<<blocks, kSyncBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

// `out` holds 3 words per block of ceil(n / kSyncBlock) blocks.
inline void launch_barrier_vote(const unsigned* in, std::size_t n, unsigned threshold, unsigned* out, cudaStream_t s) {
  const std::size_t blocks = ceil_div<std::size_t>(n > 0 ? n : 1, kSyncBlock);
  barrier_vote_kernel<<<static_cast<unsigned>(blocks), kSyncBlock, 0, s>>>(in, n, threshold, out);
  CUDA_CHECK_LAUNCH();
}

// `partials` holds at least `blocks` sums; `ticket` must be zero before the first launch (each launch
// leaves it at zero again).
template <bool AtomicRef>
inline void launch_reduce_last_block(const unsigned* in, std::size_t n, Sum* partials, unsigned* ticket, Sum* result,
                                     unsigned blocks, cudaStream_t s) {
  reduce_last_block_kernel<AtomicRef><<<blocks, kSyncBlock, 0, s>>>(in, n, partials, ticket, result);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch03
