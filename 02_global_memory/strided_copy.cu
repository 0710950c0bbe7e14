// strided_copy: out[i * s] = in[i * s] for strides s = 1..32 and 64 elements, with 4-, 8- and 16-byte
// elements (Best Practices 9.2.1.4).
//
// Shows: effective bandwidth (the bytes the copy wants: 2 x n x element size) falling with the stride
// until every element costs a whole 32-byte sector per side, next to the model's sectors per request
// and the DRAM bytes the pattern must move. Both buffers keep the same size at every stride (16x L2
// each), so a larger stride copies fewer elements; every launch is timed cold on its own (the harness
// flushes L2 before each launch of a cold measurement), because at large strides the touched sectors fit
// in L2.
// Expected observation; in brackets the H200 run of 2026-11-21:
//   1. at stride 1 every element type reaches >= 0.9x the copy ceiling measured in the same run
//      [0.976-0.991x];
//   2. the sector model bounds the curve from above: vs_ceiling <= 1.1 x model_efficiency at every
//      stride [all 99 points];
//   3. up to one element per sector (stride 8, 4, 2 for 4-, 8-, 16-byte elements) the time is flat and
//      vs_ceiling is 0.65-0.70 x model_efficiency [0.680-0.690; 0.343-0.345x at stride 2]: the output is
//      strided too, its sectors are written in part, and DRAM moves about three buffers instead of two
//      (ncu shows one extra DRAM sector read per partly written output sector);
//   4. beyond that the curve keeps falling instead of levelling off at e/32: the time depends on the
//      byte distance between elements, not the element size [64 B apart: 0.519-0.527 ms, 256 B:
//      0.315-0.322 ms for all three types]. The note prints cudaLimitMaxL2FetchGranularity [64 B].
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
      "stride, each launch timed cold. Expected: stride 1 reaches >= 0.9x the copy ceiling; effective GB/s\n"
      "falls at least as the sector model predicts (vs_ceiling <= 1.1 x model_efficiency) until one\n"
      "element costs a whole 32-byte sector per side.";
  d.size_meaning = "bytes per buffer (in and out; default 16x L2)";
  d.variants = {
      {"stride_copy_4B", "uint32_t elements: one per sector from stride 8", stride_sweep_variant<std::uint32_t>},
      {"stride_copy_8B", "uint2 elements (one 8-byte load): one per sector from stride 4", stride_sweep_variant<uint2>},
      {"stride_copy_16B", "uint4 elements (one 16-byte load): one per sector from stride 2",
       stride_sweep_variant<uint4>},
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{16} * dev.l2_bytes; };
  d.quick_size = std::uint64_t{4} << 20;
  d.device_bytes = [](std::uint64_t bytes) { return 2.0 * static_cast<double>(bytes) + 32 + kHarnessDeviceBytes; };
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
