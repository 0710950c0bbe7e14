// load_caching_dlcm_ca / load_caching_dlcm_cg: does caching global loads in L1 (or not) change a stream?
//
// The blog posts compare -Xptxas -dlcm=ca and -dlcm=cg; this file is built once with each flag, and both
// binaries also carry the per-load hints __ldca, __ldcg and __ldcs. Since the sector became the unit of
// transfer, an L1 miss fetches only the sectors a warp touches, not a 128-byte line, so "L1 on" no longer
// means larger transactions. Data read once gives L1 nothing to keep: whichever way the loads are cached,
// DRAM moves the same sectors, and the flag and the hints change nothing (compare the two binaries' CSVs).
//
// Run: build/bin/load_caching_dlcm_ca --csv ca.csv && build/bin/load_caching_dlcm_cg --csv cg.csv
#include <string>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/demo_support.hpp"
#include "02_global_memory/kernels/load_policies.cuh"
#include "02_global_memory/kernels/offset_add.cuh"
#include "02_global_memory/kernels/offset_add_runner.hpp"
#include "02_global_memory/kernels/pattern_model.hpp"
#include "02_global_memory/kernels/strided_copy.cuh"
#include "02_global_memory/kernels/strided_copy_reference.hpp"
#include "common/harness.hpp"

#ifndef CML_DLCM
#error "build with -DCML_DLCM=ca or -DCML_DLCM=cg (and the matching -Xptxas -dlcm flag)"
#endif
#define CML_STRINGIFY_(x) #x
#define CML_STRINGIFY(x) CML_STRINGIFY_(x)

namespace {

using namespace cml;
using namespace cml::ch02;

constexpr const char* kDlcm = CML_STRINGIFY(CML_DLCM);

std::vector<unsigned> caching_offsets(bool quick) {
  if (quick) return {0, 11};
  return {0, 1, 11, 32, 128};
}

std::vector<unsigned> caching_strides(bool quick) {
  if (quick) return {1, 8};
  return {1, 2, 4, 8, 16, 32};
}

// The strided part's buffers: as many 4-byte elements as the offset part's, made on the run's first use.
struct StrideData {
  std::size_t elements;
  std::vector<std::uint32_t> in_host;
  DeviceBuffer<std::uint32_t> in, out;
  HostMirror<std::uint32_t> out_host;
  explicit StrideData(std::size_t n)
      : elements(n), in_host(strided_input<std::uint32_t>(n)), in(n), out(n), out_host(n) {
    in.upload(in_host);
  }
};

template <class Load>
void offset_variant(Context& ctx) {
  const double ceiling = ctx.copy_ceiling().best();
  OffsetAddData& d = offset_add_data(ctx);
  for (unsigned k : caching_offsets(ctx.quick()))
    run_offset_point(ctx, d, ceiling, fmt::format("offset={} dlcm={}", k, kDlcm), k, 0,
                     with_block(launch_offset_add_unroll4<Load>, kSeedBlock));
}

template <class Load>
void stride_variant(Context& ctx) {
  const double ceiling = ctx.copy_ceiling().best();
  StrideData& d = ctx.state<StrideData>(ctx.size());
  for (unsigned s : caching_strides(ctx.quick())) {
    const std::size_t n = strided_count(d.elements, s);
    Row& row = ctx.measure(
        fmt::format("stride={} dlcm={}", s, kDlcm), ctx.size(), 2.0 * static_cast<double>(n) * 4,
        [&](cudaStream_t st) { launch_strided_copy<std::uint32_t, Load>(d.in.data(), d.out.data(), n, s, st); },
        [&] { return verify_strided_copy(d.out_host.fetch(d.out), d.in_host.data(), n, s); },
        [&](cudaStream_t st) { d.out.poison(st); });
    const auto per_warp = model::stride_access(s, 4);
    const std::uint64_t sectors = distinct_sectors(0, n, s, 4);
    set_model_columns(
        row, ceiling,
        {load_traffic(per_warp, warp_requests(n), sectors), store_traffic(per_warp, warp_requests(n), sectors)});
  }
}

Demo make_demo() {
  Demo d;
  d.name = std::string("load_caching_dlcm_") + kDlcm;
  d.summary = fmt::format(
      "Built with -Xptxas -dlcm={}. The 4-way unrolled offset kernel and strided copy with plain loads\n"
      "(cached as the flag says) and with __ldca, __ldcg, __ldcs: for data read once, neither L1 caching nor\n"
      "a cache hint changes the bandwidth.",
      kDlcm);
  d.size_meaning = "floats per buffer (default 8x L2 bytes / 4)";
  d.variants = {
      {"offset_default", "C[i] = A[i+k] + B[i+k], unroll4, plain loads (the -dlcm flag decides)",
       offset_variant<PlainLoad>},
      {"offset_ldca", "the same with __ldca (ld.global.ca)", offset_variant<CacheAllLoad>},
      {"offset_ldcg", "the same with __ldcg (ld.global.cg)", offset_variant<CacheGlobalLoad>},
      {"offset_ldcs", "the same with __ldcs (ld.global.cs)", offset_variant<StreamingLoad>},
      {"stride_default", "out[i*s] = in[i*s], 4-byte elements, unroll4, plain loads",
       stride_variant<PlainLoad>},
      {"stride_ldca", "the same with __ldca", stride_variant<CacheAllLoad>},
      {"stride_ldcg", "the same with __ldcg", stride_variant<CacheGlobalLoad>},
      {"stride_ldcs", "the same with __ldcs", stride_variant<StreamingLoad>},
  };
  // hint / default at every point of both kernels.
  auto hint_ratios = [](const RunRows& r, const std::string& hint) {
    std::vector<double> v = r.paired_ratios("offset_" + hint, "offset_default");
    const std::vector<double> s = r.paired_ratios("stride_" + hint, "stride_default");
    v.insert(v.end(), s.begin(), s.end());
    return v;
  };
  d.claims = {
      Claim{"default_reaches_ceiling", "The offset kernel with plain loads at offset 0 runs at the copy ceiling.",
            fmt::format("vs_ceiling offset_default[offset=0 dlcm={}]", kDlcm), Bound::at_least(0.95),
            "the kernel streams at DRAM speed whichever way its loads are cached; 5% allows for noise",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.value({"offset_default", fmt::format("offset=0 dlcm={}", kDlcm), "vs_ceiling"});
            }},
      Claim{"ldca_matches_default", "__ldca (cache in L1) runs as fast as the plain load at every point.",
            "max |GB/s *_ldca / GB/s *_default - 1| over every offset and stride", Bound::at_most(0.03),
            "data read once gives L1 nothing to reuse; 3% allows for the noise of two measurements",
            ClaimKind::device,
            [hint_ratios](const RunRows& r) { return max_rel_deviation(hint_ratios(r, "ldca"), 1.0); }},
      Claim{"ldcg_matches_default", "__ldcg (L2 only, no L1) runs as fast as the plain load at every point.",
            "max |GB/s *_ldcg / GB/s *_default - 1| over every offset and stride", Bound::at_most(0.03),
            "skipping L1 loses nothing when no sector is read twice; 3% allows for the noise of two measurements",
            ClaimKind::device,
            [hint_ratios](const RunRows& r) { return max_rel_deviation(hint_ratios(r, "ldcg"), 1.0); }},
      Claim{"ldcs_never_faster", "__ldcs (evict-first) is never faster than the plain load.",
            "max GB/s *_ldcs / GB/s *_default over every offset and stride", Bound::at_most(1.02),
            "evicting streamed lines first frees nothing a streaming kernel needs; 2% allows for noise",
            ClaimKind::device, [hint_ratios](const RunRows& r) { return max_of(hint_ratios(r, "ldcs")); }},
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  // The offset part's three buffers and the strided part's two.
  d.device_bytes = [](std::uint64_t n) {
    return DemoMemory::with_default_ceiling(offset_add_buffer_bytes(n) + 2.0 * static_cast<double>(n) * 4);
  };
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
