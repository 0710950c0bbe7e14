// The plain word copy chapter 04 uses where a kernel reads memory that is not its own; the pattern it
// fills and checks buffers with is common/pattern_kernels.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "04_transfers/kernels/transfer_pattern.hpp"
#include "common/cuda_check.hpp"
#include "common/pattern_kernels.cuh"

namespace cml::ch04 {
namespace {

__global__ void copy_words_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out,
                                  std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

inline void launch_copy_words(const std::uint32_t* in, std::uint32_t* out, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  copy_words_kernel<<<grid_stride_blocks(n), kGridStrideBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch04
