// What the device says about itself, read once and printed as the header of every demo.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace cml {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int sm_clock_khz = 0;       // cudaDevAttrClockRate (peak)
  int memory_clock_khz = 0;   // cudaDevAttrMemoryClockRate (peak)
  int bus_width_bits = 0;
  std::size_t total_memory = 0;
  std::size_t l2_bytes = 0;
  std::size_t persisting_l2_max = 0;
  std::size_t access_policy_max_window = 0;
  std::size_t shared_per_block = 0;
  std::size_t shared_per_block_optin = 0;
  std::size_t shared_per_sm = 0;
  int regs_per_sm = 0;
  int regs_per_block = 0;
  int warp_size = 32;
  int max_threads_per_sm = 0;
  int async_engines = 0;
  bool ecc = false;
  bool can_map_host = false;
  bool unified_addressing = false;
  bool concurrent_managed = false;
  bool pageable_access = false;
  int driver_version = 0;
  int runtime_version = 0;
  double peak_gb_per_s = 0.0;  // theoretical DRAM bandwidth

  // "nvidia-h200" style name for result folders.
  std::string slug() const;
};

struct ComputeCapability {
  int major = 0, minor = 0;
};
// The compute capability of the current device (cudaGetDevice), for the checks made where a kernel is
// launched rather than where the demo starts (throws CudaError on failure).
ComputeCapability current_compute_capability();

// Reads everything above for `ordinal` (throws CudaError on failure).
DeviceInfo query_device(int ordinal);
std::string slugify(const std::string& name);
std::string format_version(int cuda_version);  // 13000 -> "13.0"
void print_device_header(const DeviceInfo& d, std::FILE* out);

}  // namespace cml
