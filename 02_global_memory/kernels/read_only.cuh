// c[i] = a[i] + b[i] written the way one naturally writes it (one statement per element), with plain
// pointers, with __ldg, and with const __restrict__ pointers. PerThread elements per thread, blockDim.x
// apart. The hand-scheduled form (all loads first) is offset_add_unroll4_kernel with offsets 0.
//
// sm_90 SASS (nvcc 13.0): the plain kernel uses LDG.E and, with PerThread = 4, issues the two loads of
// element k + 1 only after the store of element k, because c might alias a or b. __ldg and
// const __restrict__ both give LDG.E.CONSTANT and let the compiler hoist loads above stores: six of the
// eight loads are issued before the first store.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "02_global_memory/kernels/load_policies.cuh"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch02 {
namespace {

// [doc:add_kernel]
template <int PerThread, class Load>
__global__ void add_kernel(const float* a, const float* b, float* c, std::size_t n) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * PerThread + threadIdx.x;
#pragma unroll
  for (int k = 0; k < PerThread; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) c[i] = Load::load(a + i) + Load::load(b + i);
  }
}
// [/doc:add_kernel]

template <int PerThread>
__global__ void add_restrict_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                    std::size_t n) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * PerThread + threadIdx.x;
#pragma unroll
  for (int k = 0; k < PerThread; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) c[i] = a[i] + b[i];
  }
}

inline unsigned add_blocks(std::size_t n, unsigned block, int per_thread) {
  return static_cast<unsigned>(ceil_div<std::size_t>(n, static_cast<std::size_t>(block) * per_thread));
}

template <int PerThread, class Load>
inline void launch_add(const float* a, const float* b, float* c, std::size_t n, unsigned block, cudaStream_t s) {
  if (n == 0) return;
  add_kernel<PerThread, Load><<<add_blocks(n, block, PerThread), block, 0, s>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

template <int PerThread>
inline void launch_add_restrict(const float* a, const float* b, float* c, std::size_t n, unsigned block,
                                cudaStream_t s) {
  if (n == 0) return;
  add_restrict_kernel<PerThread><<<add_blocks(n, block, PerThread), block, 0, s>>>(a, b, c, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch02
