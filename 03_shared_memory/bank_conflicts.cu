// bank_conflicts: how the time of a shared-memory load scales with its conflict degree.
//
// Shows: a warp reading shared memory with lane l at element l * stride, stride 1..32, for 4-, 8- and
// 16-byte elements; then all lanes at one address (broadcast), a random permutation of 32 consecutive
// elements, 32 random elements, column 0 of a tile padded to 33 elements per row, and a column of a
// 32-wide tile stored with an XOR swizzle. The kernel (kernels/lane_pattern.cuh) is bound by shared
// memory: every thread issues 16 independent loads per round for --size loads in all, on 4 blocks of 256
// threads per SM. Beside each time: the access model's wavefronts per request, the conflict-free
// minimum for the width (1, 2 or 4: 8-byte loads are served a half-warp and 16-byte loads a quarter-warp
// per wavefront) and the conflict degree (their ratio). Every point is verified (per-thread sums of the
// loaded words vs the CPU reference) before it is timed.
// Expected observation (measured on an H200, defaults): time = 0.0104 ms + 0.265 ms x the model's
// wavefronts per request (one wavefront per clock per SM), within 0.7% for every row except the 8- and
// 16-byte broadcasts, which the hardware serves in 1 and 2 wavefronts (model: 2 and 4), so they take
// ~0.51x their stride-1 time. 4-byte stride 32 takes 30.8x stride 1 (vs_conflict_free; >= 25x required);
// odd strides, the 4-byte permutation and broadcast take 1.00x; column_pad and column_swizzle 1.00x
// (within 5% required).
// Run: build/bin/bank_conflicts [--variant width4] [--size LOADS_PER_THREAD] [--csv out.csv]
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/lane_pattern_bench.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

void sweep(Context& ctx, unsigned width) {
  PatternBench bench(ctx, width, ctx.size());
  std::vector<LanePattern> patterns;
  const std::vector<int> strides = ctx.quick() ? std::vector<int>{1, 2, 32} : [] {
    std::vector<int> all;
    for (int s = 1; s <= 32; ++s) all.push_back(s);
    return all;
  }();
  for (int s : strides) patterns.push_back(stride_pattern(s));
  patterns.push_back(broadcast_pattern());
  patterns.push_back(permutation_pattern(2024));
  patterns.push_back(random_pattern(2024));
  patterns.push_back(column_pad_pattern());
  patterns.push_back(column_swizzle_pattern());

  double conflict_free_ms = 0.0;  // stride 1, measured first
  for (const auto& p : patterns) {
    Row& row = bench.measure(p, p.name);
    if (!row.verified) continue;
    if (p.name == "stride=1") conflict_free_ms = row.median_ms;
    if (conflict_free_ms > 0.0) row.set("vs_conflict_free", row.median_ms / conflict_free_ms);
  }
  ctx.note(fmt::format("width {} B: {} blocks x {} threads, {} shared loads per thread; vs_conflict_free = "
                       "time / time of stride=1 (prediction: model_conflict_degree)",
                       width, bench.blocks(), kPatternBlock, ctx.size()));
}

Demo make_demo() {
  Demo d;
  d.name = "bank_conflicts";
  d.summary =
      "A warp reading shared memory with stride 1..32 elements (4, 8, 16 bytes), broadcast, permutations,\n"
      "random, padded and swizzled columns, in a kernel bound by shared memory. Expected: time follows the\n"
      "model's wavefronts; 4-byte stride 32 (32-way) >= 25x stride 1; padded/swizzled columns within 5%.";
  d.size_meaning = "shared loads per thread (multiple of 16)";
  d.variants = {
      {"width4", "4-byte elements (LDS.32): conflict-free = 1 wavefront", [](Context& c) { sweep(c, 4); }},
      {"width8", "8-byte elements (LDS.64): conflict-free = 2 wavefronts", [](Context& c) { sweep(c, 8); }},
      {"width16", "16-byte elements (LDS.128): conflict-free = 4 wavefronts", [](Context& c) { sweep(c, 16); }},
  };
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{16384}; };
  d.quick_size = 64;
  d.device_bytes = [](std::uint64_t) { return 64e6; };  // a few MB whatever the loads per thread
  d.cold_by_default = false;                            // on-chip only
  d.warmup_ms = 10.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
