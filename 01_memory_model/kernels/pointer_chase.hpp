// Host side of the latency ladder: the random chain a single thread follows, one dependent load per
// hop, and the working-set bookkeeping around it. Plain C++ (no CUDA) so the CPU tests can check it.
//
// The chain lives in a buffer of 128-byte lines, one node per line: the first 8 bytes of line i hold the
// address of line next[i]. Consecutive hops therefore always land in different 128-byte lines (at least
// 128 B apart), and `next` is one single cycle, so a chase that starts anywhere visits every line of the
// working set before it revisits one: no line is ever found in a cache only because the chain is short.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cml::ch01 {

inline constexpr std::size_t kChaseLineBytes = 128;  // one node per L1/L2 cache line

// A uniformly random cyclic permutation of 0..n-1 (Sattolo's algorithm): following i -> next[i] from any
// node visits all n nodes and returns to the start after exactly n hops. Deterministic for a given seed.
inline std::vector<std::uint32_t> make_single_cycle(std::size_t n, std::uint64_t seed) {
  if (n == 0) throw std::invalid_argument("make_single_cycle: n must be at least 1");
  if (n > std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("make_single_cycle: n too large");
  std::vector<std::uint32_t> next(n);
  std::iota(next.begin(), next.end(), std::uint32_t{0});
  std::mt19937_64 rng(seed);
  // Sattolo differs from Fisher-Yates only in drawing j from [0, i) instead of [0, i]: an element never
  // stays in place, and the result is always one cycle, never several.
  for (std::size_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(next[i], next[pick(rng)]);
  }
  return next;
}

// Where a chase that starts at `start` stands after `hops` dependent loads (the CPU reference).
inline std::uint32_t walk_chain(const std::vector<std::uint32_t>& next, std::uint32_t start, std::uint64_t hops) {
  std::uint32_t p = start;
  for (std::uint64_t k = 0; k < hops; ++k) p = next[p];
  return p;
}

// Number of hops until the chase returns to `start` (n for a single cycle); 0 if it never does within
// next.size() hops, which means `start` is not on a cycle through itself.
inline std::size_t cycle_length(const std::vector<std::uint32_t>& next, std::uint32_t start) {
  std::uint32_t p = start;
  for (std::size_t k = 1; k <= next.size(); ++k) {
    p = next[p];
    if (p == start) return k;
  }
  return 0;
}

// Smallest distance in bytes between the lines of two consecutive hops (n >= 2).
inline std::uint64_t min_hop_distance_bytes(const std::vector<std::uint32_t>& next, std::size_t line_bytes) {
  std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < next.size(); ++i) {
    const std::uint64_t d = next[i] > i ? next[i] - i : i - next[i];
    best = std::min<std::uint64_t>(best, d * line_bytes);
  }
  return best;
}

// `points` working-set sizes from `lo` to `hi` bytes, evenly spaced in log scale, each rounded down to a
// whole number of lines (never below one line), strictly increasing (duplicates after rounding dropped).
inline std::vector<std::uint64_t> log_spaced_sizes(std::uint64_t lo, std::uint64_t hi, int points,
                                                   std::uint64_t align = kChaseLineBytes) {
  if (lo == 0 || hi < lo || points < 1 || align == 0) throw std::invalid_argument("log_spaced_sizes: bad range");
  std::vector<std::uint64_t> sizes;
  const double ratio = static_cast<double>(hi) / static_cast<double>(lo);
  for (int k = 0; k < points; ++k) {
    const double t = points == 1 ? 1.0 : static_cast<double>(k) / (points - 1);
    auto s = static_cast<std::uint64_t>(std::llround(static_cast<double>(lo) * std::pow(ratio, t)));
    if (k == points - 1) s = hi;  // exact end point, free of rounding
    s = std::max(align, s / align * align);
    if (sizes.empty() || s > sizes.back()) sizes.push_back(s);
  }
  return sizes;
}

// The level a working set of `bytes` fits in by size alone: what the plateau should be if the caches are
// fully usable by one thread (L1 = the SM's unified L1/shared capacity, L2 = the device's L2).
inline std::string plateau_by_size(std::uint64_t bytes, std::uint64_t l1_bytes, std::uint64_t l2_bytes) {
  if (bytes <= l1_bytes) return "L1";
  if (bytes <= l2_bytes) return "L2";
  return "DRAM";
}

// Like plateau_by_size, but only for points well inside a level (a factor of 2 from each boundary), where
// replacement policy and associativity cannot blur the answer; "" for points near a boundary.
inline std::string plateau_core(std::uint64_t bytes, std::uint64_t l1_bytes, std::uint64_t l2_bytes) {
  if (2 * bytes <= l1_bytes) return "L1";
  if (bytes >= 2 * l1_bytes && 2 * bytes <= l2_bytes) return "L2";
  if (bytes >= 2 * l2_bytes) return "DRAM";
  return "";
}

}  // namespace cml::ch01
