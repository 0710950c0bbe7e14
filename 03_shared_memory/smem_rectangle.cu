// smem_rectangle: a 32x16 block and a rectangular shared tile: the index remapping and the padding it needs.
//
// Shows: with a rectangular tile, "read the column" is no longer tile[tx][ty]. To read the 16 x 32 tile
// back as its 32 x 16 transpose, thread idx = ty*32 + tx reads tile[icol][irow] with irow = idx / 16 and
// icol = idx % 16 (the book's checkSmemRectangle). Rows printed for a static tile and a dynamic one:
//   row_row  tile[16][32]: lanes along a row                                  1 wavefront
//   col_col  tile[32][16] written and read as tile[tx][ty]: pitch 16 puts the 32 lanes in 2 banks:  16;
//            one word of padding (pitch 17) makes it conflict-free                                   1
//   row_col  the remapped transpose read: a warp reads 2 tile columns (irow = 2ty, 2ty+1), 16 words
//            each, pitch 32: 2 banks, 16 wavefronts; pad 1 (pitch 33) still leaves 2-way conflicts (the
//            two columns overlap in 15 banks); pad 2 (pitch 34) sends one column to even banks and the
//            other to odd ones: 1 wavefront. The rectangle needs 2 words of padding, the square only 1.
// The dynamic allocations are sized for their pads. Every output is checked against the CPU reference
// (identity or the 32 x 16 transpose) before it is timed.
// Expected observation (measured on an H200, defaults): row_col at pad 0 takes ~4.4x row_row (model 16
// wavefronts), col_col at pad 0 ~8.1x; pad 1 and pad 2 both time within 1% of row_row: the model's 2
// wavefronts at pad 1 hide under the per-round barrier/loop cost. Static and dynamic tiles time the same.
// Run: build/bin/smem_rectangle [--size BLOCKS] [--rounds N] [--csv out.csv]
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/smem_tiles.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

int rounds_option(Context& ctx) {
  const std::uint64_t v = ctx.extra_size("rounds", 2);
  if (v > (1u << 20)) throw CliError("--rounds must be at most 1M");
  return static_cast<int>(v);
}

void run_patterns(Context& ctx, bool dynamic) {
  if (ctx.size() > static_cast<std::uint64_t>(INT_MAX)) throw CliError("--size (blocks) must be below 2^31");
  const int blocks = static_cast<int>(ctx.size());
  const int rounds = rounds_option(ctx);
  DeviceBuffer<unsigned> out(static_cast<std::size_t>(blocks) * kRectThreads);
  const std::pair<RectPattern, unsigned> points[] = {
      {RectPattern::kRowRow, 0}, {RectPattern::kColCol, 0}, {RectPattern::kColCol, 1},
      {RectPattern::kRowCol, 0}, {RectPattern::kRowCol, 1}, {RectPattern::kRowCol, 2}};
  double row_row_ms = 0.0;
  for (const auto& [pattern, pad] : points) {
    const auto expected = rect_expected(pattern, rounds, static_cast<std::size_t>(blocks));
    Row& row = ctx.measure(
        fmt::format("{} pad={}", rect_pattern_name(pattern), pad), ctx.size(), 0.0,
        [&, pattern = pattern, pad = pad](cudaStream_t s) {
          if (dynamic) launch_rect_dynamic(out.data(), pattern, pad, blocks, rounds, s);
          else launch_rect_static(out.data(), pattern, pad, blocks, rounds, s);
        },
        [&] { return compare_exact(out.download(), expected); }, [&](cudaStream_t s) { out.poison(s); });
    row.set("pad", pad)
        .set("smem_bytes", static_cast<double>(rect_dynamic_bytes(pattern, pad)))
        .set("rounds", rounds)
        .set("model_st_wavefronts_per_req", rect_store_model(pattern, pad).wavefronts_per_request())
        .set("model_ld_wavefronts_per_req", rect_load_model(pattern, pad).wavefronts_per_request());
    if (!row.verified) continue;
    if (pattern == RectPattern::kRowRow) row_row_ms = row.median_ms;
    if (row_row_ms > 0.0) row.set("vs_row_row", row.median_ms / row_row_ms);
  }
}

Demo make_demo() {
  Demo d;
  d.name = "smem_rectangle";
  d.summary =
      "A 32x16 block and a rectangular shared tile: the irow/icol remapping that reads the 16x32 tile as its\n"
      "32x16 transpose, and the padding it needs. Expected: the transposed read costs 16 / 2 / 1 wavefronts\n"
      "per request with 0 / 1 / 2 words of padding, and with 2 it times within 5% of row_row.";
  d.size_meaning = "blocks (each a copy of the book's single 32x16 block with its own tile)";
  d.variants = {
      {"static", "__shared__ tile[16][32 + pad] (tile[32][16 + pad] for col_col)",
       [](Context& c) { run_patterns(c, false); }},
      {"dynamic", "extern __shared__ tile, 1-D index, allocation sized for the pad",
       [](Context& c) { run_patterns(c, true); }},
  };
  d.extras = {{"rounds", "write/barrier/read/barrier rounds per block (default 256; 2 with --quick)", "256", true}};
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{32} * static_cast<std::uint64_t>(dev.sm_count); };
  d.quick_size = 2;
  d.device_bytes = [](std::uint64_t blocks) { return static_cast<double>(blocks) * kRectThreads * 4.0 + 1e6; };
  d.cold_by_default = false;  // on-chip only
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
