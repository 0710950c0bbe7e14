// pinned_bandwidth: why do copies from pinned memory run at the link's speed, and what does pinning cost?
//
// A pinned copy is a DMA the copy engine runs straight from page-locked memory; a pageable copy first goes
// through the CPU into the driver's staging buffer, so the CPU's memory and the OS limit it (and an H2D
// cudaMemcpy may return early: those rows are host-timed up to a device synchronize). Small copies are set
// by the per-copy cost, large ones by the link. Pinning has its own cost, which allocation and
// cudaHostRegister rows show. Bytes are the payload, counted once; write-combined memory is never read by
// the CPU, even to verify it.
//
// Run: build/bin/pinned_bandwidth [--size 1G] [--variant malloc_host] [--csv pinned.csv]
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
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
// From the plateau up one copy moves at least 256 MB over PCIe (a pageable one through the CPU first), so each
// sample is long: those sizes get fewer samples unless --reps says otherwise.
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

// The link as this run's copies find it, read once per run.
constexpr std::size_t kLinkWarmupWords = std::size_t{4} << 20;
struct RunLink {
  PcieLink link;

  explicit RunLink(Context& ctx) {
    // An idle GPU drops its link to a low speed to save power; a burst of copies brings it back up, so
    // the speed read right after is the one the copies run at.
    PinnedBuffer<std::uint32_t> h(kLinkWarmupWords);
    DeviceBuffer<std::uint32_t> d(kLinkWarmupWords);
    for (int i = 0; i < 8; ++i)
      CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), h.bytes(), cudaMemcpyHostToDevice, ctx.stream()));
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    char id[64] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, ctx.device().ordinal));
    link = read_pcie_link(sysfs_bus_id(id));
  }
};

const PcieLink& pcie_link(Context& ctx) { return ctx.state<RunLink>(ctx).link; }

void pcie_link_info(Context& ctx) {
  const PcieLink& l = pcie_link(ctx);
  if (!l.readable) {
    ctx.note("PCIe link: not readable here: " + l.why);
    ctx.add_row("", 0, false).set("readable", 0.0);
    return;
  }
  ctx.note(fmt::format("PCIe link ({}): Gen{} x{} now ({} GT/s), device max Gen{} x{}; {:.1f} GB/s per direction "
                       "after line encoding, 5-15% less after packet headers",
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

// [doc:pinned_and_pageable_copy]
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
// [/doc:pinned_and_pageable_copy]
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
           // page: a memset of memory freed right after is dead code, which the compiler is free to delete.
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

// ---- Claims -------------------------------------------------------------------------------------------

const char* const kPinnedKinds[] = {"malloc_host", "host_alloc", "host_alloc_portable", "host_alloc_write_combined",
                                    "host_register"};

// A column at the end of a variant's sweep in direction `d`, which must reach the plateau sizes.
double at_plateau(const RunRows& r, const char* variant, Dir d, const char* column) {
  const Row& row = largest(r.sweep(variant, params_of(d)), "size");
  if (row.size < kPlateauBytes)
    throw NotApplicable(
        fmt::format("the sweep ends at {} bytes, below the plateau ({} bytes)", row.size, kPlateauBytes));
  return RunRows::value(row, column);
}

// The same over every pinned kind and both directions.
std::vector<double> pinned_at_plateau(const RunRows& r, const char* column) {
  std::vector<double> v;
  for (const char* kind : kPinnedKinds)
    for (Dir d : {Dir::h2d, Dir::d2h}) v.push_back(at_plateau(r, kind, d, column));
  return v;
}

double both_dirs(const RunRows& r, const char* variant, std::uint64_t bytes, const char* column, bool worst_high) {
  const double h = RunRows::value(r.at_size(variant, params_of(Dir::h2d), bytes), column);
  const double d = RunRows::value(r.at_size(variant, params_of(Dir::d2h), bytes), column);
  return worst_high ? max_of({h, d}) : min_of({h, d});
}

double alloc_ms_per_gb(const RunRows& r, const char* method) {
  return RunRows::value(largest(r.sweep("alloc_cost", std::string("method=") + method), "size"), "ms_per_gb");
}

std::vector<Claim> claims() {
  return {
      Claim{"pinned_kinds_equal",
            "Every kind of pinned memory (cudaMallocHost, the three cudaHostAlloc flags, cudaHostRegister) copies "
            "large buffers at the same speed, both ways.",
            "lowest vs_best_pinned over the pinned kinds and both directions at the largest size",
            Bound::at_least(0.95),
            "each is a DMA from page-locked memory, limited by the same link; 5% allows for a noisy sample",
            ClaimKind::host, [](const RunRows& r) { return min_of(pinned_at_plateau(r, "vs_best_pinned")); }},
      Claim{"pinned_near_link",
            "Large pinned copies reach at least three quarters of the per-direction rate of the PCIe link the GPU "
            "reports.",
            "lowest vs_link (GB/s / link GB/s after line encoding) over the pinned kinds and both directions at "
            "the largest size",
            Bound::at_least(0.75),
            "packet headers and flow control take 5-15% of a PCIe link; the rest is the copy's",
            ClaimKind::host,
            [](const RunRows& r) {
              const Row& link = r.row("pcie_link");
              if (RunRows::value(link, "readable") != 1.0) throw NotApplicable("the PCIe link is not readable here");
              return min_of(pinned_at_plateau(r, "vs_link"));
            }},
      Claim{"pageable_far_below_pinned",
            "From pageable (malloc'd) memory a large copy runs well below the pinned rate, both ways.",
            "highest vs_best_pinned of pageable over both directions at the largest size", Bound::at_most(0.6),
            "the CPU first copies pageable data through the driver's pinned staging buffer; that memcpy, not the "
            "link, sets the pace",
            ClaimKind::host,
            [](const RunRows& r) {
              // vs_best_pinned compares with the pinned rows of the same process: alone, pageable has none.
              if (std::none_of(std::begin(kPinnedKinds), std::end(kPinnedKinds),
                               [&](const char* kind) { return r.ran(kind); }))
                throw NotApplicable("needs the pinned variants in the same run");
              return max_of({at_plateau(r, "pageable", Dir::h2d, "vs_best_pinned"),
                             at_plateau(r, "pageable", Dir::d2h, "vs_best_pinned")});
            }},
      Claim{"small_copies_pay_per_copy",
            "A 4 KB pinned copy reaches less than a tenth of the large-copy bandwidth: its time is the per-copy "
            "cost, not the bytes.",
            "highest vs_best_pinned of malloc_host at 4 KB over both directions", Bound::at_most(0.1),
            "a copy costs microseconds however small it is; 4 KB at the link's rate takes well under one",
            ClaimKind::host,
            [](const RunRows& r) { return both_dirs(r, "malloc_host", kMinBytes, "vs_best_pinned", true); }},
      Claim{"one_mb_copies_past_half",
            "A 1 MB pinned copy already moves more than half of the large-copy bandwidth.",
            "lowest vs_best_pinned of malloc_host at 1 MB over both directions", Bound::at_least(0.5),
            "at 1 MB the transfer itself takes several times the per-copy cost",
            ClaimKind::host,
            [](const RunRows& r) {
              return both_dirs(r, "malloc_host", std::uint64_t{1} << 20, "vs_best_pinned", false);
            }},
      Claim{"register_cheaper_than_malloc_host",
            "Page-locking an existing buffer with cudaHostRegister costs at most half of what allocating pinned "
            "memory with cudaMallocHost does.",
            "ms_per_gb cuda_host_register / ms_per_gb cuda_malloc_host at the largest alloc_cost size",
            Bound::at_most(0.5),
            "cudaMallocHost also allocates and zero-fills every page; registering only locks and maps pages "
            "that are already there",
            ClaimKind::host,
            [](const RunRows& r) {
              return alloc_ms_per_gb(r, "cuda_host_register") / alloc_ms_per_gb(r, "cuda_malloc_host");
            }},
      Claim{"malloc_host_costs_like_first_touch",
            "Allocating pinned memory with cudaMallocHost costs about as much per byte as malloc plus touching "
            "every page once.",
            "ms_per_gb cuda_malloc_host / ms_per_gb malloc_first_touch at the largest alloc_cost size",
            Bound::between(0.5, 2.0),
            "both are dominated by the OS handing out and zeroing pages; locking them adds little on top",
            ClaimKind::host,
            [](const RunRows& r) {
              return alloc_ms_per_gb(r, "cuda_malloc_host") / alloc_ms_per_gb(r, "malloc_first_touch");
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "pinned_bandwidth";
  d.summary =
      "H2D and D2H copy bandwidth (payload bytes counted once) over 4 KB ... --size for pageable memory and every\n"
      "kind of pinned memory, against the PCIe link the GPU reports; and what allocating or registering pinned\n"
      "memory costs next to malloc + first touch.";
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
  d.claims = claims();
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
    return 2.0 * static_cast<double>(bytes) + kLinkWarmupWords * sizeof(std::uint32_t);
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
