// CPU reference for C[i + w] = A[i + r] + B[i + r] (offset_add.cuh). Host-only.
//
// The inputs are random operands (common/pattern.hpp): each sum is one correctly rounded float add, the same
// on the CPU and the GPU, so the GPU result must match the reference bit for bit; A and B come from
// different seeds, so reading from the wrong offset cannot produce the right sum (but for 2^-23 odds).
#pragma once

#include <cstddef>
#include <vector>

#include "02_global_memory/kernels/demo_support.hpp"
#include "common/pattern.hpp"
#include "common/verify.hpp"

namespace cml::ch02 {

// Largest offset any demo uses; every buffer has this many spare elements.
inline constexpr unsigned kMaxOffset = 128;

inline float offset_input_a(std::size_t j) { return random_operand(j, 0xA); }
inline float offset_input_b(std::size_t j) { return random_operand(j, 0xB); }

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
