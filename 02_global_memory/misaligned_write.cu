// misaligned_write: what does a store that straddles sector boundaries cost?
//
// Shifted by k % 8 != 0 elements, a warp writes 5 sectors instead of 4, the first and last in part; L2
// completes the partial sectors with the neighbouring warps' bytes before writing them back, so DRAM moves
// the same bytes at every offset. The check covers all of C, the poisoned elements before and after the
// shifted range included: the book's writeOffsetUnroll4 writes only part of C and passes only because C
// still holds an earlier result, a mistake a poisoned, whole-buffer check catches.
//
// Run: build/bin/misaligned_write [--variant write_offset_unroll4] [--csv write.csv]
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "02_global_memory/kernels/offset_add.cuh"
#include "02_global_memory/kernels/offset_add_runner.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

// `both` shifts the loads as well as the stores.
void offset_sweep_variant(Context& ctx, const OffsetLaunch& launch, bool both) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = offset_add_data(ctx);
  for (unsigned k : offset_sweep(ctx.quick()))
    run_offset_point(ctx, d, ceiling, fmt::format("offset={}", k), both ? k : 0, k, launch);
}

void block_sweep_variant(Context& ctx) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = offset_add_data(ctx);
  for (unsigned k : seed_offsets(ctx.quick()))
    for (unsigned block : block_sweep(ctx.quick()))
      run_offset_point(ctx, d, ceiling, fmt::format("offset={} block={}", k, block), 0, k,
                       with_block(launch_offset_add_unroll4<PlainLoad>, block));
}

Demo make_demo() {
  const OffsetLaunch simple = with_block(launch_offset_add<PlainLoad>, kSeedBlock);
  const OffsetLaunch unroll4 = with_block(launch_offset_add_unroll4<PlainLoad>, kSeedBlock);
  Demo d;
  d.name = "misaligned_write";
  d.summary =
      "C[i+k] = A[i] + B[i] and C[i+k] = A[i+k] + B[i+k] for k = 0..32, 64, 128; one element per thread,\n"
      "4-way unrolled, and unroll4 with 128..1024 threads per block. A misaligned warp writes 5 sectors\n"
      "instead of 4, but L2 merges the partial sectors, so DRAM moves the same bytes.";
  d.size_meaning = "floats per buffer (A, B and C; default 8x L2 bytes / 4)";
  d.variants = {
      {"write_offset", "C[i+k] = A[i] + B[i], one element per thread, 512 threads per block",
       [simple](Context& c) { offset_sweep_variant(c, simple, false); }},
      {"write_offset_unroll4", "the same, 4 elements per thread blockDim.x apart, grid / 4",
       [unroll4](Context& c) { offset_sweep_variant(c, unroll4, false); }},
      {"write_offset_unroll4_blocks", "write unroll4 at offsets 0, 11, 128 with 128..1024 threads per block",
       block_sweep_variant},
      {"read_write_offset_unroll4", "C[i+k] = A[i+k] + B[i+k]: both sides shifted, unroll4",
       [unroll4](Context& c) { offset_sweep_variant(c, unroll4, true); }},
  };
  d.claims = {
      Claim{"unroll4_reaches_ceiling",
            "Both 4-way unrolled kernels run at the copy ceiling at offset 0.",
            "min of vs_ceiling write_offset_unroll4[offset=0] and read_write_offset_unroll4[offset=0]",
            Bound::at_least(0.95), "32 bytes of loads in flight per thread saturate DRAM; 5% allows for noise",
            ClaimKind::device,
            [](const RunRows& r) {
              return std::min(r.value({"write_offset_unroll4", "offset=0", "vs_ceiling"}),
                              r.value({"read_write_offset_unroll4", "offset=0", "vs_ceiling"}));
            }},
      flat_offset_claim("misaligned_stores_cost_nothing_unroll4",
                        "Every store offset of the 4-way unrolled kernel runs as fast as offset 0.",
                        "write_offset_unroll4",
                        "L2 completes the partial sectors before writing them back, so DRAM moves the same bytes (a "
                        "cost per sector would be 8%); 5% allows one noisy point in 35"),
      flat_offset_claim("misaligned_stores_cost_nothing_one_element",
                        "Every store offset of the one-element-per-thread kernel runs as fast as offset 0.",
                        "write_offset", "the same DRAM bytes at every offset; 5% allows one noisy point in 35"),
      flat_offset_claim("both_sides_misaligned_cost_nothing",
                        "Shifting loads and stores together costs nothing either: every offset runs as fast as "
                        "offset 0.",
                        "read_write_offset_unroll4",
                        "5 sectors per request on both sides, the same DRAM bytes (a cost per sector would be 20%); "
                        "5% allows one noisy point in 35"),
      one_element_below_unroll4("write_offset", "write_offset_unroll4"),
      block_size_does_not_matter("write_offset_unroll4_blocks"),
  };
  set_offset_add_sizes(d);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
