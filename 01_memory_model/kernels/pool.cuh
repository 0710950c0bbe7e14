// Stream-ordered allocation: a guard for the default pool's release threshold, and the proof that an
// allocation is real memory (fill every word with a pattern that depends on the index and a seed, then
// count the words that do not hold it: an allocator that handed out unmapped, too small or shared
// memory fails the count, or faults under compute-sanitizer).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {
namespace {

__host__ __device__ inline std::uint32_t touch_word(std::size_t i, std::uint32_t seed) {
  return static_cast<std::uint32_t>(i * 2654435761u) ^ seed;
}

inline constexpr int kTouchBlock = 256;

// Grid-stride loops: one launch covers any size with a grid the GPU holds at once.
__global__ void touch_fill_kernel(std::uint32_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = touch_word(i, seed);
}

__global__ void touch_count_kernel(const std::uint32_t* p, std::size_t n, std::uint32_t seed,
                                   unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    mine += p[i] != touch_word(i, seed);
  if (mine != 0) atomicAdd(wrong, mine);
}

inline unsigned touch_grid(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>(ceil_div<std::size_t>(n, kTouchBlock), 1, 4096));
}

inline void launch_touch_fill(std::uint32_t* p, std::size_t n, std::uint32_t seed, cudaStream_t s) {
  touch_fill_kernel<<<touch_grid(n), kTouchBlock, 0, s>>>(p, n, seed);
  CUDA_CHECK_LAUNCH();
}

// `wrong` (device memory) is added to, not cleared.
inline void launch_touch_count(const std::uint32_t* p, std::size_t n, std::uint32_t seed, unsigned long long* wrong,
                               cudaStream_t s) {
  touch_count_kernel<<<touch_grid(n), kTouchBlock, 0, s>>>(p, n, seed, wrong);
  CUDA_CHECK_LAUNCH();
}

// Sets the default pool's release threshold for one variant, and puts it back (and trims the pool) after.
class ReleaseThreshold {
 public:
  ReleaseThreshold(int device, std::uint64_t threshold) {
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool_, device));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &old_));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
  ~ReleaseThreshold() {
    CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
    CUDA_CHECK_NOTHROW(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &old_));
    CUDA_CHECK_NOTHROW(cudaMemPoolTrimTo(pool_, 0));
  }
  ReleaseThreshold(const ReleaseThreshold&) = delete;
  ReleaseThreshold& operator=(const ReleaseThreshold&) = delete;
  std::uint64_t attribute(cudaMemPoolAttr a) const {
    std::uint64_t v = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, a, &v));
    return v;
  }

 private:
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t old_ = 0;
};

}  // namespace
}  // namespace cml::ch01
