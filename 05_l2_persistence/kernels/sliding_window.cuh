// Kernels of the L2 persistence chapter: the sliding-window workload of Best Practices 9.2.2 (a small table
// read and written on every pass, a large stream read once), a read-only re-read of a working set, and the fill
// kernel that writes the hashed input data. Each has a launcher; the sliding window also has the two other ways
// to attach an access-policy window: per launch (cudaLaunchKernelEx) and per graph kernel node.
//
// Both workloads use persistent threads: thread t owns the elements k = t, t + threads, ... for the whole
// launch. Owning means no two threads ever touch one table entry (no atomics, no races between passes), and
// the same element always goes through the same SM.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "05_l2_persistence/kernels/sliding_window_reference.hpp"
#include "05_l2_persistence/l2_plan.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch05 {
namespace {

inline constexpr unsigned kBlock = 256;

__global__ void fill_elements_kernel(uint4* out, std::size_t n, std::uint64_t first, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride)
    out[e] = element_value(first + e, seed);
}

// How the kernel loads the stream: plain loads, or __ldcs ("cache streaming": evict-first in L1 and L2), the
// per-load hint that tells the cache the same thing a window's missProp = streaming says, without a set-aside.
enum class StreamLoad { normal, evict_first };

// [doc:stream_load_hint]
template <StreamLoad kLoad>
__device__ __forceinline__ uint4 load_stream(const uint4* p) {
  if constexpr (kLoad == StreamLoad::evict_first) return __ldcs(p);
  else return *p;
}
// [/doc:stream_load_hint]

// [doc:sliding_window_kernel]
// `passes` passes; pass r reads chunk r of the stream (chunk_n elements) once and read-modify-writes every
// table entry once: table[k] += chunk_r[i] for all i = k (mod table_n). Entry k has chunk_n / table_n such
// elements, plus one if k < chunk_n % table_n; they are loaded four at a time with no bounds check in between,
// so four 16-byte loads (five with the table's) are in flight per thread before the first add needs one.
template <StreamLoad kLoad>
__global__ void sliding_window_kernel(uint4* __restrict__ table, std::size_t table_n,
                                      const uint4* __restrict__ stream, std::size_t chunk_n, int passes) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t whole = chunk_n / table_n, extra = chunk_n % table_n;
  for (int r = 0; r < passes; ++r) {
    const uint4* chunk = stream + static_cast<std::size_t>(r) * chunk_n;
    for (std::size_t k = t; k < table_n; k += threads) {
      uint4 acc = table[k];
      const std::size_t count = whole + (k < extra ? 1 : 0);
      const uint4* p = chunk + k;
      std::size_t j = 0;
      for (; j + 4 <= count; j += 4, p += 4 * table_n) {
        const uint4 a = load_stream<kLoad>(p), b = load_stream<kLoad>(p + table_n),
                    c = load_stream<kLoad>(p + 2 * table_n), d = load_stream<kLoad>(p + 3 * table_n);
        add_to(acc, a);
        add_to(acc, b);
        add_to(acc, c);
        add_to(acc, d);
      }
      for (; j < count; ++j, p += table_n) add_to(acc, load_stream<kLoad>(p));
      table[k] = acc;
    }
  }
}
// [/doc:sliding_window_kernel]

// The kernel every window in this chapter is attached to.
inline constexpr auto* kSlidingWindowKernel = &sliding_window_kernel<StreamLoad::normal>;

// Reads data[0, n) `passes` times; out[t] = fold of the elements thread t owns, pass after pass. Four loads
// at a time, as above: the fold is a dependent chain, the loads feeding it are not.
__global__ void reread_kernel(const uint4* __restrict__ data, std::size_t n, int passes, uint4* __restrict__ out) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t count = t < n ? (n - 1 - t) / threads + 1 : 0;
  uint4 acc{0, 0, 0, 0};
  for (int r = 0; r < passes; ++r) {
    const uint4* p = data + t;
    std::size_t j = 0;
    for (; j + 4 <= count; j += 4, p += 4 * threads) {
      const uint4 a = p[0], b = p[threads], c = p[2 * threads], d = p[3 * threads];
      fold_into(acc, a);
      fold_into(acc, b);
      fold_into(acc, c);
      fold_into(acc, d);
    }
    for (; j < count; ++j, p += threads) fold_into(acc, *p);
  }
  out[t] = acc;
}

// Blocks of `kernel` (kBlock threads) that fit on the whole device at once.
inline unsigned resident_blocks(const void* kernel, int sm_count) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(kBlock), 0));
  return static_cast<unsigned>(per_sm > 0 ? per_sm : 1) * static_cast<unsigned>(sm_count);
}
inline unsigned sliding_window_resident_blocks(int sm_count) {
  return resident_blocks(reinterpret_cast<const void*>(kSlidingWindowKernel), sm_count);
}
inline unsigned reread_resident_blocks(int sm_count) {
  return resident_blocks(reinterpret_cast<const void*>(&reread_kernel), sm_count);
}

inline void launch_fill_elements(uint4* out, std::size_t n, std::uint64_t first, std::uint32_t seed, cudaStream_t s) {
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(ceil_div<std::size_t>(n, kBlock), 65536));
  fill_elements_kernel<<<blocks, kBlock, 0, s>>>(out, n, first, seed);
  CUDA_CHECK_LAUNCH();
}

// Grid of the sliding window: at most max_blocks, balanced so every thread owns the same number of entries.
inline unsigned sliding_window_blocks(std::size_t table_n, unsigned max_blocks) {
  return balanced_blocks(table_n, max_blocks, kBlock);
}

// table_n >= 1; stream holds passes * chunk_n elements (chunk_n may be 0).
inline void launch_sliding_window(uint4* table, std::size_t table_n, const uint4* stream, std::size_t chunk_n,
                                  int passes, unsigned max_blocks, cudaStream_t s) {
  kSlidingWindowKernel<<<sliding_window_blocks(table_n, max_blocks), kBlock, 0, s>>>(table, table_n, stream, chunk_n,
                                                                                     passes);
  CUDA_CHECK_LAUNCH();
}

// The same launch with the stream loaded evict-first (__ldcs): no window, no set-aside.
inline void launch_sliding_window_evict_first(uint4* table, std::size_t table_n, const uint4* stream,
                                              std::size_t chunk_n, int passes, unsigned max_blocks, cudaStream_t s) {
  sliding_window_kernel<StreamLoad::evict_first>
      <<<sliding_window_blocks(table_n, max_blocks), kBlock, 0, s>>>(table, table_n, stream, chunk_n, passes);
  CUDA_CHECK_LAUNCH();
}

// The same launch with an access-policy window attached to this launch only: nothing is left on the stream.
inline void launch_sliding_window_with_window(uint4* table, std::size_t table_n, const uint4* stream,
                                              std::size_t chunk_n, int passes, unsigned max_blocks,
                                              const cudaAccessPolicyWindow& window, cudaStream_t s) {
  // [doc:launch_attribute]
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeAccessPolicyWindow;
  attr.val.accessPolicyWindow = window;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(sliding_window_blocks(table_n, max_blocks));
  config.blockDim = dim3(kBlock);
  config.dynamicSmemBytes = 0;
  config.stream = s;
  config.attrs = &attr;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kSlidingWindowKernel, table, table_n, stream, chunk_n, passes));
  // [/doc:launch_attribute]
}

// Adds the same launch to `graph` as a kernel node with no dependencies and returns the node (the arguments
// are copied into the node, so they need not outlive this call).
inline cudaGraphNode_t add_sliding_window_node(cudaGraph_t graph, uint4* table, std::size_t table_n,
                                               const uint4* stream, std::size_t chunk_n, int passes,
                                               unsigned max_blocks) {
  void* args[] = {&table, &table_n, &stream, &chunk_n, &passes};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(kSlidingWindowKernel);
  p.gridDim = dim3(sliding_window_blocks(table_n, max_blocks));
  p.blockDim = dim3(kBlock);
  p.sharedMemBytes = 0;
  p.kernelParams = args;
  p.extra = nullptr;
  cudaGraphNode_t node = nullptr;
  CUDA_CHECK(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &p));
  return node;
}

inline unsigned reread_blocks(std::size_t n, unsigned max_blocks) { return balanced_blocks(n, max_blocks, kBlock); }

// `out` must hold blocks * kBlock elements (one per thread).
inline void launch_reread(const uint4* data, std::size_t n, int passes, uint4* out, unsigned blocks, cudaStream_t s) {
  reread_kernel<<<blocks, kBlock, 0, s>>>(data, n, passes, out);
  CUDA_CHECK_LAUNCH();
}

inline void launch_reread_with_window(const uint4* data, std::size_t n, int passes, uint4* out, unsigned blocks,
                                      const cudaAccessPolicyWindow& window, cudaStream_t s) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeAccessPolicyWindow;
  attr.val.accessPolicyWindow = window;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kBlock);
  config.stream = s;
  config.attrs = &attr;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, reread_kernel, data, n, passes, out));
}

}  // namespace
}  // namespace cml::ch05
