// Where the batching demo's chunks live, and the CPU side of packing them (host-only).
//
// `total_words` of payload are split into chunks of `chunk_words`; chunk j sits at j * stride_words in a
// scattered buffer (stride = 2 x chunk: every chunk is followed by a gap of the same size that must NOT be
// copied). Packing copies the chunks back to back into a contiguous buffer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "04_transfers/kernels/transfer_pattern.hpp"
#include "common/verify.hpp"

namespace cml::ch04 {

struct ChunkLayout {
  std::size_t total_words = 0;
  std::size_t chunk_words = 1;

  std::size_t stride_words() const { return 2 * chunk_words; }
  std::size_t chunks() const { return (total_words + chunk_words - 1) / chunk_words; }
  std::size_t length(std::size_t j) const { return std::min(chunk_words, total_words - j * chunk_words); }
  std::size_t scattered_offset(std::size_t j) const { return j * stride_words(); }
  std::size_t packed_offset(std::size_t j) const { return j * chunk_words; }
  std::size_t scattered_words() const { return chunks() * stride_words(); }
};

inline void pack_host(const std::uint32_t* scattered, std::uint32_t* packed, const ChunkLayout& l) {
  for (std::size_t j = 0; j < l.chunks(); ++j)
    std::memcpy(packed + l.packed_offset(j), scattered + l.scattered_offset(j), l.length(j) * sizeof(std::uint32_t));
}

inline void unpack_reference(const std::uint32_t* packed, std::uint32_t* scattered, const ChunkLayout& l) {
  for (std::size_t j = 0; j < l.chunks(); ++j)
    std::memcpy(scattered + l.scattered_offset(j), packed + l.packed_offset(j), l.length(j) * sizeof(std::uint32_t));
}

// After copying the chunks of a scattered source filled with pattern_word(i, seed) to the same places of
// a poisoned destination: chunk words hold the pattern of their own index, gap words are still poison.
inline VerifyResult check_scattered(const std::uint32_t* got, const ChunkLayout& l, std::uint32_t seed) {
  VerifyResult r;
  const std::size_t n = l.scattered_words();
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i / l.stride_words(), in_chunk = i - l.scattered_offset(j);
    const bool copied = in_chunk < l.chunk_words && j * l.chunk_words + in_chunk < l.total_words;
    const std::uint32_t want = copied ? pattern_word(i, seed) : kPoisonWord;
    if (got[i] != want) r.add(i, std::to_string(got[i]), std::to_string(want));
  }
  return r;
}

}  // namespace cml::ch04
