// latency_ladder: how long does one load wait, by where its line is found (L1, L2, DRAM, shared memory)?
//
// Bandwidth hides latency behind many loads in flight; a chain of dependent loads exposes it. One thread
// follows a random cycle through 128-byte lines (each address is the previous load's value, every hop a new
// line) over working sets from 4 KiB to 8x L2, timed by clock64() in SM cycles and by events in ns. Caches
// are warm by design. Each level farther from the SM adds latency; on GPUs whose L2 has two partitions, the
// far one shows as a step between the L2 and DRAM plateaus.
//
// Run: build/bin/latency_ladder [--size 1G] [--points 20] [--hops 64k] [--csv latency.csv]
#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/pointer_chase.cuh"
#include "01_memory_model/kernels/unified_l1.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

constexpr std::uint64_t kSeed = 20240220;
constexpr std::uint64_t kSmallestBytes = 4096;
constexpr unsigned kSharedNodes = 4096;  // 16 KiB of shared memory
constexpr int kClockSamples = 5;         // launches whose clock64() counts give the median cycles

struct ChaseOptions {
  unsigned hops = 0;
  int points = 0;
};

ChaseOptions chase_options(const Context& ctx) {
  ChaseOptions o;
  const std::uint64_t hops = ctx.extra_size("hops", 4096);
  const std::uint64_t points = ctx.extra_size("points", 4);
  if (hops > (std::uint64_t{1} << 22)) throw CliError("--hops must be at most 4M (a DRAM point would take seconds)");
  if (points < 2 || points > 64) throw CliError("--points must be between 2 and 64");
  if (ctx.size() < kSmallestBytes) throw CliError("--size must be at least 4k bytes (the smallest working set)");
  o.hops = static_cast<unsigned>(hops);
  o.points = static_cast<int>(points);
  return o;
}

// Warm, never flushed: the chase must find its own lines in the caches. A few samples suffice; each is
// already an average over `hops` loads.
TimingOptions chase_timing(const Context& ctx) {
  TimingOptions o = ctx.timing_options();
  o.flush_l2 = false;
  if (!ctx.options().reps && !ctx.profiling()) o.reps = ctx.quick() ? 3 : 5;
  return o;
}

void set_state(ChaseState* state, unsigned long long cursor, cudaStream_t s) {
  const ChaseState h{cursor, 0};
  CUDA_CHECK(cudaMemcpyAsync(state, &h, sizeof h, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
}

ChaseState get_state(const ChaseState* state, cudaStream_t s) {
  ChaseState h{};
  CUDA_CHECK(cudaMemcpyAsync(&h, state, sizeof h, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

// Median of the in-kernel clock64() counts of a few more launches.
template <class Launch>
double median_cycles(const ChaseState* state, Launch&& launch, cudaStream_t s, int samples) {
  std::vector<long long> c;
  for (int i = 0; i < samples; ++i) {
    launch(s);
    c.push_back(get_state(state, s).cycles);
  }
  std::sort(c.begin(), c.end());
  return static_cast<double>(c[c.size() / 2]);
}

// Event time per load: (launch with the timed hops - the same launch without them) / hops, which removes
// the launch overhead, the warm-up walk and (shared chase) the copy of the chain into shared memory.
double ns_per_load(const Timing& with_hops, const Timing& without, unsigned hops) {
  return (with_hops.stats.median - without.stats.median) * 1e6 / hops;
}

std::string kib(std::uint64_t bytes) {
  return bytes >= (1u << 20) ? fmt::format("{:.1f}MiB", static_cast<double>(bytes) / (1 << 20))
                             : fmt::format("{:.1f}KiB", static_cast<double>(bytes) / 1024);
}

void global_chase(Context& ctx) {
  const ChaseOptions opt = chase_options(ctx);
  const DeviceInfo& dev = ctx.device();
  // With the carveout at max L1, almost all of the SM's unified L1/shared storage is L1. No API reports its
  // size; where NVIDIA does not document it, the largest shared share (shared_per_sm, a lower bound) stands in.
  const std::uint64_t unified = documented_unified_l1_bytes(dev.cc_major, dev.cc_minor);
  const std::uint64_t l1_bytes = unified > 0 ? unified : dev.shared_per_sm;
  const std::uint64_t l2_bytes = dev.l2_bytes;
  const std::vector<std::uint64_t> sizes = log_spaced_sizes(kSmallestBytes, ctx.size(), opt.points);
  const std::size_t max_nodes = sizes.back() / kChaseLineBytes;
  const cudaStream_t s = ctx.stream();

  DeviceBuffer<unsigned long long> lines(sizes.back() / sizeof(unsigned long long));
  DeviceBuffer<std::uint32_t> next_dev(max_nodes);
  DeviceBuffer<ChaseState> state(1);
  const auto base = reinterpret_cast<unsigned long long>(lines.data());
  // A preference, not a guarantee (see shared_carveout): the largest L1 the driver will give this kernel.
  CUDA_CHECK(cudaFuncSetAttribute(global_chase_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxL1));
  ctx.note(fmt::format("latency ladder: {} working sets from {} to {}, {} dependent loads per launch; "
                       "plateau_by_size uses L1 = {} ({}) and L2 = {}",
                       sizes.size(), kib(sizes.front()), kib(sizes.back()), opt.hops, kib(l1_bytes),
                       unified > 0 ? "unified L1/shared per SM" : "shared_per_sm: unified size not documented",
                       kib(l2_bytes)));

  std::map<std::string, std::vector<double>> core_cycles, core_ns;  // points well inside each level
  bool all_ok = true;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::uint64_t size = sizes[k];
    const std::size_t nodes = size / kChaseLineBytes;
    const std::string params = "ws=" + kib(size);
    const std::vector<std::uint32_t> next = make_single_cycle(nodes, kSeed + k);
    CUDA_CHECK(cudaMemcpyAsync(next_dev.data(), next.data(), nodes * sizeof(std::uint32_t), cudaMemcpyHostToDevice, s));
    launch_build_chase(lines.data(), next_dev.data(), nodes, s);

    // Verify before timing: from line 0, `hops` loads must land where the CPU's walk lands.
    set_state(state.data(), base, s);
    launch_global_chase(state.data(), 0, opt.hops, s);
    const auto landed = static_cast<std::uint64_t>((get_state(state.data(), s).cursor - base) / kChaseLineBytes);
    const std::uint64_t expected = walk_chain(next, 0, opt.hops);
    if (!ctx.check(compare_value(landed, expected, "line after hops"), params)) {
      all_ok = false;
      ctx.add_row(params, size, false);
      continue;
    }

    // A working set that fits in L2 is walked once completely, so the timed loads find it in cache; one
    // that fits in L1 is also walked at the start of every launch (untimed by clock64), since the next
    // launch may land on another SM with a cold L1.
    if (size <= l2_bytes) launch_global_chase(state.data(), 0, static_cast<unsigned>(nodes), s);
    const unsigned warm = size <= 2 * l1_bytes ? static_cast<unsigned>(nodes) : 0u;
    const auto chase = [&](cudaStream_t st) { launch_global_chase(state.data(), warm, opt.hops, st); };
    const auto baseline = [&](cudaStream_t st) { launch_global_chase(state.data(), warm, 0, st); };
    const Timing t = ctx.time(chase, chase_timing(ctx));
    const double cycles = median_cycles(state.data(), chase, s, ctx.profiling() ? 1 : kClockSamples) / opt.hops;
    const double ns = ns_per_load(t, ctx.time(baseline, chase_timing(ctx)), opt.hops);
    ctx.add_timed_row(params, size, 0.0, t, true)
        .set("working_set_bytes", static_cast<double>(size))
        .set("plateau_by_size", plateau_by_size(size, l1_bytes, l2_bytes))
        .set("cycles_per_load", cycles)
        .set("ns_per_load", ns)
        .set("clock_ghz", cycles / ns)
        .set("warm_hops", warm);
    const std::string core = plateau_core(size, l1_bytes, l2_bytes);
    if (!core.empty()) {
      core_cycles[core].push_back(cycles);
      core_ns[core].push_back(ns);
    }
  }

  // One summary row per level: the median over the points well inside it (a factor of 2 from either
  // boundary), and its ratio to the level before.
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double previous = 0.0;
  for (const char* level : {"L1", "L2", "DRAM"}) {
    if (core_cycles[level].empty()) {
      ctx.note(fmt::format("no working set lies well inside {} in this sweep: no summary row for it", level));
      previous = 0.0;
      continue;
    }
    const double cycles = median(core_cycles[level]);
    Row& r = ctx.add_row(fmt::format("plateau={}", level), core_cycles[level].size(), all_ok);
    r.set("plateau_by_size", level).set("cycles_per_load", cycles).set("ns_per_load", median(core_ns[level]));
    if (previous > 0.0) r.set("vs_previous", cycles / previous);
    previous = cycles;
  }
}

void shared_chase(Context& ctx) {
  const ChaseOptions opt = chase_options(ctx);
  const cudaStream_t s = ctx.stream();
  const std::vector<std::uint32_t> next = make_single_cycle(kSharedNodes, kSeed);
  DeviceBuffer<std::uint32_t> next_dev(kSharedNodes);
  DeviceBuffer<ChaseState> state(1);
  CUDA_CHECK(cudaMemcpyAsync(next_dev.data(), next.data(), kSharedNodes * sizeof(std::uint32_t),
                             cudaMemcpyHostToDevice, s));
  const std::string params = fmt::format("ws={}", kib(kSharedNodes * sizeof(std::uint32_t)));

  set_state(state.data(), 0, s);
  const auto chase = [&](cudaStream_t st) { launch_shared_chase(next_dev.data(), kSharedNodes, state.data(), opt.hops, st); };
  chase(s);
  const auto landed = static_cast<std::uint32_t>(get_state(state.data(), s).cursor);
  if (!ctx.check(compare_value(landed, walk_chain(next, 0, opt.hops), "node after hops"), params)) {
    ctx.add_row(params, kSharedNodes, false);
    return;
  }
  const auto baseline = [&](cudaStream_t st) { launch_shared_chase(next_dev.data(), kSharedNodes, state.data(), 0, st); };
  const Timing t = ctx.time(chase, chase_timing(ctx));
  const double cycles = median_cycles(state.data(), chase, s, ctx.profiling() ? 1 : kClockSamples) / opt.hops;
  const double ns = ns_per_load(t, ctx.time(baseline, chase_timing(ctx)), opt.hops);
  ctx.add_timed_row(params, kSharedNodes * sizeof(std::uint32_t), 0.0, t, true)
      .set("working_set_bytes", static_cast<double>(kSharedNodes * sizeof(std::uint32_t)))
      .set("plateau_by_size", "shared")
      .set("cycles_per_load", cycles)
      .set("ns_per_load", ns)
      .set("clock_ghz", cycles / ns);
}

Demo make_demo() {
  Demo d;
  d.name = "latency_ladder";
  d.summary =
      "One thread chasing a random single-cycle chain of dependent loads over working sets from 4 KiB to\n"
      "8x L2, plus shared memory: cycles (clock64) and ns (events) per load, with one summary row per\n"
      "plateau (L1, L2, DRAM). Warm caches by design (never flushed).";
  d.size_meaning = "largest working set in bytes (default 8x L2); the sweep starts at 4 KiB";
  d.variants = {
      {"global_chase", "dependent loads through L1/L2/DRAM, one point per working set", global_chase},
      {"shared_chase", "the same chase over 16 KiB of shared memory", shared_chase},
  };
  const At l1{"global_chase", "plateau=L1", "cycles_per_load"};
  const At l2{"global_chase", "plateau=L2", "cycles_per_load"};
  const At dram{"global_chase", "plateau=DRAM", "cycles_per_load"};
  d.claims = {
      ratio_claim("l2_far_above_l1",
                  "A load that misses L1 and hits L2 takes several times as many cycles as an L1 hit.", l2, l1,
                  Bound::at_least(3.0),
                  "L2 sits across the chip's crossbar, L1 beside the SM: typically close to an order of "
                  "magnitude apart; 3x is a floor for GPUs with a small, near L2"),
      ratio_claim("dram_above_l2", "A load that misses L2 takes clearly more cycles than an L2 hit.", dram, l2,
                  Bound::at_least(1.5),
                  "DRAM adds the memory controller and the DRAM access to the L2 path; 1.5x leaves room for GPUs "
                  "whose L2 latency is already high"),
      Claim{"shared_below_l1", "A dependent load from shared memory takes fewer cycles than an L1 hit.",
            "cycles_per_load shared_chase / cycles_per_load global_chase[plateau=L1]", Bound::at_most(0.9),
            "shared memory needs no tag lookup; cycle counts of a single dependent chain "
            "barely vary, so 10% is ample margin",
            ClaimKind::device,
            [l1](const RunRows& r) { return r.only_value("shared_chase", "cycles_per_load") / r.value(l1); }},
  };
  d.extras = {ExtraOption::size("points", "working sets in the sweep, log-spaced (2..64)", 20),
              ExtraOption::size("hops", "dependent loads per launch (up to 4M)", 65536)};
  d.check_options = [](Context& ctx) { (void)chase_options(ctx); };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes; };
  d.quick_size = std::uint64_t{8} << 20;
  d.device_bytes = [](std::uint64_t size) { return 1.04 * static_cast<double>(size); };
  d.cold_by_default = false;
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
