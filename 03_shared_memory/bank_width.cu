// bank_width: what became of the 8-byte bank mode, and how are 8- and 16-byte accesses served now?
//
// cudaDeviceSetSharedMemConfig switched Kepler's banks between 4 and 8 bytes. On every GPU since Maxwell the
// banks are 4 bytes and fixed: asking for 8 succeeds and changes nothing (the deprecated calls are compiled
// with their warning silenced for those two lines). What replaced the mode is in the hardware: an 8-byte load
// is served a half-warp per wavefront and a 16-byte load a quarter-warp, and conflicts count only inside
// those groups. A conflict-free wavefront moves 128 bytes whatever the width: wide loads save instructions,
// not bandwidth.
//
// Run: build/bin/bank_width [--size LOADS_PER_THREAD] [--csv out.csv]
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/lane_pattern_bench.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

// The deprecated calls, isolated so the warning is silenced for them alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
cudaError_t legacy_get_bank_config(cudaSharedMemConfig* c) { return cudaDeviceGetSharedMemConfig(c); }
cudaError_t legacy_set_bank_config(cudaSharedMemConfig c) { return cudaDeviceSetSharedMemConfig(c); }
#pragma GCC diagnostic pop

// 0 when the query names no width (cudaSharedMemBankSizeDefault): the claim then fails rather than read 4.
int bank_bytes(cudaSharedMemConfig c) {
  switch (c) {
    case cudaSharedMemBankSizeFourByte: return 4;
    case cudaSharedMemBankSizeEightByte: return 8;
    default: return 0;
  }
}

void legacy_config_api(Context& ctx) {
  cudaSharedMemConfig before{}, after{};
  // [doc:legacy_bank_config]
  CUDA_CHECK(legacy_get_bank_config(&before));
  // Documented to do nothing on devices with a fixed bank size; whatever it returns is reported.
  const cudaError_t set_result = legacy_set_bank_config(cudaSharedMemBankSizeEightByte);
  if (set_result != cudaSuccess) (void)cudaGetLastError();
  CUDA_CHECK(legacy_get_bank_config(&after));
  // [/doc:legacy_bank_config]
  const cudaError_t restore_result = legacy_set_bank_config(cudaSharedMemBankSizeDefault);
  if (restore_result != cudaSuccess) (void)cudaGetLastError();

  bool ok = ctx.check(compare_value(bank_bytes(before), 4, "bank bytes reported"), "4-byte banks");
  ok = ctx.check(compare_value(bank_bytes(after), 4, "bank bytes after asking for 8"), "request has no effect") && ok;
  ctx.add_row("query, set 8-byte, query", 1, ok)
      .set("bank_bytes", bank_bytes(before))
      .set("set_eight_byte_result", cudaGetErrorName(set_result))
      .set("bank_bytes_after_set", bank_bytes(after));
  ctx.note(fmt::format(
      "cudaDeviceGetSharedMemConfig: {}-byte banks (compute capability {}.{}); cudaDeviceSetSharedMemConfig("
      "EightByte) returned {} and the query still says {} bytes.",
      bank_bytes(before), ctx.device().cc_major, ctx.device().cc_minor, cudaGetErrorName(set_result),
      bank_bytes(after)));
  ctx.note(
      "Both calls are deprecated: only Kepler (CC 3.x) had configurable 8-byte banks. Since Maxwell a bank is 4 "
      "bytes wide and 32 banks deliver 128 bytes per clock; wider loads are split into half- or quarter-warp "
      "wavefronts instead (variant access_rules).");
}

// [doc:halves_mixed_pattern]
LanePattern halves_mixed_pattern() {
  // Lanes 0..15 get elements 0,16,1,17,...: every half-warp reads two elements per bank pair.
  LanePattern p{"halves_mixed", {}};
  for (int l = 0; l < 32; ++l) p.offsets[l] = (l % 2) * 16 + l / 2;
  return p;
}
// [/doc:halves_mixed_pattern]

void access_rules(Context& ctx) {
  struct Point {
    unsigned width;
    LanePattern pattern;
  };
  // [doc:width_points]
  const Point points[] = {
      {4, stride_pattern(1)},  {4, stride_pattern(2)},  {8, stride_pattern(1)},  {8, halves_mixed_pattern()},
      {8, stride_pattern(2)},  {8, stride_pattern(16)}, {8, broadcast_pattern()}, {16, stride_pattern(1)},
      {16, stride_pattern(2)},
  };
  // [/doc:width_points]
  PatternBench w4(ctx, 4, ctx.size()), w8(ctx, 8, ctx.size()), w16(ctx, 16, ctx.size());
  double base_ms = 0.0;  // w4 stride 1, the first point
  for (const auto& pt : points) {
    PatternBench& bench = pt.width == 4 ? w4 : pt.width == 8 ? w8 : w16;
    Row& row = bench.measure(pt.pattern, fmt::format("w{} {}", pt.width, pt.pattern.name));
    const double wavefronts = pattern_model(pt.pattern, pt.width).wavefronts_per_request();
    row.set("model_bytes_per_wavefront", 32.0 * pt.width / wavefronts);
    if (!row.verified) continue;
    if (base_ms == 0.0) base_ms = row.median_ms;
    row.set("vs_w4_stride1", row.median_ms / base_ms);
  }
}

Demo make_demo() {
  Demo d;
  d.name = "bank_width";
  d.summary =
      "The deprecated bank-size API (4-byte banks, fixed; asking for 8 changes nothing) and the 8-/16-byte\n"
      "access rules measured: half- and quarter-warp wavefronts, and the bandwidth of 4-, 8- and 16-byte\n"
      "conflict-free loads.";
  d.size_meaning = "shared loads per thread (multiple of 16)";
  d.variants = {
      {"legacy_config_api", "cudaDeviceGet/SetSharedMemConfig: query, request 8-byte banks, query again",
       legacy_config_api},
      {"access_rules", "4/8/16-byte loads: half- and quarter-warp wavefronts, measured", access_rules},
  };
  d.claims = {
      Claim{"banks_stay_four_bytes",
            "Asking for 8-byte banks changes nothing: the bank size query still says 4 bytes afterwards.",
            "bank_bytes_after_set of legacy_config_api", Bound::between(4.0, 4.0),
            "banks have been 4 bytes wide and fixed since Maxwell; only Kepler could switch to 8",
            ClaimKind::device,
            [](const RunRows& r) { return r.only_value("legacy_config_api", "bank_bytes_after_set"); }},
      Claim{"wide_loads_follow_wavefront_model",
            "Every 4-, 8- and 16-byte pattern but the 8-byte broadcast takes as many times the 4-byte stride-1 "
            "time as it needs wavefronts per request (half-warp and quarter-warp groups).",
            "max over access_rules rows but w8 broadcast of |vs_w4_stride1 / model_wavefronts_per_req - 1|",
            Bound::at_most(0.10),
            "one wavefront per clock; the launch and the tile fill are a fixed cost of a few percent that makes "
            "the longest patterns read a little low",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const Row* row : r.rows("access_rules"))
                if (row->params != "w8 broadcast")
                  v.push_back(std::fabs(RunRows::value(*row, "vs_w4_stride1") /
                                            RunRows::value(*row, "model_wavefronts_per_req") -
                                        1.0));
              return max_of(v);
            }},
      Claim{"mixed_half_warps_cost_double",
            "Giving each half-warp elements i and i+16 of the same 32 eight-byte elements doubles the time of "
            "the load.",
            "median_ms access_rules 'w8 halves_mixed' / 'w8 stride=1'", Bound::at_least(1.7),
            "conflicts count inside a half-warp: i and i+16 share banks, so each half-warp needs 2 wavefronts "
            "instead of 1; 1.7 leaves room for the fixed cost per launch",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.value({"access_rules", "w8 halves_mixed", "median_ms"}) /
                     r.value({"access_rules", "w8 stride=1", "median_ms"});
            }},
      Claim{"wide_loads_same_bandwidth",
            "Conflict-free 4-, 8- and 16-byte loads deliver the same bytes per second.",
            "max / min of smem_gb_per_s over w4, w8 and w16 stride=1", Bound::at_most(1.10),
            "every conflict-free wavefront moves 128 bytes, whatever the width; 10% covers the fixed cost per "
            "launch, which weighs more on the shorter 4-byte run",
            ClaimKind::device,
            [](const RunRows& r) {
              const std::vector<double> v = {r.value({"access_rules", "w4 stride=1", "smem_gb_per_s"}),
                                             r.value({"access_rules", "w8 stride=1", "smem_gb_per_s"}),
                                             r.value({"access_rules", "w16 stride=1", "smem_gb_per_s"})};
              return max_of(v) / min_of(v);
            }},
  };
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{16384}; };
  d.quick_size = 64;
  d.max_size = [](const DeviceInfo&) { return std::uint64_t{64} * 16384; };
  d.max_size_reason = "64x the default: the run's time grows in proportion to the loads per thread";
  d.device_bytes = [](std::uint64_t) { return 64e6; };
  d.check_options = [](Context& ctx) { (void)pattern_rounds(ctx.size()); };
  d.cold_by_default = false;
  d.warmup_ms = 10.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
