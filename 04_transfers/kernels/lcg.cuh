// The overlap demo's kernel: a chain of `steps` dependent integer multiply-adds per word. Its time grows
// linearly with `steps` and does not depend on memory bandwidth, so it can be tuned to last exactly as
// long as the transfers it overlaps with, and concurrent copies do not slow it down.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "04_transfers/kernels/lcg_reference.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch04 {
namespace {

inline constexpr int kLcgBlock = 256;

__global__ void lcg_chain_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out, std::size_t n,
                                 std::uint32_t steps) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  std::uint32_t x = in[i];
#pragma unroll 8
  for (std::uint32_t k = 0; k < steps; ++k) x = x * kLcgA + kLcgC;
  out[i] = x;
}

inline void launch_lcg_chain(const std::uint32_t* in, std::uint32_t* out, std::size_t n, std::uint32_t steps,
                             cudaStream_t s) {
  if (n == 0) return;
  const std::size_t blocks = ceil_div<std::size_t>(n, kLcgBlock);
  lcg_chain_kernel<<<static_cast<unsigned>(blocks), kLcgBlock, 0, s>>>(in, out, n, steps);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch04
