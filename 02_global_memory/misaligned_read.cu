// misaligned_read: what does a load that straddles sector boundaries cost (Best Practices 9.2.1.3)?
//
// Shifted by k % 8 != 0 elements, a warp's 128 bytes straddle 5 sectors instead of 4 (the 80% load
// efficiency ncu reports), yet the fifth sector is the next warp's first, so DRAM moves each sector once:
// the misalignment costs L1/L2 requests, not DRAM bandwidth. What does cost is too few loads in flight:
// the blog post's one-element kernel keeps 8 bytes per thread in flight, unroll4 keeps 32. Buffers of 8x L2,
// so DRAM is measured; for the L2-resident case try --size 2M --warm.
//
// Run: build/bin/misaligned_read [--variant read_offset_unroll4] [--csv read.csv]
#include <string>

#include <fmt/format.h>

#include "02_global_memory/kernels/offset_add.cuh"
#include "02_global_memory/kernels/offset_add_runner.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

void offset_sweep_variant(Context& ctx, const OffsetLaunch& launch) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = offset_add_data(ctx);
  for (unsigned k : offset_sweep(ctx.quick()))
    run_offset_point(ctx, d, ceiling, fmt::format("offset={}", k), k, 0, launch);
}

void block_sweep_variant(Context& ctx) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = offset_add_data(ctx);
  for (unsigned k : seed_offsets(ctx.quick()))
    for (unsigned block : block_sweep(ctx.quick()))
      run_offset_point(ctx, d, ceiling, fmt::format("offset={} block={}", k, block), k, 0,
                       with_block(launch_offset_add_unroll4<PlainLoad>, block));
}

Demo make_demo() {
  Demo d;
  d.name = "misaligned_read";
  d.summary =
      "C[i] = A[i+k] + B[i+k] for k = 0..32, 64, 128: the blog post's kernel, a 4-way unrolled kernel, and\n"
      "unroll4 with 128..1024 threads per block. A misaligned warp touches 5 sectors instead of 4, but\n"
      "DRAM still moves each sector once.";
  d.size_meaning = "floats per buffer (A, B and C; default 8x L2 bytes / 4)";
  d.variants = {
      {"read_offset", "one element per thread, 512 threads per block (the blog post's kernel)",
       [](Context& c) { offset_sweep_variant(c, with_block(launch_offset_add<PlainLoad>, kSeedBlock)); }},
      {"read_offset_unroll4", "4 elements per thread blockDim.x apart, grid / 4, loads before stores",
       [](Context& c) {
         offset_sweep_variant(c, with_block(launch_offset_add_unroll4<PlainLoad>, kSeedBlock));
       }},
      {"read_offset_unroll4_blocks", "unroll4 at offsets 0, 11, 128 with 128, 256, 512, 1024 threads per block",
       block_sweep_variant},
  };
  d.claims = {
      Claim{"unroll4_reaches_ceiling", "The 4-way unrolled kernel at offset 0 runs at the copy ceiling.",
            "vs_ceiling read_offset_unroll4[offset=0]", Bound::at_least(0.95),
            "32 bytes of loads in flight per thread saturate DRAM; 5% allows for run-to-run noise",
            ClaimKind::device,
            [](const RunRows& r) { return r.value({"read_offset_unroll4", "offset=0", "vs_ceiling"}); }},
      flat_offset_claim("misaligned_reads_cost_nothing_unroll4",
                        "Every offset of the 4-way unrolled kernel runs as fast as offset 0.", "read_offset_unroll4",
                        "the fifth sector of a misaligned warp is the next warp's first, so DRAM moves the same bytes "
                        "(a cost per sector would be 14%); 5% allows one noisy point in 35"),
      flat_offset_claim("misaligned_reads_cost_nothing_one_element",
                        "Every offset of the one-element-per-thread kernel runs as fast as offset 0.", "read_offset",
                        "the same DRAM bytes at every offset; 5% allows one noisy point in 35"),
      one_element_below_unroll4("read_offset", "read_offset_unroll4"),
      block_size_does_not_matter("read_offset_unroll4_blocks"),
  };
  set_offset_add_sizes(d);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
