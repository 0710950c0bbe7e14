// Streaming kernels for the compressible-memory demo: write-only (fill), read-only (sum) and copy, all
// on 16-byte words so every variant runs at the DRAM limit on plain memory. Outputs are checked word by
// word with common/pattern_kernels.cuh's checker and KindWord.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "02_global_memory/kernels/data_kinds.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch02 {
namespace {

inline constexpr int kStreamBlock = 256;

inline unsigned stream_grid(std::size_t items) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // Enough blocks to fill every SM several times over; grid-stride loops cover the rest.
  return static_cast<unsigned>(std::clamp<std::size_t>(ceil_div<std::size_t>(items, kStreamBlock), 1,
                                                       static_cast<std::size_t>(sms) * 16));
}

// n words of `kind`, n a multiple of 4.
__global__ void fill_kind_kernel(std::uint32_t* __restrict__ p, std::size_t n, DataKind kind) {
  const std::size_t n4 = n / 4, stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
    const std::size_t w = 4 * i;
    reinterpret_cast<uint4*>(p)[i] =
        make_uint4(data_word(kind, w), data_word(kind, w + 1), data_word(kind, w + 2), data_word(kind, w + 3));
  }
}

// One 16-byte word per thread, one block per 256 words: no grid-stride loop. A grid of a few waves that
// strides through the buffer finishes when its slowest block does, and the SMs do not all stream at one
// rate; the hardware hands a grid of many small blocks to whichever SM has room, so the copy keeps every
// SM busy to the end (as bandwidth_ceiling's copy_vec4, which matches cudaMemcpy).
__global__ void copy_words_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out,
                                  std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n / 4) reinterpret_cast<uint4*>(out)[i] = reinterpret_cast<const uint4*>(in)[i];
}

// The sum of all words (mod 2^64): reads everything, writes one number per warp.
__global__ void sum_words_kernel(const std::uint32_t* __restrict__ p, std::size_t n, unsigned long long* sum) {
  const std::size_t n4 = n / 4, stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long s = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
    const uint4 v = reinterpret_cast<const uint4*>(p)[i];
    s += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
  }
  for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, s);
}

// Word i of `kind`, as common/pattern_kernels.cuh's checker takes it.
struct KindWord {
  DataKind kind;
  CML_HD std::uint32_t operator()(std::uint64_t i) const { return data_word(kind, i); }
};

inline void launch_fill_kind(std::uint32_t* p, std::size_t n, DataKind kind, cudaStream_t s) {
  fill_kind_kernel<<<stream_grid(n / 4), kStreamBlock, 0, s>>>(p, n, kind);
  CUDA_CHECK_LAUNCH();
}

inline void launch_copy_words(const std::uint32_t* in, std::uint32_t* out, std::size_t n, cudaStream_t s) {
  if (n < 4) return;
  const std::size_t blocks = ceil_div<std::size_t>(n / 4, kStreamBlock);
  if (blocks > 0x7fffffffu) throw std::invalid_argument("copy_words: more than 2^31 - 1 blocks");
  copy_words_kernel<<<static_cast<unsigned>(blocks), kStreamBlock, 0, s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

// `sum` is added to, not cleared.
inline void launch_sum_words(const std::uint32_t* p, std::size_t n, unsigned long long* sum, cudaStream_t s) {
  sum_words_kernel<<<stream_grid(n / 4), kStreamBlock, 0, s>>>(p, n, sum);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch02
