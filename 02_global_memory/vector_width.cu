// vector_width: the same copy with 1-, 2-, 4-, 8- and 16-byte accesses per thread (uint8_t, uint16_t,
// uint32_t, uint2, uint4), one element per thread, and as a grid-stride loop over one wave of blocks.
//
// Shows: every variant is a perfectly coalesced copy (model: width sectors per request, 100% efficient,
// DRAM bytes = bytes wanted), yet the narrow accesses are far from the ceiling: what limits them is the
// number of bytes each thread has in flight and the number of instructions (and, one element per
// thread, the number of blocks) per byte, not the sectors. Buffers of 8x L2, verified bit for bit.
// Expected observation; in brackets the H200 run of 2026-11-21:
//   1. one element per thread, GB/s rises with the width: 1 B < 2 B < 4 B <= 8 B <= 16 B (allowing 5%
//      noise between 8 and 16 B) [839, 1558, 2698, 3841, 4202 GB/s];
//   2. 16 B per thread reaches >= 0.85x the copy ceiling measured in the same run [1.00x]; 1 B stays
//      < 0.5x [0.199x];
//   3. the grid-stride loop is within 10% of one element per thread at 16 B [6.5% below], and not
//      slower at 1 B (it does not have to schedule a block per 256 bytes) [1.48x faster].
// Run: build/bin/vector_width [--variant grid_stride] [--csv width.csv]
#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/demo_support.hpp"
#include "02_global_memory/kernels/pattern_model.hpp"
#include "02_global_memory/kernels/vector_copy.cuh"
#include "common/harness.hpp"

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
    // Byte j holds j % 251: a prime period, so an element copied to the wrong place cannot match.
    for (std::size_t j = 0; j < bytes; ++j) in_host[j] = static_cast<unsigned char>(j % 251);
    in.upload(in_host);
  }
};

class CopyState {
 public:
  CopyData& data(std::size_t bytes) {
    if (!data_ || data_->bytes != bytes) {
      data_.reset();
      data_ = std::make_unique<CopyData>(bytes);
    }
    return *data_;
  }

 private:
  std::unique_ptr<CopyData> data_;
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

void width_sweep(Context& ctx, CopyState& st, bool grid_stride) {
  const double ceiling = ctx.copy_ceiling().best();
  CopyData& d = st.data(buffer_bytes(ctx));
  copy_point<std::uint8_t>(ctx, d, ceiling, grid_stride);
  copy_point<std::uint16_t>(ctx, d, ceiling, grid_stride);
  copy_point<std::uint32_t>(ctx, d, ceiling, grid_stride);
  copy_point<uint2>(ctx, d, ceiling, grid_stride);
  copy_point<uint4>(ctx, d, ceiling, grid_stride);
}

Demo make_demo() {
  auto st = std::make_shared<CopyState>();
  Demo d;
  d.name = "vector_width";
  d.summary =
      "A coalesced copy with 1-, 2-, 4-, 8- and 16-byte accesses, one element per thread or a grid-stride\n"
      "loop. Expected at 8x L2: GB/s rises with the width (1 B < 0.5x the copy ceiling, 16 B >= 0.85x)\n"
      "although the sector model calls every width 100% efficient.";
  d.size_meaning = "bytes per buffer (rounded down to a multiple of 16; default 8x L2)";
  d.variants = {
      {"per_thread", "one element per thread, 256 threads per block", [st](Context& c) { width_sweep(c, *st, false); }},
      {"grid_stride", "grid-stride loop over one full wave of 256-thread blocks",
       [st](Context& c) { width_sweep(c, *st, true); }},
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes; };
  d.quick_size = std::uint64_t{4} << 20;
  d.device_bytes = [](std::uint64_t bytes) { return 2.0 * static_cast<double>(bytes) + 32 + kHarnessDeviceBytes; };
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
