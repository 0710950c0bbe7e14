// Data that proves a copy or an allocation right, as a function of the word index (host and device), and
// that looks random to the memory system: neighbouring words share no bit pattern, nothing a compressor could
// use (02_global_memory's compressible_memory shows what data that compresses does to a benchmark).
//
// Word i of a buffer holds pattern_word(i, seed): i * 2654435761 + seed modulo 2^31, then mix_bits<31>, a
// mix that is one-to-one on 31 bits. So the words of any buffer of up to 2^31 words (8 GB) are all
// different: a copy that drops, repeats or shifts even one word cannot match. The top bit is always clear,
// so no pattern word equals the poison word 0xFFFFFFFF that outputs are filled with before every run. The
// device kernels that fill and check the same pattern are in pattern_kernels.cuh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/verify.hpp"

#if defined(__CUDACC__)
#define CML_HD __host__ __device__
#else
#define CML_HD
#endif

namespace cml {

inline constexpr std::uint32_t kPoisonWord = 0xFFFFFFFFu;

// SplitMix64: the next number of a random-looking 64-bit sequence; the state advances by a fixed odd step,
// so a seed (or a word index) gives the same sequence on every machine. Host only: the CPU references'
// shuffles and hashed buffer words.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// murmur3's 32-bit finaliser: every output bit depends on every input bit, so neighbouring inputs give
// words that share no pattern (nothing for a compressor or a cache-line coincidence to use).
CML_HD inline std::uint32_t fmix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

// Multiplications by odd constants modulo 2^bits and xor-shifts to the right are each one-to-one on `bits`
// bits; together they scatter neighbouring inputs over the whole range.
template <int kBits>
CML_HD inline std::uint32_t mix_bits(std::uint32_t x) {
  constexpr std::uint32_t kMask = (1u << kBits) - 1;
  x = (x * 0x2C1B3C6Du) & kMask;
  x ^= x >> 16;
  x = (x * 0x297A2D39u) & kMask;
  x ^= x >> 14;
  x = (x * 0x5BD1E995u) & kMask;
  x ^= x >> 15;
  return x;
}

CML_HD inline std::uint32_t pattern_word(std::uint64_t i, std::uint32_t seed) {
  return mix_bits<31>((static_cast<std::uint32_t>(i) * 2654435761u + seed) & 0x7FFFFFFFu);
}

CML_HD inline float float_of_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// Benchmark data for float buffers: the value of element i looks random (neighbouring elements share no bit
// pattern, so nothing a compressor or a coincidence of cache lines could use) and is distinct for every
// i < kDistinctFloats, so an element that lands in the wrong place can never match by accident; beyond that
// the values repeat. Every value is positive and finite (2.0f up to FLT_MAX: bit patterns 0x40000000 +
// [0, kDistinctFloats)), never the poison word. The bit pattern is 0x40000000 plus a permutation of
// [0, kDistinctFloats): mix_bits<30> applied again while the result is out of range ("cycle walking"),
// which keeps it one-to-one.
inline constexpr std::uint32_t kDistinctFloats = 0x3F800000u;

CML_HD inline float random_float(std::uint64_t i) {
  std::uint32_t x = static_cast<std::uint32_t>(i % kDistinctFloats);
  do x = mix_bits<30>(x);
  while (x >= kDistinctFloats);  // less than 1% of the 30-bit values: one more round, rarely two
  return float_of_bits(0x40000000u + x);
}

// An operand for a kernel that does arithmetic: a float in [1, 2) with random-looking mantissa bits (23 of
// pattern_word's). Adding two such operands, or a constant, is one correctly rounded IEEE operation, the same
// on the CPU and the GPU, so the result still matches its reference bit for bit; an operand read from the
// wrong index gives another result (but for odds of 2^-23 per element).
CML_HD inline float random_operand(std::uint64_t i, std::uint32_t seed) {
  return float_of_bits(0x3F800000u | (pattern_word(i, seed) >> 8));
}

inline void fill_pattern_host(std::uint32_t* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern_word(i, seed);
}

inline void poison_host(void* p, std::size_t bytes) { std::memset(p, kPoisonByte, bytes); }

// Compares n host words with the pattern plus `delta` (increments applied since the fill). The host must
// be able to read them quickly: not write-combined memory, whose uncached reads are far slower.
inline VerifyResult check_pattern_host(const std::uint32_t* p, std::size_t n, std::uint32_t seed,
                                       std::uint32_t delta = 0) {
  VerifyResult r;
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t want = pattern_word(i, seed) + delta;
    if (p[i] != want) r.add(i, std::to_string(p[i]), std::to_string(want));
  }
  return r;
}

}  // namespace cml
