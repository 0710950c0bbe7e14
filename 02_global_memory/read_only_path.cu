// read_only_path: plain loads vs __ldg vs const __restrict__ (the seed's 只读缓存 section).
//
// Shows: c[i] = a[i] + b[i] with one and with four elements per thread, written one statement per
// element, loading through plain pointers, through __ldg, and through const __restrict__ pointers;
// plus the four-element kernel with plain pointers but all loads written before the stores
// (plain_loads_first, the kernel of misaligned_read). Verified against the CPU reference first.
// On sm_90, L1 and the texture/read-only cache are one unit (L1TEX) and plain global loads are
// already cached in it, so the "read-only cache" is not a separate, faster store any more. __ldg and
// const __restrict__ compile to LDG.E.CONSTANT (non-coherent), and tell the compiler the data cannot
// change under the kernel, so it may hoist loads above stores (kernels/read_only.cuh).
// Expected observation, at the default size (each buffer 8x L2); in brackets the H200 run of 2026-11-21:
//   1. with one element per thread the three loads agree within 5%: same sectors, same DRAM bytes
//      [within 0.2%, 0.766-0.767x the ceiling];
//   2. with four elements per thread ldg, const_restrict and plain_loads_first agree within 5% [2.4%,
//      0.995-1.02x], and plain is the slowest of the four [0.849x]: its loads wait for the previous
//      store, so it keeps two loads in flight per thread instead of six to eight. The gain comes from
//      reordering, not from a cache.
// Run: build/bin/read_only_path [--csv read_only.csv]
#include <string>

#include <fmt/format.h>

#include "02_global_memory/kernels/offset_add.cuh"
#include "02_global_memory/kernels/offset_add_runner.hpp"
#include "02_global_memory/kernels/read_only.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

using AddLaunch = void (*)(const float*, const float*, float*, std::size_t, unsigned, cudaStream_t);

// The add kernels take no offsets; they run at offset 0 on both sides.
OffsetLaunch no_offsets(AddLaunch launch) {
  return [launch](const float* a, const float* b, float* c, std::size_t n, unsigned, unsigned, cudaStream_t s) {
    launch(a, b, c, n, kSeedBlock, s);
  };
}

// Runs the per_thread = 1 and per_thread = 4 forms of one way of loading.
void per_thread_variant(Context& ctx, OffsetAddState& state, AddLaunch one, AddLaunch four) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = state.data(ctx.size());
  run_offset_point(ctx, d, ceiling, "per_thread=1", 0, 0, no_offsets(one));
  run_offset_point(ctx, d, ceiling, "per_thread=4", 0, 0, no_offsets(four));
}

Demo make_demo() {
  auto state = std::make_shared<OffsetAddState>();
  Demo d;
  d.name = "read_only_path";
  d.summary =
      "c[i] = a[i] + b[i] through plain pointers, __ldg and const __restrict__, 1 or 4 elements per thread.\n"
      "Expected at 8x L2: with 1 per thread all agree within 5%; with 4 per thread ldg, const_restrict and\n"
      "plain_loads_first agree within 5% and plain is slowest (its loads cannot move above its stores).";
  d.size_meaning = "floats per buffer (a, b and c; default 8x L2 bytes / 4)";
  d.variants = {
      {"plain", "const float* loads (LDG.E), one statement per element",
       [state](Context& c) { per_thread_variant(c, *state, launch_add<1, PlainLoad>, launch_add<4, PlainLoad>); }},
      {"ldg", "__ldg loads (LDG.E.CONSTANT)",
       [state](Context& c) {
         per_thread_variant(c, *state, launch_add<1, ReadOnlyLoad>, launch_add<4, ReadOnlyLoad>);
       }},
      {"const_restrict", "const float* __restrict__ pointers (LDG.E.CONSTANT)",
       [state](Context& c) { per_thread_variant(c, *state, launch_add_restrict<1>, launch_add_restrict<4>); }},
      {"plain_loads_first", "plain pointers, 4 per thread, all loads written before the stores",
       [state](Context& c) {
         OffsetAddData& data = state->data(c.size());
         run_offset_point(c, data, c.copy_ceiling().best(), "per_thread=4", 0, 0,
                          with_block(launch_offset_add_unroll4<PlainLoad>, kSeedBlock));
       }},
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  d.device_bytes = offset_add_device_bytes;
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
