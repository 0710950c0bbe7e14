// distributed_shared: what does reaching another block's shared memory across a cluster cost, and what does
// it make possible (compute capability 9.0+)?
//
// map_shared_rank lets the blocks of a cluster address each other's shared memory over the SM-to-SM network:
// slower than a block's own, still on chip. A dependent chase measures its latency, a full-GPU stream its
// bandwidth at cluster sizes 1 to 16 (16 only where the GPU can form it). The payoff is capacity: a histogram
// of 65536 bins (256 KiB, more than one block holds) split over a cluster stays on chip, where the
// alternative is atomics in L2. Every count is compared exactly with the CPU's.
//
// Run: build/bin/distributed_shared [--size KEYS] [--hops H] [--passes P] [--csv out.csv]
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/dsmem.cuh"
#include "03_shared_memory/kernels/latency_reference.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

constexpr int kRingWords = 8192;  // 32 KiB of ring in each block
constexpr std::uint32_t kBinCounts[] = {32768, 65536};
constexpr unsigned kHistClusters[] = {2, 4, 8};
constexpr unsigned kReadClusters[] = {1, 2, 4, 8, 16};

void require_clusters(const Context& ctx) {
  const std::string why = cluster_unavailable_reason(ctx.device().ordinal);
  if (!why.empty()) throw Waived(why);
}

// A shared-memory row is warm whatever --cold says: flushing L2 changes nothing it reads.
TimingOptions no_flush(const Context& ctx) {
  TimingOptions o = ctx.timing_options();
  o.flush_l2 = false;
  return o;
}

// --hops (1000 with --quick) and --passes (4 with --quick).
int hops_option(const Context& ctx) {
  const std::uint64_t hops = ctx.extra_size("hops", 1000);
  if (hops == 0 || hops > 10000000) throw CliError("--hops must be between 1 and 10M");
  return static_cast<int>(hops);
}
int passes_option(const Context& ctx) {
  const std::uint64_t passes = ctx.extra_size("passes", 4);
  if (passes == 0 || passes > 100000) throw CliError("--passes must be between 1 and 100000");
  return static_cast<int>(passes);
}

void latency(Context& ctx) {
  require_clusters(ctx);
  const int hops = hops_option(ctx);
  // One cycle through all kRingWords words in random order: the next address is known only once the load
  // that holds it returns.
  const Chain ring = random_chain(kRingWords, 1, kRingWords, 11);
  DeviceBuffer<std::uint32_t> ring_dev(ring.words.size());
  ring_dev.upload(ring.words);
  DeviceBuffer<unsigned long long> out(2);
  const std::uint32_t expected_end = chase_end(ring, static_cast<std::uint64_t>(hops));
  struct Case {
    const char* name;
    void (*launch)(const std::uint32_t*, int, std::uint32_t, int, unsigned long long*, cudaStream_t);
  };
  const Case cases[] = {{"own", launch_dsmem_chase<ChaseTarget::own>},
                        {"own_mapped", launch_dsmem_chase<ChaseTarget::own_mapped>},
                        {"neighbour", launch_dsmem_chase<ChaseTarget::neighbour>}};
  double own_cycles = 0.0;  // cases[0]'s
  for (const Case& c : cases) {
    Row& row = ctx.measure(
        c.name, static_cast<std::uint64_t>(hops), 0.0,
        [&](cudaStream_t s) { c.launch(ring_dev.data(), kRingWords, ring.start, hops, out.data(), s); },
        [&] {
          const auto host = out.download();
          return compare_value(static_cast<std::uint32_t>(host[0]), expected_end, "chase end");
        },
        [&](cudaStream_t s) { out.poison(s); }, no_flush(ctx));
    if (!row.verified) continue;
    // The cycles of the last timed launch: every launch does the same hops.
    const double cycles = static_cast<double>(out.download()[1]) / hops;
    row.set("ring_bytes", static_cast<double>(kRingWords) * 4.0)
        .set("cycles_per_hop", cycles)
        .set("ns_per_hop", row.median_ms * 1e6 / hops);
    if (&c == &cases[0]) own_cycles = cycles;
    if (own_cycles > 0.0) row.set("vs_own", cycles / own_cycles);
  }
  ctx.note("cycles_per_hop: clock64() around the timed hops only (SM cycles); ns_per_hop: event time / hops, "
           "which also holds the launch and the copy of the ring into shared memory.");
}

void bandwidth(Context& ctx) {
  require_clusters(ctx);
  const int passes = passes_option(ctx);
  const int sms = ctx.device().sm_count;
  for (unsigned cluster : kReadClusters) {
    double own_gb_per_s = 0.0;
    for (bool neighbour : {false, true}) {
      const std::string params = fmt::format("cluster={} read={}", cluster, neighbour ? "neighbour" : "own");
      std::string why;
      const unsigned blocks = dsmem_read_blocks(cluster, neighbour, &why);
      if (blocks == 0) {
        // Sizes up to 8 are portable: every GPU with clusters must form them.
        if (cluster <= 8) throw Waived(fmt::format("{}: {}", params, why));
        ctx.note(fmt::format("{} skipped: {}", params, why));
        continue;
      }
      const auto expected = dsmem_read_expected(blocks, cluster, neighbour, static_cast<std::uint64_t>(passes));
      DeviceBuffer<std::uint32_t> out(expected.size());
      const double bytes_read =
          static_cast<double>(blocks) * kDsmemReadBlock * passes * kDsmemReadSteps * sizeof(uint4);
      // bytes = 0: the row's GB/s column is against DRAM's peak; these bytes never leave the SMs.
      Row& row = ctx.measure(
          params, static_cast<std::uint64_t>(passes), 0.0,
          [&](cudaStream_t s) { launch_dsmem_read(neighbour, blocks, cluster, passes, out.data(), s); },
          [&] { return compare_exact(out.download(), expected); }, [&](cudaStream_t s) { out.poison(s); },
          no_flush(ctx));
      row.set("cluster", static_cast<double>(cluster))
          .set("blocks", static_cast<double>(blocks))
          .set("blocks_per_sm", static_cast<double>(blocks) / sms)
          .set("smem_bytes_read", bytes_read);
      if (!row.verified) continue;
      const double gb_per_s = bytes_read / (row.median_ms * 1e6);
      const double sm_hz = ctx.device().sm_clock_khz * 1e3;
      row.set("smem_gb_per_s", gb_per_s).set("smem_bytes_per_sm_clock", gb_per_s * 1e9 / sms / sm_hz);
      if (!neighbour) own_gb_per_s = gb_per_s;
      else if (own_gb_per_s > 0.0) row.set("vs_own", gb_per_s / own_gb_per_s);
    }
  }
  ctx.note("smem_bytes_per_sm_clock assumes the SMs run at the peak clock the device reports; a conflict-free "
           "shared-memory pipeline serves at most 128 bytes per SM per clock. In a cluster of 1 the neighbour is the "
           "block itself, reached through map_shared_rank.");
}

// The keys (generated on the device) and the CPU's counts, made once per run for all three variants.
struct Keys {
  std::size_t n = 0;
  DeviceBuffer<std::uint32_t> keys;
  DeviceBuffer<std::uint32_t> out;
  std::map<std::uint32_t, std::vector<std::uint32_t>> expected;  // bins -> counts
  std::map<std::uint32_t, double> global_ms;                     // bins -> histogram_global's time

  explicit Keys(const Context& ctx) : n(static_cast<std::size_t>(ctx.size())), keys(n) {
    launch_fill_histogram_keys(keys.data(), n, ctx.stream());
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    const std::uint32_t most = *std::max_element(std::begin(kBinCounts), std::end(kBinCounts));
    out = DeviceBuffer<std::uint32_t>(most);
    const auto fine = histogram_reference(n, most);
    for (std::uint32_t bins : kBinCounts) expected[bins] = fold_histogram(fine, bins);
  }
};

// One histogram row: verified against the CPU counts, then timed (keys read + bins written, GB = 1e9).
void histogram_row(Context& ctx, const HistogramLaunch& h, const std::string& params) {
  Keys& k = ctx.state<Keys>(ctx);
  const std::uint32_t bins = 1u << h.bins_log2;
  const auto& expected = k.expected.at(bins);
  const double bytes = static_cast<double>(k.n) * sizeof(std::uint32_t) + bins * sizeof(std::uint32_t);
  Row& row = ctx.measure(
      params, k.n, bytes, [&](cudaStream_t s) { launch_histogram(h, k.keys.data(), k.n, k.out.data(), s); },
      [&] {
        std::vector<std::uint32_t> got(bins);
        k.out.download(got.data(), bins);
        return compare_exact(got, expected);
      },
      [&](cudaStream_t s) { k.out.poison(s); });
  row.set("bins", static_cast<double>(bins))
      .set("blocks", static_cast<double>(h.blocks))
      .set("blocks_per_sm", static_cast<double>(h.blocks) / ctx.device().sm_count)
      .set("smem_per_block_bytes", static_cast<double>(h.smem));
  if (h.cluster != 0) row.set("cluster", static_cast<double>(h.cluster));
  if (!row.verified) return;
  row.set("gkeys_per_s", static_cast<double>(k.n) / (row.median_ms * 1e6));
  if (h.cluster == 0) k.global_ms[bins] = row.median_ms;
  else if (k.global_ms.count(bins)) row.set("vs_global", k.global_ms[bins] / row.median_ms);
}

void histogram_global(Context& ctx) {
  require_clusters(ctx);
  for (std::uint32_t bins : kBinCounts) histogram_row(ctx, plan_histogram_global(bins), fmt::format("bins={}", bins));
}

void histogram_block(Context& ctx) {
  require_clusters(ctx);
  int rows = 0;
  std::string why;
  for (std::uint32_t bins : kBinCounts) {
    const HistogramLaunch h = plan_histogram_cluster(1, bins);
    if (!h.why_not.empty()) {
      why = h.why_not;
      ctx.note(fmt::format("histogram_block bins={} not run: {}", bins, h.why_not));
      continue;
    }
    histogram_row(ctx, h, fmt::format("bins={}", bins));
    ++rows;
  }
  if (rows == 0) throw Waived(why);
}

void histogram_cluster(Context& ctx) {
  require_clusters(ctx);
  for (std::uint32_t bins : kBinCounts)
    for (unsigned cluster : kHistClusters) {
      const std::string params = fmt::format("bins={} cluster={}", bins, cluster);
      const HistogramLaunch h = plan_histogram_cluster(cluster, bins);
      // Every portable size fits these bins on a GPU with clusters; a failure here is a finding, not a skip.
      if (!h.why_not.empty()) throw Waived(fmt::format("{}: {}", params, h.why_not));
      histogram_row(ctx, h, params);
    }
}

// Global atomics' time over one cluster row's: the same keys and bins, measured in the same run.
double cluster_speedup(const RunRows& r, std::uint32_t bins, unsigned cluster) {
  return r.value({"histogram_global", fmt::format("bins={}", bins), "median_ms"}) /
         r.value({"histogram_cluster", fmt::format("bins={} cluster={}", bins, cluster), "median_ms"});
}

std::vector<Claim> claims() {
  return {
      ratio_claim("remote_latency_above_local",
                  "A dependent load from a neighbour block's shared memory takes at least twice the cycles of one "
                  "from the block's own.",
                  {"latency", "neighbour", "cycles_per_hop"}, {"latency", "own", "cycles_per_hop"},
                  Bound::at_least(2.0),
                  "the remote load is a request across the SM-to-SM network, the owner's shared-memory pipeline "
                  "(a local load's whole cost) and a reply back: the two trips add at least one more local load"),
      ratio_claim("local_bandwidth_above_remote",
                  "Streaming from the block's own shared memory moves at least twice the bytes per second of "
                  "streaming from the neighbour's, clusters of 2.",
                  {"bandwidth", "cluster=2 read=own", "smem_gb_per_s"},
                  {"bandwidth", "cluster=2 read=neighbour", "smem_gb_per_s"}, Bound::at_least(2.0),
                  "own reads are served by the SM's pipeline at up to 128 bytes per clock; a remote read needs a "
                  "request and a reply on the SM-to-SM network, whose share per SM is a fraction of that"),
      Claim{"cluster_of_2_beats_global_atomics",
            "A 65536-bin histogram, too large for one block, runs at least 1.4x as fast split over a cluster of 2 "
            "as with atomics on the histogram in global memory.",
            "median_ms histogram_global[bins=65536] / median_ms histogram_cluster[bins=65536 cluster=2]",
            Bound::at_least(1.4),
            "both read the same keys from DRAM; global atomics send every key to the L2's atomic units, which all "
            "SMs share, while a cluster of 2 keeps half the updates on the SM and sends the other half to one "
            "neighbour; 1.4 is below both reference GPUs (1.8x and 2.3x) and above what noise could fake",
            ClaimKind::device, [](const RunRows& r) { return cluster_speedup(r, 65536, 2); }},
      Claim{"one_block_beats_a_cluster_where_it_fits",
            "Where the whole histogram fits in one block's shared memory (32768 bins), one block per SM runs at "
            "least 2x as fast as a cluster of 2 sharing it.",
            "median_ms histogram_cluster[bins=32768 cluster=2] / median_ms histogram_block[bins=32768]",
            Bound::at_least(2.0),
            "one block's own copy takes every update in its own shared memory, while the cluster sends half of "
            "them across the SM-to-SM network, whose bandwidth is a fraction of the local pipeline's "
            "(local_bandwidth_above_remote)",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.value({"histogram_cluster", "bins=32768 cluster=2", "median_ms"}) /
                     r.value({"histogram_block", "bins=32768", "median_ms"});
            }},
      Claim{"larger_clusters_give_the_gain_back",
            "Clusters of 4 and 8 run at most 1.3x as fast as global atomics at either bin count: the gain belongs "
            "to the cluster of 2.",
            "max over bins 32768, 65536 and C = 4, 8 of median_ms histogram_global / median_ms histogram_cluster",
            Bound::at_most(1.3),
            "(C - 1) / C of the updates cross the network, 3/4 and 7/8 against 1/2 for a pair, and the remote "
            "atomics are what the time is made of: both reference GPUs measure 0.85x to 1.16x; a GPU whose larger "
            "clusters kept the pair's gain fails this, and that is worth knowing",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (std::uint32_t bins : kBinCounts)
                for (unsigned c : {4u, 8u}) v.push_back(cluster_speedup(r, bins, c));
              return max_of(v);
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "distributed_shared";
  d.summary =
      "Thread-block clusters: the latency and bandwidth of a neighbour block's shared memory against the\n"
      "block's own, and a histogram whose bins are split over a cluster against global atomics (sm_90+).";
  d.size_meaning = "histogram keys (default: 8x L2 of 4-byte keys)";
  d.variants = {
      {"latency", "pointer chase in own, own mapped, and neighbour shared memory", latency},
      {"bandwidth", "all SMs streaming own vs neighbour shared memory, clusters of 1 to 16", bandwidth},
      {"histogram_global", "one global atomicAdd per key (32768 and 65536 bins)", histogram_global},
      {"histogram_block", "the whole histogram in one block's shared memory, where it fits", histogram_block},
      {"histogram_cluster", "the bins split over a cluster of 2, 4 or 8 blocks", histogram_cluster},
  };
  d.claims = claims();
  d.extras = {ExtraOption::size("hops", "dependent loads per chase (1000 with --quick)", 20000),
              ExtraOption::size("passes", "passes of each read thread over its 8 16-byte loads (4 with --quick)", 256)};
  d.check_options = [](Context& ctx) { (void)hops_option(ctx), (void)passes_option(ctx); };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(std::uint32_t); };
  d.quick_size = std::uint64_t{1} << 20;
  d.max_size = [](const DeviceInfo& dev) { return std::uint64_t{16} * 8 * dev.l2_bytes / sizeof(std::uint32_t); };
  d.max_size_reason = "16x the default: the CPU reference hashes and counts every key";
  d.device_bytes = [](std::uint64_t n) { return static_cast<double>(n) * sizeof(std::uint32_t) + 16e6; };
  d.cold_by_default = false;  // the keys are 8x L2: nothing stays in it from one launch to the next
  d.warmup_ms = 20.0;
  d.waive_reason = [](const DeviceInfo& dev) { return cluster_unavailable_reason(dev.ordinal); };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
