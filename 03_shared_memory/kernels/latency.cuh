// Latency and bandwidth of shared vs global memory.
//
// Latency: a pointer chase. Each visited word holds the byte offset of the next one, so every load needs
// the previous load's value: one thread, one load in flight, and the time per hop is the load-to-use
// latency. The chain stores byte offsets (not indices) so a hop is one load with no index arithmetic.
// clock64() around the timed hops gives SM cycles per hop; the host also divides the event time by the
// hops (ns per hop, which includes the launch and, for the L1 case, one warm-up lap).
//
// Bandwidth: every thread of a full grid streams 16-byte loads (several in flight per thread) and XORs
// them, so the time is the memory system's; the XOR is stored per thread so nothing is eliminated.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "03_shared_memory/kernels/latency_reference.hpp"
#include "common/cuda_check.hpp"

namespace cml::ch03 {

inline constexpr int kChaseLoadBlock = 256;  // threads that copy the chain into shared memory
inline constexpr int kReadBlock = 256;
inline constexpr int kReadUnroll = 4;

namespace {

// Follows `hops` hops from `start`, load(offset) giving the next byte offset, timed with clock64() around
// the hops alone: out[0] = where the chase ended (byte offset), out[1] = SM cycles for the hops.
template <class Load>
__device__ __forceinline__ void timed_chase(std::uint32_t start, int hops, Load load,
                                            unsigned long long* __restrict__ out) {
  std::uint32_t off = start;
  // [doc:timed_chase]
  const long long t0 = clock64();
  for (int h = 0; h < hops; ++h) off = load(off);
  const long long t1 = clock64();
  // [/doc:timed_chase]
  out[0] = off;
  out[1] = static_cast<unsigned long long>(t1 - t0);
}

__global__ void chase_shared_kernel(const std::uint32_t* __restrict__ chain, int chain_words, std::uint32_t start,
                                    int hops, unsigned long long* __restrict__ out) {
  extern __shared__ std::uint32_t chase_smem[];
  for (int i = threadIdx.x; i < chain_words; i += blockDim.x) chase_smem[i] = chain[i];
  __syncthreads();  // outside the `if` below: every thread of the block reaches it
  if (threadIdx.x != 0) return;
  const char* const base = reinterpret_cast<const char*>(chase_smem);
  timed_chase(start, hops, [base](std::uint32_t off) { return *reinterpret_cast<const std::uint32_t*>(base + off); },
              out);
}

// CacheInL1: loads with ld.global.ca (L1 and L2); otherwise ld.global.cg (L2 only, L1 bypassed).
// The first `warm_hops` hops are not counted in the cycles: they bring the chain into L1.
template <bool CacheInL1>
__global__ void chase_global_kernel(const std::uint32_t* __restrict__ chain, std::uint32_t start, int warm_hops,
                                    int hops, unsigned long long* __restrict__ out) {
  const char* const base = reinterpret_cast<const char*>(chain);
  // [doc:cached_global_load]
  auto load = [base](std::uint32_t off) {
    const auto* p = reinterpret_cast<const unsigned int*>(base + off);
    return CacheInL1 ? __ldca(p) : __ldcg(p);
  };
  // [/doc:cached_global_load]
  std::uint32_t off = start;
  for (int h = 0; h < warm_hops; ++h) off = load(off);
  timed_chase(off, hops, load, out);
}

// out[t] = XOR of every word of elements t, t + T, t + 2T, ... (T = threads in the grid).
__global__ void __launch_bounds__(kReadBlock)
    global_read_kernel(const uint4* __restrict__ in, std::size_t n4, std::uint32_t* __restrict__ out) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::uint32_t acc = 0;
  std::size_t i = t;
  for (; i + (kReadUnroll - 1) * stride < n4; i += kReadUnroll * stride) {
    uint4 v[kReadUnroll];
#pragma unroll
    for (int k = 0; k < kReadUnroll; ++k) v[k] = in[i + k * stride];  // all loads issued before any use
#pragma unroll
    for (int k = 0; k < kReadUnroll; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  for (; i < n4; i += stride) {
    const uint4 v = in[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  out[t] = acc;
}

inline void launch_chase_shared(const std::uint32_t* chain, int chain_words, std::uint32_t start, int hops,
                                unsigned long long* out, cudaStream_t s) {
  const std::size_t smem = static_cast<std::size_t>(chain_words) * sizeof(std::uint32_t);
  chase_shared_kernel<<<1, kChaseLoadBlock, smem, s>>>(chain, chain_words, start, hops, out);
  CUDA_CHECK_LAUNCH();
}

template <bool CacheInL1>
inline void launch_chase_global(const std::uint32_t* chain, std::uint32_t start, int warm_hops, int hops,
                                unsigned long long* out, cudaStream_t s) {
  chase_global_kernel<CacheInL1><<<1, 1, 0, s>>>(chain, start, warm_hops, hops, out);
  CUDA_CHECK_LAUNCH();
}

// Blocks that fill the GPU once (every SM at full occupancy for this kernel).
inline int global_read_blocks() {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, global_read_kernel, kReadBlock, 0));
  return sms * (per_sm > 0 ? per_sm : 1);
}

// `out` holds blocks * kReadBlock words.
inline void launch_global_read(const uint4* in, std::size_t n4, std::uint32_t* out, int blocks, cudaStream_t s) {
  global_read_kernel<<<blocks, kReadBlock, 0, s>>>(in, n4, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch03
