// The blog post's zero-copy experiment: a vector add whose inputs may live in device memory or in mapped
// (zero-copy) host memory. With mapped inputs every load crosses PCIe; nothing is cached between launches.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch04 {
namespace {

inline constexpr int kVectorAddBlock = 256;

// c[i] = a[i + offset] + b[i + offset]. A non-zero offset makes every warp's 128-byte load straddle
// two 128-byte lines (5 sectors instead of 4 for offset 1): the misaligned case.
// [doc:vector_add_kernel]
__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                  std::size_t n, std::size_t offset) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i + offset] + b[i + offset];
}
// [/doc:vector_add_kernel]

// a and b must hold n + offset elements; they may be device pointers or mapped host pointers.
inline void launch_vector_add(const float* a, const float* b, float* c, std::size_t n, std::size_t offset,
                              cudaStream_t s) {
  if (n == 0) return;
  const std::size_t blocks = ceil_div<std::size_t>(n, kVectorAddBlock);
  vector_add_kernel<<<static_cast<unsigned>(blocks), kVectorAddBlock, 0, s>>>(a, b, c, n, offset);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch04
