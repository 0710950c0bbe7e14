// Host side of sync.cuh: the CPU references for the barrier kernels. Pure C++ (CPU tests include it).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cml::ch03 {

inline constexpr unsigned kSyncBlock = 256;

// segment_reverse_kernel's output: each kSyncBlock-element segment of the input reversed (the last one
// may be shorter and is reversed over its own length).
inline std::vector<std::uint32_t> segment_reverse_expected(const std::vector<std::uint32_t>& in) {
  std::vector<std::uint32_t> out(in.size());
  for (std::size_t base = 0; base < in.size(); base += kSyncBlock) {
    const std::size_t len = std::min<std::size_t>(kSyncBlock, in.size() - base);
    for (std::size_t t = 0; t < len; ++t) out[base + t] = in[base + len - 1 - t];
  }
  return out;
}

// Input for the vote kernel: block b's elements are all >= threshold (b % 3 == 0), all below it
// (b % 3 == 1), or a mix (b % 3 == 2), so __syncthreads_and / _or are each true for some blocks and false
// for others.
inline constexpr std::uint32_t kVoteThreshold = 1000;
inline std::vector<std::uint32_t> vote_input(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = i / kSyncBlock;
    const std::uint32_t mixed = static_cast<std::uint32_t>((i * 2654435761u) % 2000);
    v[i] = b % 3 == 0 ? 1500 : b % 3 == 1 ? 10 : mixed;
  }
  return v;
}

// Per block: {count of elements >= threshold, all of the block's threads pass, any passes}. Threads past
// the end of the input count as not passing (so a short last block is never "all").
inline std::vector<std::uint32_t> vote_expected(const std::vector<std::uint32_t>& in) {
  const std::size_t blocks = (in.size() + kSyncBlock - 1) / kSyncBlock;
  std::vector<std::uint32_t> out(3 * blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    std::uint32_t count = 0;
    for (std::size_t t = 0; t < kSyncBlock; ++t) {
      const std::size_t i = b * kSyncBlock + t;
      count += (i < in.size() && in[i] >= kVoteThreshold) ? 1 : 0;
    }
    out[3 * b] = count;
    out[3 * b + 1] = count == kSyncBlock ? 1 : 0;
    out[3 * b + 2] = count > 0 ? 1 : 0;
  }
  return out;
}

}  // namespace cml::ch03
