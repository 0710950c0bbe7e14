// Copy kernels that define the suite's bandwidth ceiling (copy_vec4 is the one Context::copy_ceiling uses) (01_memory_model/bandwidth_ceiling measures
// them against cudaMemcpy; other demos report their bandwidth as a fraction of the same ceiling).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml {
// Internal linkage: the header is included by several translation units (demos, tests, the harness).
namespace {

// One float per thread: the simplest coalesced copy.
__global__ void copy_scalar_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// One 16-byte float4 per thread: a quarter of the instructions for the same bytes.
// The last n % 4 floats are copied by the first threads of the grid.
// [doc:copy_vec4_kernel]
__global__ void copy_vec4_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t n4 = n / 4;
  if (i < n4) reinterpret_cast<float4*>(out)[i] = reinterpret_cast<const float4*>(in)[i];
  const std::size_t tail = n - n4 * 4;
  if (i < tail) out[n4 * 4 + i] = in[n4 * 4 + i];
}
// [/doc:copy_vec4_kernel]

// UNROLL float4 loads per thread, all issued before the first store, so each thread keeps
// UNROLL x 16 bytes in flight. Each of the UNROLL steps is still coalesced. It is not faster than one
// float4 per thread (bandwidth_ceiling's more_ilp_buys_nothing): with one float4 per thread the grid
// already has enough 16-byte loads in flight, and a smaller grid leaves fewer blocks to hide the tail.
template <int UNROLL>
__global__ void copy_vec4_ilp_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n) {
  const std::size_t n4 = n / 4;
  const float4* in4 = reinterpret_cast<const float4*>(in);
  float4* out4 = reinterpret_cast<float4*>(out);
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * UNROLL + threadIdx.x;
  float4 v[UNROLL];
#pragma unroll
  for (int k = 0; k < UNROLL; ++k) {
    const std::size_t j = base + static_cast<std::size_t>(k) * blockDim.x;
    if (j < n4) v[k] = in4[j];
  }
#pragma unroll
  for (int k = 0; k < UNROLL; ++k) {
    const std::size_t j = base + static_cast<std::size_t>(k) * blockDim.x;
    if (j < n4) out4[j] = v[k];
  }
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t tail = n - n4 * 4;
  if (i < tail) out[n4 * 4 + i] = in[n4 * 4 + i];
}

inline constexpr int kCopyBlock = 256;

inline void launch_copy_scalar(const float* in, float* out, std::size_t n, cudaStream_t s) {
  const std::size_t blocks = ceil_div<std::size_t>(n, kCopyBlock);
  copy_scalar_kernel<<<static_cast<unsigned>(blocks), kCopyBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

inline void launch_copy_vec4(const float* in, float* out, std::size_t n, cudaStream_t s) {
  const std::size_t threads = std::max<std::size_t>(n / 4, 4);
  const std::size_t blocks = ceil_div<std::size_t>(threads, kCopyBlock);
  copy_vec4_kernel<<<static_cast<unsigned>(blocks), kCopyBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

template <int UNROLL>
inline void launch_copy_vec4_ilp(const float* in, float* out, std::size_t n, cudaStream_t s) {
  const std::size_t per_block = static_cast<std::size_t>(kCopyBlock) * UNROLL;
  const std::size_t blocks = std::max<std::size_t>(ceil_div<std::size_t>(n / 4, per_block), 1);
  copy_vec4_ilp_kernel<UNROLL><<<static_cast<unsigned>(blocks), kCopyBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml
