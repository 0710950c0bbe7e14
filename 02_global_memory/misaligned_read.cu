// misaligned_read: C[i] = A[i + k] + B[i + k], the loads shifted by k elements (Best Practices 9.2.1.3,
// the seed's readSegment and readSegmentUnroll).
//
// Shows: the offset sweep k = 0..32, 64, 128 for the seed's one-element-per-thread kernel and for the
// 4-way unrolled kernel (4 elements blockDim.x apart per thread, grid divided by 4, every element
// bounds-checked), then unroll4 with 128..1024 threads per block at the seed's offsets 0, 11, 128.
// Every point is verified against the CPU reference (C poisoned first) before it is timed.
// Expected observation, at the default size (each buffer 8x L2, so DRAM is measured, not L2); in
// brackets the H200 run of 2026-11-21 (results/nvidia-h200/misaligned_read.csv):
//   1. read_offset_unroll4 at offset 0 reaches >= 0.95x the copy ceiling measured in the same run
//      (column vs_ceiling) [1.02x: 4293 GB/s];
//   2. whenever k % 8 != 0 a warp's 128 bytes straddle 5 sectors instead of 4 (80% load efficiency,
//      confirmed by ncu), yet model_mb_moved stays the same: the fifth sector is the next warp's first,
//      so DRAM moves each sector once. Every offset stays within 2% of offset 0 for unroll4 [0.4%];
//   3. the one-element kernel, with 8 bytes of loads in flight per thread instead of unroll4's 32,
//      stays below 0.85x the ceiling [0.763x]; the block size changes unroll4 by less than 5% [0.9%].
// L2-resident variant to try: --size 2M --warm (not part of the recorded run).
// Run: build/bin/misaligned_read [--variant read_offset_unroll4] [--csv read.csv]
#include <string>

#include <fmt/format.h>

#include "02_global_memory/kernels/offset_add.cuh"
#include "02_global_memory/kernels/offset_add_runner.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

void offset_sweep_variant(Context& ctx, OffsetAddState& state, const OffsetLaunch& launch) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = state.data(ctx.size());
  for (unsigned k : offset_sweep(ctx.quick()))
    run_offset_point(ctx, d, ceiling, fmt::format("offset={}", k), k, 0, launch);
}

void block_sweep_variant(Context& ctx, OffsetAddState& state) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = state.data(ctx.size());
  for (unsigned k : seed_offsets(ctx.quick()))
    for (unsigned block : block_sweep(ctx.quick()))
      run_offset_point(ctx, d, ceiling, fmt::format("offset={} block={}", k, block), k, 0,
                       with_block(launch_offset_add_unroll4<PlainLoad>, block));
}

Demo make_demo() {
  auto state = std::make_shared<OffsetAddState>();
  Demo d;
  d.name = "misaligned_read";
  d.summary =
      "C[i] = A[i+k] + B[i+k] for k = 0..32, 64, 128: the seed's kernel, a 4-way unrolled kernel, and\n"
      "unroll4 with 128..1024 threads per block. Expected: unroll4 at k = 0 reaches >= 0.95x the copy\n"
      "ceiling; k % 8 != 0 costs 5 sectors per request instead of 4 but the same DRAM bytes, so at 8x L2\n"
      "the misaligned offsets stay within 10% of k = 0.";
  d.size_meaning = "floats per buffer (A, B and C; default 8x L2 bytes / 4)";
  d.variants = {
      {"read_offset", "one element per thread, 512 threads per block (the seed's kernel)",
       [state](Context& c) { offset_sweep_variant(c, *state, with_block(launch_offset_add<PlainLoad>, kSeedBlock)); }},
      {"read_offset_unroll4", "4 elements per thread blockDim.x apart, grid / 4, loads before stores",
       [state](Context& c) {
         offset_sweep_variant(c, *state, with_block(launch_offset_add_unroll4<PlainLoad>, kSeedBlock));
       }},
      {"read_offset_unroll4_blocks", "unroll4 at offsets 0, 11, 128 with 128, 256, 512, 1024 threads per block",
       [state](Context& c) { block_sweep_variant(c, *state); }},
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  d.device_bytes = offset_add_device_bytes;
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
