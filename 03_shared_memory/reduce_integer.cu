// reduce_integer: what makes a reduction fast: how it adds, or how it loads?
//
// A reduction reads its input once and does almost nothing else, so it is bound by how fast it loads. The
// rungs of the book's ladder speed up when they change how they load (once instead of in place, four loads
// in flight, 16-byte loads), not when they change how they add (a shared-memory tree or warp shuffles take
// the same time on the same loads). So every rung is set against this run's copy ceiling and against CUB.
// Values 0..255 with 64-bit totals make every sum exact; each is checked against the CPU before it is timed.
//
// Run: build/bin/reduce_integer [--size N] [--variant vec4_shfl] [--csv out.csv]
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/reduce.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

// The run's input, its CPU sum and the kernels' outputs, made by its first variant.
struct Buffers {
  std::size_t n = 0;
  Sum expected = 0;
  DeviceBuffer<unsigned> in;
  DeviceBuffer<unsigned> scratch;  // for the in-place rungs, zero-padded to whole blocks
  DeviceBuffer<Sum> total;

  explicit Buffers(const Context& ctx) : n(static_cast<std::size_t>(ctx.size())) {
    const auto host = reduce_input(n);
    expected = reduce_cpu(host);
    in = DeviceBuffer<unsigned>(n);
    in.upload(host);
    scratch = DeviceBuffer<unsigned>(inplace_scratch_elems(n));
    scratch.fill_bytes(0, ctx.stream());
    total = DeviceBuffer<Sum>(1);
  }
};

Buffers& buffers(Context& ctx) { return ctx.state<Buffers>(ctx); }

VerifyResult check_total(const Buffers& b) {
  Sum got = 0;
  b.total.download(&got, 1);
  return compare_value(got, b.expected, "total");
}

// cub::DeviceReduce::Sum, verified and timed once per run: the vs_cub reference of every row.
struct CubBaseline {
  bool ok = false;
  Timing timing;
  double gb_per_s = 0.0;

  explicit CubBaseline(Context& ctx) {
    Buffers& b = buffers(ctx);
    CubDeviceSum cub(b.in.data(), b.total.data(), b.n);
    const auto launch = [&](cudaStream_t s) { cub.launch(s); };
    b.total.poison(ctx.stream());
    launch(ctx.stream());
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    ok = ctx.check(check_total(b), "cub::DeviceReduce::Sum");
    if (ok) {
      timing = ctx.time(launch);
      gb_per_s = cml::gb_per_s(static_cast<double>(b.n) * sizeof(unsigned), timing.stats.median);
    }
  }
};

void add_ratios(Context& ctx, Row& row) {
  if (!row.verified) return;
  row.set("vs_ceiling", row.gb_per_s / ctx.copy_ceiling().best());
  const CubBaseline& cub = ctx.state<CubBaseline>(ctx);
  if (cub.ok) row.set("vs_cub", row.gb_per_s / cub.gb_per_s);
}

using Launch = void (*)(const unsigned*, std::size_t, Sum*, cudaStream_t);
using InPlaceLaunch = void (*)(unsigned*, std::size_t, Sum*, cudaStream_t);

void rung(Context& ctx, Launch launch) {
  Buffers& b = buffers(ctx);
  const double bytes = static_cast<double>(b.n) * sizeof(unsigned);
  Row& row = ctx.measure(
      "", b.n, bytes, [&](cudaStream_t s) { launch(b.in.data(), b.n, b.total.data(), s); },
      [&] { return check_total(b); }, [&](cudaStream_t s) { b.total.poison(s); });
  add_ratios(ctx, row);
}

void in_place_rung(Context& ctx, InPlaceLaunch launch) {
  Buffers& b = buffers(ctx);
  const double bytes = static_cast<double>(b.n) * sizeof(unsigned);
  Row& row = ctx.measure(
      "", b.n, bytes, [&](cudaStream_t s) { launch(b.scratch.data(), b.n, b.total.data(), s); },
      [&] { return check_total(b); },
      [&](cudaStream_t s) {
        // Restore the input; the zero padding past n is never changed by the kernels.
        CUDA_CHECK(cudaMemcpyAsync(b.scratch.data(), b.in.data(), b.n * sizeof(unsigned), cudaMemcpyDeviceToDevice, s));
        b.total.poison(s);
      });
  add_ratios(ctx, row);
}

void cub_device_reduce(Context& ctx) {
  const CubBaseline& cub = ctx.state<CubBaseline>(ctx);
  const Buffers& b = buffers(ctx);
  if (!cub.ok) {
    ctx.add_row("", b.n, false);
    return;
  }
  Row& row = ctx.add_timed_row("", b.n, static_cast<double>(b.n) * sizeof(unsigned), cub.timing, true);
  add_ratios(ctx, row);
}

Demo make_demo() {
  Demo d;
  d.name = "reduce_integer";
  d.summary =
      "Integer sum: the book's ladder (global in place, shared, unrolled, dynamic shared, warp shuffle), a\n"
      "fast vectorized kernel, CUB BlockReduce and DeviceReduce; bandwidth = input bytes read once, against\n"
      "the copy ceiling and cub::DeviceReduce measured in the same run.";
  d.size_meaning = "unsigned integers to sum (default 8x L2 bytes / 4)";
  d.variants = {
      {"gmem_neighbored", "in place in global memory, neighbored pairs (book ch.3)",
       [](Context& c) { in_place_rung(c, launch_reduce_gmem_neighbored); }},
      {"gmem_interleaved", "in place in global memory, interleaved pairs, last warp with __syncwarp",
       [](Context& c) { in_place_rung(c, launch_reduce_gmem_interleaved); }},
      {"smem", "shared-memory tree, one element per thread", [](Context& c) { rung(c, launch_reduce_smem); }},
      {"smem_unroll4", "shared-memory tree, 4 elements per thread while loading",
       [](Context& c) { rung(c, launch_reduce_smem_unroll); }},
      {"smem_unroll4_dyn", "the same with dynamic shared memory",
       [](Context& c) { rung(c, launch_reduce_smem_unroll_dyn); }},
      {"shfl", "warp shuffles (__shfl_xor_sync, full mask), one shared word per warp",
       [](Context& c) { rung(c, launch_reduce_shfl); }},
      {"vec4_shfl", "16-byte loads x4 in flight, grid-stride, 64-bit sums, shuffles, 1 atomic/block",
       [](Context& c) { rung(c, launch_reduce_vec4); }},
      {"vec4_cub_block", "the same loads, cub::BlockReduce for the block step",
       [](Context& c) { rung(c, launch_reduce_vec4_cub_block); }},
      {"cub_device_reduce", "cub::DeviceReduce::Sum", cub_device_reduce},
  };
  d.claims = {
      Claim{"fast_kernel_near_copy_ceiling",
            "The vectorized reduction reads its input nearly as fast as the best copy moves bytes.",
            "vs_ceiling of vec4_shfl", Bound::at_least(0.88),
            "a reduction only reads, so DRAM bandwidth bounds it as it bounds a copy; 12% covers the two "
            "measurements' noise and the reduction's tail",
            ClaimKind::device, [](const RunRows& r) { return r.value({"vec4_shfl", "", "vs_ceiling"}); }},
      ratio_claim("fast_kernel_matches_cub", "The vectorized reduction is as fast as cub::DeviceReduce::Sum.",
                  {"vec4_shfl"}, {"cub_device_reduce"}, Bound::at_least(0.9),
                  "both read the input once with wide loads and many bytes in flight; 10% is the noise between "
                  "two kernels at the same ceiling"),
      ratio_claim("unrolling_beats_interleaved",
                  "Each block summing four blocks' worth of input as it loads (four loads in flight) is much faster "
                  "than the in-place interleaved reduction.",
                  {"smem_unroll4"}, {"gmem_interleaved"}, Bound::at_least(1.8),
                  "the in-place rung reads and writes global memory at every level of its tree with one load in "
                  "flight per thread; smem_unroll4 reads each element once, four loads in flight"),
      ratio_claim("shuffles_add_no_faster_than_the_tree",
                  "Warp shuffles and the shared-memory tree take the same time on the same loads.",
                  {"shfl"}, {"smem_unroll4"}, Bound::between(0.9, 1.1),
                  "the load, not the way the block adds, sets a rung's speed; 10% is the noise between two "
                  "kernels at the same speed"),
      ratio_claim("neighbored_pairs_are_slowest",
                  "The neighbored in-place rung is much slower than the interleaved one.",
                  {"gmem_neighbored"}, {"gmem_interleaved"}, Bound::at_most(0.6),
                  "pairs (2i, 2i+stride) leave most lanes of every warp idle and stride across more sectors at "
                  "each level"),
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(unsigned); };
  d.quick_size = 65539;  // odd (tails exercised in the smoke run too) and small: racecheck is slow
  d.max_size = [](const DeviceInfo& dev) { return std::uint64_t{64} * 8 * dev.l2_bytes / sizeof(unsigned); };
  d.max_size_reason = "64x the default: the host builds the whole input and sums it on the CPU";
  // Input and scratch; every row is set against the copy ceiling.
  d.device_bytes = [](std::uint64_t n) { return DemoMemory::with_default_ceiling(8.0 * static_cast<double>(n)); };
  d.warmup_ms = 30.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
