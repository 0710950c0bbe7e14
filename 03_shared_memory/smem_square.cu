// smem_square: a 32x32 block writing and reading a 32x32 shared-memory tile row-wise and column-wise.
//
// Shows: the four write/read orders (row/row, col/col, row/col, col/row) on a static
// `__shared__ unsigned tile[32][32]`, on the same tile allocated dynamically (`extern __shared__`, 1-D
// index computed by hand), and on both with one word of padding per row (tile[32][33]; the dynamic
// allocation is sized for the pad: 32 * 33 * 4 bytes). "Row" = the 32 lanes of a warp walk along a tile
// row (32 consecutive words, 32 banks); "col" = they walk down a column (pitch 32 words: every lane in
// the same bank). The access model's wavefronts per request are printed beside each time.
// Each block is a copy of the book's single block and repeats write / barrier / read / barrier `--rounds`
// times, so the time is the access pattern's, not the launch's. Every output is checked against the CPU
// reference (identity for row/row and col/col, the transpose for the mixed orders) before it is timed.
// Expected observation (measured on an H200, defaults): per round a warp needs 1+1 wavefronts (row/row),
// 1+32 (row/col, col/row) or 32+32 (col/col) without the pad; row/col and col/row take ~7.9x row/row and
// col/col ~15.3x (not 32x: the barriers and loop are a fixed cost per round). Static and dynamic tiles
// time the same; with the pad every order times within 1% of row/row.
// Run: build/bin/smem_square [--size BLOCKS] [--rounds N] [--csv out.csv]
#include <climits>
#include <memory>
#include <string>
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

void run_orders(Context& ctx, bool dynamic, unsigned pad) {
  if (ctx.size() > static_cast<std::uint64_t>(INT_MAX)) throw CliError("--size (blocks) must be below 2^31");
  const int blocks = static_cast<int>(ctx.size());
  const int rounds = rounds_option(ctx);
  DeviceBuffer<unsigned> out(static_cast<std::size_t>(blocks) * kSquareThreads);
  const Order orders[][2] = {
      {Order::kRow, Order::kRow}, {Order::kCol, Order::kCol}, {Order::kRow, Order::kCol}, {Order::kCol, Order::kRow}};
  double row_row_ms = 0.0;
  for (const auto& o : orders) {
    const Order write = o[0], read = o[1];
    const auto expected = square_expected(write, read, rounds, static_cast<std::size_t>(blocks));
    Row& row = ctx.measure(
        fmt::format("write={} read={}", order_name(write), order_name(read)), ctx.size(), 0.0,
        [&](cudaStream_t s) {
          if (dynamic) launch_square_dynamic(out.data(), pad, write, read, blocks, rounds, s);
          else launch_square_static(out.data(), pad, write, read, blocks, rounds, s);
        },
        [&] { return compare_exact(out.download(), expected); }, [&](cudaStream_t s) { out.poison(s); });
    row.set("pad", pad)
        .set("smem_bytes", static_cast<double>(square_dynamic_bytes(pad)))
        .set("rounds", rounds)
        .set("model_st_wavefronts_per_req", square_access_model(write, pad).wavefronts_per_request())
        .set("model_ld_wavefronts_per_req", square_access_model(read, pad).wavefronts_per_request());
    if (!row.verified) continue;
    if (write == Order::kRow && read == Order::kRow) row_row_ms = row.median_ms;
    if (row_row_ms > 0.0) row.set("vs_row_row", row.median_ms / row_row_ms);
  }
}

Demo make_demo() {
  Demo d;
  d.name = "smem_square";
  d.summary =
      "A 32x32 block writes and reads a 32x32 shared tile row- and column-wise: static and dynamic tiles, with\n"
      "and without one word of padding. Expected: unpadded column accesses cost 32 wavefronts per request\n"
      "(row/col slower than row/row, col/col slowest); padded, every order times within 5% of row/row.";
  d.size_meaning = "blocks (each a copy of the book's single 32x32 block with its own tile)";
  d.variants = {
      {"static", "__shared__ unsigned tile[32][32]", [](Context& c) { run_orders(c, false, 0); }},
      {"dynamic", "extern __shared__ tile, 32*32 words, 1-D index", [](Context& c) { run_orders(c, true, 0); }},
      {"static_pad", "__shared__ unsigned tile[32][33] (one word of padding per row)",
       [](Context& c) { run_orders(c, false, 1); }},
      {"dynamic_pad", "extern __shared__ tile of 32*33 words (allocation sized for the pad)",
       [](Context& c) { run_orders(c, true, 1); }},
  };
  d.extras = {{"rounds", "write/barrier/read/barrier rounds per block (default 256; 2 with --quick)", "256", true}};
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{16} * static_cast<std::uint64_t>(dev.sm_count); };
  d.quick_size = 2;
  d.device_bytes = [](std::uint64_t blocks) { return static_cast<double>(blocks) * kSquareThreads * 4.0 + 1e6; };
  d.cold_by_default = false;  // on-chip only: flushing L2 would change nothing
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
