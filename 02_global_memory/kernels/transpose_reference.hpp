// The one CPU reference for every transpose in the suite (02_global_memory and 03_shared_memory, demos
// and tests), and the input values they all use.
//
// Convention everywhere: `in` is a rows x cols matrix stored row-major; its transpose `out` is
// cols x rows, also row-major:  out[c * rows + r] = in[r * cols + c].
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/pattern.hpp"

namespace cml::transpose {

// Input element i: common/pattern.hpp's random_float, random-looking benchmark data that is distinct and
// finite for every i < kDistinctFloats (1,065,353,216, just under a 32768 x 32768 matrix), so an element
// that lands in the wrong place can never match by accident. The poison value of DeviceBuffer::poison (all
// bits set, a NaN) is never an input value.
inline float element_value(std::uint64_t i) { return random_float(i); }

inline std::vector<float> make_input(std::size_t rows, std::size_t cols) {
  std::vector<float> v(rows * cols);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = element_value(i);
  return v;
}

// out[c * rows + r] = in[r * cols + c]. The loops walk 32 x 32 blocks only so that a 16384 x 16384
// reference takes about a second instead of many (the plain double loop misses the cache on every
// write); the result is the plain definition.
inline void transpose_reference(const float* in, float* out, std::size_t rows, std::size_t cols) {
  constexpr std::size_t kBlock = 32;
  for (std::size_t r0 = 0; r0 < rows; r0 += kBlock)
    for (std::size_t c0 = 0; c0 < cols; c0 += kBlock)
      for (std::size_t r = r0; r < std::min(r0 + kBlock, rows); ++r)
        for (std::size_t c = c0; c < std::min(c0 + kBlock, cols); ++c) out[c * rows + r] = in[r * cols + c];
}

inline std::vector<float> transpose_reference(const std::vector<float>& in, std::size_t rows, std::size_t cols) {
  std::vector<float> out(rows * cols);
  transpose_reference(in.data(), out.data(), rows, cols);
  return out;
}

// Not a transpose: each side x side tile of `in` moves, untransposed, to where the transpose puts it.
// Tile (tr, tc) of the rows x cols input becomes tile (tc, tr) of the cols x rows output, and its element
// (y, x) stays element (y, x). Both sides must be multiples of `side`. With side 1 this is the transpose.
inline std::vector<float> tile_move_reference(const std::vector<float>& in, std::size_t rows, std::size_t cols,
                                              std::size_t side) {
  std::vector<float> out(rows * cols);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      out[(c / side * side + r % side) * rows + r / side * side + c % side] = in[r * cols + c];
  return out;
}

}  // namespace cml::transpose
