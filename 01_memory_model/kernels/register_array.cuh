// Registers vs local memory: one per-thread array, the same arithmetic, two ways of indexing it.
//
// Registers cannot be indexed at run time: an array stays in registers only if every index is known at
// compile time (here: fully unrolled loops). A loop the compiler does not unroll indexes the array with
// a run-time value, so the whole array goes to *local memory* (per-thread, in device memory, cached in
// L1/L2). Both kernels compute exactly the same unsigned (wrapping) result.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {

inline constexpr int kRegArray = 32;   // elements per thread: 32 live values, all needed every round
inline constexpr int kRegRounds = 16;  // a[j] = 3 a[j] + a[(j+1) % N] for j = 0..N-1, 16 times
inline constexpr int kRegBlock = 256;

// CPU reference, element for element the same operations as the kernels.
inline std::uint32_t register_array_reference(std::uint32_t seed) {
  std::uint32_t a[kRegArray];
  for (int j = 0; j < kRegArray; ++j) a[j] = seed + static_cast<std::uint32_t>(j) * 0x9E3779B9u;
  for (int r = 0; r < kRegRounds; ++r)
    for (int j = 0; j < kRegArray; ++j) a[j] = a[j] * 3u + a[(j + 1) % kRegArray];
  std::uint32_t h = 0;
  for (int j = 0; j < kRegArray; ++j) h = h * 31u + a[j];
  return h;
}

inline std::vector<std::uint32_t> register_array_reference(const std::vector<std::uint32_t>& seeds) {
  std::vector<std::uint32_t> out(seeds.size());
  for (std::size_t i = 0; i < seeds.size(); ++i) out[i] = register_array_reference(seeds[i]);
  return out;
}

namespace {

// Every index a compile-time constant: the array is 32 registers.
__device__ __forceinline__ unsigned array_in_registers(unsigned seed) {
  unsigned a[kRegArray];
#pragma unroll
  for (int j = 0; j < kRegArray; ++j) a[j] = seed + static_cast<unsigned>(j) * 0x9E3779B9u;
#pragma unroll 1
  for (int r = 0; r < kRegRounds; ++r) {
#pragma unroll
    for (int j = 0; j < kRegArray; ++j) a[j] = a[j] * 3u + a[(j + 1) % kRegArray];
  }
  unsigned h = 0;
#pragma unroll
  for (int j = 0; j < kRegArray; ++j) h = h * 31u + a[j];
  return h;
}

// The same code with the inner loops left rolled: `j` is a run-time value, so a[] lives in local memory.
__device__ __forceinline__ unsigned array_in_local_memory(unsigned seed) {
  unsigned a[kRegArray];
#pragma unroll 1
  for (int j = 0; j < kRegArray; ++j) a[j] = seed + static_cast<unsigned>(j) * 0x9E3779B9u;
  // [doc:rolled_register_loop]
#pragma unroll 1
  for (int r = 0; r < kRegRounds; ++r) {
#pragma unroll 1
    for (int j = 0; j < kRegArray; ++j) a[j] = a[j] * 3u + a[(j + 1) % kRegArray];
  }
  // [/doc:rolled_register_loop]
  unsigned h = 0;
#pragma unroll 1
  for (int j = 0; j < kRegArray; ++j) h = h * 31u + a[j];
  return h;
}

__global__ void array_registers_kernel(const unsigned* __restrict__ seeds, unsigned* __restrict__ out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = array_in_registers(seeds[i]);
}

__global__ void array_local_kernel(const unsigned* __restrict__ seeds, unsigned* __restrict__ out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = array_in_local_memory(seeds[i]);
}

// The register kernel promised to run 8 blocks of 256 threads per SM. Where an SM holds 2048 threads
// that leaves 65536 / 2048 = 32 registers per thread, fewer than the 32-element array plus its
// bookkeeping needs, so ptxas spills. Where an SM holds fewer threads, ptxas drops the promise (and says
// so when it compiles for that GPU) and the thread keeps the registers it wants (launch_bounds.hpp).
// [doc:bounded_min_blocks]
inline constexpr int kBoundedMinBlocks = 8;
// [/doc:bounded_min_blocks]
__global__ void __launch_bounds__(kRegBlock, kBoundedMinBlocks)
    array_registers_bounded_kernel(const unsigned* __restrict__ seeds, unsigned* __restrict__ out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = array_in_registers(seeds[i]);
}

using RegisterArrayKernel = void (*)(const unsigned*, unsigned*, unsigned);

inline void launch_register_array(RegisterArrayKernel kernel, const unsigned* seeds, unsigned* out, unsigned n,
                                  cudaStream_t s) {
  if (n == 0) return;
  kernel<<<ceil_div<unsigned>(n, kRegBlock), kRegBlock, 0, s>>>(seeds, out, n);
  CUDA_CHECK_LAUNCH();
}

inline void launch_array_registers(const unsigned* seeds, unsigned* out, unsigned n, cudaStream_t s) {
  launch_register_array(array_registers_kernel, seeds, out, n, s);
}
inline void launch_array_local(const unsigned* seeds, unsigned* out, unsigned n, cudaStream_t s) {
  launch_register_array(array_local_kernel, seeds, out, n, s);
}
inline void launch_array_registers_bounded(const unsigned* seeds, unsigned* out, unsigned n, cudaStream_t s) {
  launch_register_array(array_registers_bounded_kernel, seeds, out, n, s);
}

inline cudaFuncAttributes function_attributes(RegisterArrayKernel kernel) {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  return a;
}

}  // namespace
}  // namespace cml::ch01
