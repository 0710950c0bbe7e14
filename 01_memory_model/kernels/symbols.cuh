// Static device symbols: a __device__ scalar, a __constant__ array and a __device__ pointer.
// Internal linkage: each translation unit that includes this (the demo, the tests) owns its own copies,
// and the runtime registers them with that unit's module.
#pragma once

#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {
namespace {

inline constexpr int kCoeffCount = 16;

__device__ float g_value;                  // lives in global memory for the whole program
__constant__ float c_coeffs[kCoeffCount];  // in the 64 KB constant space: cached, broadcast to a warp
__device__ float* g_target;                // a pointer the host fills in

// One thread: the point is where the value lives, not parallelism.
// [doc:add_two_kernel]
__global__ void add_two_kernel() { g_value += 2.0f; }
// [/doc:add_two_kernel]

// [doc:scale_by_coeffs_kernel]
__global__ void scale_by_coeffs_kernel(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = c_coeffs[i % kCoeffCount] * static_cast<float>(i);
}
// [/doc:scale_by_coeffs_kernel]

__global__ void write_through_symbol_pointer_kernel(int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g_target[i] = 3.0f * static_cast<float>(i);
}

inline void launch_add_two(cudaStream_t s) {
  add_two_kernel<<<1, 1, 0, s>>>();
  CUDA_CHECK_LAUNCH();
}

inline void launch_scale_by_coeffs(float* out, int n, cudaStream_t s) {
  scale_by_coeffs_kernel<<<ceil_div(n, 256), 256, 0, s>>>(out, n);
  CUDA_CHECK_LAUNCH();
}

inline void launch_write_through_symbol_pointer(int n, cudaStream_t s) {
  write_through_symbol_pointer_kernel<<<ceil_div(n, 256), 256, 0, s>>>(n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch01
