#include "common/device_info.hpp"

#include <cuda_runtime.h>

#include <cctype>

#include <fmt/format.h>

#include "common/bandwidth.hpp"
#include "common/cuda_check.hpp"

namespace cml {
namespace {

int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

}  // namespace

ComputeCapability current_compute_capability() {
  int device = 0;
  ComputeCapability cc;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&cc.major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&cc.minor, cudaDevAttrComputeCapabilityMinor, device));
  return cc;
}

std::string slugify(const std::string& name) {
  std::string out;
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown-gpu" : out;
}

std::string DeviceInfo::slug() const { return slugify(name); }

std::string format_version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

DeviceInfo query_device(int dev) {
  DeviceInfo d;
  d.ordinal = dev;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.total_memory = prop.totalGlobalMem;
  d.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  d.persisting_l2_max = static_cast<std::size_t>(prop.persistingL2CacheMaxSize);
  d.access_policy_max_window = static_cast<std::size_t>(prop.accessPolicyMaxWindowSize);
  d.shared_per_block = prop.sharedMemPerBlock;
  d.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  d.shared_per_sm = prop.sharedMemPerMultiprocessor;
  d.regs_per_sm = prop.regsPerMultiprocessor;
  d.regs_per_block = prop.regsPerBlock;
  d.warp_size = prop.warpSize;
  d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  d.async_engines = prop.asyncEngineCount;
  d.ecc = prop.ECCEnabled != 0;
  d.can_map_host = prop.canMapHostMemory != 0;
  d.unified_addressing = prop.unifiedAddressing != 0;
  d.concurrent_managed = prop.concurrentManagedAccess != 0;
  d.pageable_access = prop.pageableMemoryAccess != 0;
  // CUDA 13 removed cudaDeviceProp::clockRate and ::memoryClockRate; the attributes remain.
  d.sm_clock_khz = attr(cudaDevAttrClockRate, dev);
  d.memory_clock_khz = attr(cudaDevAttrMemoryClockRate, dev);
  d.bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth, dev);
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  d.peak_gb_per_s = theoretical_gb_per_s(d.memory_clock_khz, d.bus_width_bits);
  return d;
}

void print_device_header(const DeviceInfo& d, std::FILE* out) {
  const auto mib = [](std::size_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); };
  fmt::print(out, "device {}: {} (sm_{}{}), {} SMs, SM clock {} MHz, memory clock {} MHz, {}-bit bus\n",
             d.ordinal, d.name, d.cc_major, d.cc_minor, d.sm_count, d.sm_clock_khz / 1000,
             d.memory_clock_khz / 1000, d.bus_width_bits);
  fmt::print(out, "  memory {:.1f} GiB{}, L2 {:.1f} MiB (persisting max {:.2f} MiB), theoretical {:.0f} GB/s\n",
             static_cast<double>(d.total_memory) / (1024.0 * 1024.0 * 1024.0), d.ecc ? " (ECC on)" : "",
             mib(d.l2_bytes), mib(d.persisting_l2_max), d.peak_gb_per_s);
  fmt::print(out, "  driver {}, runtime {}; GB = 1e9 bytes, bytes counted as read + written\n",
             format_version(d.driver_version), format_version(d.runtime_version));
}

}  // namespace cml
