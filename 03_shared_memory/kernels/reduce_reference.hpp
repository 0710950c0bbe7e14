// Host side of the reductions (reduce.cuh): the input, the exact CPU sum and the launch geometry the
// kernels and their callers share. Pure C++ (CPU tests include it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cml::ch03 {

using Sum = unsigned long long;  // every total is exact in 64 bits

inline constexpr unsigned kReduceBlock = 256;   // threads per block in every reduction kernel
// [doc:reduce_unroll]
inline constexpr unsigned kReduceUnroll = 4;    // the book's "unroll": blocks' worth of data per block
// [/doc:reduce_unroll]
// [doc:reduce_vec_loads]
inline constexpr unsigned kReduceVecLoads = 4;  // 16-byte loads in flight per thread in the fast kernels
// [/doc:reduce_vec_loads]

// Inputs are integers in [0, 255]: the sum is exact, and the book-style kernels' 32-bit block partials
// (at most kReduceBlock * kReduceUnroll * 255 < 2^20) cannot overflow.
inline std::uint32_t reduce_value(std::uint64_t i) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ULL;
  z ^= z >> 29;
  z *= 0xbf58476d1ce4e5b9ULL;
  return static_cast<std::uint32_t>(z >> 56);
}

inline std::vector<std::uint32_t> reduce_input(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = reduce_value(i);
  return v;
}

inline Sum reduce_cpu(const std::vector<std::uint32_t>& v) {
  Sum s = 0;
  for (std::uint32_t x : v) s += x;
  return s;
}

// Blocks of the one-element-per-thread kernels and of the 4x-unrolled ones.
inline std::size_t reduce_blocks(std::size_t n) { return n == 0 ? 1 : (n + kReduceBlock - 1) / kReduceBlock; }
inline std::size_t reduce_unrolled_blocks(std::size_t n) {
  const std::size_t per_block = std::size_t{kReduceBlock} * kReduceUnroll;
  return n == 0 ? 1 : (n + per_block - 1) / per_block;
}

// The in-place kernels work on a scratch copy padded with zeros to a whole number of blocks, so no thread
// needs a tail test and none returns early (which would leave it out of the block's barriers).
inline std::size_t inplace_scratch_elems(std::size_t n) { return reduce_blocks(n) * kReduceBlock; }

}  // namespace cml::ch03
