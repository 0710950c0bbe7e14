// C[i + w] = A[i + r] + B[i + r] for i < n: the blog post's misaligned-read kernel (w = 0), its
// misaligned-write kernel (r = 0), and both sides misaligned (r = w) in one body.
//
// Every buffer holds n + kMaxOffset elements (offset_add_reference.hpp), so any offset up to kMaxOffset
// stays in bounds.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>

#include "02_global_memory/kernels/load_policies.cuh"
#include "02_global_memory/kernels/offset_add_reference.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch02 {

// [doc:offset_unroll]
inline constexpr int kOffsetUnroll = 4;
// [/doc:offset_unroll]
inline constexpr unsigned kSeedBlock = 512;  // the blog post's block size

namespace {

// [doc:offset_add_kernel]
// One element per thread: the blog post's kernel. Each thread has one 4-byte load per array in flight.
template <class Load = PlainLoad>
__global__ void offset_add_kernel(const float* a, const float* b, float* c, std::size_t n, unsigned r, unsigned w) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i + w] = Load::load(a + i + r) + Load::load(b + i + r);
}
// [/doc:offset_add_kernel]

// Four elements per thread, blockDim.x apart, so every one of the four warp instructions is still
// 32 consecutive elements. All eight loads are issued before the first store: written as
// "c[i] = a[i] + b[i]" four times, the compiler would have to wait for each store before the next
// loads (c might alias a or b), and the thread would keep only two loads in flight again.
// Each element has its own bounds check, so n need not be a multiple of 4 * blockDim.x.
template <class Load = PlainLoad>
__global__ void offset_add_unroll4_kernel(const float* a, const float* b, float* c, std::size_t n, unsigned r,
                                          unsigned w) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kOffsetUnroll + threadIdx.x;
  float va[kOffsetUnroll] = {};
  float vb[kOffsetUnroll] = {};
  // [doc:unrolled_offset_add]
#pragma unroll
  for (int k = 0; k < kOffsetUnroll; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) {
      va[k] = Load::load(a + i + r);
      vb[k] = Load::load(b + i + r);
    }
  }
#pragma unroll
  for (int k = 0; k < kOffsetUnroll; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) c[i + w] = va[k] + vb[k];
  }
  // [/doc:unrolled_offset_add]
}

inline void check_offsets(unsigned r, unsigned w, unsigned block) {
  if (r > kMaxOffset || w > kMaxOffset) throw std::invalid_argument("offset above kMaxOffset");
  if (block == 0 || block > 1024 || block % 32 != 0)
    throw std::invalid_argument("block must be a multiple of 32 <= 1024");
}

template <class Load = PlainLoad>
inline void launch_offset_add(const float* a, const float* b, float* c, std::size_t n, unsigned r, unsigned w,
                              unsigned block, cudaStream_t s) {
  check_offsets(r, w, block);
  if (n == 0) return;
  const std::size_t blocks = ceil_div<std::size_t>(n, block);
  offset_add_kernel<Load><<<static_cast<unsigned>(blocks), block, 0, s>>>(a, b, c, n, r, w);
  CUDA_CHECK_LAUNCH();
}

// The grid is divided by 4 because each thread covers 4 elements (the book's write variant forgets this).
template <class Load = PlainLoad>
inline void launch_offset_add_unroll4(const float* a, const float* b, float* c, std::size_t n, unsigned r, unsigned w,
                                      unsigned block, cudaStream_t s) {
  check_offsets(r, w, block);
  if (n == 0) return;
  const std::size_t blocks = ceil_div<std::size_t>(n, static_cast<std::size_t>(block) * kOffsetUnroll);
  offset_add_unroll4_kernel<Load><<<static_cast<unsigned>(blocks), block, 0, s>>>(a, b, c, n, r, w);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch02
