// The sizes a growing buffer passes through, and what one growth step costs in memory, for vmm_growth.cu.
// Host-only C++ (no CUDA): the CPU tests check it without a GPU.
//
// A plan is the list of sizes the buffer has: plan[0] is its first allocation, every later entry is one
// growth step. Every size is a whole number of granules (the unit the driver maps, 2 MiB on current
// GPUs), so the mapping kind and the copying kind hold exactly the same bytes at every step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cli.hpp"

namespace cml::ch01 {

// The smallest granule any GPU with virtual memory management reports; --step must be at least this.
inline constexpr std::uint64_t kMinGranule = 2 * kMiB;
inline constexpr std::uint64_t kDefaultStep = 256 * kMiB;
inline constexpr std::uint64_t kDefaultFinal = 4 * kGiB;
// The most growth steps a plan may take: realloc in n steps copies about n/2 times the final size, so a
// run's copy volume grows with size x steps (256 steps to 16 GiB read and write 4 TiB in each
// timed pass).
inline constexpr std::uint64_t kMaxGrowthSteps = 256;

inline std::uint64_t round_up_to(std::uint64_t bytes, std::uint64_t granule) {
  if (granule == 0) throw std::invalid_argument("round_up_to: granule 0");
  return (bytes + granule - 1) / granule * granule;
}

// step, 2 step, 3 step, ... up to `final_bytes` (the last entry, also when it is not a multiple of the
// step), all rounded up to the granule. Bad options are a CliError (exit 2).
inline std::vector<std::uint64_t> fixed_step_plan(std::uint64_t final_bytes, std::uint64_t step, std::uint64_t granule) {
  if (step < kMinGranule) throw CliError("--step: at least 2M (one granule), got " + std::to_string(step));
  const std::uint64_t s = round_up_to(step, granule), last = round_up_to(final_bytes, granule);
  if (last <= s)
    throw CliError("--size " + std::to_string(final_bytes) + " leaves no growth step after the first " +
                   std::to_string(s) + " bytes (--step): give a larger --size or a smaller --step");
  if ((last - 1) / s > kMaxGrowthSteps)
    throw CliError("--size " + std::to_string(final_bytes) + " in --step " + std::to_string(s) + " takes " +
                   std::to_string((last - 1) / s) + " growth steps; at most " + std::to_string(kMaxGrowthSteps) +
                   " (realloc's copies grow with size x steps): give a larger --step");
  std::vector<std::uint64_t> plan;
  for (std::uint64_t b = s; b < last; b += s) plan.push_back(b);
  plan.push_back(last);
  return plan;
}

// first, 2 first, 4 first, ... up to `final_bytes`: std::vector's answer to growth, rounded like the above.
inline std::vector<std::uint64_t> doubling_plan(std::uint64_t final_bytes, std::uint64_t first, std::uint64_t granule) {
  std::vector<std::uint64_t> plan = fixed_step_plan(final_bytes, first, granule);  // validates the same way
  const std::uint64_t last = plan.back();
  plan.assign(1, plan.front());
  while (plan.back() * 2 < last) plan.push_back(plan.back() * 2);
  plan.push_back(last);
  return plan;
}

// How a buffer grows: by mapping more memory behind the addresses it has (VMM), or by allocating the new
// size, copying the contents over and freeing the old allocation (realloc).
enum class GrowBy { mapping, copying };

// What one growth step from `old_bytes` to `new_bytes` asks of the GPU.
struct StepCost {
  std::uint64_t copied = 0;  // bytes read + written by the copy (0 when mapping)
  std::uint64_t mapped = 0;  // bytes of new physical memory allocated and mapped
  std::uint64_t peak = 0;    // device memory the buffer holds at once during the step
};

inline StepCost step_cost(GrowBy how, std::uint64_t old_bytes, std::uint64_t new_bytes) {
  if (new_bytes <= old_bytes) throw std::invalid_argument("step_cost: a growth step must grow");
  if (how == GrowBy::mapping) return {0, new_bytes - old_bytes, new_bytes};
  return {2 * old_bytes, new_bytes, old_bytes + new_bytes};
}

// The default final size on a card with `total_memory` bytes: 4 GiB, or a quarter of the memory in whole
// default steps on a smaller card (realloc needs the old and the new buffer at once, next to what the
// driver and other programs hold), and at least two default steps.
inline std::uint64_t default_final_bytes(std::uint64_t total_memory) {
  const std::uint64_t quarter = total_memory / 4 / kDefaultStep * kDefaultStep;
  return std::max(2 * kDefaultStep, std::min(kDefaultFinal, quarter));
}

}  // namespace cml::ch01
