// A kernel that needs a lot of dynamic shared memory: each block reverses a chunk of `chunk` floats
// through shared memory, so it asks for chunk * 4 bytes at launch. Above 48 KB per block that request is
// refused unless the function opted in with cudaFuncAttributeMaxDynamicSharedMemorySize.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {

// CPU reference: every chunk of `chunk` elements reversed in place; the last, shorter chunk too.
inline std::vector<float> reverse_chunks_reference(const std::vector<float>& in, std::size_t chunk) {
  std::vector<float> out(in.size());
  for (std::size_t base = 0; base < in.size(); base += chunk) {
    const std::size_t len = in.size() - base < chunk ? in.size() - base : chunk;
    for (std::size_t j = 0; j < len; ++j) out[base + j] = in[base + len - 1 - j];
  }
  return out;
}

namespace {

inline constexpr int kReverseBlock = 512;

// Grid-stride over chunks; the shared buffer is reused, so it is fenced before each refill as well as
// between the write and the read.
__global__ void __launch_bounds__(kReverseBlock)
    reverse_chunks_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t n, unsigned chunk) {
  extern __shared__ float buf[];
  const std::size_t chunks = (n + chunk - 1) / chunk;
  for (std::size_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const std::size_t base = c * chunk;
    const unsigned len = static_cast<unsigned>(n - base < chunk ? n - base : chunk);
    __syncthreads();  // the previous chunk has been read out of buf
    for (unsigned j = threadIdx.x; j < len; j += kReverseBlock) buf[j] = in[base + j];
    __syncthreads();  // the whole chunk is in buf
    for (unsigned j = threadIdx.x; j < len; j += kReverseBlock) out[base + j] = buf[len - 1 - j];
  }
}

inline std::size_t reverse_chunks_smem_bytes(unsigned chunk) { return std::size_t{chunk} * sizeof(float); }

// Launches with chunk * 4 bytes of dynamic shared memory. Throws CudaError (cudaErrorInvalidValue) when
// that exceeds what the function is allowed: the launch fails cleanly and nothing runs.
inline void launch_reverse_chunks(const float* in, float* out, std::size_t n, unsigned chunk, unsigned max_blocks,
                                  cudaStream_t s) {
  if (n == 0) return;
  const std::size_t cap = max_blocks != 0 ? max_blocks : 0x7fffffffu;
  const std::size_t chunks = ceil_div<std::size_t>(n, chunk);
  const auto grid = static_cast<unsigned>(chunks < cap ? chunks : cap);
  reverse_chunks_kernel<<<grid, kReverseBlock, reverse_chunks_smem_bytes(chunk), s>>>(in, out, n, chunk);
  CUDA_CHECK_LAUNCH();
}

// Opt in to `bytes` of dynamic shared memory per block for this kernel (a requirement, not a hint).
inline void allow_reverse_chunks_smem(std::size_t bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(reverse_chunks_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
}

inline cudaFuncAttributes reverse_chunks_attributes() {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, reverse_chunks_kernel));
  return a;
}

}  // namespace
}  // namespace cml::ch01
