// smem_vs_global: is shared memory really "20-30x lower latency and ~10x higher bandwidth" than global?
//
// Global memory is not one thing, so it is measured where its lines are found: L1, L2 and DRAM, by a
// dependent pointer chase (latency) and by all SMs streaming 16-byte loads (bandwidth), against the same
// for shared memory. An L1 hit and a shared load go through the same on-chip storage, so their latencies
// are close; the often-quoted ratios hold against DRAM. The global_l2 bandwidth row lasts microseconds and
// understates L2: 01_memory_model/cache_bandwidth measures it properly.
//
// Run: build/bin/smem_vs_global [--size BYTES] [--variant latency|bandwidth] [--csv out.csv]
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/lane_pattern_bench.cuh"
#include "03_shared_memory/kernels/latency.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

// The L2 flush is chosen per row, whatever --cold/--warm say: the DRAM rows need it, the cache rows must
// not have it.
TimingOptions with_flush(const Context& ctx, bool flush_l2) {
  TimingOptions o = ctx.timing_options();
  o.flush_l2 = flush_l2;
  return o;
}

void check_size(const Context& ctx) {
  if (ctx.size() < (std::uint64_t{1} << 20)) throw CliError("--size (bytes of the DRAM buffers) must be at least 1M");
}

std::uint64_t dram_chain_bytes(const Context& ctx) {
  // Byte offsets are 32-bit: the chase buffer stops at 2 GiB whatever --size is.
  return std::min<std::uint64_t>(ctx.size(), std::uint64_t{1} << 31) / (kLineWords * 4) * (kLineWords * 4);
}

void latency(Context& ctx) {
  check_size(ctx);
  const bool q = ctx.quick();
  struct Case {
    std::string name;
    Chain chain;
    int warm_hops;
    int hops;
    bool flush_l2;
    int kind;  // 0 shared, 1 L1, 2 L2 (or DRAM)
  };
  const std::uint64_t dram_slots = dram_chain_bytes(ctx) / (kLineWords * 4);
  const int dram_hops = static_cast<int>(std::min<std::uint64_t>(q ? 200 : 20000, dram_slots));
  std::vector<Case> cases;
  cases.push_back({"shared", random_chain(4096, 1, 4096, 1), 0, q ? 1000 : 100000, false, 0});
  cases.push_back({"global_l1", random_chain(64, kLineWords, 64, 2), 64, q ? 1000 : 100000, false, 1});
  cases.push_back({"global_l2", random_chain(65536, kLineWords, 4096, 3), 0, q ? 500 : 50000, false, 2});
  cases.push_back({"global_dram", random_chain(dram_slots, kLineWords, static_cast<std::size_t>(dram_hops), 4), 0,
                   dram_hops, true, 2});

  DeviceBuffer<unsigned long long> out(2);
  double shared_ns = 0.0, shared_cycles = 0.0;
  for (const auto& c : cases) {
    DeviceBuffer<std::uint32_t> chain(c.chain.words.size());
    chain.upload(c.chain.words);
    const auto launch = [&](cudaStream_t s) {
      if (c.kind == 0)
        launch_chase_shared(chain.data(), static_cast<int>(c.chain.words.size()), c.chain.start, c.hops, out.data(), s);
      else if (c.kind == 1) launch_chase_global<true>(chain.data(), c.chain.start, c.warm_hops, c.hops, out.data(), s);
      else launch_chase_global<false>(chain.data(), c.chain.start, c.warm_hops, c.hops, out.data(), s);
    };
    const std::uint32_t expected_end = chase_end(c.chain, static_cast<std::uint64_t>(c.warm_hops) + c.hops);
    Row* row = &ctx.measure(
        c.name, static_cast<std::uint64_t>(c.hops), 0.0, launch,
        [&] {
          const auto host = out.download();
          return compare_value(static_cast<std::uint32_t>(host[0]), expected_end, "chase end");
        },
        [&](cudaStream_t s) { out.poison(s); }, with_flush(ctx, c.flush_l2));
    if (!row->verified) continue;
    // Cycles of the last timed launch (after its own flush where there is one).
    const double cycles = static_cast<double>(out.download()[1]) / c.hops;
    const double ns = row->median_ms * 1e6 / c.hops;
    if (c.kind == 0) {
      shared_ns = ns;
      shared_cycles = cycles;
    }
    row->set("chain_bytes", static_cast<double>(c.chain.words.size() * 4))
        .set("cycles_per_hop", cycles)
        .set("ns_per_hop", ns);
    if (shared_ns > 0.0) row->set("vs_shared", ns / shared_ns).set("cycles_vs_shared", cycles / shared_cycles);
  }
  ctx.note("ns_per_hop = event time / hops (includes the launch and, for global_l1, one warm-up lap of 64 hops); "
           "cycles_per_hop counts only the timed hops.");
}

void bandwidth(Context& ctx) {
  check_size(ctx);
  const DeviceInfo& dev = ctx.device();
  // Shared: conflict-free 16-byte loads on every SM.
  PatternBench bench(ctx, 16, ctx.quick() ? 64 : 4096);
  Row& srow = bench.measure(stride_pattern(1), "shared");
  if (!srow.verified) return;
  const double shared_gbps = bench.requested_bytes() / (srow.median_ms * 1e6);
  srow.set("read_gb_per_s", shared_gbps)
      .set("model_peak_gb_per_s", dev.sm_count * 128.0 * dev.sm_clock_khz * 1e3 / 1e9)
      .set("vs_shared", 1.0);

  const std::size_t n4 = static_cast<std::size_t>(ctx.size() / 16);
  const std::vector<std::uint32_t> words = read_words(n4 * 4);
  DeviceBuffer<std::uint32_t> in(words.size());
  in.upload(words);
  const int blocks = global_read_blocks();
  const std::size_t threads = static_cast<std::size_t>(blocks) * kReadBlock;
  DeviceBuffer<std::uint32_t> out(threads);
  struct Case {
    std::string name;
    std::size_t n4;
    bool flush_l2;
    double model_peak;  // 0: none
  };
  const Case cases[] = {
      {"global_l2", std::min<std::size_t>(n4, dev.l2_bytes / 2 / 16), false, 0.0},
      {"global_dram", n4, true, dev.peak_gb_per_s},
  };
  for (const auto& c : cases) {
    const auto expected = read_xor_expected(words, c.n4, threads);
    const double bytes = static_cast<double>(c.n4) * 16.0;
    Row* row = &ctx.measure(
        c.name, static_cast<std::uint64_t>(c.n4) * 16, bytes,
        [&](cudaStream_t s) { launch_global_read(reinterpret_cast<const uint4*>(in.data()), c.n4, out.data(), blocks, s); },
        [&] { return compare_exact(out.download(), expected); }, [&](cudaStream_t s) { out.poison(s); },
        with_flush(ctx, c.flush_l2));
    if (!row->verified) continue;
    row->set("read_gb_per_s", row->gb_per_s).set("vs_shared", shared_gbps / row->gb_per_s);
    if (c.model_peak > 0.0) row->set("model_peak_gb_per_s", c.model_peak);
  }
  ctx.note(fmt::format("vs_shared here = shared read bandwidth / this row's ({} blocks x {} threads for global reads)",
                       blocks, kReadBlock));
}

Demo make_demo() {
  Demo d;
  d.name = "smem_vs_global";
  d.summary =
      "Shared vs global memory: pointer-chase latency (shared, L1 hit, L2 hit, DRAM) and aggregate read\n"
      "bandwidth (shared, L2-resident, DRAM), each global level as a multiple of shared memory's.";
  d.size_meaning = "bytes of the DRAM buffers (default 8x L2; the chase uses at most 2 GiB of it)";
  d.variants = {
      {"latency", "pointer chase: shared, global L1 hit, L2 hit, DRAM", latency},
      {"bandwidth", "all SMs reading: shared LDS.128, global L2-resident, global DRAM", bandwidth},
  };
  d.claims = {
      Claim{"dram_latency_far_above_shared",
            "A load that misses L2 and goes to DRAM takes at least 20 times as many cycles as a shared-memory "
            "load.",
            "cycles_vs_shared of latency global_dram", Bound::at_least(20.0),
            "DRAM sits behind the L2 and the memory controller, hundreds of cycles away; shared memory is "
            "on the SM", ClaimKind::device,
            [](const RunRows& r) { return r.value({"latency", "global_dram", "cycles_vs_shared"}); }},
      Claim{"l2_latency_above_shared",
            "An L2 hit takes several times as many cycles as a shared-memory load.",
            "cycles_vs_shared of latency global_l2", Bound::at_least(5.0),
            "the L2 is off the SM, across the on-chip network", ClaimKind::device,
            [](const RunRows& r) { return r.value({"latency", "global_l2", "cycles_vs_shared"}); }},
      Claim{"l1_hit_close_to_shared",
            "An L1 hit takes less than twice the cycles of a shared-memory load.",
            "cycles_vs_shared of latency global_l1", Bound::at_most(2.0),
            "L1 and shared memory are the same on-chip SRAM; a global load adds the tag lookup and address "
            "translation", ClaimKind::device,
            [](const RunRows& r) { return r.value({"latency", "global_l1", "cycles_vs_shared"}); }},
      Claim{"shared_bandwidth_far_above_dram",
            "All SMs reading shared memory move at least 5 times the bytes per second of DRAM reads.",
            "vs_shared of bandwidth global_dram (shared read GB/s / DRAM read GB/s)", Bound::at_least(5.0),
            "every SM reads 128 bytes per clock from its own shared memory, while all SMs share the DRAM "
            "bandwidth", ClaimKind::device,
            [](const RunRows& r) { return r.value({"bandwidth", "global_dram", "vs_shared"}); }},
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes; };
  d.quick_size = std::uint64_t{16} << 20;
  d.max_size = [](const DeviceInfo& dev) { return std::uint64_t{64} * 8 * dev.l2_bytes; };
  d.max_size_reason = "64x the default: the host builds and checks every byte of the DRAM buffer";
  d.device_bytes = [](std::uint64_t bytes) { return 2.0 * static_cast<double>(bytes); };
  d.check_options = check_size;
  d.cold_by_default = true;  // informational: every row sets its own flush
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
