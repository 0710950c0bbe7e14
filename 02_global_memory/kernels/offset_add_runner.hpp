// The part of the offset demos (misaligned_read, misaligned_write, load_caching, read_only_path) that
// is the same in all of them: the run's buffers, one verified, timed sweep point with the model columns,
// their sizes, and the claims the two misaligned demos make alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "02_global_memory/kernels/demo_support.hpp"
#include "02_global_memory/kernels/offset_add_reference.hpp"
#include "02_global_memory/kernels/pattern_model.hpp"
#include "common/harness.hpp"

namespace cml::ch02 {

// A, B and C with kMaxOffset spare elements each, the reference sums, and a pinned copy of C.
struct OffsetAddData {
  std::size_t n;
  DeviceBuffer<float> a, b, c;
  std::vector<float> sum;
  HostMirror<float> c_host;

  explicit OffsetAddData(std::size_t elements)
      : n(elements), a(n + kMaxOffset), b(n + kMaxOffset), c(n + kMaxOffset), c_host(n + kMaxOffset) {
    OffsetAddHost h = make_offset_add_host(n);
    a.upload(h.a);
    b.upload(h.b);
    sum = std::move(h.sum);
  }
};

// The run's A, B and C at --size elements: made by its first variant and shared by the rest, so the
// buffers (three of 8x L2 by default) and their host reference are built once per run.
inline OffsetAddData& offset_add_data(Context& ctx) { return ctx.state<OffsetAddData>(ctx.size()); }

// Device bytes of the three buffers of n elements each.
inline double offset_add_buffer_bytes(std::uint64_t n) {
  return 3.0 * static_cast<double>(n + kMaxOffset) * sizeof(float);
}

// The Demo::device_bytes of an offset demo: its buffers, and the copy ceiling every point is set against.
inline DemoMemory offset_add_device_bytes(std::uint64_t n) {
  return DemoMemory::with_default_ceiling(offset_add_buffer_bytes(n));
}

// Loads of A and B shifted by r elements, stores to C shifted by w: 4 or 5 sectors per request.
inline std::vector<ArrayTraffic> offset_add_traffic(std::size_t n, unsigned r, unsigned w) {
  const double requests = warp_requests(n);
  const auto ld = model::offset_access(r, sizeof(float));
  const auto st = model::offset_access(w, sizeof(float));
  const std::uint64_t ld_sectors = distinct_sectors(r, n, 1, sizeof(float));
  const std::uint64_t st_sectors = distinct_sectors(w, n, 1, sizeof(float));
  return {load_traffic(ld, requests, ld_sectors), load_traffic(ld, requests, ld_sectors),
          store_traffic(st, requests, st_sectors)};
}

// Signature shared by every launcher of offset_add.cuh once the block size is bound.
using OffsetLaunch =
    std::function<void(const float*, const float*, float*, std::size_t, unsigned, unsigned, cudaStream_t)>;

// Poison C -> one launch -> verify every element of C -> time, then the model columns.
// Bytes = A and B read + C written = 3 n floats.
inline void run_offset_point(Context& ctx, OffsetAddData& d, double ceiling, const std::string& params, unsigned r,
                             unsigned w, const OffsetLaunch& launch) {
  const double bytes = 3.0 * static_cast<double>(d.n) * sizeof(float);
  Row& row = ctx.measure(
      params, d.n, bytes, [&](cudaStream_t s) { launch(d.a.data(), d.b.data(), d.c.data(), d.n, r, w, s); },
      [&] { return verify_offset_add(d.c_host.fetch(d.c), d.sum.data(), d.n, r, w); },
      [&](cudaStream_t s) { d.c.poison(s); });
  set_model_columns(row, ceiling, offset_add_traffic(d.n, r, w));
}

// Binds a block size to one of the launchers of offset_add.cuh.
template <class Launcher>
OffsetLaunch with_block(Launcher launcher, unsigned block) {
  return [launcher, block](const float* a, const float* b, float* c, std::size_t n, unsigned r, unsigned w,
                           cudaStream_t s) { launcher(a, b, c, n, r, w, block, s); };
}

// The sizes of misaligned_read, misaligned_write and read_only_path: three float buffers of 8x L2 by default,
// so every point streams from DRAM.
inline void set_offset_add_sizes(Demo& d) {
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  d.device_bytes = offset_add_device_bytes;
  d.warmup_ms = 20.0;
}

// A claim that the offset sweep of `variant` is flat: every offset runs within 5% of offset 0 (the largest
// |GB/s at offset k / GB/s at offset 0 - 1| over the sweep).
inline Claim flat_offset_claim(std::string name, std::string text, const std::string& variant, std::string why) {
  return Claim{std::move(name), std::move(text),
               "max |GB/s " + variant + "[offset=k] / GB/s " + variant + "[offset=0] - 1| over k",
               Bound::at_most(0.05), std::move(why), ClaimKind::device, [variant](const RunRows& r) {
                 return max_rel_deviation(r.values(variant, "gb_per_s"), r.value({variant, "offset=0"}));
               }};
}

// One element per thread (`one`) against the 4-way unrolled kernel (`unroll4`), both at offset 0.
inline Claim one_element_below_unroll4(const std::string& one, const std::string& unroll4) {
  return ratio_claim("one_element_below_unroll4",
                     "One element per thread stays clearly below the 4-way unrolled kernel at offset 0.",
                     {one, "offset=0"}, {unroll4, "offset=0"}, Bound::at_most(0.93),
                     "8 bytes of loads in flight per thread cannot cover DRAM latency at this bandwidth; the gap is "
                     "smaller on GPUs with less bandwidth per SM");
}

// The block sweep of the 4-way unrolled kernel (`variant`, params "offset=K block=B") is flat at every offset.
inline Claim block_size_does_not_matter(const std::string& variant) {
  return Claim{"block_size_does_not_matter",
               "From 128 to 1024 threads per block, the 4-way unrolled kernel runs at the same speed.",
               "max over offsets 0, 11, 128 of (max GB/s / min GB/s) over the block sizes", Bound::at_most(1.05),
               "every block size keeps the same bytes in flight per SM; 5% allows for run-to-run noise",
               ClaimKind::device,
               [variant](const RunRows& r) { return r.max_spread_within_groups(variant, " block="); }};
}

}  // namespace cml::ch02
