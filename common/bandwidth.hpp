// Bandwidth accounting. Bytes are always read + written; GB = 1e9 bytes.
#pragma once

#include <cmath>

namespace cml {

// Effective bandwidth in GB/s for `bytes` moved in `ms` milliseconds.
inline double gb_per_s(double bytes, double ms) {
  if (!(ms > 0.0)) return NAN;
  return bytes / (ms * 1e-3) / 1e9;
}

// Theoretical DRAM bandwidth in GB/s from cudaDevAttrMemoryClockRate (kHz) and
// cudaDevAttrGlobalMemoryBusWidth (bits): two transfers per clock (double data rate).
inline double theoretical_gb_per_s(int memory_clock_khz, int bus_width_bits) {
  return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 * (static_cast<double>(bus_width_bits) / 8.0) / 1e9;
}

inline double percent_of(double value, double reference) {
  if (!(reference > 0.0)) return NAN;
  return 100.0 * value / reference;
}

}  // namespace cml
