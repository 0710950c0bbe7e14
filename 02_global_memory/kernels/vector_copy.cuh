// out[i] = in[i] for elements of 1, 2, 4, 8 or 16 bytes: one element per thread, or a grid-stride loop
// over one full wave of blocks. Plain pointers, no unrolling: the access width is the only thing that
// changes how many bytes each thread keeps in flight.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch02 {

// [doc:copy_block]
inline constexpr unsigned kCopyBlock = 256;
// [/doc:copy_block]

namespace {

// [doc:copy_kernels]
template <class T>
__global__ void copy_per_thread_kernel(const T* in, T* out, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

template <class T>
__global__ void copy_grid_stride_kernel(const T* in, T* out, std::size_t n) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = in[i];
}
// [/doc:copy_kernels]

template <class T>
inline void launch_copy_per_thread(const T* in, T* out, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  const std::size_t blocks = ceil_div<std::size_t>(n, kCopyBlock);
  copy_per_thread_kernel<T><<<static_cast<unsigned>(blocks), kCopyBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

// Blocks that fit on the current device at once: the grid of a grid-stride loop.
template <class T>
inline unsigned grid_stride_blocks() {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, copy_grid_stride_kernel<T>, kCopyBlock, 0));
  return static_cast<unsigned>(sms * per_sm);
}

template <class T>
inline void launch_copy_grid_stride(const T* in, T* out, std::size_t n, unsigned blocks, cudaStream_t s) {
  if (n == 0) return;
  copy_grid_stride_kernel<T><<<blocks, kCopyBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch02
