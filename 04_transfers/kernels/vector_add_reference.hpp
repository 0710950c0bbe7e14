// CPU reference for the zero-copy vector add: c[i] = a[i + offset] + b[i + offset].
// The inputs are random operands (common/pattern.hpp): each sum is one correctly rounded fp32 add, the same
// on the CPU and the GPU, so results compare bit-exactly.
#pragma once

#include <cstddef>
#include <vector>

#include "common/pattern.hpp"

namespace cml::ch04 {

inline float vector_add_input_a(std::size_t i) { return random_operand(i, 0xA); }
inline float vector_add_input_b(std::size_t i) { return random_operand(i, 0xB); }

inline void fill_vector_add_inputs(float* a, float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = vector_add_input_a(i);
    b[i] = vector_add_input_b(i);
  }
}

inline std::vector<float> vector_add_reference(const float* a, const float* b, std::size_t n, std::size_t offset) {
  std::vector<float> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i + offset] + b[i + offset];
  return c;
}

}  // namespace cml::ch04
