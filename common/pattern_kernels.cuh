// Device side of the pattern (pattern.hpp): fill a buffer with it, and check a buffer against it where the
// data is, so a 1 GB buffer is verified at HBM speed and memory the CPU reads slowly (write-combined host
// memory) is never read by the CPU.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/cuda_check.hpp"
#include "common/pattern.hpp"
#include "common/resources.hpp"
#include "common/verify.hpp"

namespace cml {
namespace {

inline constexpr int kGridStrideBlock = 256;
// Grid-stride loops: 4096 blocks of 256 threads fill a GPU of over a hundred SMs several times over, no more.
inline constexpr std::size_t kGridStrideMaxBlocks = 4096;

// Blocks of kGridStrideBlock threads for a grid-stride loop over n items.
inline unsigned grid_stride_blocks(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>(ceil_div<std::size_t>(n, kGridStrideBlock), 1, kGridStrideMaxBlocks));
}

__global__ void fill_pattern_kernel(std::uint32_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = pattern_word(i, seed);
}

__global__ void fill_random_floats_kernel(float* p, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = random_float(i);
}

// Expects p[i] == word(i) for every i (word: a functor callable on the device).
// counters[0] += number of wrong words; counters[1] = min(counters[1], index of the first wrong word).
template <class Word>
__global__ void check_words_kernel(const std::uint32_t* p, std::size_t n, Word word, unsigned long long* counters) {
  unsigned long long bad = 0, first = ~0ull;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (p[i] != word(i)) {
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

// The pattern plus `delta` (increments applied since the fill), as check_words_kernel takes it.
struct PatternWord {
  std::uint32_t seed = 0, delta = 0;
  CML_HD std::uint32_t operator()(std::uint64_t i) const { return pattern_word(i, seed) + delta; }
};

inline void launch_pattern_fill(std::uint32_t* p, std::size_t n, std::uint32_t seed, cudaStream_t s) {
  if (n == 0) return;
  fill_pattern_kernel<<<grid_stride_blocks(n), kGridStrideBlock, 0, s>>>(p, n, seed);
  CUDA_CHECK_LAUNCH();
}

// p[i] = random_float(i), written on the device: benchmark data for a buffer that is only read, at HBM speed.
inline void launch_random_fill(float* p, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  fill_random_floats_kernel<<<grid_stride_blocks(n), kGridStrideBlock, 0, s>>>(p, n);
  CUDA_CHECK_LAUNCH();
}

// Checks n words at `p` (device memory, or host memory the device can address) against word(i) on the
// current device, and reports like compare_exact: the count and the first wrong word.
template <class Word>
VerifyResult check_words_on_device(const std::uint32_t* p, std::size_t n, Word word, cudaStream_t s) {
  DeviceBuffer<unsigned long long> counters(2);
  CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, sizeof(unsigned long long), s));
  CUDA_CHECK(cudaMemsetAsync(counters.data() + 1, 0xFF, sizeof(unsigned long long), s));
  if (n != 0) {
    check_words_kernel<<<grid_stride_blocks(n), kGridStrideBlock, 0, s>>>(p, n, word, counters.data());
    CUDA_CHECK_LAUNCH();
  }
  unsigned long long host[2] = {0, 0};
  CUDA_CHECK(cudaMemcpyAsync(host, counters.data(), sizeof host, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  VerifyResult r;
  r.checked = n;
  if (host[0] != 0) {
    std::uint32_t got = 0;
    CUDA_CHECK(cudaMemcpy(&got, p + host[1], sizeof got, cudaMemcpyDefault));
    r.add(static_cast<std::size_t>(host[1]), std::to_string(got), std::to_string(word(host[1])));
    r.mismatches = static_cast<std::size_t>(host[0]);
  }
  return r;
}

// The same against the pattern plus `delta`.
inline VerifyResult check_pattern_on_device(const std::uint32_t* p, std::size_t n, std::uint32_t seed, cudaStream_t s,
                                            std::uint32_t delta = 0) {
  return check_words_on_device(p, n, PatternWord{seed, delta}, s);
}

}  // namespace
}  // namespace cml
