// Host side of the tile kernels (smem_tiles.cuh): the shared constants, the CPU reference for their
// output and the access model's wavefronts per request. Pure C++ so the CPU tests can include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/access_model.hpp"

namespace cml::ch03 {

enum class Order { kRow, kCol };

inline constexpr unsigned kSquareDim = 32;                          // square block and tile: 32 x 32
inline constexpr unsigned kSquareThreads = kSquareDim * kSquareDim;  // 1024
inline constexpr unsigned kRectX = 32;                              // rectangle block: 32 wide ...
inline constexpr unsigned kRectY = 16;                              // ... and 16 high
inline constexpr unsigned kRectThreads = kRectX * kRectY;           // 512

// Rectangle access patterns. The tile is kRectY rows of kRectX words, except in col_col (kRectX rows of
// kRectY words, the book's tile[BDIMX][BDIMY]).
//   row_row: write tile[ty][tx], read tile[ty][tx]                         (output: identity)
//   col_col: write tile[tx][ty], read tile[tx][ty]                         (identity)
//   row_col: write tile[ty][tx], read tile[icol][irow] with idx = ty*32 + tx, irow = idx / 16,
//            icol = idx % 16: the 16 x 32 tile read back as its 32 x 16 transpose
enum class RectPattern { kRowRow, kColCol, kRowCol };

inline const char* order_name(Order o) { return o == Order::kRow ? "row" : "col"; }
inline const char* rect_pattern_name(RectPattern p) {
  return p == RectPattern::kRowRow ? "row_row" : p == RectPattern::kColCol ? "col_col" : "row_col";
}

// Dynamic shared memory the padded tiles need. The pitch includes the pad, so the allocation must too:
// passing the unpadded size (an easy mistake) makes the last rows fall off the end.
constexpr std::size_t square_dynamic_bytes(unsigned pad) {
  return std::size_t{kSquareDim} * (kSquareDim + pad) * sizeof(unsigned);
}
constexpr std::size_t rect_dynamic_bytes(RectPattern p, unsigned pad) {
  return p == RectPattern::kColCol ? std::size_t{kRectX} * (kRectY + pad) * sizeof(unsigned)
                                   : std::size_t{kRectY} * (kRectX + pad) * sizeof(unsigned);
}

// Expected output of `blocks` blocks of width x height threads. In round r thread i writes i + r*threads,
// and thread i reads what thread src(i) wrote: src(i) = i (same order both ways) or, when the read is the
// transpose, src(i) = (i % height) * width + i / height. Thread i's output is the 32-bit wrapping sum
// over the rounds: rounds * src + threads * rounds * (rounds - 1) / 2.
inline std::vector<std::uint32_t> tile_expected(unsigned width, unsigned height, bool transposed, int rounds,
                                                std::size_t blocks) {
  const std::uint64_t threads = std::uint64_t{width} * height;
  const auto r = static_cast<std::uint64_t>(rounds);
  const std::uint64_t shift = threads * (r * (r - 1) / 2);  // exact in 64 bits; truncated like the GPU's sum
  std::vector<std::uint32_t> one(threads);
  for (std::uint64_t i = 0; i < threads; ++i) {
    const std::uint64_t src = transposed ? (i % height) * width + i / height : i;
    one[i] = static_cast<std::uint32_t>(r * src + shift);
  }
  std::vector<std::uint32_t> out;
  out.reserve(one.size() * blocks);
  for (std::size_t b = 0; b < blocks; ++b) out.insert(out.end(), one.begin(), one.end());
  return out;
}

inline std::vector<std::uint32_t> square_expected(Order write, Order read, int rounds, std::size_t blocks) {
  return tile_expected(kSquareDim, kSquareDim, write != read, rounds, blocks);
}
inline std::vector<std::uint32_t> rect_expected(RectPattern p, int rounds, std::size_t blocks) {
  return tile_expected(kRectX, kRectY, p == RectPattern::kRowCol, rounds, blocks);
}

// ---- Access model: shared-memory wavefronts per warp request ----------------------------------------

inline model::SharedAccess square_access_model(Order o, unsigned pad) {
  return model::shared_tile_access(kSquareDim, kSquareDim, pad, 4, o == Order::kRow);
}

// The store of a rectangle pattern (its write side).
inline model::SharedAccess rect_store_model(RectPattern p, unsigned pad) {
  if (p == RectPattern::kColCol) return model::shared_tile_access(kRectX, kRectY, pad, 4, false);
  return model::shared_tile_access(kRectY, kRectX, pad, 4, true);
}

// The load: row_col reads tile[icol][irow] through the index remapping, which the generic tile helper
// does not describe, so it is spelled out lane by lane.
inline model::SharedAccess rect_load_model(RectPattern p, unsigned pad) {
  if (p != RectPattern::kRowCol) return rect_store_model(p, pad);
  const std::uint64_t pitch = kRectX + pad;
  return model::shared_pattern(kRectY, 4, [&](std::uint64_t warp, unsigned lane) -> std::optional<std::uint64_t> {
    const std::uint64_t idx = warp * kRectX + lane;
    const std::uint64_t irow = idx / kRectY, icol = idx % kRectY;
    return (icol * pitch + irow) * 4;
  });
}

}  // namespace cml::ch03
