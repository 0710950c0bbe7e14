// pinned_bandwidth: host<->device copy bandwidth from pageable memory and from every kind of pinned memory.
//
// Shows: H2D and D2H copies over a size sweep (4 KB ... 1 GB, x4 steps) from malloc'd (pageable) memory,
// cudaMallocHost, cudaHostAlloc (default, Portable, WriteCombined) and a malloc'd buffer page-locked with
// cudaHostRegister; what allocating or registering pinned memory costs; the PCIe link the GPU reports.
// Pinned copies are cudaMemcpyAsync timed with events (warm, back-to-back: small sizes are batched, so
// their figure is the per-copy cost in a stream of copies). Pageable copies are timed with the host clock
// around a synchronous cudaMemcpy plus a device synchronize, because the driver stages them through its
// own pinned buffer on the CPU and an H2D cudaMemcpy may return before the last DMA lands.
// Bytes: the payload, counted ONCE (a transfer reads host memory and writes device memory, or the reverse;
// every transfer tool counts it once). GB = 1e9. Every size is verified bit-exact before it is timed
// (H2D: checked on the device; D2H: the host buffer is poisoned, filled by the copy, copied back into a
// poisoned device buffer and checked there, so write-combined memory is never read by the CPU).
// EXPECTED OBSERVATION (measured, H200 on PCIe Gen5 x16, 2026-11-21): at >= 256 MB cudaMallocHost, all
// three cudaHostAlloc kinds and cudaHostRegister reach >= 0.99x the best pinned figure (vs_best_pinned;
// ~55.4 GB/s) both ways. Pageable: 9.5-10 GB/s H2D and 18.7 GB/s D2H at 256 MB-1 GB. Every pinned kind first
// reaches half its plateau at 256 KB (~2-3 us per copy at 4 KB). Pinning costs ~290-620 ms per GB with
// cudaMallocHost, ~40-150 ms per GB with cudaHostRegister; malloc + first touch (one volatile write per page)
// costs about as much as cudaMallocHost at 16 MB and 256 MB (285 and 404 ms per GB); its 1 MB row (~1 us) is
// too fast to include page faults (the allocator most likely reuses pages already touched).
// Run: build/bin/pinned_bandwidth [--size 1G] [--variant malloc_host] [--csv pinned.csv]
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "04_transfers/kernels/host_buffers.hpp"
#include "04_transfers/kernels/pcie_link.hpp"
#include "04_transfers/kernels/transfer_kernels.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch04;

constexpr std::uint32_t kHostSeed = 11;
constexpr std::uint32_t kDeviceSeed = 23;
constexpr std::uint64_t kMinBytes = 4096;
constexpr std::uint64_t kMaxBytes = std::uint64_t{4} << 30;
// Sizes from here up form the "plateau" the claims compare (or the largest size, in a smaller run).
constexpr std::uint64_t kPlateauBytes = std::uint64_t{256} << 20;
// A pageable 1 GB copy takes ~70 ms: the largest sizes get fewer samples unless --reps says otherwise.
constexpr int kLargeReps = 5;

enum class Dir { h2d, d2h };
const char* params_of(Dir d) { return d == Dir::h2d ? "dir=h2d" : "dir=d2h"; }

std::uint64_t physical_memory_bytes() {
  return static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(sysconf(_SC_PAGE_SIZE));
}

// 4 KB, 16 KB, ... up to the largest size (which ends the sweep even when it is not a power of 4).
std::vector<std::uint64_t> sweep_sizes(std::uint64_t largest) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = kMinBytes; s < largest; s *= 4) sizes.push_back(s);
  sizes.push_back(largest);
  return sizes;
}

TimingOptions options_for(const Context& ctx, std::uint64_t bytes) {
  TimingOptions o = ctx.timing_options();
  if (bytes >= kPlateauBytes && !ctx.options().reps) o.reps = std::min(o.reps, kLargeReps);
  return o;
}

// ---- PCIe link ----------------------------------------------------------------------------------------

const PcieLink& pcie_link(Context& ctx) {
  static std::optional<PcieLink> link;
  if (!link) {
    // An idle GPU drops its link to a low speed to save power; a burst of copies brings it back up, so
    // the speed read right after is the one the copies run at.
    const std::size_t words = std::size_t{4} << 20;
    PinnedBuffer<std::uint32_t> h(words);
    DeviceBuffer<std::uint32_t> d(words);
    for (int i = 0; i < 8; ++i)
      CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), h.bytes(), cudaMemcpyHostToDevice, ctx.stream()));
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    char id[64] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, ctx.device().ordinal));
    link = read_pcie_link(sysfs_bus_id(id));
  }
  return *link;
}

void pcie_link_info(Context& ctx) {
  const PcieLink& l = pcie_link(ctx);
  if (!l.readable) {
    ctx.note("PCIe link: not readable here: " + l.why);
    ctx.add_row("", 0, false).set("readable", 0.0);
    return;
  }
  ctx.note(fmt::format("PCIe link ({}): Gen{} x{} now ({} GT/s), device max Gen{} x{}; {:.1f} GB/s per direction "
                       "after line encoding, ~5-10% less after packet headers",
                       l.path, pcie_generation(l.current_gt), l.current_width, l.current_gt,
                       pcie_generation(l.max_gt), l.max_width, l.gb_per_s()));
  ctx.add_row("", 0, true)
      .set("readable", 1.0)
      .set("current_gt_per_s", l.current_gt)
      .set("current_width", l.current_width)
      .set("max_gt_per_s", l.max_gt)
      .set("max_width", l.max_width)
      .set("link_gb_per_s", l.gb_per_s());
}

// ---- The sweep ----------------------------------------------------------------------------------------

struct Buffers {
  HostBuffer host;
  DeviceBuffer<std::uint32_t> dev;      // the copy's device end
  DeviceBuffer<std::uint32_t> scratch;  // where a D2H result is copied back to be checked
};

// One copy, issued the way an application would for this kind of host memory.
void copy_pinned(const Buffers& b, Dir d, std::size_t bytes, cudaStream_t s) {
  if (d == Dir::h2d) CUDA_CHECK(cudaMemcpyAsync(b.dev.data(), b.host.data(), bytes, cudaMemcpyHostToDevice, s));
  else CUDA_CHECK(cudaMemcpyAsync(b.host.data(), b.dev.data(), bytes, cudaMemcpyDeviceToHost, s));
}
void copy_pageable(const Buffers& b, Dir d, std::size_t bytes) {
  if (d == Dir::h2d) CUDA_CHECK(cudaMemcpy(b.dev.data(), b.host.data(), bytes, cudaMemcpyHostToDevice));
  else CUDA_CHECK(cudaMemcpy(b.host.data(), b.dev.data(), bytes, cudaMemcpyDeviceToHost));
  // A pageable H2D cudaMemcpy may return once the data is in the driver's staging buffer.
  CUDA_CHECK(cudaDeviceSynchronize());
}
void copy_once(const Buffers& b, Dir d, std::size_t bytes, cudaStream_t s) {
  if (b.host.pinned()) {
    copy_pinned(b, d, bytes, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  } else {
    copy_pageable(b, d, bytes);
  }
}

// Poison the destination, copy once, check the words that arrived.
bool verify_copy(Context& ctx, const Buffers& b, Dir d, std::size_t bytes) {
  cudaStream_t s = ctx.stream();
  const std::size_t words = bytes / sizeof(std::uint32_t);
  const std::string what = fmt::format("{} {} bytes", params_of(d), bytes);
  if (d == Dir::h2d) {
    CUDA_CHECK(cudaMemsetAsync(b.dev.data(), kPoisonByte, bytes, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    copy_once(b, d, bytes, s);
    return ctx.check(check_pattern_on_device(b.dev.data(), words, kHostSeed, s), what);
  }
  poison_host(b.host.data(), bytes);
  copy_once(b, d, bytes, s);
  // Bring the host result back through a path verified above (H2D) into a poisoned buffer.
  CUDA_CHECK(cudaMemsetAsync(b.scratch.data(), kPoisonByte, bytes, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaMemcpy(b.scratch.data(), b.host.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
  return ctx.check(check_pattern_on_device(b.scratch.data(), words, kDeviceSeed, s), what);
}

bool is_transfer_variant(const std::string& v) { return v != "pcie_link" && v != "alloc_cost"; }

// vs_best_pinned on every transfer row: GB/s over the best pinned figure of this run at the plateau
// sizes, per direction. Recomputed after each variant, so it is final once the last one has run.
void update_vs_best_pinned(Context& ctx) {
  for (Dir d : {Dir::h2d, Dir::d2h}) {
    std::uint64_t largest = 0;
    for (const Row& r : ctx.rows())
      if (is_transfer_variant(r.variant) && r.params == params_of(d) && r.verified) largest = std::max(largest, r.size);
    const std::uint64_t plateau = std::min(kPlateauBytes, largest);
    double best = 0.0;
    for (const Row& r : ctx.rows())
      if (is_transfer_variant(r.variant) && r.variant != "pageable" && r.params == params_of(d) && r.verified &&
          r.size >= plateau)
        best = std::max(best, r.gb_per_s);
    if (best <= 0.0) continue;
    for (Row& r : ctx.rows())
      if (is_transfer_variant(r.variant) && r.params == params_of(d) && r.verified) r.set("vs_best_pinned", r.gb_per_s / best);
  }
}

// Where this variant's knee is: the smallest size reaching half of its best bandwidth.
void note_knee(Context& ctx) {
  for (Dir d : {Dir::h2d, Dir::d2h}) {
    double peak = 0.0;
    for (const Row& r : ctx.rows())
      if (r.variant == ctx.variant() && r.params == params_of(d) && r.verified) peak = std::max(peak, r.gb_per_s);
    for (const Row& r : ctx.rows())
      if (r.variant == ctx.variant() && r.params == params_of(d) && r.verified && r.gb_per_s >= 0.5 * peak) {
        ctx.note(fmt::format("{} {}: best {:.1f} GB/s; half of that first reached at {}", ctx.variant(), params_of(d),
                             peak, format_bytes(static_cast<double>(r.size))));
        break;
      }
  }
}

void sweep(Context& ctx, HostKind kind) {
  const std::uint64_t largest = ctx.size();
  const std::size_t words = largest / sizeof(std::uint32_t);
  cudaStream_t s = ctx.stream();
  const PcieLink& link = pcie_link(ctx);
  Buffers b{HostBuffer(kind, largest), DeviceBuffer<std::uint32_t>(words), DeviceBuffer<std::uint32_t>(words)};
  // Writing the pattern also faults in every page of the pageable and registered buffers.
  fill_pattern_host(b.host.words(), words, kHostSeed);

  for (Dir d : {Dir::h2d, Dir::d2h}) {
    if (d == Dir::d2h) launch_pattern_fill(b.dev.data(), words, kDeviceSeed, s);
    for (std::uint64_t bytes : sweep_sizes(largest)) {
      if (!verify_copy(ctx, b, d, bytes)) {
        ctx.add_row(params_of(d), bytes, false);
        continue;
      }
      const TimingOptions o = options_for(ctx, bytes);
      const Timing t = b.host.pinned() ? ctx.time([&](cudaStream_t st) { copy_pinned(b, d, bytes, st); }, o)
                                       : time_host([&] { copy_pageable(b, d, bytes); }, o);
      Row& r = ctx.add_timed_row(params_of(d), bytes, static_cast<double>(bytes), t, true);
      r.pct_peak = kNaN;  // a PCIe transfer, not a fraction of the DRAM peak
      r.set("us_per_copy", t.stats.median * 1e3);
      if (link.readable) r.set("vs_link", r.gb_per_s / link.gb_per_s());
    }
  }
  update_vs_best_pinned(ctx);
  note_knee(ctx);
}

// ---- What pinning costs -------------------------------------------------------------------------------

void alloc_cost(Context& ctx) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s : {std::uint64_t{1} << 20, std::uint64_t{16} << 20, std::uint64_t{256} << 20})
    if (s <= ctx.size()) sizes.push_back(s);
  if (sizes.empty()) sizes.push_back(ctx.size());

  auto type_of = [](const void* p) {
    cudaPointerAttributes a{};
    CUDA_CHECK(cudaPointerGetAttributes(&a, p));
    return a.type;
  };
  for (std::uint64_t bytes : sizes) {
    TimingOptions o = ctx.timing_options();
    o.warmup_ms = 0.0;  // each sample is a whole allocate-and-free: there is nothing to warm
    o.min_warmup_launches = 1;
    if (bytes >= kPlateauBytes && !ctx.options().reps) o.reps = std::min(o.reps, kLargeReps);

    HostPages touched(bytes);  // for cudaHostRegister: an existing buffer whose pages are already in memory
    std::memset(touched.data(), 0, bytes);

    struct Method {
      const char* name;
      cudaMemoryType expected;
      std::function<void()> once;
      std::function<cudaMemoryType()> probe;
    };
    const std::vector<Method> methods = {
        {"malloc_first_touch", cudaMemoryTypeUnregistered,
         [&] {
           HostPages p(bytes);
           // malloc alone only reserves addresses; the first touch maps the pages. One volatile write per
           // page: a memset of memory freed right after is dead code the compiler may delete (it did).
           volatile unsigned char* q = static_cast<unsigned char*>(p.data());
           const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
           for (std::size_t i = 0; i < bytes; i += page) q[i] = 1;
         },
         [&] { return type_of(touched.data()); }},
        {"cuda_malloc_host", cudaMemoryTypeHost, [&] { HostBuffer p(HostKind::malloc_host, bytes); },
         [&] {
           HostBuffer p(HostKind::malloc_host, bytes);
           return type_of(p.data());
         }},
        {"cuda_host_register", cudaMemoryTypeHost, [&] { HostRegistration r(touched.data(), bytes); },
         [&] {
           HostRegistration r(touched.data(), bytes);
           return type_of(touched.data());
         }},
    };
    for (const Method& m : methods) {
      const std::string params = std::string("method=") + m.name;
      const bool ok = ctx.check(compare_value(static_cast<int>(m.probe()), static_cast<int>(m.expected), "memory type"),
                                params);
      if (!ok) {
        ctx.add_row(params, bytes, false);
        continue;
      }
      const Timing t = time_host(m.once, o);
      Row& r = ctx.add_timed_row(params, bytes, static_cast<double>(bytes), t, true);
      r.pct_peak = kNaN;
      r.set("ms_per_gb", t.stats.median / (static_cast<double>(bytes) / 1e9));
    }
  }
  ctx.note("alloc_cost: each sample allocates (or registers) AND frees (or unregisters); GB/s = bytes per second");
}

Demo make_demo() {
  Demo d;
  d.name = "pinned_bandwidth";
  d.summary =
      "H2D and D2H copy bandwidth (payload bytes counted once) over 4 KB ... --size for pageable memory and every\n"
      "kind of pinned memory, the cost of pinning, and the PCIe link. Expected: at >= 256 MB cudaMallocHost and\n"
      "cudaHostAlloc are >= 0.97x the best pinned figure (vs_best_pinned; cudaHostRegister too: 0.999-1.000x\n"
      "measured on an H200), pageable far below; half the plateau is first reached around 256 KB.";
  d.size_meaning = "largest transfer in bytes (the sweep runs 4 KB, 16 KB, ... up to it)";
  d.variants = {
      {"pcie_link", "the PCIe link the GPU reports in sysfs (speed, width, per-direction GB/s)", pcie_link_info},
      {"pageable", "malloc'd memory: synchronous cudaMemcpy, host-timed", [](Context& c) { sweep(c, HostKind::pageable); }},
      {"malloc_host", "cudaMallocHost", [](Context& c) { sweep(c, HostKind::malloc_host); }},
      {"host_alloc", "cudaHostAlloc(cudaHostAllocDefault)", [](Context& c) { sweep(c, HostKind::host_alloc); }},
      {"host_alloc_portable", "cudaHostAlloc(cudaHostAllocPortable)",
       [](Context& c) { sweep(c, HostKind::host_alloc_portable); }},
      {"host_alloc_write_combined", "cudaHostAlloc(cudaHostAllocWriteCombined)",
       [](Context& c) { sweep(c, HostKind::host_alloc_write_combined); }},
      {"host_register", "malloc'd buffer page-locked with cudaHostRegister",
       [](Context& c) { sweep(c, HostKind::host_register); }},
      {"alloc_cost", "time to allocate+free pinned memory, register+unregister, vs malloc+first touch", alloc_cost},
  };
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{1} << 30; };
  d.quick_size = std::uint64_t{1} << 20;
  d.cold_by_default = false;  // host<->device copies do not depend on what L2 holds
  d.warmup_ms = 20.0;
  d.device_bytes = [](std::uint64_t bytes) {
    if (bytes < kMinBytes || bytes % sizeof(std::uint32_t) != 0)
      throw CliError("--size: at least 4k and a multiple of 4 bytes, got " + std::to_string(bytes));
    if (bytes > kMaxBytes || bytes > physical_memory_bytes() / 8)
      throw CliError("--size: at most 4G and 1/8 of host memory (one pinned buffer of that size per variant), got " +
                     std::to_string(bytes));
    // The copy's device buffer, the check buffer, the link warm-up buffer.
    return 2.0 * static_cast<double>(bytes) + 64e6;
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
