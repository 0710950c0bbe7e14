// Host side of async_pipeline.cuh: the tile geometry every variant shares, which tiles each block takes,
// the random input and the CPU reference of the per-tile stencil. Pure C++ (CPU tests include it); the
// geometry functions are also compiled for the device, so kernel and reference split the array alike.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/pattern.hpp"

namespace cml::ch03 {

inline constexpr unsigned kPipeBlock = 256;                         // threads per block
// [doc:pipe_vecs_per_thread]
inline constexpr unsigned kPipeVecsPerThread = 2;                   // 16-byte copies per thread per tile
// [/doc:pipe_vecs_per_thread]
inline constexpr unsigned kPipeTileWords = kPipeBlock * kPipeVecsPerThread * 4;  // 2048 words
inline constexpr std::size_t kPipeTileBytes = kPipeTileWords * sizeof(std::uint32_t);  // 8 KiB
inline constexpr int kPipeMaxStages = 4;

// The per-tile work: out[j] = sum of stencil_weight(k) * tile[j + k] for k = -2 .. 2, the index
// clamped to the tile (each tile is filtered on its own, so no tile needs its neighbours). Unsigned
// 32-bit arithmetic wraps the same way on the CPU and the GPU, so every variant must match bit for bit.
// The weights (3, 5, 7, 11, 13) are distinct odd numbers: a stencil that is shifted or mirrored, or reads
// a neighbouring stage's buffer, gives different words.
inline constexpr int kStencilRadius = 2;
// The weight of tap k (k = -kStencilRadius .. kStencilRadius); a function, so device code can use it too.
CML_HD constexpr std::uint32_t stencil_weight(int k) {
  return k == -2 ? 3u : k == -1 ? 5u : k == 0 ? 7u : k == 1 ? 11u : 13u;
}

// Number of tiles of an array of n words (the last one may be shorter).
CML_HD inline std::size_t pipeline_tiles(std::size_t n) { return (n + kPipeTileWords - 1) / kPipeTileWords; }

// Words in tile t of an array of n words: kPipeTileWords, except a shorter last tile.
CML_HD inline unsigned pipeline_tile_length(std::size_t n, std::size_t t) {
  const std::size_t left = n - t * kPipeTileWords;
  return left < kPipeTileWords ? static_cast<unsigned>(left) : kPipeTileWords;
}

// Block b of a grid of g blocks takes tiles b, b + g, b + 2g ...: how many of the `tiles` that is. The
// same for every thread of the block, so the loop over them (with its barriers) is block-uniform.
CML_HD inline std::size_t pipeline_tiles_of_block(std::size_t tiles, unsigned block, unsigned grid) {
  return block < tiles ? (tiles - 1 - block) / grid + 1 : 0;
}

// Random input words: a hash of the index, so neighbouring words share nothing (no compressible runs,
// no pattern a wrong tile could match by accident).
inline std::vector<std::uint32_t> pipeline_input(std::size_t n, std::uint32_t seed = 0x5bd1e995u) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = fmix32(static_cast<std::uint32_t>(i) * 0x9E3779B9u + seed);
  return v;
}

// The expected output: every tile filtered on its own, edges clamped.
inline std::vector<std::uint32_t> pipeline_reference(const std::vector<std::uint32_t>& in) {
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t t = 0; t < pipeline_tiles(in.size()); ++t) {
    const std::size_t base = t * kPipeTileWords;
    const long len = static_cast<long>(pipeline_tile_length(in.size(), t));
    for (long j = 0; j < len; ++j) {
      std::uint32_t acc = 0;
      for (int k = -kStencilRadius; k <= kStencilRadius; ++k)
        acc += stencil_weight(k) * in[base + static_cast<std::size_t>(std::clamp(j + k, 0L, len - 1))];
      out[base + static_cast<std::size_t>(j)] = acc;
    }
  }
  return out;
}

// Low: one block per SM, 8 warps: too few loads in flight to cover DRAM latency unless a block keeps
// several tiles in flight itself. High: as many blocks per SM as the largest variant fits (the same for
// every variant, so they compare at the same occupancy): the warp scheduler hides latency across blocks.
enum class Occupancy { low, high };

inline const char* to_string(Occupancy o) { return o == Occupancy::low ? "low" : "high"; }

// Blocks per SM for an occupancy, given how many blocks of the hungriest variant fit on one SM.
inline unsigned pipeline_blocks_per_sm(Occupancy o, int fit_per_sm) {
  if (fit_per_sm < 1) throw std::invalid_argument("no block of the pipeline kernels fits on an SM");
  return o == Occupancy::low ? 1u : static_cast<unsigned>(fit_per_sm);
}

// Dynamic shared memory of a variant: one tile for sync (stages = 0) and async_1stage, else one per stage.
inline std::size_t pipeline_smem_bytes(int stages) {
  if (stages < 0 || stages > kPipeMaxStages)
    throw std::invalid_argument("stages must be 0 (sync) to " + std::to_string(kPipeMaxStages));
  return static_cast<std::size_t>(std::max(stages, 1)) * kPipeTileBytes;
}

}  // namespace cml::ch03
