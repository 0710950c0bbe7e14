// Comparing GPU results with a CPU reference: exact for data movement, tolerance for arithmetic.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace cml {

// Every byte of an output is set to this before each variant runs (DeviceBuffer::poison): 0xFF makes
// NaN floats, -1 signed integers and 0xFFFFFFFF words, so a kernel that skips elements cannot pass on
// what an earlier variant left behind.
inline constexpr int kPoisonByte = 0xFF;

struct VerifyResult {
  std::size_t checked = 0;
  std::size_t mismatches = 0;
  std::vector<std::string> first;  // the first (up to 10) mismatches, "index i: got X, expected Y"
  bool ok() const { return mismatches == 0; }
  void add(std::size_t index, const std::string& got, const std::string& expected) {
    ++mismatches;
    if (first.size() < 10) first.push_back("index " + std::to_string(index) + ": got " + got + ", expected " + expected);
  }
};

namespace detail {
template <class T>
std::string to_text(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    return buf;
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else {
    // Aggregates (float2, structs): show the raw bytes.
    const auto* b = reinterpret_cast<const unsigned char*>(&v);
    std::string s = "0x";
    static const char* hex = "0123456789abcdef";
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      s += hex[b[i] >> 4];
      s += hex[b[i] & 15];
    }
    return s;
  }
}
}  // namespace detail

// Bit-exact comparison: memory-movement kernels must reproduce every byte.
template <class T>
VerifyResult compare_exact(const T* got, const T* expected, std::size_t n) {
  VerifyResult r;
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i)
    if (std::memcmp(&got[i], &expected[i], sizeof(T)) != 0) r.add(i, detail::to_text(got[i]), detail::to_text(expected[i]));
  return r;
}
template <class T>
VerifyResult compare_exact(const std::vector<T>& got, const std::vector<T>& expected) {
  VerifyResult r;
  if (got.size() != expected.size()) {
    r.add(0, "size " + std::to_string(got.size()), "size " + std::to_string(expected.size()));
    return r;
  }
  return compare_exact(got.data(), expected.data(), got.size());
}

// |got - expected| <= atol + rtol * |expected|; NaN never passes.
template <class T>
VerifyResult compare_close(const T* got, const T* expected, std::size_t n, double rtol, double atol) {
  VerifyResult r;
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[i]);
    const double e = static_cast<double>(expected[i]);
    const bool good = std::isfinite(g) && std::fabs(g - e) <= atol + rtol * std::fabs(e);
    if (!good) r.add(i, detail::to_text(got[i]), detail::to_text(expected[i]));
  }
  return r;
}
template <class T>
VerifyResult compare_close(const std::vector<T>& got, const std::vector<T>& expected, double rtol, double atol) {
  VerifyResult r;
  if (got.size() != expected.size()) {
    r.add(0, "size " + std::to_string(got.size()), "size " + std::to_string(expected.size()));
    return r;
  }
  return compare_close(got.data(), expected.data(), got.size(), rtol, atol);
}

// One scalar check, for results with a closed form.
template <class T>
VerifyResult compare_value(const T& got, const T& expected, const std::string& what) {
  VerifyResult r;
  r.checked = 1;
  if (std::memcmp(&got, &expected, sizeof(T)) != 0) r.add(0, what + "=" + detail::to_text(got), detail::to_text(expected));
  return r;
}

}  // namespace cml
