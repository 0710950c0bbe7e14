// Device side of the transfer pattern: fill a buffer with it, check a buffer against it (the check runs
// where the data is, so a 1 GB transfer is verified at HBM speed and write-combined host memory is never
// read by the CPU), and a plain word copy used where a kernel reads memory that is not its own.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "04_transfers/kernels/transfer_pattern.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"
#include "common/verify.hpp"

namespace cml::ch04 {
namespace {

inline constexpr int kBlock = 256;
// Grid-stride loops: 4096 blocks of 256 threads fill a GPU of over a hundred SMs several times over, no more.
inline constexpr std::size_t kMaxBlocks = 4096;

inline unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>(ceil_div<std::size_t>(n, kBlock), 1, kMaxBlocks));
}

__global__ void fill_pattern_kernel(std::uint32_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = pattern_word(i, seed);
}

// Expects p[i] == pattern_word(i, seed) + delta (delta: increments applied since the fill).
// counters[0] += number of wrong words; counters[1] = min(counters[1], index of the first wrong word).
__global__ void check_pattern_kernel(const std::uint32_t* p, std::size_t n, std::uint32_t seed, std::uint32_t delta,
                                     unsigned long long* counters) {
  unsigned long long bad = 0, first = ~0ull;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (p[i] != pattern_word(i, seed) + delta) {
      if (bad == 0) first = i;
      ++bad;
    }
  }
  // One atomic per thread that saw a mismatch: free when the data is right, bounded when it is not.
  if (bad != 0) {
    atomicAdd(&counters[0], bad);
    atomicMin(&counters[1], first);
  }
}

__global__ void copy_words_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out,
                                  std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

inline void launch_pattern_fill(std::uint32_t* p, std::size_t n, std::uint32_t seed, cudaStream_t s) {
  if (n == 0) return;
  fill_pattern_kernel<<<grid_for(n), kBlock, 0, s>>>(p, n, seed);
  CUDA_CHECK_LAUNCH();
}

inline void launch_pattern_check(const std::uint32_t* p, std::size_t n, std::uint32_t seed, std::uint32_t delta,
                                 unsigned long long* counters, cudaStream_t s) {
  if (n == 0) return;
  check_pattern_kernel<<<grid_for(n), kBlock, 0, s>>>(p, n, seed, delta, counters);
  CUDA_CHECK_LAUNCH();
}

inline void launch_copy_words(const std::uint32_t* in, std::uint32_t* out, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  copy_words_kernel<<<grid_for(n), kBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

// Checks n words at `p` (device memory, or host memory the device can address) against the pattern on
// the current device, and reports like compare_exact: the count and the first wrong word.
inline VerifyResult check_pattern_on_device(const std::uint32_t* p, std::size_t n, std::uint32_t seed, cudaStream_t s,
                                            std::uint32_t delta = 0) {
  DeviceBuffer<unsigned long long> counters(2);
  CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, sizeof(unsigned long long), s));
  CUDA_CHECK(cudaMemsetAsync(counters.data() + 1, 0xFF, sizeof(unsigned long long), s));
  launch_pattern_check(p, n, seed, delta, counters.data(), s);
  unsigned long long host[2] = {0, 0};
  CUDA_CHECK(cudaMemcpyAsync(host, counters.data(), sizeof host, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  VerifyResult r;
  r.checked = n;
  if (host[0] != 0) {
    std::uint32_t got = 0;
    CUDA_CHECK(cudaMemcpy(&got, p + host[1], sizeof got, cudaMemcpyDefault));
    r.add(static_cast<std::size_t>(host[1]), std::to_string(got),
          std::to_string(pattern_word(host[1], seed) + delta));
    r.mismatches = static_cast<std::size_t>(host[0]);
  }
  return r;
}

}  // namespace
}  // namespace cml::ch04
