// Streaming kernels for l2_set_aside_cost: a write of pattern words and a read that folds them, one 16-byte
// access per thread per step, so that what a set-aside costs them is not hidden behind instruction overhead.
// The copy is the suite's copy_vec4 (common/copy_kernels.cuh), the ceiling every chapter measures against.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "common/pattern.hpp"
#include "common/resources.hpp"

namespace cml::ch05 {
namespace {

inline constexpr unsigned kStreamBlock = 256;

// out[i] = pattern_word(i, seed): one uint4 per thread, the last n % 4 words by the first threads.
__global__ void write_pattern_kernel(std::uint32_t* __restrict__ out, std::size_t n, std::uint32_t seed) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t n4 = n / 4;
  if (i < n4) {
    const std::uint64_t w = 4 * static_cast<std::uint64_t>(i);
    reinterpret_cast<uint4*>(out)[i] =
        make_uint4(pattern_word(w, seed), pattern_word(w + 1, seed), pattern_word(w + 2, seed), pattern_word(w + 3, seed));
  }
  if (i < n - n4 * 4) out[n4 * 4 + i] = pattern_word(n4 * 4 + i, seed);
}

// *result ^= the XOR of every word of in[0, n). A grid-stride loop with four 16-byte loads in flight per thread,
// one atomic per block: an atomic per warp on one address would serialise and time the atomics, not the reads.
__global__ void xor_read_kernel(const std::uint32_t* __restrict__ in, std::size_t n, unsigned* __restrict__ result) {
  const uint4* in4 = reinterpret_cast<const uint4*>(in);
  const std::size_t n4 = n / 4;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned v = 0;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    const uint4 a = in4[i], b = in4[i + stride], c = in4[i + 2 * stride], d = in4[i + 3 * stride];
    v ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n4; i += stride) {
    const uint4 a = in4[i];
    v ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n - n4 * 4) v ^= in[n4 * 4 + t];
  for (int o = 16; o > 0; o >>= 1) v ^= __shfl_xor_sync(0xffffffffu, v, o);
  __shared__ unsigned warp_xor[kStreamBlock / 32];
  if (threadIdx.x % 32 == 0) warp_xor[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned block = 0;
    for (unsigned w = 0; w < kStreamBlock / 32; ++w) block ^= warp_xor[w];
    atomicXor(result, block);
  }
}

inline void launch_write_pattern(std::uint32_t* out, std::size_t n, std::uint32_t seed, cudaStream_t s) {
  const std::size_t threads = std::max<std::size_t>(n / 4, 4);
  write_pattern_kernel<<<static_cast<unsigned>(ceil_div<std::size_t>(threads, kStreamBlock)), kStreamBlock, 0, s>>>(
      out, n, seed);
  CUDA_CHECK_LAUNCH();
}

// `blocks`: enough to fill the GPU several times over (the loop does the rest), at least one.
inline void launch_xor_read(const std::uint32_t* in, std::size_t n, unsigned* result, unsigned blocks,
                            cudaStream_t s) {
  xor_read_kernel<<<blocks, kStreamBlock, 0, s>>>(in, n, result);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch05
