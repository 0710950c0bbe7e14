// Managed (unified) memory: __managed__ variables, the kernels the managed_memory demo runs on managed
// buffers, and version-proof wrappers for cudaMemPrefetchAsync / cudaMemAdvise (CUDA 13 takes a
// cudaMemLocation where 12.x took a device ordinal, cudaCpuDeviceId meaning the host).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "04_transfers/kernels/transfer_kernels.cuh"
#include "common/cuda_check.hpp"

namespace cml::ch04 {
namespace {

inline constexpr int kManagedCount = 1000;

// Statically allocated managed memory: the same symbol is read and written by host code and device code,
// with no cudaMemcpyToSymbol. (Internal linkage: each translation unit gets its own pair.)
__managed__ int m_values[kManagedCount];
__managed__ int m_bias;

__global__ void managed_variable_kernel() {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < kManagedCount) m_values[i] = 2 * m_values[i] + m_bias;
}

// p[i] += 1: one read and one write of every word, the GPU's turn in the CPU/GPU ping-pong.
__global__ void increment_words_kernel(std::uint32_t* p, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] += 1u;
}

inline void launch_managed_variable(cudaStream_t s) {
  managed_variable_kernel<<<ceil_div(kManagedCount, kGridStrideBlock), kGridStrideBlock, 0, s>>>();
  CUDA_CHECK_LAUNCH();
}

inline void launch_increment_words(std::uint32_t* p, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  increment_words_kernel<<<grid_stride_blocks(n), kGridStrideBlock, 0, s>>>(p, n);
  CUDA_CHECK_LAUNCH();
}

// `device` is a device ordinal or cudaCpuDeviceId (the host).
inline void prefetch_to(const void* p, std::size_t bytes, int device, cudaStream_t s) {
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device == cudaCpuDeviceId ? 0 : device;
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
#else
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, device, s));
#endif
}

inline void advise(const void* p, std::size_t bytes, cudaMemoryAdvise advice, int device) {
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
  loc.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device == cudaCpuDeviceId ? 0 : device;
  CUDA_CHECK(cudaMemAdvise(p, bytes, advice, loc));
#else
  CUDA_CHECK(cudaMemAdvise(p, bytes, advice, device));
#endif
}

}  // namespace
}  // namespace cml::ch04
