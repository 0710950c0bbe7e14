// GoogleTest helpers for GPU tests: skip (never pass) when no device is usable.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/harness.hpp"

#define CML_REQUIRE_GPU()                                                     \
  do {                                                                        \
    std::string cml_why_;                                                     \
    if (!::cml::gpu_available(&cml_why_)) GTEST_SKIP() << "no usable CUDA GPU: " << cml_why_; \
  } while (0)

namespace cml::test_support {

// scripts/sanitize.sh sets CML_SANITIZER_SWEEP=1. Under compute-sanitizer every launch and copy is 10 to
// 1000 times slower, so the tests keep every small, odd and boundary shape but skip their largest sizes
// (plain ctest runs those) and walk a boundary subset of their exhaustive shape sweeps.
inline bool sanitizer_sweep() {
  const char* v = std::getenv("CML_SANITIZER_SWEEP");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

constexpr std::size_t kSanitizerMaxElements = std::size_t{1} << 17;

// True during the sanitizer sweep for a working set larger than kSanitizerMaxElements: a loop over sizes
// leaves such a size to plain ctest (the macro below skips a whole test instead).
inline bool too_large_under_sanitizer(std::size_t elements) {
  return sanitizer_sweep() && elements > kSanitizerMaxElements;
}

// 1..max normally. Under the sanitizer sweep: 1..5, the sides next to the multiples of 8 up to 33 (one
// and two tiles of every tile shape in the suite, and their ragged neighbours), and max - 1, max.
inline std::vector<std::size_t> shape_sides(std::size_t max) {
  std::vector<std::size_t> sides;
  for (std::size_t s = 1; s <= max; ++s) {
    const bool boundary = s <= 5 || (s <= 33 && (s % 8 <= 1 || s % 8 == 7)) || s + 1 >= max;
    if (!sanitizer_sweep() || boundary) sides.push_back(s);
  }
  return sides;
}

}  // namespace cml::test_support

// Skips (never passes) a test whose working set exceeds kSanitizerMaxElements during the sanitizer sweep.
#define CML_SKIP_LARGE_UNDER_SANITIZER(elements)                                                      \
  do {                                                                                                \
    if (::cml::test_support::too_large_under_sanitizer(elements))                                     \
      GTEST_SKIP() << "size " << (elements) << " is run by plain ctest, not under compute-sanitizer"; \
  } while (0)
