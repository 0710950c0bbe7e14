// Host side of the lane-pattern kernel (lane_pattern.cuh): the patterns, the buffer contents, the CPU
// reference for the kernel's output and the access model's wavefronts. Pure C++ (CPU tests include it).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/access_model.hpp"
#include "common/pattern.hpp"

namespace cml::ch03 {

// The shared buffer is a window of kWindow elements addressed modulo kWindow, plus kPatternUnroll
// elements of slack so the unrolled loads of one round need no wrap test. kWindow is a multiple of 32
// words for every width, so the modulo never changes which bank an address falls in, and it exceeds
// every pattern's span, so lanes that read different elements still read different elements after it.
inline constexpr int kWindow = 2048;
inline constexpr int kPatternUnroll = 16;  // loads per round, all independent
inline constexpr int kPatternBufferElems = kWindow + kPatternUnroll;
inline constexpr int kPatternBlock = 256;
inline constexpr int kPatternBlocksPerSm = 4;  // 32 warps per SM: enough loads in flight to saturate the banks

// The element each lane of a warp reads (in elements of the access width), before the per-round shift
// that every lane shares.
struct LanePattern {
  std::string name;  // "stride=7", "broadcast", ...
  std::array<int, 32> offsets{};
};

// Lane l reads element l * stride.
inline LanePattern stride_pattern(int stride) {
  if (stride < 1 || 31 * stride >= kWindow) throw std::invalid_argument("stride out of range");
  LanePattern p{"stride=" + std::to_string(stride), {}};
  for (int l = 0; l < 32; ++l) p.offsets[l] = l * stride;
  return p;
}

// Every lane reads the same element: one word is broadcast to the warp.
inline LanePattern broadcast_pattern() { return {"broadcast", {}}; }

// A random permutation of 32 consecutive elements: every bank once, in a scrambled order.
inline LanePattern permutation_pattern(std::uint64_t seed) {
  LanePattern p{"permutation", {}};
  for (int l = 0; l < 32; ++l) p.offsets[l] = l;
  for (int l = 31; l > 0; --l) std::swap(p.offsets[l], p.offsets[splitmix64(seed) % (l + 1)]);
  return p;
}

// Each lane an independent random element in [0, range): conflicts happen by chance.
inline LanePattern random_pattern(std::uint64_t seed, int range = 1024) {
  if (range < 1 || range > kWindow) throw std::invalid_argument("range out of range");
  LanePattern p{"random", {}};
  for (int l = 0; l < 32; ++l) p.offsets[l] = static_cast<int>(splitmix64(seed) % range);
  return p;
}

// Column 0 of a 32 x 33 tile (one element of padding per row): stride 33.
// [doc:column_pad_pattern]
inline LanePattern column_pad_pattern() {
  LanePattern p{"column_pad", {}};
  for (int l = 0; l < 32; ++l) p.offsets[l] = l * 33;
  return p;
}
// [/doc:column_pad_pattern]

// Column `col` of a 32 x 32 tile stored swizzled (element (r, c) at r*32 + (c ^ r)): no padding, and the
// lanes of a column land in 32 different positions of their rows.
inline LanePattern column_swizzle_pattern(int col = 5) {
  LanePattern p{"column_swizzle", {}};
  for (int l = 0; l < 32; ++l) p.offsets[l] = l * 32 + (col ^ l);
  return p;
}

// Word w of the initial buffer: a hash of w, so a load from the wrong address changes the sum.
inline std::uint32_t pattern_word(std::uint64_t w) {
  std::uint64_t s = w;
  return static_cast<std::uint32_t>(splitmix64(s));
}

inline void check_pattern_width(unsigned width) {
  if (width != 4 && width != 8 && width != 16) throw std::invalid_argument("pattern width must be 4, 8 or 16 bytes");
}

// The buffer the kernel copies into shared memory: kPatternBufferElems elements of `width` bytes.
inline std::vector<std::uint32_t> pattern_init_words(unsigned width) {
  check_pattern_width(width);
  std::vector<std::uint32_t> words(static_cast<std::size_t>(kPatternBufferElems) * (width / 4));
  for (std::size_t w = 0; w < words.size(); ++w) words[w] = pattern_word(w);
  return words;
}

// Element lane reads in load j of round k (what the kernel computes).
inline int pattern_element(int lane_offset, int k, int j) {
  return ((lane_offset + k * kPatternUnroll) & (kWindow - 1)) + j;
}

// The kernel's output for one lane: `width / 4` 32-bit sums (wrapping), one per word of the element.
// Every warp of the grid has the same lanes, so thread t's output is lane (t % 32)'s.
inline std::vector<std::uint32_t> pattern_lane_sums(const LanePattern& p, unsigned width, int rounds,
                                                    const std::vector<std::uint32_t>& words) {
  check_pattern_width(width);
  const unsigned c = width / 4;
  std::vector<std::uint32_t> sums(32 * c, 0);
  for (int lane = 0; lane < 32; ++lane)
    for (int k = 0; k < rounds; ++k)
      for (int j = 0; j < kPatternUnroll; ++j) {
        const std::size_t e = static_cast<std::size_t>(pattern_element(p.offsets[lane], k, j));
        for (unsigned q = 0; q < c; ++q) sums[lane * c + q] += words[e * c + q];
      }
  return sums;
}

// The whole output of `threads` threads, as 32-bit words.
inline std::vector<std::uint32_t> pattern_expected(const LanePattern& p, unsigned width, int rounds,
                                                   std::size_t threads, const std::vector<std::uint32_t>& words) {
  const auto lane = pattern_lane_sums(p, width, rounds, words);
  const unsigned c = width / 4;
  std::vector<std::uint32_t> out(threads * c);
  for (std::size_t t = 0; t < threads; ++t)
    for (unsigned q = 0; q < c; ++q) out[t * c + q] = lane[(t % 32) * c + q];
  return out;
}

// Wavefronts of one warp request of this pattern, shifted by `shift` elements the way round k / load j
// shifts it (the shift leaves the count unchanged: the tests check this).
inline model::SharedAccess pattern_model(const LanePattern& p, unsigned width, int k = 0, int j = 0) {
  return model::shared_pattern(1, width, [&](std::uint64_t, unsigned lane) -> std::optional<std::uint64_t> {
    return static_cast<std::uint64_t>(pattern_element(p.offsets[lane], k, j)) * width;
  });
}

}  // namespace cml::ch03
