// CPU side of the managed-vs-manual demo: the book's input initialisation and the reference sum.
// Inputs are random, as the book's are (it draws them with rand()); here they are random operands
// (common/pattern.hpp), so C = A + B is one correctly rounded add on either side and compared bit for bit.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "common/pattern.hpp"

namespace cml::ch02 {

inline float matrix_input_a(std::size_t i) { return random_operand(i, 0xA); }
inline float matrix_input_b(std::size_t i) { return random_operand(i, 0xB); }

// What both versions of the book's program do on the host before the GPU runs: fill A and B, zero C.
// Called on freshly allocated memory, it also pays for the first touch of every page.
inline void init_matrices(float* a, float* b, float* c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = matrix_input_a(i);
    b[i] = matrix_input_b(i);
  }
  std::memset(c, 0, n * sizeof(float));
}

inline std::vector<float> matrix_sum_reference(std::size_t n) {
  std::vector<float> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = matrix_input_a(i) + matrix_input_b(i);
  return c;
}

}  // namespace cml::ch02
