// Data and CPU references for the chapter's kernels (shared by the demos and the tests).
//
// Every buffer holds 16-byte elements (uint4) whose words are a hash of their index, so the device fills them
// with a kernel and the CPU recomputes any of them without a host copy. All arithmetic is on uint32 words and
// wraps modulo 2^32: exact, and independent of the order in which the GPU adds things up.
#pragma once

#include <vector_types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/pattern.hpp"

namespace cml::ch05 {

inline constexpr std::uint32_t kTableSeed = 0x7f4a7c15u;
inline constexpr std::uint32_t kStreamSeed = 0x2545f491u;
inline constexpr std::uint32_t kRereadSeed = 0x9e3779b9u;

// A 32-bit mix of a word index (murmur3's finaliser): neighbouring words differ in every bit.
CML_HD inline std::uint32_t word_value(std::uint64_t word, std::uint32_t seed) {
  return fmix32(static_cast<std::uint32_t>(word) ^ (static_cast<std::uint32_t>(word >> 32) * 0x85ebca6bu) ^ seed);
}

CML_HD inline uint4 element_value(std::uint64_t element, std::uint32_t seed) {
  const std::uint64_t w = 4 * element;
  uint4 v;
  v.x = word_value(w + 0, seed);
  v.y = word_value(w + 1, seed);
  v.z = word_value(w + 2, seed);
  v.w = word_value(w + 3, seed);
  return v;
}

CML_HD inline void add_to(uint4& a, const uint4& b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
  a.w += b.w;
}

// The fold of the re-read kernel: a * 33 + b per word. Not associative across passes, so a compiler cannot
// turn "read the data `passes` times" into "read it once and multiply".
CML_HD inline void fold_into(uint4& a, const uint4& b) {
  a.x = a.x * 33u + b.x;
  a.y = a.y * 33u + b.y;
  a.z = a.z * 33u + b.z;
  a.w = a.w * 33u + b.w;
}

// Sliding window: the stream holds `passes` chunks of chunk_n elements; chunk r element i is
// element_value(r * chunk_n + i, kStreamSeed). The result depends on the stream only through the per-position
// sums over the passes (addition commutes), so the reference computes those once per (chunk_n, passes).
inline std::vector<uint4> chunk_sums(std::size_t chunk_n, int passes) {
  std::vector<uint4> sums(chunk_n, uint4{0, 0, 0, 0});
  for (int r = 0; r < passes; ++r)
    for (std::size_t i = 0; i < chunk_n; ++i)
      add_to(sums[i], element_value(static_cast<std::uint64_t>(r) * chunk_n + i, kStreamSeed));
  return sums;
}

// table[k] = element_value(k, kTableSeed) + sum of sums[i] over i = k (mod table_n).
inline std::vector<uint4> sliding_window_reference(const std::vector<uint4>& sums, std::size_t table_n) {
  std::vector<uint4> table(table_n);
  for (std::size_t k = 0; k < table_n; ++k) table[k] = element_value(k, kTableSeed);
  std::size_t k = 0;
  for (std::size_t i = 0; i < sums.size(); ++i) {
    add_to(table[k], sums[i]);
    if (++k == table_n) k = 0;
  }
  return table;
}

// Re-read: thread t of `threads` folds data[k] for k = t, t + threads, ... < n, pass after pass, starting from
// zero; data[k] = element_value(k, kRereadSeed). Threads that own no element write zero.
inline std::vector<uint4> reread_reference(std::size_t n, int passes, std::size_t threads) {
  std::vector<uint4> out(threads, uint4{0, 0, 0, 0});
  std::vector<uint4> data(n);
  for (std::size_t k = 0; k < n; ++k) data[k] = element_value(k, kRereadSeed);
  for (std::size_t t = 0; t < threads; ++t)
    for (int r = 0; r < passes; ++r)
      for (std::size_t k = t; k < n; k += threads) fold_into(out[t], data[k]);
  return out;
}

}  // namespace cml::ch05
