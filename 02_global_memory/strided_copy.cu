// strided_copy: how fast does bandwidth fall with the stride, and where does the sector model stop
// explaining it (Best Practices 9.2.1.4)?
//
// A stride spends a whole 32-byte sector per element once elements are a sector apart; the sector model is
// an upper bound. The copy falls below it twice: partly written output sectors make DRAM read them first,
// and beyond one element per sector the time follows the byte distance, not the element size, because DRAM
// fetches more than the sector around each element. Buffers stay 16x L2 at every stride, and every launch
// is timed cold on its own, since at large strides the touched sectors would fit in L2.
//
// Run: build/bin/strided_copy [--variant stride_copy_4B] [--csv stride.csv]
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/demo_support.hpp"
#include "02_global_memory/kernels/pattern_model.hpp"
#include "02_global_memory/kernels/strided_copy.cuh"
#include "02_global_memory/kernels/strided_copy_reference.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

void note_fetch_granularity(Context& ctx) {
  std::size_t granularity = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&granularity, cudaLimitMaxL2FetchGranularity));
  ctx.note(fmt::format("cudaLimitMaxL2FetchGranularity = {} bytes (a hint: the most L2 fetches from DRAM per miss)",
                       granularity));
}

template <class T>
void stride_sweep_variant(Context& ctx) {
  note_fetch_granularity(ctx);
  const double ceiling = ctx.copy_ceiling().best();
  const std::size_t elements = std::max<std::size_t>(ctx.size() / sizeof(T), 1);
  const std::vector<T> in_host = strided_input<T>(elements);
  DeviceBuffer<T> in(elements), out(elements);
  in.upload(in_host);
  HostMirror<T> out_host(elements);

  for (unsigned s : stride_sweep(ctx.quick())) {
    const std::size_t n = strided_count(elements, s);
    const double bytes = 2.0 * static_cast<double>(n) * sizeof(T);
    Row& row = ctx.measure(
        fmt::format("stride={}", s), ctx.size(), bytes,
        [&](cudaStream_t st) { launch_strided_copy<T>(in.data(), out.data(), n, s, st); },
        [&] { return verify_strided_copy(out_host.fetch(out), in_host.data(), n, s); },
        [&](cudaStream_t st) { out.poison(st); });
    const auto per_warp = model::stride_access(s, sizeof(T));
    const std::uint64_t sectors = distinct_sectors(0, n, s, sizeof(T));
    set_model_columns(
        row, ceiling,
        {load_traffic(per_warp, warp_requests(n), sectors), store_traffic(per_warp, warp_requests(n), sectors)});
  }
}

Demo make_demo() {
  Demo d;
  d.name = "strided_copy";
  d.summary =
      "out[i*s] = in[i*s] for s = 1..32, 64 with 4-, 8- and 16-byte elements; buffers of 16x L2 at every\n"
      "stride, each launch timed cold. Effective GB/s falls with the stride at least as fast as the sector\n"
      "model predicts, and keeps falling after one element costs a whole sector.";
  d.size_meaning = "bytes per buffer (in and out; default 16x L2)";
  d.variants = {
      {"stride_copy_4B", "uint32_t elements: one per sector from stride 8", stride_sweep_variant<std::uint32_t>},
      {"stride_copy_8B", "uint2 elements (one 8-byte load): one per sector from stride 4", stride_sweep_variant<uint2>},
      {"stride_copy_16B", "uint4 elements (one 16-byte load): one per sector from stride 2",
       stride_sweep_variant<uint4>},
  };
  // The three element types and the stride from which each element has a sector to itself.
  struct Type {
    const char* variant;
    const char* one_per_sector;
  };
  static const Type kTypes[] = {
      {"stride_copy_4B", "stride=8"}, {"stride_copy_8B", "stride=4"}, {"stride_copy_16B", "stride=2"}};
  d.claims = {
      Claim{"stride1_reaches_ceiling", "At stride 1 every element type copies at the copy ceiling.",
            "min over 4, 8, 16 B of vs_ceiling stride_copy_*[stride=1]", Bound::at_least(0.9),
            "a coalesced copy with 4 elements in flight per thread saturates DRAM; 10% allows for the narrow "
            "types' extra instructions and noise",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const Type& t : kTypes) v.push_back(r.value({t.variant, "stride=1", "vs_ceiling"}));
              return min_of(v);
            }},
      Claim{"sector_model_bounds_every_stride",
            "No stride copies faster than the fraction of each sector it uses allows.",
            "max over every row of vs_ceiling / model_efficiency", Bound::at_most(1.1),
            "DRAM moves whole 32-byte sectors, so the useful fraction of them caps the effective bandwidth; "
            "10% allows for a copy ceiling measured slightly low",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const Type& t : kTypes)
                for (const Row* row : r.rows(t.variant))
                  v.push_back(RunRows::value(*row, "vs_ceiling") / RunRows::value(*row, "model_efficiency"));
              return max_of(v);
            }},
      Claim{"strided_stores_cost_extra",
            "At stride 2 the copy stays well below even the sector model: the half-written output sectors cost "
            "DRAM reads.",
            "max over 4, 8, 16 B of vs_ceiling / model_efficiency at stride 2", Bound::at_most(0.8),
            "each partly written output sector is read from DRAM before it is written back, so about three "
            "buffers move instead of two (the model counts two)",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const Type& t : kTypes)
                v.push_back(r.value({t.variant, "stride=2", "vs_ceiling"}) /
                            r.value({t.variant, "stride=2", "model_efficiency"}));
              return max_of(v);
            }},
      Claim{"falls_with_stride", "For every element type, each larger stride copies no faster than the one before.",
            "max over 4, 8, 16 B and every step of GB/s[stride s] / GB/s[previous stride]", Bound::at_most(1.05),
            "fewer useful bytes per sector, then sparser DRAM accesses, at every step; 5% allows for the noise "
            "of two neighbouring points and a small even/odd stride pattern",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const Type& t : kTypes) v.push_back(max_of(step_ratios(r.values(t.variant, "gb_per_s"))));
              return max_of(v);
            }},
      Claim{"keeps_falling_past_one_per_sector",
            "Past one element per sector the copy keeps slowing down, though the sector model stays flat.",
            "max over 4, 8, 16 B of GB/s[stride=32] / GB/s[first stride with one element per sector]",
            Bound::at_most(0.7),
            "the model charges one sector per element at both strides; DRAM moves more than that sector "
            "around each element, the more the farther apart they are",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> v;
              for (const Type& t : kTypes)
                v.push_back(r.ratio({t.variant, "stride=32"}, {t.variant, t.one_per_sector}));
              return max_of(v);
            }},
  };
  set_copy_sizes(d, 16);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
