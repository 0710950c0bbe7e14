// Published specifications of GPUs a reader may own, as DeviceInfo, so that a demo's size planning
// (its default size and the device memory that size needs) can be checked for each of them without
// the card: `demo --plan-sizes`. Figures are the vendors' datasheet values (memory as the runtime
// reports it is slightly below the marketing figure, so the totals here are rounded down).
#pragma once

#include <vector>

#include "common/device_info.hpp"

namespace cml {

inline std::vector<DeviceInfo> published_cards() {
  constexpr std::size_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
  auto card = [](const char* name, int major, int minor, int sms, std::size_t mem, std::size_t l2,
                 std::size_t persisting, std::size_t smem_optin, std::size_t smem_sm, int threads_sm,
                 double peak) {
    DeviceInfo d;
    d.name = name;
    d.cc_major = major;
    d.cc_minor = minor;
    d.sm_count = sms;
    d.total_memory = mem;
    d.l2_bytes = l2;
    d.persisting_l2_max = persisting;
    d.access_policy_max_window = persisting > 0 ? 128 * MiB : 0;
    d.shared_per_block = 48 * KiB;
    d.shared_per_block_optin = smem_optin;
    d.shared_per_sm = smem_sm;
    d.regs_per_sm = 65536;
    d.regs_per_block = 65536;
    d.max_threads_per_sm = threads_sm;
    d.async_engines = 2;
    d.peak_gb_per_s = peak;
    return d;
  };
  return {
      // name, cc, SMs, memory, L2, persisting-L2 max, shared/block opt-in, shared/SM, threads/SM, GB/s
      card("Tesla T4", 7, 5, 40, 15 * GiB, 4 * MiB, 0, 64 * KiB, 64 * KiB, 1024, 320),
      card("A100 40GB", 8, 0, 108, 39 * GiB, 40 * MiB, 30 * MiB, 163 * KiB, 164 * KiB, 2048, 1555),
      card("RTX 4090", 8, 9, 128, 23 * GiB, 72 * MiB, 54 * MiB, 99 * KiB, 100 * KiB, 1536, 1008),
      card("L4", 8, 9, 58, 22 * GiB, 48 * MiB, 36 * MiB, 99 * KiB, 100 * KiB, 1536, 300),
      card("H100 80GB", 9, 0, 132, 79 * GiB, 50 * MiB, 31 * MiB + 256 * KiB, 227 * KiB, 228 * KiB, 2048, 3352),
      card("H200", 9, 0, 132, 139 * GiB, 60 * MiB, 37 * MiB + 512 * KiB, 227 * KiB, 228 * KiB, 2048, 4814),
      card("B200", 10, 0, 148, 178 * GiB, 126 * MiB, 79 * MiB, 227 * KiB, 228 * KiB, 2048, 8000),
  };
}

}  // namespace cml
