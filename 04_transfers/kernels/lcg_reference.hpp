// CPU reference for the overlap demo's kernel: `steps` iterations of the linear congruential map
// x -> a x + c (mod 2^32) on every word. The GPU runs the loop; the reference uses the fact that a chain of
// affine maps is one affine map, so checking 64 M words costs one multiply-add each, whatever `steps` is.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cml::ch04 {

inline constexpr std::uint32_t kLcgA = 1664525u;
inline constexpr std::uint32_t kLcgC = 1013904223u;

struct Affine {
  std::uint32_t a = 1, c = 0;  // x -> a x + c (mod 2^32)
};

// The composition of `steps` LCG steps: after one more step, a(A x + C) + c = (aA) x + (aC + c).
inline Affine lcg_power(std::uint32_t steps) {
  Affine f;
  for (std::uint32_t k = 0; k < steps; ++k) f = {kLcgA * f.a, kLcgA * f.c + kLcgC};
  return f;
}

// The literal loop, as the kernel runs it (for tests of the closed form).
inline std::uint32_t lcg_steps(std::uint32_t x, std::uint32_t steps) {
  for (std::uint32_t k = 0; k < steps; ++k) x = x * kLcgA + kLcgC;
  return x;
}

inline void lcg_reference(const std::uint32_t* in, std::uint32_t* out, std::size_t n, std::uint32_t steps) {
  const Affine f = lcg_power(steps);
  for (std::size_t i = 0; i < n; ++i) out[i] = f.a * in[i] + f.c;
}

}  // namespace cml::ch04
