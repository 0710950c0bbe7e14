// bank_conflicts: how does the time of a shared-memory load scale with its conflict degree?
//
// Shared memory serves one wavefront per clock per SM, so a pattern's time should be a small fixed cost
// plus a part proportional to its wavefronts: a stride of s 4-byte words is gcd(s, 32)-way conflicted, odd
// strides are free, and 8- and 16-byte loads are served a half- or quarter-warp per wavefront. The kernel is
// bound by shared memory (16 independent loads per thread per round) so the wavefronts show in the time; the
// access model's count sits beside each row, and each point is verified (per-thread sums) before it is timed.
//
// Run: build/bin/bank_conflicts [--variant width4] [--size LOADS_PER_THREAD] [--csv out.csv]
#include <cmath>
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

const char* const kWidths[] = {"width4", "width8", "width16"};

// The worst of `f(row)` over the named patterns of every width (NaN if any point lacks a measurement).
template <class Pick, class F>
double worst_over_widths(const RunRows& r, Pick pick, F f) {
  std::vector<double> v;
  for (const char* w : kWidths)
    for (const Row* row : r.rows(w))
      if (pick(row->params)) v.push_back(f(*row));
  if (v.empty()) throw ClaimError("no rows matched");
  return max_of(v);
}

Demo make_demo() {
  Demo d;
  d.name = "bank_conflicts";
  d.summary =
      "A warp reading shared memory with stride 1..32 elements (4, 8, 16 bytes), broadcast, permutations,\n"
      "random, padded and swizzled columns, in a kernel bound by shared memory: time against the access\n"
      "model's wavefronts per request.";
  d.size_meaning = "shared loads per thread (multiple of 16)";
  d.variants = {
      {"width4", "4-byte elements (LDS.32): conflict-free = 1 wavefront", [](Context& c) { sweep(c, 4); }},
      {"width8", "8-byte elements (LDS.64): conflict-free = 2 wavefronts", [](Context& c) { sweep(c, 8); }},
      {"width16", "16-byte elements (LDS.128): conflict-free = 4 wavefronts", [](Context& c) { sweep(c, 16); }},
  };
  d.claims = {
      Claim{"time_follows_conflict_degree",
            "For every pattern but broadcast, the time relative to stride 1 follows the model's conflict degree "
            "(wavefronts per request over the conflict-free minimum).",
            "max over width4/8/16 and every pattern but broadcast of |vs_conflict_free / model_conflict_degree - 1|",
            Bound::at_most(0.10),
            "shared memory serves one wavefront per clock; the launch and the tile fill are a fixed cost of a few "
            "percent that makes the most conflicted patterns read a little low",
            ClaimKind::device,
            [](const RunRows& r) {
              return worst_over_widths(
                  r, [](const std::string& p) { return p != "broadcast"; },
                  [](const Row& row) {
                    return std::fabs(RunRows::value(row, "vs_conflict_free") /
                                         RunRows::value(row, "model_conflict_degree") -
                                     1.0);
                  });
            }},
      Claim{"thirty_two_way_conflict_costs_most",
            "A 32-way conflict (4-byte words, stride 32: every lane in one bank) takes tens of times as long as "
            "the conflict-free stride 1.",
            "vs_conflict_free of width4 stride=32", Bound::at_least(24.0),
            "32 wavefronts per request instead of 1; the fixed cost per launch keeps the ratio a little under 32",
            ClaimKind::device, [](const RunRows& r) { return r.value({"width4", "stride=32", "vs_conflict_free"}); }},
      Claim{"broadcast_costs_nothing",
            "All 32 lanes reading one address cost no more than the conflict-free stride 1, at every width.",
            "max over width4/8/16 of vs_conflict_free of broadcast", Bound::at_most(1.05),
            "one word is fetched once and broadcast to every lane; 5% is the noise between two equal patterns",
            ClaimKind::device,
            [](const RunRows& r) {
              return worst_over_widths(
                  r, [](const std::string& p) { return p == "broadcast"; },
                  [](const Row& row) { return RunRows::value(row, "vs_conflict_free"); });
            }},
      Claim{"padding_and_swizzle_remove_conflicts",
            "Reading a tile column costs no more than stride 1 once the tile has one word of padding per row or "
            "an XOR swizzle.",
            "max over width4/8/16 of vs_conflict_free of column_pad and column_swizzle", Bound::at_most(1.05),
            "both put the 32 elements of a column in 32 different banks; 5% is the noise between two equal "
            "patterns",
            ClaimKind::device,
            [](const RunRows& r) {
              return worst_over_widths(
                  r, [](const std::string& p) { return p == "column_pad" || p == "column_swizzle"; },
                  [](const Row& row) { return RunRows::value(row, "vs_conflict_free"); });
            }},
  };
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{16384}; };
  d.quick_size = 64;
  // The time of the sweep grows in proportion to the loads per thread; its 32-way points dominate it.
  d.max_size = [](const DeviceInfo&) { return std::uint64_t{16} * 16384; };
  d.max_size_reason = "16x the default: the 111-point sweep's time grows in proportion to the loads per thread";
  d.device_bytes = [](std::uint64_t) { return 64e6; };  // a few MB whatever the loads per thread
  d.check_options = [](Context& ctx) { (void)pattern_rounds(ctx.size()); };
  d.cold_by_default = false;                            // on-chip only
  d.warmup_ms = 10.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
