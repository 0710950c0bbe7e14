// The book's matrix sum C = A + B on an nx x ny float matrix, 32 x 32 threads per block, one element per
// thread (sumMatrixGPU of sumMatrixGPUManaged.cu / sumMatrixGPUManual.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch02 {

inline constexpr unsigned kMatrixBlock = 32;

namespace {

__global__ void sum_matrix_kernel(const float* a, const float* b, float* c, unsigned nx, unsigned ny) {
  const unsigned ix = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned iy = blockIdx.y * blockDim.y + threadIdx.y;
  if (ix < nx && iy < ny) {
    const std::size_t i = static_cast<std::size_t>(iy) * nx + ix;
    c[i] = a[i] + b[i];
  }
}

inline void launch_sum_matrix(const float* a, const float* b, float* c, unsigned nx, unsigned ny, cudaStream_t s) {
  if (nx == 0 || ny == 0) return;
  const dim3 block(kMatrixBlock, kMatrixBlock);
  const dim3 grid(ceil_div(nx, kMatrixBlock), ceil_div(ny, kMatrixBlock));
  sum_matrix_kernel<<<grid, block, 0, s>>>(a, b, c, nx, ny);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch02
