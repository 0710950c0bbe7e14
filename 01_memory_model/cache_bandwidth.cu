// cache_bandwidth: how much faster is a load served by L1 or L2 than by DRAM?
//
// One streaming read kernel, three working sets (one wave of blocks on every SM): 8x L2 split among the
// blocks (DRAM), L2/4 read whole by every block (too large for any L1: served by L2), and 64 KiB re-read 64
// times by every block (L1). The caches are measured warm and never flushed, since being served by them is
// the point. Each level closer to the SM serves the same loads several times faster: that gap is why the
// later chapters care where a working set lives.
//
// Run: build/bin/cache_bandwidth [--size 1G] [--csv cache_bandwidth.csv]
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/stream_sum.cuh"
#include "common/access_model.hpp"
#include "common/harness.hpp"
#include "common/pattern.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

// [doc:l1_working_set]
constexpr std::size_t kL1WorkingSet = 64 * 1024;
// [/doc:l1_working_set]
constexpr int kL1Passes = 64;  // re-reads per launch: the first pass (from L2) is 1/64 of the traffic

std::vector<std::uint32_t> make_words(std::size_t n4) {
  std::vector<std::uint32_t> w(4 * n4);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = pattern_word(i, 0xCB);
  return w;
}

// The run's dram row, for the vs_dram column of the cache rows.
struct DramRow {
  double gb_per_s = 0.0;
};

void run_level(Context& ctx, const std::string& level, std::size_t bytes, bool replicate, int passes) {
  const std::size_t n4 = bytes / sizeof(uint4);
  const unsigned grid = stream_sum_full_grid<0>(ctx.device().sm_count);
  const StreamLayout L = make_stream_layout(n4, grid, replicate);
  const std::vector<std::uint32_t> words = make_words(n4);
  DeviceBuffer<std::uint32_t> buf(words.size());
  DeviceBuffer<unsigned> sums(L.grid);
  buf.upload(words);
  const std::vector<std::uint32_t> expected = stream_sum_reference(words, L, passes);
  const auto* buf4 = reinterpret_cast<const uint4*>(buf.data());

  const cml::model::GlobalAccess model = cml::model::vector_access(16);
  Row& row = ctx.measure(
      fmt::format("ws={}", format_bytes(static_cast<double>(n4 * sizeof(uint4)))), n4 * sizeof(uint4),
      stream_bytes(L, passes), [&](cudaStream_t s) { launch_stream_sum<0>(buf4, L, passes, sums.data(), s); },
      [&] { return compare_exact(sums.download(), expected); }, [&](cudaStream_t s) { sums.poison(s); });
  row.set("level", level)
      .set("working_set_bytes", static_cast<double>(n4 * sizeof(uint4)))
      .set("layout", replicate ? "replicated" : "partitioned")
      .set("passes", passes)
      .set("blocks", L.grid)
      .set("model_ld_sectors_per_req", model.sectors_per_request())
      .set("model_efficiency", model.efficiency());
  if (!row.verified) return;
  DramRow& dram_row = ctx.state<DramRow>();
  if (level == "dram") dram_row.gb_per_s = row.gb_per_s;
  else if (dram_row.gb_per_s > 0.0) row.set("vs_dram", row.gb_per_s / dram_row.gb_per_s);
}

// --size is the dram row's buffer.
void check_size(const Context& ctx) {
  if (ctx.size() < 1024 || ctx.size() / sizeof(uint4) >= (std::uint64_t{1} << 31))
    throw CliError("--size must be between 1k and 32G bytes");
}

void dram(Context& ctx) {
  check_size(ctx);
  if (!ctx.quick() && ctx.size() < 2 * ctx.device().l2_bytes)
    ctx.note("note: this --size fits in 2x L2; the dram row is then partly served by L2");
  run_level(ctx, "dram", ctx.size(), false, 1);
}

void l2(Context& ctx) { run_level(ctx, "l2", ctx.device().l2_bytes / 4, true, 1); }

void l1(Context& ctx) { run_level(ctx, "l1", kL1WorkingSet, true, kL1Passes); }

Demo make_demo() {
  Demo d;
  d.name = "cache_bandwidth";
  d.summary =
      "Streaming reads by every SM over a working set that fits in L1 (64 KiB), in L2 (L2/4) or only in\n"
      "DRAM (8x L2). Cache levels are warm by design (never flushed).";
  d.size_meaning = "bytes of the DRAM working set (default 8x L2)";
  // dram first: the cache levels report their ratio to it.
  d.variants = {
      {"dram", "8x L2, each byte read once per launch by one block", dram},
      {"l2", "L2/4, read whole by every block (L1 far too small to help)", l2},
      {"l1", "64 KiB, read whole by every block, 64 passes per launch", l1},
  };
  d.claims = {
      only_ratio_claim("l2_beats_dram",
                       "Reads served by L2 move clearly more bytes per second than reads from DRAM.", "l2",
                       "dram", "gb_per_s", Bound::at_least(1.5),
                       "the L2 is on chip with several times the DRAM bandwidth; 1.5x leaves room for GPUs "
                       "whose L2 is only a few times faster"),
      only_ratio_claim("l1_beats_l2",
                       "Reads served by each SM's own L1 move at least twice the bytes per second of reads "
                       "from L2.",
                       "l1", "l2", "gb_per_s", Bound::at_least(2.0),
                       "every SM's L1 delivers up to a line per clock to that SM alone, while all SMs share "
                       "the L2; 2x is well below the gap the hierarchy is built for"),
      only_ratio_claim("l1_beats_dram",
                       "Reads served by L1 move at least four times the bytes per second of reads from DRAM.",
                       "l1", "dram", "gb_per_s", Bound::at_least(4.0),
                       "the two steps above compound; 4x leaves room for GPUs with unusually fast DRAM for "
                       "their SMs"),
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes; };
  d.quick_size = std::uint64_t{16} << 20;
  d.device_bytes = [](std::uint64_t size) { return static_cast<double>(size); };
  d.check_options = check_size;
  d.cold_by_default = false;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
