// smem_square: what does walking a shared tile by column cost, and what does one word of padding buy?
//
// A warp walking a row of a 32 x 32 tile touches 32 banks; walking a column (pitch 32 words) puts every lane
// in one bank: 32 wavefronts instead of 1. One word of padding per row (pitch 33) spreads a column over all
// banks. Static and dynamic tiles compile to the same accesses. Each block repeats write / barrier / read /
// barrier --rounds times so the time is the pattern's, not the launch's; the measured ratios stay below the
// wavefront ratios because the barriers and the loop are a fixed cost per round.
//
// Run: build/bin/smem_square [--size BLOCKS] [--rounds N] [--csv out.csv]
#include <climits>
#include <cmath>
#include <memory>
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

constexpr std::uint64_t kBlocksPerSm = 16;  // default --size = kBlocksPerSm x SMs

void run_orders(Context& ctx, bool dynamic, unsigned pad) {
  if (ctx.size() > static_cast<std::uint64_t>(INT_MAX)) throw CliError("--size (blocks) must be below 2^31");
  const int blocks = static_cast<int>(ctx.size());
  const int rounds = tile_rounds(ctx, kBlocksPerSm);
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

const char* const kUnpadded[] = {"static", "dynamic"};
const char* const kPadded[] = {"static_pad", "dynamic_pad"};
const char* const kOrders[] = {"write=row read=row", "write=col read=col", "write=row read=col", "write=col read=row"};

Demo make_demo() {
  Demo d;
  d.name = "smem_square";
  d.summary =
      "A 32x32 block writes and reads a 32x32 shared tile row- and column-wise: static and dynamic tiles, with\n"
      "and without one word of padding, timed against the access model's wavefronts per request.";
  d.size_meaning = "blocks (each a copy of the book's single 32x32 block with its own tile)";
  d.variants = {
      {"static", "__shared__ unsigned tile[32][32]", [](Context& c) { run_orders(c, false, 0); }},
      {"dynamic", "extern __shared__ tile, 32*32 words, 1-D index", [](Context& c) { run_orders(c, true, 0); }},
      {"static_pad", "__shared__ unsigned tile[32][33] (one word of padding per row)",
       [](Context& c) { run_orders(c, false, 1); }},
      // [doc:dynamic_pad_variant]
      {"dynamic_pad", "extern __shared__ tile of 32*33 words (allocation sized for the pad)",
       [](Context& c) { run_orders(c, true, 1); }},
      // [/doc:dynamic_pad_variant]
  };
  d.claims = {
      Claim{"column_walk_is_slow",
            "Without padding, a warp walking a tile column (row/col or col/row) is several times slower than "
            "one walking rows both ways.",
            "min over static and dynamic of vs_row_row of write=row read=col and write=col read=row",
            Bound::at_least(4.0),
            "a column access is a 32-way conflict (33 wavefronts per round instead of 2); the barriers and the "
            "loop are a fixed cost per round, so the ratio stays well below 16",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const char* var : kUnpadded)
                for (const char* o : {"write=row read=col", "write=col read=row"})
                  v.push_back(r.value({var, o, "vs_row_row"}));
              return min_of(v);
            }},
      Claim{"two_column_walks_cost_twice_one",
            "Without padding, col/col (both accesses down a column) takes about twice as long as row/col.",
            "min over static and dynamic of median_ms write=col read=col / write=row read=col",
            Bound::at_least(1.6),
            "64 wavefronts per round instead of 33; the fixed cost per round keeps the ratio a little under 2",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const char* var : kUnpadded)
                v.push_back(r.value({var, "write=col read=col", "median_ms"}) /
                            r.value({var, "write=row read=col", "median_ms"}));
              return min_of(v);
            }},
      Claim{"padding_makes_every_order_equal",
            "With one word of padding per row, every write/read order takes as long as row/row.",
            "max over static_pad and dynamic_pad and the four orders of vs_row_row", Bound::at_most(1.05),
            "a pitch of 33 words puts the 32 elements of a column in 32 banks: 1 wavefront per request in every "
            "order; 5% is the noise between equal-cost kernels",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const char* var : kPadded)
                for (const char* o : kOrders) v.push_back(r.value({var, o, "vs_row_row"}));
              return max_of(v);
            }},
      Claim{"static_and_dynamic_tiles_equal",
            "A dynamically allocated tile indexed by hand takes as long as the static 2-D tile, in every order.",
            "max over the four orders, unpadded and padded, of |median_ms dynamic / static - 1|",
            Bound::at_most(0.05),
            "the same addresses and the same wavefronts; 5% is the noise between equal-cost kernels",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const auto& [st, dy] : {std::pair{"static", "dynamic"}, std::pair{"static_pad", "dynamic_pad"}})
                for (const char* o : kOrders)
                  v.push_back(std::fabs(r.value({dy, o, "median_ms"}) / r.value({st, o, "median_ms"}) - 1.0));
              return max_of(v);
            }},
  };
  set_tile_demo_sizes(d, kBlocksPerSm, kSquareThreads);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
