// CPU reference for C[i + w] = A[i + r] + B[i + r] (offset_add.cuh). Host-only.
//
// The inputs are small integers stored as floats, so every sum is exact in float and the GPU result
// must match the reference bit for bit. A and B have different periods, both far above kMaxOffset,
// so reading from the wrong offset cannot produce the right sum.
#pragma once

#include <cstddef>
#include <vector>

#include "02_global_memory/kernels/demo_support.hpp"
#include "common/verify.hpp"

namespace cml::ch02 {

// Largest offset any demo uses; every buffer has this many spare elements.
inline constexpr unsigned kMaxOffset = 128;

inline float offset_input_a(std::size_t j) { return static_cast<float>(j % 4093); }
inline float offset_input_b(std::size_t j) { return static_cast<float>(2 * (j % 2039)); }

struct OffsetAddHost {
  std::vector<float> a, b;  // the inputs, n + kMaxOffset elements
  std::vector<float> sum;   // sum[j] = a[j] + b[j]: the expected C[i + w] is sum[i + r]
};

inline OffsetAddHost make_offset_add_host(std::size_t n) {
  OffsetAddHost h;
  const std::size_t len = n + kMaxOffset;
  h.a.resize(len);
  h.b.resize(len);
  h.sum.resize(len);
  for (std::size_t j = 0; j < len; ++j) {
    h.a[j] = offset_input_a(j);
    h.b[j] = offset_input_b(j);
    h.sum[j] = h.a[j] + h.b[j];
  }
  return h;
}

// `c` is the whole output buffer (n + kMaxOffset elements) after one launch on a poisoned buffer:
// c[w + i] == sum[r + i] for i < n, and the elements before w and after w + n were not written.
inline VerifyResult verify_offset_add(const float* c, const float* sum, std::size_t n, unsigned r, unsigned w) {
  VerifyResult res;
  expect_poison(res, c, w, 0);
  expect_equal(res, c + w, sum + r, n, w);
  expect_poison(res, c + w + n, kMaxOffset - w, w + n);
  return res;
}

}  // namespace cml::ch02
