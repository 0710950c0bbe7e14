// out[i * stride] = in[i * stride] for i < n (Best Practices 9.2.1.4, strideCopy), for any element type.
//
// Each thread copies 4 elements blockDim.x apart with all loads issued before the stores, so even the
// stride-1 copy keeps enough bytes in flight to saturate DRAM: the curve then falls because of the
// sectors each element costs, not because of latency.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>

#include "02_global_memory/kernels/load_policies.cuh"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch02 {

inline constexpr int kStrideUnroll = 4;
inline constexpr unsigned kStrideBlock = 256;

namespace {

template <class T, class Load = PlainLoad>
__global__ void strided_copy_kernel(const T* in, T* out, std::size_t n, std::size_t stride) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kStrideUnroll + threadIdx.x;
  T v[kStrideUnroll] = {};
  // [doc:unrolled_strided_copy]
#pragma unroll
  for (int k = 0; k < kStrideUnroll; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) v[k] = Load::load(in + i * stride);
  }
#pragma unroll
  for (int k = 0; k < kStrideUnroll; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) out[i * stride] = v[k];
  }
  // [/doc:unrolled_strided_copy]
}

template <class T, class Load = PlainLoad>
inline void launch_strided_copy(const T* in, T* out, std::size_t n, std::size_t stride, cudaStream_t s) {
  if (stride == 0) throw std::invalid_argument("stride must be >= 1");
  if (n == 0) return;
  const std::size_t blocks = ceil_div<std::size_t>(n, std::size_t{kStrideBlock} * kStrideUnroll);
  strided_copy_kernel<T, Load><<<static_cast<unsigned>(blocks), kStrideBlock, 0, s>>>(in, out, n, stride);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch02
