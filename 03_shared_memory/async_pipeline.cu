// async_pipeline: when does staging through shared memory with cuda::memcpy_async and a multi-stage
// cuda::pipeline beat the classic load, store to shared, __syncthreads copy?
//
// A synchronous copy leaves the SM idle while a tile arrives unless other blocks fill the gap; a pipeline of
// S stages keeps S - 1 tiles in flight while one is computed on. So every variant runs at two occupancies,
// one block per SM and as many as the four-stage kernel fits: the stages should matter when occupancy cannot
// hide the wait. Only the copy differs (same tiles, same 5-point filter, outputs compared bit for bit).
// Below compute capability 8.0 memcpy_async copies synchronously: the rows verify, the claims are n/a.
//
// Run: build/bin/async_pipeline [--size WORDS] [--variant sync|async_1stage|...] [--csv out.csv]
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/async_pipeline.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

constexpr Occupancy kOccupancies[] = {Occupancy::low, Occupancy::high};

std::string params_of(Occupancy o) { return fmt::format("occupancy={}", to_string(o)); }

// The input, its expected output and the output buffer, made once per run for all five variants, and
// sync's bandwidth at each occupancy for the vs_sync column.
struct Data {
  std::size_t n = 0;
  DeviceBuffer<std::uint32_t> in, out;
  std::vector<std::uint32_t> expected;
  std::map<Occupancy, double> sync_gb_per_s;

  explicit Data(std::size_t elements) : n(elements) {
    const std::vector<std::uint32_t> host = pipeline_input(n);
    expected = pipeline_reference(host);
    in = DeviceBuffer<std::uint32_t>(n);
    out = DeviceBuffer<std::uint32_t>(n);
    in.upload(host);
  }
};

// One row per occupancy: poisoned output, one launch compared with the CPU, then timed.
void run_variant(Context& ctx, int stages) {
  Data& d = ctx.state<Data>(static_cast<std::size_t>(ctx.size()));
  if (stages > 0 && ctx.device().cc_major < 8)
    ctx.note("no cp.async below compute capability 8.0: cuda::memcpy_async is an ordinary load and store here, "
             "so the async rows measure the pipeline's bookkeeping, not an asynchronous copy.");
  const std::size_t tiles = pipeline_tiles(d.n);
  for (Occupancy o : kOccupancies) {
    const PipelineGrid g = async_pipeline_grid(o);
    Row& row = ctx.measure(
        params_of(o), d.n, 2.0 * static_cast<double>(d.n) * sizeof(std::uint32_t),
        [&](cudaStream_t s) { launch_async_pipeline(stages, d.in.data(), d.out.data(), d.n, g.blocks, s); },
        [&] { return compare_exact(d.out.download(), d.expected); }, [&](cudaStream_t s) { d.out.poison(s); });
    row.set("stages", stages)
        .set("blocks_per_sm", g.blocks_per_sm)
        .set("blocks", g.blocks)
        .set("tiles_per_block", static_cast<double>(tiles) / g.blocks)
        .set("smem_per_block_bytes", static_cast<double>(pipeline_smem_bytes(stages)))
        // The most tile bytes one SM can have requested at once: what Little's law sets against latency.
        .set("model_bytes_in_flight_per_sm",
             static_cast<double>(g.blocks_per_sm) * static_cast<double>(pipeline_smem_bytes(stages)));
    if (!row.verified) continue;
    row.set("vs_ceiling", row.gb_per_s / ctx.copy_ceiling().best());
    if (stages == 0) d.sync_gb_per_s[o] = row.gb_per_s;
    const auto sync = d.sync_gb_per_s.find(o);
    if (sync != d.sync_gb_per_s.end()) row.set("vs_sync", row.gb_per_s / sync->second);
  }
}

// The claims compare rows of one run; below compute capability 8.0 there is no asynchronous copy to judge.
double gb_per_s(const RunRows& r, const char* variant, Occupancy o) {
  if (r.fact("cc") < 8.0)
    throw NotApplicable("no cp.async below compute capability 8.0: cuda::memcpy_async copies synchronously");
  return r.value({variant, params_of(o)});
}

double best_multistage(const RunRows& r, Occupancy o) {
  return max_of({gb_per_s(r, "async_2stage", o), gb_per_s(r, "async_3stage", o), gb_per_s(r, "async_4stage", o)});
}

std::vector<Claim> claims() {
  return {
      Claim{"pipeline_pays_at_low_occupancy",
            "With one block per SM, the best multi-stage pipeline moves at least 1.2x the bytes per second of "
            "the synchronous copy.",
            "GB/s max(async_2stage, async_3stage, async_4stage) / GB/s sync, occupancy=low", Bound::at_least(1.2),
            "with one block per SM the sync kernel has at most one 8 KiB tile requested per SM and none while it "
            "computes; DRAM bandwidth is bytes in flight / latency (Little's law), and S stages keep up to S "
            "tiles requested through the compute. 1.2 asks for a fifth of the 2-4x in-flight ratio",
            ClaimKind::device,
            [](const RunRows& r) {
              return best_multistage(r, Occupancy::low) / gb_per_s(r, "sync", Occupancy::low);
            }},
      Claim{"pipeline_gain_vanishes_at_high_occupancy",
            "With many blocks per SM, the best multi-stage pipeline runs within 10% of the synchronous copy.",
            "GB/s max(async_2stage, async_3stage, async_4stage) / GB/s sync, occupancy=high",
            Bound::between(0.9, 1.1),
            "other blocks' loads are in flight while one block computes or waits: the warp scheduler overlaps "
            "what the pipeline overlaps, and DRAM, not latency, is the limit for both; 10% for the pipeline's "
            "barriers and run-to-run noise",
            ClaimKind::device,
            [](const RunRows& r) {
              return best_multistage(r, Occupancy::high) / gb_per_s(r, "sync", Occupancy::high);
            }},
      Claim{"async_copy_alone_buys_little",
            "With one block per SM, memcpy_async into a one-stage pipeline is at most 1.15x as fast as the "
            "synchronous copy.",
            "GB/s async_1stage / GB/s sync, occupancy=low", Bound::at_most(1.15),
            "one stage keeps one tile requested, like sync: skipping the registers saves instructions, not "
            "latency; the stages are what overlap copy and compute. 15% for the cheaper copy and noise",
            ClaimKind::device,
            [](const RunRows& r) {
              return gb_per_s(r, "async_1stage", Occupancy::low) / gb_per_s(r, "sync", Occupancy::low);
            }},
      Claim{"high_occupancy_sync_near_ceiling",
            "With many blocks per SM, the synchronous copy already reaches at least 0.8x the copy ceiling.",
            "vs_ceiling of sync, occupancy=high", Bound::at_least(0.8),
            "several blocks per SM each keep a tile requested, several times the bytes Little's law asks for at "
            "DRAM latency; 20% for the stencil's instructions, the barriers and the last uneven round of tiles",
            ClaimKind::device,
            [](const RunRows& r) {
              (void)gb_per_s(r, "sync", Occupancy::high);  // n/a below compute capability 8.0, like the others
              return r.value({"sync", params_of(Occupancy::high), "vs_ceiling"});
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "async_pipeline";
  d.summary =
      "Streaming an array through shared memory tile by tile: the synchronous copy (registers, __syncthreads)\n"
      "against cuda::memcpy_async (cp.async on sm_80+) with a cuda::pipeline of 1 to 4 stages, at one block\n"
      "per SM (the pipeline hides DRAM latency) and at many (the warp scheduler already does).";
  d.size_meaning = "32-bit words in the array (default 8x L2 bytes / 4)";
  d.variants = {
      {"sync", "load to registers, store to shared, __syncthreads, compute, __syncthreads",
       [](Context& ctx) { run_variant(ctx, 0); }},
      {"async_1stage", "cuda::memcpy_async into a one-stage cuda::pipeline (no overlap)",
       [](Context& ctx) { run_variant(ctx, 1); }},
      {"async_2stage", "two stages: the next tile's copy overlaps this tile's compute",
       [](Context& ctx) { run_variant(ctx, 2); }},
      {"async_3stage", "three stages: two tiles' copies in flight during the compute",
       [](Context& ctx) { run_variant(ctx, 3); }},
      {"async_4stage", "four stages: three tiles' copies in flight during the compute",
       [](Context& ctx) { run_variant(ctx, 4); }},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(std::uint32_t); };
  d.quick_size = 100003;  // odd: a short last tile and tail words, and small for the sanitizers
  d.max_size = [](const DeviceInfo& dev) { return std::uint64_t{16} * 8 * dev.l2_bytes / sizeof(std::uint32_t); };
  d.max_size_reason = "16x the default: the CPU builds, filters and compares every word";
  // Input and output; every row is set against the copy ceiling.
  d.device_bytes = [](std::uint64_t n) { return DemoMemory::with_default_ceiling(8.0 * static_cast<double>(n)); };
  d.cold_by_default = false;  // the array is 8x L2: nothing stays in it from one launch to the next
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
