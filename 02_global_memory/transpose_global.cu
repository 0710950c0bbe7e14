// transpose_global: matrix transposes through global memory only — the seeds' eight kernels, the
// "thin blocks" table, and one experiment that tests the seeds' L1 explanation on this GPU.
//
// Shows: a transpose moves the bytes of a copy, but one side of it must walk a column. copy_row (both
// sides along rows) and copy_col (both along columns) bound it from above and below. naive_row reads rows
// and writes columns (4 sectors per load request, 32 per store request); naive_col reads columns and writes
// rows (32 per load, 4 per store). unroll4_* give each thread four elements; diagonal_* only change the
// ORDER in which blocks visit the tiles (defined for any shape). naive_col_l2only is naive_col with loads
// that skip L1 (__ldcg). block_sweep runs both naive kernels with the blocks (32,32) ... (8,8).
// Bandwidth = 2 * M * N * 4 bytes / median time (GB = 1e9), L2 flushed before each sample; every kernel's
// output is compared bit-exactly with the CPU transpose before it is timed.
//
// EXPECTED OBSERVATION (H100/H200, 8192 x 8192 fp32, default block 32x8); in brackets the H200 run of
// 2026-11-21 (results/nvidia-h200/transpose_global.csv):
//   1. copy_col <= 0.5x copy_row: a warp that walks a column touches 32 sectors for 128 useful bytes
//      [0.245x].
//   2. naive_col >= 1.2x naive_row [2.99x: 1632 vs 546 GB/s]. The cost is the strided STORE: naive_row
//      is within 5% of copy_col, which strides both sides [546 vs 554 GB/s].
//   3. naive_col_l2only (loads that bypass L1, __ldcg) within 15% of naive_col [8% slower, 1511 GB/s]:
//      L1 reuse of the strided load's sectors is NOT what makes naive_col faster on Hopper. (The seed's
//      L1 explanation predicted >= 1.3x; refuted.)
//   4. diagonal_row/diagonal_col within 15% of naive_row/naive_col [-11.2% / +1.0%]: Hopper hashes
//      addresses over its memory channels, so the order that beat "partition camping" buys nothing.
//   5. unroll4_row < 0.5x copy_row: more requests in flight per thread do not remove the store's cost
//      [0.225x; unroll4_col 1.15x naive_col].
//   6. block_sweep: naive_row with x = 8 (8x32, 8x16, 8x8) >= 1.5x naive_row with x = 32 (32x8): a store
//      request then covers 8 sectors of 16 useful bytes instead of 32 sectors of 4 [3.41x, 3.02x, 1.55x].
//
// Run: build/bin/transpose_global                        (8192 x 8192)
//      build/bin/transpose_global --size 16384
//      build/bin/transpose_global --rows 12800 --cols 12800 --variant naive_row --variant naive_col
#include <string>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/transpose_global.cuh"
#include "common/access_model.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;
using cml::transpose::Expect;

using BlockLauncher = void (*)(const float*, float*, std::size_t, std::size_t, cudaStream_t, dim3);

// One global-memory kernel: how it is launched and, for the access model, which way its warps walk.
struct Kernel {
  Expect expect;
  BlockLauncher launch;
  bool load_along_row;   // consecutive lanes read consecutive addresses of an input row
  bool store_along_row;  // consecutive lanes write consecutive addresses of an output row
};

const Kernel kCopyCol{Expect::kCopy, launch_copy_col, false, false};
const Kernel kNaiveRow{Expect::kTranspose, launch_transpose_naive_row<BlockOrder::kRowMajor>, true, false};
const Kernel kNaiveCol{Expect::kTranspose, launch_transpose_naive_col<BlockOrder::kRowMajor>, false, true};
const Kernel kNaiveColL2Only{Expect::kTranspose, launch_transpose_naive_col_l2only, false, true};
const Kernel kUnroll4Row{Expect::kTranspose, launch_transpose_unroll4_row, true, false};
const Kernel kUnroll4Col{Expect::kTranspose, launch_transpose_unroll4_col, false, true};
const Kernel kDiagonalRow{Expect::kTranspose, launch_transpose_diagonal_row, true, false};
const Kernel kDiagonalCol{Expect::kTranspose, launch_transpose_diagonal_col, false, true};

void run_kernel(Context& ctx, const Kernel& k, dim3 block, const std::string& prefix = "") {
  transpose::Bench& b = transpose::bench(ctx);
  const auto& s = b.shape();
  Row& row = b.run(ctx, fmt::format("{}block={}x{}", prefix, block.x, block.y), k.expect,
                   [&](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t st) {
                     k.launch(in, out, r, c, st, block);
                   });
  // The output's rows are `cols` long for a copy and `rows` long for a transpose.
  const std::size_t out_ld = k.expect == Expect::kCopy ? s.cols : s.rows;
  transpose::set_global_model(row, model::tile_access(block.x, block.y, s.cols, sizeof(float), k.load_along_row),
                              model::tile_access(block.x, block.y, out_ld, sizeof(float), k.store_along_row));
}

std::function<void(Context&)> variant(const Kernel& k) {
  return [&k](Context& ctx) { run_kernel(ctx, k, kDefaultBlock); };
}

// The seeds' thin-blocks table: both naive kernels with every block from (32,32) to (8,8).
void block_sweep(Context& ctx) {
  const unsigned sides[] = {32, 16, 8};
  for (const Kernel* k : {&kNaiveCol, &kNaiveRow})
    for (unsigned x : sides)
      for (unsigned y : sides) run_kernel(ctx, *k, dim3(x, y), k == &kNaiveCol ? "naive_col " : "naive_row ");
}

Demo make_demo() {
  Demo d;
  d.name = "transpose_global";
  d.summary =
      "Matrix transposes through global memory only (fp32, out = in^T), bounded by copy_row and copy_col.\n"
      "Expected: naive_col (strided loads) >= 1.2x naive_row (strided stores): 3.0x on an H200, where the\n"
      "same loads without L1 (naive_col_l2only) lose only 8%, so the strided store, not L1, is the cost;\n"
      "diagonal block order within 15% of row-major order.";
  d.size_meaning = transpose::kSizeMeaning;
  d.variants = {
      {"copy_row", "upper bound: copy, both sides along rows (coalesced)",
       [](Context& ctx) { transpose::bench(ctx).copy_row(ctx); }},
      {"copy_col", "lower bound: copy, both sides down columns (strided)", variant(kCopyCol)},
      {"naive_row", "read rows (coalesced), write columns (strided)", variant(kNaiveRow)},
      {"naive_col", "read columns (strided), write rows (coalesced)", variant(kNaiveCol)},
      {"naive_col_l2only", "naive_col with L2-only loads (__ldcg): no L1 reuse", variant(kNaiveColL2Only)},
      {"unroll4_row", "naive_row, 4 elements per thread (grid / 4 along x)", variant(kUnroll4Row)},
      {"unroll4_col", "naive_col, 4 elements per thread (grid / 4 along x)", variant(kUnroll4Col)},
      {"diagonal_row", "naive_row with blocks in diagonal order", variant(kDiagonalRow)},
      {"diagonal_col", "naive_col with blocks in diagonal order", variant(kDiagonalCol)},
      {"block_sweep", "naive_col and naive_row, blocks (32,32) ... (8,8)", block_sweep},
  };
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{8192}; };
  d.quick_size = 1000;  // 4 MB, and not a multiple of any block
  d.device_bytes = transpose::device_bytes_square;
  d.extras = transpose::shape_options();
  d.warmup_ms = 30.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
