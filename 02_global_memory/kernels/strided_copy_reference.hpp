// CPU reference for the strided copy (strided_copy.cuh). Host-only.
//
// Elements are raw 32-bit words (uint32_t, uint2, uint4): word number j of the input buffer holds j,
// so a copy that moves, drops or shifts an element cannot match, and no float rounding is involved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "02_global_memory/kernels/demo_support.hpp"
#include "common/pattern.hpp"
#include "common/verify.hpp"

namespace cml::ch02 {

// The input buffer of `count` elements of T, word j holding pattern_word(j, 0x57): all words distinct and
// random-looking (common/pattern.hpp).
template <class T>
std::vector<T> strided_input(std::size_t count) {
  static_assert(sizeof(T) % sizeof(std::uint32_t) == 0, "elements are whole 32-bit words");
  std::vector<T> v(count);
  auto* words = reinterpret_cast<std::uint32_t*>(v.data());
  const std::size_t n_words = count * (sizeof(T) / sizeof(std::uint32_t));
  for (std::size_t j = 0; j < n_words; ++j) words[j] = pattern_word(j, 0x57);
  return v;
}

// Elements copied when a buffer of `buffer_elements` is walked with `stride`: every index i * stride
// below buffer_elements.
inline std::size_t strided_count(std::size_t buffer_elements, std::size_t stride) {
  return (buffer_elements + stride - 1) / stride;
}

// The copied elements: out[i * stride] == in[i * stride] for i < n.
template <class T>
VerifyResult verify_strided_copy(const T* out, const T* in, std::size_t n, std::size_t stride) {
  VerifyResult r;
  if (stride == 1) {
    expect_equal(r, out, in, n, 0);
    return r;
  }
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i * stride;
    if (std::memcmp(&out[j], &in[j], sizeof(T)) != 0) r.add(j, detail::to_text(out[j]), detail::to_text(in[j]));
  }
  return r;
}

// The elements between the copied ones must still hold the poison (used by the tests, whose buffers
// are small; the demo checks the copied elements only, to keep a 35-point sweep within seconds).
template <class T>
VerifyResult verify_strided_gaps(const T* out, std::size_t buffer_elements, std::size_t stride) {
  VerifyResult r;
  for (std::size_t j = 0; j < buffer_elements; ++j)
    if (j % stride != 0) expect_poison(r, &out[j], 1, j);
  return r;
}

}  // namespace cml::ch02
