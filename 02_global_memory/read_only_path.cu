// read_only_path: is the read-only cache (__ldg, const __restrict__) still a faster place to load from?
//
// On current GPUs L1 and the texture/read-only cache are one unit, and plain global loads are already
// cached in it. What __ldg and const __restrict__ still change is the compiler's freedom: they promise the
// data cannot change under the kernel, so loads may move above stores. With four elements per thread the
// plain kernel's loads wait for the previous store (c might alias a or b); whatever lets them move up helps,
// writing them first by hand included. The gain comes from reordering, not from a cache.
//
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
void per_thread_variant(Context& ctx, AddLaunch one, AddLaunch four) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = offset_add_data(ctx);
  run_offset_point(ctx, d, ceiling, "per_thread=1", 0, 0, no_offsets(one));
  run_offset_point(ctx, d, ceiling, "per_thread=4", 0, 0, no_offsets(four));
}

Demo make_demo() {
  Demo d;
  d.name = "read_only_path";
  d.summary =
      "c[i] = a[i] + b[i] through plain pointers, __ldg and const __restrict__, 1 or 4 elements per thread:\n"
      "the read-only path is no faster cache; it helps only by letting the compiler issue loads early.";
  d.size_meaning = "floats per buffer (a, b and c; default 8x L2 bytes / 4)";
  d.variants = {
      {"plain", "const float* loads (LDG.E), one statement per element",
       [](Context& c) { per_thread_variant(c, launch_add<1, PlainLoad>, launch_add<4, PlainLoad>); }},
      {"ldg", "__ldg loads (LDG.E.CONSTANT)",
       [](Context& c) {
         per_thread_variant(c, launch_add<1, ReadOnlyLoad>, launch_add<4, ReadOnlyLoad>);
       }},
      {"const_restrict", "const float* __restrict__ pointers (LDG.E.CONSTANT)",
       [](Context& c) { per_thread_variant(c, launch_add_restrict<1>, launch_add_restrict<4>); }},
      {"plain_loads_first", "plain pointers, 4 per thread, all loads written before the stores",
       [](Context& c) {
         OffsetAddData& data = offset_add_data(c);
         run_offset_point(c, data, c.copy_ceiling().best(), "per_thread=4", 0, 0,
                          with_block(launch_offset_add_unroll4<PlainLoad>, kSeedBlock));
       }},
  };
  d.claims = {
      Claim{"one_per_thread_paths_agree",
            "With one element per thread, __ldg and const __restrict__ run as fast as plain loads.",
            "max |GB/s {ldg, const_restrict}[per_thread=1] / GB/s plain[per_thread=1] - 1|", Bound::at_most(0.03),
            "the same sectors and DRAM bytes, and L1 already caches plain loads; 3% allows for noise",
            ClaimKind::device,
            [](const RunRows& r) {
              return max_rel_deviation({r.value({"ldg", "per_thread=1"}), r.value({"const_restrict", "per_thread=1"})},
                                       r.value({"plain", "per_thread=1"}));
            }},
      Claim{"read_only_matches_loads_first",
            "With four elements per thread, __ldg and const __restrict__ run as fast as plain loads written "
            "before the stores.",
            "max |GB/s {ldg, const_restrict}[per_thread=4] / GB/s plain_loads_first[per_thread=4] - 1|",
            Bound::at_most(0.05),
            "both let the loads of all four elements be in flight together, which is the whole gain; 5% allows "
            "for the compiler's slightly different schedule and noise",
            ClaimKind::device,
            [](const RunRows& r) {
              return max_rel_deviation({r.value({"ldg", "per_thread=4"}), r.value({"const_restrict", "per_thread=4"})},
                                       r.value({"plain_loads_first", "per_thread=4"}));
            }},
      ratio_claim("plain_loads_wait_for_stores",
                  "With four elements per thread, plain loads written between the stores are clearly slower than "
                  "the same loads written first.",
                  {"plain", "per_thread=4"}, {"plain_loads_first", "per_thread=4"}, Bound::at_most(0.95),
                  "each load waits for the previous store, so a thread keeps two loads in flight instead of eight; "
                  "the gap is smaller on GPUs with less bandwidth per SM"),
  };
  set_offset_add_sizes(d);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
