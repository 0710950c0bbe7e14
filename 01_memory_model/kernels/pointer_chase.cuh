// Device side of the latency ladder: one thread follows a chain of dependent loads, so every load waits
// for the previous one and the time per hop is the load-to-use latency of wherever the line was found.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "01_memory_model/kernels/pointer_chase.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {
namespace {

inline constexpr std::size_t kChaseWordsPerLine = kChaseLineBytes / sizeof(unsigned long long);

// Where a chase stands between launches. Each launch continues from `cursor`, so successive launches
// walk the whole cycle instead of re-reading its first `hops` lines (which would fit in a cache).
struct ChaseState {
  unsigned long long cursor;  // global chase: the address of the current line; shared chase: the node index
  long long cycles;           // clock64() cycles spent in the last launch's timed loop
};

// Writes the chain: the first 8 bytes of line i get the address of line next[i].
__global__ void build_chase_kernel(unsigned long long* lines, const std::uint32_t* next, std::size_t nodes) {
  const auto base = reinterpret_cast<unsigned long long>(lines);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < nodes; i += stride)
    lines[i * kChaseWordsPerLine] = base + static_cast<unsigned long long>(next[i]) * kChaseLineBytes;
}

// One thread, `warm_hops` + `hops` dependent loads; clock64() brackets only the last `hops`. The loaded
// value *is* the next address: no arithmetic sits between two loads, so the loop measures load-to-use
// latency alone. __ldca = ld.global.ca, "cache at all levels" (what a plain global load does on sm_70+),
// spelled out so the L1 plateau is not an accident. The untimed warm-up walk exists because successive
// launches may run on different SMs: it brings an L1-sized working set into *this* SM's L1 first.
// [doc:global_chase_kernel]
__global__ void global_chase_kernel(ChaseState* state, unsigned warm_hops, unsigned hops) {
  unsigned long long p = state->cursor;
  for (unsigned k = 0; k < warm_hops; ++k) p = __ldca(reinterpret_cast<const unsigned long long*>(p));
  const long long start = clock64();
  for (unsigned k = 0; k < hops; ++k) p = __ldca(reinterpret_cast<const unsigned long long*>(p));
  const long long stop = clock64();
  state->cursor = p;  // stored: the chain is the result, so the compiler cannot drop the loads
  state->cycles = stop - start;
}
// [/doc:global_chase_kernel]

// The same chase through shared memory. The block copies the chain in (as shared-window addresses),
// then thread 0 alone chases it. Inline PTX keeps it one ld.shared per hop with nothing in between.
__global__ void shared_chase_kernel(const std::uint32_t* next, unsigned nodes, ChaseState* state, unsigned hops) {
  extern __shared__ std::uint32_t chain[];
  const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(chain));
  for (unsigned i = threadIdx.x; i < nodes; i += blockDim.x) chain[i] = base + next[i] * 4u;
  __syncthreads();
  if (threadIdx.x != 0) return;
  std::uint32_t p = base + static_cast<std::uint32_t>(state->cursor) * 4u;
  const long long start = clock64();
  for (unsigned k = 0; k < hops; ++k) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p) : : "memory");
  const long long stop = clock64();
  state->cursor = (p - base) / 4u;
  state->cycles = stop - start;
}

inline constexpr int kChaseBuildBlock = 256;

inline void launch_build_chase(unsigned long long* lines, const std::uint32_t* next, std::size_t nodes,
                               cudaStream_t s) {
  const std::size_t blocks = ceil_div<std::size_t>(nodes, kChaseBuildBlock);
  build_chase_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kChaseBuildBlock, 0, s>>>(lines, next,
                                                                                                         nodes);
  CUDA_CHECK_LAUNCH();
}

inline void launch_global_chase(ChaseState* state, unsigned warm_hops, unsigned hops, cudaStream_t s) {
  global_chase_kernel<<<1, 1, 0, s>>>(state, warm_hops, hops);
  CUDA_CHECK_LAUNCH();
}

// `nodes` 4-byte entries of dynamic shared memory: at most 12288 without opting in beyond 48 KB.
inline void launch_shared_chase(const std::uint32_t* next, unsigned nodes, ChaseState* state, unsigned hops,
                                cudaStream_t s) {
  shared_chase_kernel<<<1, 256, nodes * sizeof(std::uint32_t), s>>>(next, nodes, state, hops);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch01
