// --rounds and the sizes of the shared-memory tile demos (smem_square, smem_rectangle). Each block repeats
// write / barrier / read / barrier `rounds` times, so the time is the access pattern's, not the launch's. The
// run's time (and the CPU reference's) grows with blocks x rounds: both are capped at 64x their defaults, and so
// is the product.
#pragma once

#include <cstdint>
#include <string>

#include "common/harness.hpp"

namespace cml::ch03 {

inline constexpr std::uint64_t kDefaultRounds = 256;
inline constexpr std::uint64_t kMaxFactor = 64;

// The --rounds option, declared beside its parser below.
inline ExtraOption rounds_option() {
  return ExtraOption::size("rounds", "write/barrier/read/barrier rounds per block (2 with --quick)", kDefaultRounds);
}

// The --rounds of this run (2 with --quick), checked against the caps of a demo whose default --size is
// `blocks_per_sm` blocks per SM. Too many is a CliError, which the harness reports in one line.
inline int tile_rounds(Context& ctx, std::uint64_t blocks_per_sm) {
  const std::uint64_t v = ctx.extra_size("rounds", 2);
  if (v > kMaxFactor * kDefaultRounds)
    throw CliError("--rounds must be at most " + std::to_string(kMaxFactor * kDefaultRounds) + " (64x the default)");
  const std::uint64_t budget =
      kMaxFactor * blocks_per_sm * static_cast<std::uint64_t>(ctx.device().sm_count) * kDefaultRounds;
  if (ctx.size() * v > budget)
    throw CliError("--size x --rounds = " + std::to_string(ctx.size() * v) + " block-rounds is above this demo's limit of " +
                   std::to_string(budget) + " (64x the default run's work)");
  return static_cast<int>(v);
}

// The sizes of a tile demo: --size blocks of `threads` threads, each thread writing one 4-byte word,
// `blocks_per_sm` blocks per SM by default and at most 64x that; --rounds checked against the same caps.
inline void set_tile_demo_sizes(Demo& d, std::uint64_t blocks_per_sm, unsigned threads) {
  d.extras = {rounds_option()};
  d.check_options = [blocks_per_sm](Context& ctx) { (void)tile_rounds(ctx, blocks_per_sm); };
  d.default_size = [blocks_per_sm](const DeviceInfo& dev) {
    return blocks_per_sm * static_cast<std::uint64_t>(dev.sm_count);
  };
  d.quick_size = 2;
  d.max_size = [blocks_per_sm](const DeviceInfo& dev) {
    return kMaxFactor * blocks_per_sm * static_cast<std::uint64_t>(dev.sm_count);
  };
  d.max_size_reason = "64x the default: the run's time, and the CPU reference, grow in proportion to the blocks";
  d.device_bytes = [threads](std::uint64_t blocks) { return static_cast<double>(blocks) * threads * 4.0 + 1e6; };
  d.cold_by_default = false;  // on-chip only: flushing L2 would change nothing
  d.warmup_ms = 20.0;
}

}  // namespace cml::ch03
