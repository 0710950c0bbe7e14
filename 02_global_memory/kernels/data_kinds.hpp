// The data a benchmark fills its buffers with, as a function of the word index, usable on host and
// device: the kernels generate it, the CPU references check against it. On memory that the GPU
// compresses, zeros and a constant move fewer bytes through DRAM than random words do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/pattern.hpp"

namespace cml::ch02 {

enum class DataKind { zeros = 0, constant = 1, small_ints = 2, random = 3 };

inline constexpr DataKind kDataKinds[] = {DataKind::zeros, DataKind::constant, DataKind::small_ints,
                                          DataKind::random};

inline constexpr std::string_view data_kind_name(DataKind k) {
  switch (k) {
    case DataKind::zeros: return "zeros";
    case DataKind::constant: return "constant";
    case DataKind::small_ints: return "small_ints";
    case DataKind::random: return "random";
  }
  return "?";
}

// The index, both halves folded in, through murmur3's finaliser (common/pattern.hpp): neighbouring words
// share no pattern a compressor could use.
CML_HD inline std::uint32_t mix32(std::uint64_t i) { return fmix32(static_cast<std::uint32_t>(i ^ (i >> 32))); }

// Word i of a buffer of `kind`: zeros; 1.0f everywhere; integers 0..15 (four significant bits of 32);
// a hash of the index.
// [doc:data_word]
CML_HD inline std::uint32_t data_word(DataKind kind, std::uint64_t i) {
  switch (kind) {
    case DataKind::zeros: return 0u;
    case DataKind::constant: return 0x3F800000u;
    case DataKind::small_ints: return mix32(i) & 0xFu;
    case DataKind::random: return mix32(i);
  }
  return 0u;
}
// [/doc:data_word]

}  // namespace cml::ch02
