// Capping how many blocks of a kernel share an SM: reserve dynamic shared memory that the blocks never touch,
// so that no more than the wanted number fit. Used where fewer blocks in flight run faster (the capped
// transposes of chapter 03, the one-request-per-block TMA copy).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/cuda_check.hpp"

namespace cml {

// Raises `kernel`'s dynamic shared-memory limit to the most one block of it may have on the current device
// (the per-block opt-in limit less the kernel's static shared memory) and returns that most. Raised to the
// most rather than to one size: a kernel launched with several sizes would otherwise refuse the launches of
// a larger size set up before a smaller one.
template <class Kernel>
std::size_t allow_most_dynamic_shared(Kernel kernel) {
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const std::size_t most = std::size_t(optin) > attr.sharedSizeBytes ? std::size_t(optin) - attr.sharedSizeBytes : 0;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(most)));
  return most;
}

// The dynamic shared memory to launch `kernel` with, `threads` threads per block, so that at most `per_sm` of
// its blocks fit on an SM of the current device: `used` (what the kernel itself takes) when no more than that
// fit anyway, else the smallest larger size, searched in 256-byte steps up to the device's per-block limit.
// Raises the kernel's dynamic shared-memory limit to that limit (allow_most_dynamic_shared).
template <class Kernel>
std::size_t shared_reserve_for(Kernel kernel, int threads, int per_sm, std::size_t used = 0) {
  const std::size_t most = allow_most_dynamic_shared(kernel);
  int fit = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, threads, used));
  if (fit <= per_sm) return used;
  for (std::size_t bytes = used + 256; bytes <= most; bytes += 256) {
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, threads, bytes));
    if (fit <= per_sm) return bytes;
  }
  return most;
}

}  // namespace cml
