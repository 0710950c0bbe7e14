// vector_width: why do narrow accesses copy slowly when the sector model calls every width 100% efficient?
//
// Every width from 1 to 16 bytes is a perfectly coalesced copy: the same sectors, the same DRAM bytes. What
// limits the narrow ones is the bytes each thread keeps in flight and the instructions (and, one element per
// thread, the blocks) spent per byte. A grid-stride loop over one wave of blocks needs no block per 256
// elements, which matters most for the narrowest accesses.
//
// Run: build/bin/vector_width [--variant grid_stride] [--csv width.csv]
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/demo_support.hpp"
#include "02_global_memory/kernels/pattern_model.hpp"
#include "02_global_memory/kernels/vector_copy.cuh"
#include "common/harness.hpp"
#include "common/pattern.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

// One input and one output buffer of `bytes` (a multiple of 16), viewed as each element type in turn.
// cudaMalloc returns 256-byte aligned memory, so every view is naturally aligned.
struct CopyData {
  std::size_t bytes;
  std::vector<unsigned char> in_host;
  DeviceBuffer<unsigned char> in, out;
  HostMirror<unsigned char> out_host;

  explicit CopyData(std::size_t b) : bytes(b), in_host(b), in(b), out(b), out_host(b) {
    // Random-looking bytes (the top byte of pattern_word): an element of 4 or more bytes copied to the wrong
    // place cannot match but for tiny odds, and nothing in the data could be compressed on the way.
    for (std::size_t j = 0; j < bytes; ++j) in_host[j] = static_cast<unsigned char>(pattern_word(j, 0x5EED) >> 23);
    in.upload(in_host);
  }
};

// --size in bytes, rounded down to a whole number of 16-byte elements (at least one).
std::size_t buffer_bytes(const Context& ctx) { return std::max<std::size_t>(ctx.size() / 16 * 16, 16); }

// One width: bytes = the buffer read + written; the model sees a perfect coalesced copy.
template <class T>
void copy_point(Context& ctx, CopyData& d, double ceiling, bool grid_stride) {
  const std::size_t n = d.bytes / sizeof(T);
  const T* in = reinterpret_cast<const T*>(d.in.data());
  T* out = reinterpret_cast<T*>(d.out.data());
  const unsigned blocks = grid_stride ? grid_stride_blocks<T>() : 0;
  Row& row = ctx.measure(
      fmt::format("width={}", sizeof(T)), d.bytes, 2.0 * static_cast<double>(d.bytes),
      [&](cudaStream_t s) {
        if (grid_stride)
          launch_copy_grid_stride<T>(in, out, n, blocks, s);
        else
          launch_copy_per_thread<T>(in, out, n, s);
      },
      [&] {
        VerifyResult r;
        expect_equal(r, d.out_host.fetch(d.out), d.in_host.data(), d.bytes, 0);
        return r;
      },
      [&](cudaStream_t s) { d.out.poison(s); });
  const auto per_warp = model::vector_access(sizeof(T));
  const std::uint64_t sectors = distinct_sectors(0, n, 1, sizeof(T));
  set_model_columns(
      row, ceiling,
      {load_traffic(per_warp, warp_requests(n), sectors), store_traffic(per_warp, warp_requests(n), sectors)});
  if (grid_stride) row.set("blocks", blocks);
}

void width_sweep(Context& ctx, bool grid_stride) {
  const double ceiling = ctx.copy_ceiling().best();
  CopyData& d = ctx.state<CopyData>(buffer_bytes(ctx));
  copy_point<std::uint8_t>(ctx, d, ceiling, grid_stride);
  copy_point<std::uint16_t>(ctx, d, ceiling, grid_stride);
  copy_point<std::uint32_t>(ctx, d, ceiling, grid_stride);
  copy_point<uint2>(ctx, d, ceiling, grid_stride);
  copy_point<uint4>(ctx, d, ceiling, grid_stride);
}

Demo make_demo() {
  Demo d;
  d.name = "vector_width";
  d.summary =
      "A coalesced copy with 1-, 2-, 4-, 8- and 16-byte accesses, one element per thread or a grid-stride\n"
      "loop: GB/s rises with the width although the sector model calls every width 100% efficient.";
  d.size_meaning = "bytes per buffer (rounded down to a multiple of 16; default 8x L2)";
  d.variants = {
      {"per_thread", "one element per thread, 256 threads per block", [](Context& c) { width_sweep(c, false); }},
      {"grid_stride", "grid-stride loop over one full wave of 256-thread blocks",
       [](Context& c) { width_sweep(c, true); }},
  };
  d.claims = {
      Claim{"per_thread_rises_with_width",
            "With one element per thread, each wider access copies at least as fast as the one before.",
            "min over widths 2, 4, 8, 16 of GB/s per_thread[width=w] / GB/s per_thread[previous width]",
            Bound::at_least(0.97),
            "twice the bytes in flight per thread and half the instructions per byte at every step; 3% allows "
            "for noise where the curve flattens at the ceiling",
            ClaimKind::device,
            [](const RunRows& r) { return min_of(step_ratios(r.values("per_thread", "gb_per_s"))); }},
      Claim{"wide_reaches_ceiling", "Copying 16 bytes per thread reaches the copy ceiling.",
            "vs_ceiling per_thread[width=16]",
            Bound::at_least(0.9), "16 bytes in flight per thread saturate DRAM; 10% allows for noise",
            ClaimKind::device, [](const RunRows& r) { return r.value({"per_thread", "width=16", "vs_ceiling"}); }},
      Claim{"byte_far_below_ceiling", "Copying 1 byte per thread stays far below the copy ceiling.",
            "vs_ceiling per_thread[width=1]", Bound::at_most(0.5),
            "one byte in flight per thread and one instruction per byte cannot keep DRAM busy, whatever the "
            "sector model says",
            ClaimKind::device, [](const RunRows& r) { return r.value({"per_thread", "width=1", "vs_ceiling"}); }},
      ratio_claim("grid_stride_helps_narrow",
                  "At 1 byte per access, a grid-stride loop copies faster than one element per thread.",
                  {"grid_stride", "width=1"}, {"per_thread", "width=1"}, Bound::at_least(1.1),
                  "one element per thread schedules a block per 256 bytes; the loop reuses one wave of blocks"),
      ratio_claim("grid_stride_costs_little_wide",
                  "At 16 bytes per access, the grid-stride loop stays close to one element per thread.",
                  {"grid_stride", "width=16"}, {"per_thread", "width=16"}, Bound::at_least(0.9),
                  "both keep 16 bytes in flight per resident thread; 10% allows for the loop's overhead and noise"),
  };
  set_copy_sizes(d, 8);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
