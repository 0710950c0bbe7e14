// The one memory figure of an SM that no CUDA API reports: the size of its unified L1/shared storage,
// out of which the carveout takes shared memory (cudaDevAttrMaxSharedMemoryPerMultiprocessor is only the
// largest share shared memory can get). Plain C++ (no CUDA) so the CPU tests can check the table.
//
// Source: the CUDA C++ Programming Guide, table "Shared Memory Capacity per Compute Capability" (unified
// data cache size), and its per-architecture sections for 7.0. An architecture the table does not list
// gets 0 and the source says so: the figure is never guessed from a neighbouring architecture.
#pragma once

#include <cstddef>
#include <string>

namespace cml::ch01 {

// Bytes of unified L1/shared storage per SM for compute capability major.minor; 0 when not documented.
inline std::size_t documented_unified_l1_bytes(int major, int minor) {
  constexpr std::size_t kib = 1024;
  switch (major * 10 + minor) {
    case 70: return 128 * kib;
    case 75: return 96 * kib;
    case 80: return 192 * kib;
    case 86: return 128 * kib;
    case 87: return 192 * kib;
    case 89: return 128 * kib;
    case 90: return 256 * kib;
    case 100: return 256 * kib;
    case 103: return 256 * kib;
    case 107: return 336 * kib;
    case 110: return 256 * kib;
    case 120: return 128 * kib;
    case 121: return 128 * kib;
    default: return 0;
  }
}

// Where the figure comes from, for the `source` column.
inline std::string unified_l1_source(int major, int minor) {
  const std::string sm = "sm_" + std::to_string(major * 10 + minor);
  if (documented_unified_l1_bytes(major, minor) == 0) return "not documented for " + sm;
  return "documented for " + sm + " (CUDA C++ Programming Guide; no API reports it)";
}

}  // namespace cml::ch01
