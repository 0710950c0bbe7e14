// Host side of latency.cuh: pointer-chase chains, the CPU walk that predicts where a chase ends, and the
// per-thread XOR the global read kernel produces. Pure C++ (CPU tests include it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/pattern.hpp"

namespace cml::ch03 {

inline constexpr unsigned kLineWords = 32;  // 128-byte lines: one chase hop per line

// A pointer-chase chain: `words` 32-bit words; the word at byte offset `start` holds the byte offset of
// the next hop, and so on around a cycle of `length` hops. Only the visited words matter to the chase
// (the rest are zero).
struct Chain {
  std::vector<std::uint32_t> words;
  std::uint32_t start = 0;
  std::size_t length = 0;
};

// A cycle through `length` distinct slots of `slot_words` words, chosen at random among `slots` slots and
// visited in random order, so neither the next address nor the next line is predictable.
inline Chain random_chain(std::size_t slots, std::size_t slot_words, std::size_t length, std::uint64_t seed) {
  if (length == 0 || length > slots) throw std::invalid_argument("chain length must be in [1, slots]");
  if (slots * slot_words * 4 > (std::uint64_t{1} << 32)) throw std::invalid_argument("chain over 4 GiB");
  std::vector<std::size_t> order;
  order.reserve(length);
  if (length * 2 > slots) {
    // Dense: shuffle all slots and take the first `length`.
    std::vector<std::size_t> all(slots);
    for (std::size_t i = 0; i < slots; ++i) all[i] = i;
    for (std::size_t i = slots - 1; i > 0; --i) std::swap(all[i], all[splitmix64(seed) % (i + 1)]);
    order.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(length));
  } else {
    // Sparse: draw until `length` distinct slots are found.
    std::unordered_set<std::size_t> seen;
    while (order.size() < length) {
      const std::size_t s = splitmix64(seed) % slots;
      if (seen.insert(s).second) order.push_back(s);
    }
  }
  Chain c;
  c.words.assign(slots * slot_words, 0);
  c.length = length;
  for (std::size_t i = 0; i < length; ++i) {
    const std::size_t here = order[i] * slot_words, next = order[(i + 1) % length] * slot_words;
    c.words[here] = static_cast<std::uint32_t>(next * 4);
  }
  c.start = static_cast<std::uint32_t>(order[0] * slot_words * 4);
  return c;
}

// Where a chase of `hops` hops from `start` ends (the byte offset it last loaded).
inline std::uint32_t chase_end(const Chain& c, std::uint64_t hops) {
  std::uint32_t off = c.start;
  for (std::uint64_t h = 0; h < hops; ++h) off = c.words[off / 4];
  return off;
}

// Word w of the global read buffer.
inline std::uint32_t read_word(std::uint64_t w) {
  std::uint64_t s = w ^ 0x5bd1e995ULL;
  return static_cast<std::uint32_t>(splitmix64(s));
}

inline std::vector<std::uint32_t> read_words(std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = read_word(i);
  return v;
}

// global_read_kernel's output: thread t of `threads` XORs every word of the 16-byte elements t,
// t + threads, t + 2*threads, ... below n4.
inline std::vector<std::uint32_t> read_xor_expected(const std::vector<std::uint32_t>& words, std::size_t n4,
                                                    std::size_t threads) {
  std::vector<std::uint32_t> out(threads, 0);
  for (std::size_t i = 0; i < n4; ++i)
    out[i % threads] ^= words[4 * i] ^ words[4 * i + 1] ^ words[4 * i + 2] ^ words[4 * i + 3];
  return out;
}

}  // namespace cml::ch03
