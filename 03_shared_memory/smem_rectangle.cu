// smem_rectangle: what changes when the shared tile is not square?
//
// With a 16 x 32 tile, "read the column" is no longer tile[tx][ty]: reading it back as its transpose needs
// the book's index remapping, and then a warp reads two tile columns at once. One word of padding, enough
// for a square tile, still leaves those two columns sharing banks; two words send one column to even banks
// and the other to odd ones. The access model's wavefronts sit beside each time; the measured ratios stay
// below them because the barriers and the loop are a fixed cost per round.
//
// Run: build/bin/smem_rectangle [--size BLOCKS] [--rounds N] [--csv out.csv]
#include <algorithm>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/smem_tiles.cuh"
#include "03_shared_memory/tile_rounds.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

constexpr std::uint64_t kBlocksPerSm = 32;  // default --size = kBlocksPerSm x SMs

void run_patterns(Context& ctx, bool dynamic) {
  if (ctx.size() > static_cast<std::uint64_t>(INT_MAX)) throw CliError("--size (blocks) must be below 2^31");
  const int blocks = static_cast<int>(ctx.size());
  const int rounds = tile_rounds(ctx, kBlocksPerSm);
  DeviceBuffer<unsigned> out(static_cast<std::size_t>(blocks) * kRectThreads);
  // [doc:rect_points]
  const std::pair<RectPattern, unsigned> points[] = {
      {RectPattern::kRowRow, 0}, {RectPattern::kColCol, 0}, {RectPattern::kColCol, 1},
      {RectPattern::kRowCol, 0}, {RectPattern::kRowCol, 1}, {RectPattern::kRowCol, 2}};
  // [/doc:rect_points]
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

const char* const kVariants[] = {"static", "dynamic"};

// The worst (lowest or highest) vs_row_row of one point over the static and the dynamic tile.
double over_variants(const RunRows& r, const char* point, bool lowest) {
  std::vector<double> v;
  for (const char* var : kVariants) v.push_back(r.value({var, point, "vs_row_row"}));
  return lowest ? min_of(v) : max_of(v);
}

Demo make_demo() {
  Demo d;
  d.name = "smem_rectangle";
  d.summary =
      "A 32x16 block and a rectangular shared tile: the irow/icol remapping that reads the 16x32 tile as its\n"
      "32x16 transpose, and the padding it needs (2 words, where the square tile needs 1).";
  d.size_meaning = "blocks (each a copy of the book's single 32x16 block with its own tile)";
  d.variants = {
      {"static", "__shared__ tile[16][32 + pad] (tile[32][16 + pad] for col_col)",
       [](Context& c) { run_patterns(c, false); }},
      {"dynamic", "extern __shared__ tile, 1-D index, allocation sized for the pad",
       [](Context& c) { run_patterns(c, true); }},
  };
  d.claims = {
      Claim{"unpadded_transposed_read_is_slow",
            "Without padding, the remapped transposed read (row_col) is several times slower than row_row.",
            "min over static and dynamic of vs_row_row of 'row_col pad=0'", Bound::at_least(3.0),
            "the two tile columns a warp reads sit in 2 banks: 16 wavefronts per read instead of 1; the "
            "barriers and the loop are a fixed cost per round, so the ratio stays well below the 17 : 2 of the "
            "wavefronts per round (8.5)",
            ClaimKind::device, [](const RunRows& r) { return over_variants(r, "row_col pad=0", true); }},
      Claim{"unpadded_column_walk_is_slow",
            "Without padding, col_col on the 32 x 16 tile (pitch 16) is several times slower than row_row.",
            "min over static and dynamic of vs_row_row of 'col_col pad=0'", Bound::at_least(4.0),
            "pitch 16 puts the 32 lanes in 2 banks: 16 wavefronts for both the write and the read",
            ClaimKind::device, [](const RunRows& r) { return over_variants(r, "col_col pad=0", true); }},
      Claim{"enough_padding_is_conflict_free",
            "With enough padding (1 word for col_col, 2 for the transposed read) both take as long as row_row.",
            "max over static and dynamic of vs_row_row of 'col_col pad=1' and 'row_col pad=2'",
            Bound::at_most(1.05),
            "pitch 17 and pitch 34 put every lane of a request in its own bank: 1 wavefront, as row_row; 5% is "
            "the noise between equal-cost kernels",
            ClaimKind::device,
            [](const RunRows& r) {
              return std::max(over_variants(r, "col_col pad=1", false), over_variants(r, "row_col pad=2", false));
            }},
  };
  set_tile_demo_sizes(d, kBlocksPerSm, kRectThreads);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
