// --rounds of the shared-memory tile demos (smem_square, smem_rectangle). Each block repeats write / barrier /
// read / barrier `rounds` times, so the time is the access pattern's, not the launch's. The run's time (and
// the CPU reference's) grows with blocks x rounds: both are capped at 64x their defaults, and so is the product.
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

}  // namespace cml::ch03
