// The device half of pack -> one copy -> unpack: scatter a packed buffer back into its chunks.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "04_transfers/kernels/batching_reference.hpp"
#include "04_transfers/kernels/transfer_kernels.cuh"
#include "common/cuda_check.hpp"

namespace cml::ch04 {
namespace {

// dst[j * stride + r] = packed[j * chunk + r]: consecutive threads read consecutive packed words and write
// consecutive words of the same chunk, so both sides stay coalesced except at chunk edges.
__global__ void unpack_chunks_kernel(const std::uint32_t* __restrict__ packed, std::uint32_t* __restrict__ dst,
                                     std::size_t total, std::size_t chunk, std::size_t stride) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t j = i / chunk;
    dst[j * stride + (i - j * chunk)] = packed[i];
  }
}

inline void launch_unpack_chunks(const std::uint32_t* packed, std::uint32_t* dst, const ChunkLayout& l,
                                 cudaStream_t s) {
  if (l.total_words == 0) return;
  unpack_chunks_kernel<<<grid_stride_blocks(l.total_words), kGridStrideBlock, 0, s>>>(packed, dst, l.total_words, l.chunk_words,
                                                                   l.stride_words());
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch04
