// Host side of dsmem.cuh (distributed shared memory): the words each block of the bandwidth kernel puts in
// its shared memory and the sum every thread must end with, and the histogram's keys and its CPU reference.
// The pointer-chase rings come from latency_reference.hpp (random_chain, chase_end). Pure C++ (CPU tests
// include it); the key and word functions are also compiled for the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common/pattern.hpp"

namespace cml::ch03 {

// ---- Bandwidth: every thread streams 16-byte words out of one block's shared memory ----------------------

inline constexpr int kDsmemReadBlock = 256;                                   // threads per block
inline constexpr int kDsmemReadSteps = 8;                                     // 16-byte loads per pass
inline constexpr int kDsmemReadWords = kDsmemReadBlock * kDsmemReadSteps * 4;  // 32 KiB of words per block

// Word w of the shared buffer of the block with cluster rank `rank`. The rank term (an odd multiplier) makes
// every rank's buffer sum to a different value, so a thread that read its own buffer instead of its
// neighbour's (or the wrong neighbour's) ends with the wrong sum.
CML_HD inline std::uint32_t dsmem_read_word(unsigned rank, unsigned w) { return w + rank * 0x9E3779B1u; }

// Which 16-byte element thread t starts from in pass p: the threads' starting points rotate by a warp each
// pass, so no two consecutive passes load the same addresses and the compiler cannot keep one pass's loads
// in registers for the next (it may, and does, when they repeat: the loop would then time nothing).
// A warp still reads 32 consecutive elements: the same bank pattern in every pass.
inline constexpr unsigned kDsmemReadRotation = 32;
CML_HD inline unsigned dsmem_read_start(unsigned t, std::uint64_t p) {
  return static_cast<unsigned>((t + kDsmemReadRotation * (p % (kDsmemReadBlock / kDsmemReadRotation))) %
                               kDsmemReadBlock);
}

// What thread t of a block ends with after `passes` passes over the buffer of cluster rank `rank`: in pass p
// it reads the 16-byte elements s, s + kDsmemReadBlock, s + 2 * kDsmemReadBlock ... (kDsmemReadSteps of
// them, s = dsmem_read_start(t, p)) and adds their words. 32-bit arithmetic, wrapping like the kernel's.
inline std::uint32_t dsmem_read_thread_sum(unsigned t, unsigned rank, std::uint64_t passes) {
  constexpr unsigned kPeriod = kDsmemReadBlock / kDsmemReadRotation;  // the starting points repeat after this
  std::uint32_t total = 0;
  for (unsigned r = 0; r < kPeriod && r < passes; ++r) {
    std::uint32_t one_pass = 0;
    const unsigned s = dsmem_read_start(t, r);
    for (int j = 0; j < kDsmemReadSteps; ++j)
      for (unsigned k = 0; k < 4; ++k)
        one_pass += dsmem_read_word(rank, 4 * (s + static_cast<unsigned>(j) * kDsmemReadBlock) + k);
    const std::uint64_t times = passes / kPeriod + (r < passes % kPeriod ? 1 : 0);  // passes p with p % kPeriod == r
    total += static_cast<std::uint32_t>(one_pass * times);
  }
  return total;
}

// The whole output of a launch of `blocks` blocks in clusters of `cluster` blocks: block b has cluster rank
// b % cluster and reads its own buffer, or (neighbour) the one of rank (b + 1) % cluster.
inline std::vector<std::uint32_t> dsmem_read_expected(unsigned blocks, unsigned cluster, bool neighbour,
                                                      std::uint64_t passes) {
  if (cluster == 0 || blocks % cluster != 0) throw std::invalid_argument("blocks must be a multiple of the cluster");
  std::vector<std::uint32_t> out(static_cast<std::size_t>(blocks) * kDsmemReadBlock);
  for (unsigned b = 0; b < blocks; ++b) {
    const unsigned rank = b % cluster, read = neighbour ? (rank + 1) % cluster : rank;
    for (unsigned t = 0; t < static_cast<unsigned>(kDsmemReadBlock); ++t)
      out[static_cast<std::size_t>(b) * kDsmemReadBlock + t] = dsmem_read_thread_sum(t, read, passes);
  }
  return out;
}

// ---- Histogram ----------------------------------------------------------------------------------------

// Key i of the input: a hash of the index, so the keys look random (every bin equally likely, neighbours
// unrelated) and the host can recompute any of them without storing the input.
CML_HD inline std::uint32_t histogram_key(std::uint64_t i) {
  return fmix32(static_cast<std::uint32_t>(i) ^ static_cast<std::uint32_t>(i >> 32) ^ 0x2545F491u);
}

// A key's bin: its low bits (bins is a power of two).
// [doc:histogram_bin]
CML_HD inline std::uint32_t histogram_bin(std::uint32_t key, std::uint32_t bins) { return key & (bins - 1); }
// [/doc:histogram_bin]

inline bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Counts of keys 0 .. n-1 in `bins` bins.
inline std::vector<std::uint32_t> histogram_reference(std::size_t n, std::uint32_t bins) {
  if (!is_power_of_two(bins)) throw std::invalid_argument("bins must be a power of two");
  std::vector<std::uint32_t> h(bins, 0);
  for (std::size_t i = 0; i < n; ++i) ++h[histogram_bin(histogram_key(i), bins)];
  return h;
}

// The histogram in `bins` bins from one in more bins: with the bin taken from the low bits, bin b of the
// coarser histogram is the sum of the finer bins congruent to b.
inline std::vector<std::uint32_t> fold_histogram(const std::vector<std::uint32_t>& fine, std::uint32_t bins) {
  if (!is_power_of_two(bins) || !is_power_of_two(fine.size()) || bins > fine.size())
    throw std::invalid_argument("fold_histogram: bins must be a power of two no larger than the input");
  std::vector<std::uint32_t> h(bins, 0);
  for (std::size_t b = 0; b < fine.size(); ++b) h[b & (bins - 1)] += fine[b];
  return h;
}

}  // namespace cml::ch03
