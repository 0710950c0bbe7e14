// transpose_global: why is a transpose through global memory slower than a copy, and which side pays?
//
// A transpose moves a copy's bytes, but one side walks a column: 32 sectors per warp request for 128 useful
// bytes. The expensive side is the strided store; the sectors a strided load brings in are reused by the
// block's neighbouring warps, in L2 rather than L1 (naive_col_l2only says so). The diagonal block order,
// once a cure for partition camping, buys nothing on GPUs that hash addresses over their channels. copy_row
// and copy_col bound every kernel; all are checked bit for bit against the CPU transpose before timing.
//
// Run: build/bin/transpose_global [--size 16384 | --rows 12800 --cols 12800] [--variant naive_row]
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/transpose_global.cuh"
#include "common/harness.hpp"
#include "common/transpose.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;
using cml::transpose::Expect;

using BlockLauncher = void (*)(const float*, float*, std::size_t, std::size_t, cudaStream_t, dim3);

// One global-memory kernel: how it is launched and, for the access model, which way its warps walk.
struct Kernel {
  Expect expect;
  BlockLauncher launch;
  bool lanes_along_rows;  // consecutive lanes take consecutive elements of an input row (else of a column)
  unsigned unroll = 1;    // elements per thread, blockDim.x apart along the lanes
};

const Kernel kCopyCol{Expect::kCopy, launch_copy_col, false};
const Kernel kNaiveRow{Expect::kTranspose, launch_transpose_naive_row<BlockOrder::kRowMajor>, true};
const Kernel kNaiveCol{Expect::kTranspose, launch_transpose_naive_col<BlockOrder::kRowMajor>, false};
const Kernel kNaiveColL2Only{Expect::kTranspose, launch_transpose_naive_col_l2only, false};
const Kernel kUnroll4Row{Expect::kTranspose, launch_transpose_unroll4_row, true, kUnroll};
const Kernel kUnroll4Col{Expect::kTranspose, launch_transpose_unroll4_col, false, kUnroll};
const Kernel kDiagonalRow{Expect::kTranspose, launch_transpose_diagonal_row, true};
const Kernel kDiagonalCol{Expect::kTranspose, launch_transpose_diagonal_col, false};

void run_kernel(Context& ctx, const Kernel& k, dim3 block, const std::string& prefix = "") {
  transpose::Bench& b = transpose::bench(ctx);
  const auto& s = b.shape();
  Row& row = b.run(ctx, fmt::format("{}block={}x{}", prefix, block.x, block.y), k.expect,
                   [&](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t st) {
                     k.launch(in, out, r, c, st, block);
                   });
  // Over the whole launch, edge blocks included: ncu averages their idle lanes into its counts. The block
  // order (diagonal) changes which block takes a tile, not what the tiles access.
  const transpose::LaunchAccesses a =
      transpose::element_launch(s, block.x, block.y, k.lanes_along_rows, k.expect == Expect::kTranspose, k.unroll);
  transpose::set_global_model(row, a.ld, a.st);
}

std::function<void(Context&)> variant(const Kernel& k) {
  return [&k](Context& ctx) { run_kernel(ctx, k, kDefaultBlock); };
}

// The blog posts' thin-blocks table: both naive kernels with every block from (32,32) to (8,8).
void block_sweep(Context& ctx) {
  const unsigned sides[] = {32, 16, 8};
  for (const Kernel* k : {&kNaiveCol, &kNaiveRow})
    for (unsigned x : sides)
      for (unsigned y : sides) run_kernel(ctx, *k, dim3(x, y), k == &kNaiveCol ? "naive_col " : "naive_row ");
}

// GB/s of the one row of `variant` whose params end with `tail`: they start with the matrix shape, which the
// options change.
double value_ending(const RunRows& r, const char* variant, const std::string& tail) {
  const auto ends = [&tail](const Row& row) {
    const std::string& p = row.params;
    return p.size() >= tail.size() && p.compare(p.size() - tail.size(), tail.size(), tail) == 0;
  };
  return RunRows::value(r.only_where(variant, ends, "ending with '" + tail + "'"), "gb_per_s");
}

Demo make_demo() {
  Demo d;
  d.name = "transpose_global";
  d.summary =
      "Matrix transposes through global memory only (fp32, out = in^T), bounded above by copy_row, with copy_col\n"
      "(both sides strided) beside them as the reference for a strided store:\n"
      "the strided store, not the strided load, is what a naive transpose pays for, and neither L1 nor the\n"
      "diagonal block order changes that.";
  d.variants = {
      {"copy_row", "upper bound: copy, both sides along rows (coalesced)",
       [](Context& ctx) { transpose::bench(ctx).copy_row(ctx); }},
      {"copy_col", "reference: copy, both sides down columns (strided); no lower bound, the row-writing kernels "
                   "can fall below it",
       variant(kCopyCol)},
      {"naive_row", "read rows (coalesced), write columns (strided)", variant(kNaiveRow)},
      {"naive_col", "read columns (strided), write rows (coalesced)", variant(kNaiveCol)},
      {"naive_col_l2only", "naive_col with L2-only loads (__ldcg): no L1 reuse", variant(kNaiveColL2Only)},
      {"unroll4_row", "naive_row, 4 elements per thread (grid / 4 along x)", variant(kUnroll4Row)},
      {"unroll4_col", "naive_col, 4 elements per thread (grid / 4 along x)", variant(kUnroll4Col)},
      {"diagonal_row", "naive_row with blocks in diagonal order", variant(kDiagonalRow)},
      {"diagonal_col", "naive_col with blocks in diagonal order", variant(kDiagonalCol)},
      {"block_sweep", "naive_col and naive_row, blocks (32,32) ... (8,8)", block_sweep},
  };
  // GB/s of a variant at the default block, whatever the matrix shape in its params.
  auto at_default = [](const RunRows& r, const char* variant) { return value_ending(r, variant, "block=32x8"); };
  d.claims = {
      Claim{"copy_col_below_half", "A copy whose warps walk columns moves at most half the bytes per second of one "
            "that walks rows.",
            "GB/s copy_col / GB/s copy_row (block 32x8)", Bound::at_most(0.5),
            "a warp walking a column touches 32 sectors for 128 useful bytes on both sides", ClaimKind::device,
            [at_default](const RunRows& r) { return at_default(r, "copy_col") / at_default(r, "copy_row"); }},
      Claim{"strided_store_costs_most", "With the post's 32x8 blocks, reading columns and writing rows (naive_col) "
            "is at least twice as fast as reading rows and writing columns (naive_row).",
            "GB/s naive_col / GB/s naive_row (block 32x8)", Bound::at_least(2.0),
            "a strided load's sectors are used by the block's neighbouring warps, a strided store's sectors are "
            "written in part; 2x leaves a wide margin",
            ClaimKind::device,
            [at_default](const RunRows& r) { return at_default(r, "naive_col") / at_default(r, "naive_row"); }},
      Claim{"naive_row_like_copy_col", "Writing columns alone (naive_row) costs as much as striding both sides "
            "(copy_col).",
            "GB/s naive_row / GB/s copy_col (block 32x8)", Bound::between(0.9, 1.1),
            "the strided store sets the pace; the strided load adds nothing; 10% allows for noise",
            ClaimKind::device,
            [at_default](const RunRows& r) { return at_default(r, "naive_row") / at_default(r, "copy_col"); }},
      Claim{"l1_not_the_reason", "naive_col with loads that skip L1 (__ldcg) runs close to naive_col: the strided "
            "loads' sectors are reused in L2.",
            "GB/s naive_col_l2only / GB/s naive_col (block 32x8)", Bound::at_least(0.85),
            "if L1 reuse made naive_col fast, skipping L1 would drop it towards naive_row (at most half its "
            "speed wherever strided_store_costs_most holds); 15% allows for the extra L2 requests",
            ClaimKind::device,
            [at_default](const RunRows& r) { return at_default(r, "naive_col_l2only") / at_default(r, "naive_col"); }},
      Claim{"diagonal_order_buys_nothing", "Visiting the tiles in diagonal order is no faster than row-major order.",
            "max of GB/s diagonal_row / naive_row and diagonal_col / naive_col (block 32x8)", Bound::at_most(1.1),
            "addresses are hashed over the memory channels, so there is no partition camping to avoid; 10% "
            "allows for the order's effect on L2 locality and noise",
            ClaimKind::device,
            [at_default](const RunRows& r) {
              return std::max(at_default(r, "diagonal_row") / at_default(r, "naive_row"),
                              at_default(r, "diagonal_col") / at_default(r, "naive_col"));
            }},
      Claim{"unroll_does_not_fix_stores", "Four elements per thread leave naive_row's strided stores below half of "
            "copy_row.",
            "GB/s unroll4_row / GB/s copy_row (block 32x8)", Bound::at_most(0.5),
            "more requests in flight do not make a strided store touch fewer sectors", ClaimKind::device,
            [at_default](const RunRows& r) { return at_default(r, "unroll4_row") / at_default(r, "copy_row"); }},
      Claim{"narrow_blocks_help_naive_row", "naive_row with blocks 8 threads wide (8x16, 8x32) is at least twice as "
            "fast as with 32x8 blocks.",
            "min of GB/s naive_row at 8x16 and 8x32 / GB/s naive_row at 32x8 (block_sweep)", Bound::at_least(2.0),
            "a store request then covers 8 sectors of 16 useful bytes instead of 32 sectors of 4 bytes",
            ClaimKind::device,
            [](const RunRows& r) {
              const double wide = value_ending(r, "block_sweep", "naive_row block=32x8");
              return std::min(value_ending(r, "block_sweep", "naive_row block=8x16"),
                              value_ending(r, "block_sweep", "naive_row block=8x32")) /
                     wide;
            }},
      Claim{"narrow_blocks_nearly_close_the_gap",
            "With blocks 8 threads wide (8x32) for both, naive_col runs at most 1.3x as fast as naive_row: the "
            "twofold gap belongs to the 32x8 block, not to the strided store as such.",
            "GB/s naive_col at 8x32 / GB/s naive_row at 8x32 (block_sweep)", Bound::at_most(1.3),
            "at 8x32 a store request of naive_row touches 8 sectors of 16 useful bytes and a load request of "
            "naive_col the same, so the two sides cost about alike; the tuned naive_row is the fair baseline for "
            "naive_col, and a GPU where strided stores still cost far more fails this",
            ClaimKind::device,
            [](const RunRows& r) {
              return value_ending(r, "block_sweep", "naive_col block=8x32") /
                     value_ending(r, "block_sweep", "naive_row block=8x32");
            }},
  };
  transpose::set_demo_sizes(d);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
