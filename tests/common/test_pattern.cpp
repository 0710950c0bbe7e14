// The suite's benchmark data (common/pattern.hpp): random_float is distinct, finite and never the poison
// where it must be, and looks random where a sequence would not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/pattern.hpp"

namespace {

using cml::kDistinctFloats;
using cml::random_float;

int popcount32(std::uint32_t x) {
  int n = 0;
  for (; x != 0; x &= x - 1) ++n;
  return n;
}

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// The first 4M values, and windows around 2^24, 2^28 (a 16384^2 matrix), 2^30 and the last distinct index:
// all different, all finite, none the poison word.
TEST(RandomFloat, DistinctFiniteAndNeverThePoison) {
  std::vector<std::uint32_t> seen;
  const auto add = [&](std::uint64_t first, std::uint64_t count) {
    for (std::uint64_t i = first; i < first + count; ++i) {
      const float f = random_float(i);
      ASSERT_TRUE(std::isfinite(f)) << i;
      ASSERT_GT(f, 0.0f) << i;
      seen.push_back(bits_of(f));
    }
  };
  add(0, std::uint64_t{1} << 22);
  for (std::uint64_t start : {(std::uint64_t{1} << 24) - 500, std::uint64_t{1} << 28,
                              (std::uint64_t{1} << 30) - 1000, std::uint64_t{kDistinctFloats} - 1000})
    add(start, 1000);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end()) << "two indices share a value";
  EXPECT_FALSE(std::binary_search(seen.begin(), seen.end(), cml::kPoisonWord));
  EXPECT_EQ(bits_of(random_float(kDistinctFloats)), bits_of(random_float(0)))
      << "the values repeat after the last distinct index";
}

// Neighbours share no pattern: they differ in about half of their 30 low bits (a counting sequence differs
// in about 2), and the step from one to the next is never the step before it (an arithmetic sequence's is
// always the same).
TEST(RandomFloat, NeighboursShareNoPattern) {
  constexpr std::uint64_t kCount = 1 << 16;
  double differing_bits = 0.0;
  int repeated_steps = 0;
  for (std::uint64_t i = 0; i + 2 < kCount; ++i) {
    const std::uint32_t a = bits_of(random_float(i)), b = bits_of(random_float(i + 1)),
                        c = bits_of(random_float(i + 2));
    differing_bits += popcount32(a ^ b);
    repeated_steps += (b - a == c - b);
  }
  const double mean = differing_bits / static_cast<double>(kCount - 2);
  EXPECT_GT(mean, 13.0);
  EXPECT_LT(mean, 17.0);
  EXPECT_LE(repeated_steps, 2);
}

}  // namespace
