// managed_memory: where do managed pages live, and what does handing them between CPU and GPU cost?
//
// The CPU and the GPU take turns on the same data, handed over on demand (page faults), by prefetching,
// by keeping the pages on the host for the GPU to reach across the link, or with ReadMostly copies, against
// explicit copies of pinned memory. A fault migrates a page or a small group at a time with the GPU
// stalled on each, so faulting a buffer over is far slower than one bulk prefetch; prefetching back and the
// CPU's own faults are host work, so rounds are timed on the wall clock. Every strategy is verified after
// one round and after all of them; managed memory never takes more than half of what is free.
//
// Run: build/bin/managed_memory [--size 256M] [--variant on_demand --variant prefetch]
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "04_transfers/kernels/host_buffers.hpp"
#include "04_transfers/kernels/managed.cuh"
#include "04_transfers/kernels/pointer_facts.hpp"
#include "04_transfers/kernels/transfer_kernels.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch04;

constexpr std::uint32_t kSeed = 5;
constexpr int kMaxRounds = 10;  // rounds move the whole buffer twice: fewer samples than the default 20

// Never ask for more managed memory than the device has free (half of it: the demo has other buffers) or
// than the host can take back when the pages migrate to it.
void require_fits(std::size_t bytes) {
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::uint64_t host = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (bytes > free_b / 2 || bytes > host / 4)
    throw CliError(fmt::format("--size {}: more than half of the free device memory ({}) or a quarter of host memory",
                               format_bytes(static_cast<double>(bytes)), format_bytes(static_cast<double>(free_b))));
}

void require_concurrent_managed(const Context& ctx) {
  if (!ctx.device().concurrent_managed)
    throw Waived("needs concurrentManagedAccess (prefetch and advice target a GPU only with it)");
}

// ---- __managed__ -----------------------------------------------------------------------------------------

void managed_variable(Context& ctx) {
  for (int i = 0; i < kManagedCount; ++i) m_values[i] = i;  // plain host code writing the managed symbol
  m_bias = 7;
  launch_managed_variable(ctx.stream());
  // The host may touch managed data again only once the kernel is done.
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  std::vector<int> got(m_values, m_values + kManagedCount), want(kManagedCount);
  for (int i = 0; i < kManagedCount; ++i) want[i] = 2 * i + 7;
  bool ok = ctx.check(compare_exact(got, want), "m_values[i] = 2 i + m_bias");
  const PointerFacts f = query_pointer(m_values);
  ok = ctx.check(compare_value(static_cast<int>(f.type), static_cast<int>(cudaMemoryTypeManaged), "pointer type"),
                 "m_values is managed") &&
       ok;
  ctx.add_row("m_values", kManagedCount, ok).set("type", to_string(f.type));
}

// ---- Kernel on GPU-resident pages (the floor) ----------------------------------------------------------

void resident(Context& ctx) {
  const std::size_t bytes = ctx.size();
  const std::size_t n = bytes / sizeof(std::uint32_t);
  require_fits(bytes);
  cudaStream_t s = ctx.stream();
  ManagedBuffer<std::uint32_t> m(n);
  fill_pattern_host(m.data(), n, kSeed);
  if (ctx.device().concurrent_managed) prefetch_to(m.data(), bytes, ctx.device().ordinal, s);
  launch_increment_words(m.data(), n, s);
  // Checked on the device: reading on the CPU would pull the pages back.
  if (!ctx.check(check_pattern_on_device(m.data(), n, kSeed, s, 1), "pattern + 1")) {
    ctx.add_row("", bytes, false);
    return;
  }
  const Timing t = ctx.time([&](cudaStream_t st) { launch_increment_words(m.data(), n, st); });
  ctx.add_timed_row("", bytes, 2.0 * static_cast<double>(bytes), t, true);
}

// ---- CPU and GPU in turn -------------------------------------------------------------------------------

struct Step {
  std::string name;
  std::function<void(cudaStream_t)> run;
};

// One way of handing the data back and forth. cpu: the CPU's turn; gpu: the GPU's turn as timed steps;
// check(rounds): are the data right after `rounds` complete rounds?
struct Strategy {
  std::function<void()> cpu;
  std::vector<Step> gpu;
  std::function<VerifyResult(std::uint32_t rounds)> check;
};

void cpu_increment(std::uint32_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] += 1u;
}

void run_rounds(Context& ctx, Strategy& st, std::size_t bytes) {
  cudaStream_t s = ctx.stream();
  std::vector<Event> events(st.gpu.size() + 1);
  std::vector<double> cpu_ms;
  std::vector<std::vector<double>> step_ms(st.gpu.size());
  std::uint32_t rounds = 0;
  auto round = [&] {
    cpu_ms.push_back(host_ms(st.cpu));
    events[0].record(s);
    for (std::size_t k = 0; k < st.gpu.size(); ++k) {
      st.gpu[k].run(s);
      events[k + 1].record(s);
    }
    events.back().synchronize();
    for (std::size_t k = 0; k < st.gpu.size(); ++k) step_ms[k].push_back(events[k + 1].elapsed_ms_since(events[k]));
    ++rounds;
  };

  round();
  if (!ctx.check(st.check(rounds), "after one round")) {
    ctx.add_row("", bytes, false);
    return;
  }
  TimingOptions o = ctx.timing_options();
  if (!ctx.options().reps) o.reps = std::min(o.reps, kMaxRounds);
  const Timing t = time_host(round, o);
  // Still right after every round the timing ran?
  const bool ok = ctx.check(st.check(rounds), fmt::format("after {} rounds", rounds));

  // The timed rounds are the last o.reps of each series (the others were warm-up).
  auto median_of_timed = [&](const std::vector<double>& v) {
    return summarize(std::vector<double>(v.end() - std::min<std::size_t>(v.size(), o.reps), v.end())).median;
  };
  Row& r = ctx.add_timed_row("", bytes, 0.0, t, ok);
  r.set("cpu_phase_ms", median_of_timed(cpu_ms));
  double gpu_total = 0.0;
  for (std::size_t k = 0; k < st.gpu.size(); ++k) {
    const double ms = median_of_timed(step_ms[k]);
    gpu_total += ms;
    r.set(st.gpu[k].name + "_ms", ms);
  }
  r.set("gpu_phase_ms", gpu_total);
  r.set("gpu_phase_gb_per_s", gb_per_s(static_cast<double>(bytes), gpu_total));
}

// The write ping-pong on a managed buffer: CPU +1, GPU +1, so after r rounds every word is pattern + 2r.
void managed_ping_pong(Context& ctx, const std::function<void(std::uint32_t*, std::size_t)>& setup,
                       const std::function<std::vector<Step>(std::uint32_t*, std::size_t)>& gpu_steps) {
  const std::size_t bytes = ctx.size();
  const std::size_t n = bytes / sizeof(std::uint32_t);
  require_fits(bytes);
  ManagedBuffer<std::uint32_t> m(n);
  if (setup) setup(m.data(), bytes);
  fill_pattern_host(m.data(), n, kSeed);  // first touch by the CPU: the pages start in host memory
  Strategy st;
  st.cpu = [&] { cpu_increment(m.data(), n); };
  st.gpu = gpu_steps(m.data(), n);
  st.check = [&](std::uint32_t rounds) {
    return check_pattern_on_device(m.data(), n, kSeed, ctx.stream(), 2u * rounds);
  };
  run_rounds(ctx, st, bytes);
}

// [doc:on_demand]
void on_demand(Context& ctx) {
  managed_ping_pong(ctx, nullptr, [](std::uint32_t* p, std::size_t n) {
    return std::vector<Step>{{"kernel_with_faults", [=](cudaStream_t s) { launch_increment_words(p, n, s); }}};
  });
}
// [/doc:on_demand]

void prefetch(Context& ctx) {
  require_concurrent_managed(ctx);
  const int dev = ctx.device().ordinal;
  managed_ping_pong(ctx, nullptr, [dev](std::uint32_t* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(std::uint32_t);
    // [doc:prefetch_steps]
    return std::vector<Step>{
        {"prefetch_to_gpu", [=](cudaStream_t s) { prefetch_to(p, bytes, dev, s); }},
        {"kernel", [=](cudaStream_t s) { launch_increment_words(p, n, s); }},
        {"prefetch_to_cpu", [=](cudaStream_t s) { prefetch_to(p, bytes, cudaCpuDeviceId, s); }},
    };
    // [/doc:prefetch_steps]
  });
}

void preferred_location_cpu(Context& ctx) {
  require_concurrent_managed(ctx);
  const int dev = ctx.device().ordinal;
  managed_ping_pong(
      ctx,
      // [doc:cpu_preferred_advice]
      [dev](std::uint32_t* p, std::size_t bytes) {
        advise(p, bytes, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId);
        advise(p, bytes, cudaMemAdviseSetAccessedBy, dev);  // map the host pages for the GPU: no faults
      },
      // [/doc:cpu_preferred_advice]
      [](std::uint32_t* p, std::size_t n) {
        return std::vector<Step>{{"kernel_over_pcie", [=](cudaStream_t s) { launch_increment_words(p, n, s); }}};
      });
}

void explicit_copy(Context& ctx) {
  const std::size_t bytes = ctx.size();
  const std::size_t n = bytes / sizeof(std::uint32_t);
  HostBuffer h(HostKind::malloc_host, bytes);
  DeviceBuffer<std::uint32_t> d(n);
  std::uint32_t* hp = h.words();
  fill_pattern_host(hp, n, kSeed);
  Strategy st;
  st.cpu = [&] { cpu_increment(hp, n); };
  st.gpu = {
      {"h2d", [&](cudaStream_t s) { CUDA_CHECK(cudaMemcpyAsync(d.data(), hp, bytes, cudaMemcpyHostToDevice, s)); }},
      {"kernel", [&](cudaStream_t s) { launch_increment_words(d.data(), n, s); }},
      {"d2h", [&](cudaStream_t s) { CUDA_CHECK(cudaMemcpyAsync(hp, d.data(), bytes, cudaMemcpyDeviceToHost, s)); }},
  };
  st.check = [&](std::uint32_t rounds) { return check_pattern_host(hp, n, kSeed, 2u * rounds); };
  run_rounds(ctx, st, bytes);
}

// Both sides only read: the CPU sums every word, the GPU copies every word into device memory.
void read_ping_pong(Context& ctx, bool read_mostly) {
  if (read_mostly) require_concurrent_managed(ctx);
  const std::size_t bytes = ctx.size();
  const std::size_t n = bytes / sizeof(std::uint32_t);
  require_fits(bytes);
  ManagedBuffer<std::uint32_t> m(n);
  DeviceBuffer<std::uint32_t> out(n);
  fill_pattern_host(m.data(), n, kSeed);
  if (read_mostly) advise(m.data(), bytes, cudaMemAdviseSetReadMostly, ctx.device().ordinal);
  const std::uint64_t want_sum = std::accumulate(m.data(), m.data() + n, std::uint64_t{0});
  std::size_t bad_sums = 0;
  Strategy st;
  st.cpu = [&] {
    if (std::accumulate(m.data(), m.data() + n, std::uint64_t{0}) != want_sum) ++bad_sums;
  };
  st.gpu = {{"kernel_reads", [&](cudaStream_t s) { launch_copy_words(m.data(), out.data(), n, s); }}};
  out.poison(ctx.stream());  // the first round must fill it; the check after the timed rounds re-reads it
  st.check = [&](std::uint32_t) {
    VerifyResult r = check_pattern_on_device(out.data(), n, kSeed, ctx.stream());
    if (bad_sums != 0) r.add(0, fmt::format("{} wrong CPU sums", bad_sums), "0");
    return r;
  };
  run_rounds(ctx, st, bytes);
}

// ---- Claims -------------------------------------------------------------------------------------------

double col(const RunRows& r, const char* variant, const char* column) { return r.value({variant, "", column}); }

std::vector<Claim> claims() {
  return {
      Claim{"managed_variable_shared",
            "A __managed__ variable is written by the host, updated by a kernel and read back by the host with no "
            "copy, and its pointer reports managed memory.",
            "managed_variable rows that fail their check", Bound::at_most(0),
            "a promise of the runtime, not a measurement: any failure is a finding",
            ClaimKind::device, [](const RunRows& r) { return r.unverified_rows("managed_variable"); }},
      Claim{"faults_slower_than_prefetch",
            "Letting the kernel fault CPU-resident pages over takes at least 3x as long as prefetching them and "
            "then running the kernel.",
            "kernel_with_faults_ms of on_demand / (prefetch_to_gpu_ms + kernel_ms of prefetch)",
            Bound::at_least(3.0),
            "each fault stalls the GPU for a small migration; a prefetch moves the whole buffer in one bulk "
            "transfer",
            ClaimKind::device,
            [](const RunRows& r) {
              return col(r, "on_demand", "kernel_with_faults_ms") /
                     (col(r, "prefetch", "prefetch_to_gpu_ms") + col(r, "prefetch", "kernel_ms"));
            }},
      Claim{"prefetched_kernel_at_resident_speed",
            "After a prefetch the kernel runs as fast as on pages that never left the GPU.",
            "kernel_ms of prefetch / median_ms of resident", Bound::at_most(1.15),
            "the prefetch leaves every page in device memory, so the kernel takes no fault; 15% allows for noise "
            "on a sub-millisecond kernel",
            ClaimKind::device,
            [](const RunRows& r) { return col(r, "prefetch", "kernel_ms") / col(r, "resident", "median_ms"); }},
      Claim{"read_mostly_stops_migration",
            "With cudaMemAdviseSetReadMostly the GPU's reads are at least 10x faster than without advice, where "
            "the pages keep migrating.",
            "kernel_reads_ms of read_default / kernel_reads_ms of read_mostly", Bound::at_least(10.0),
            "with read-only copies on both sides nothing moves after the first round; without advice every "
            "round faults the whole buffer over again",
            ClaimKind::device,
            [](const RunRows& r) {
              return col(r, "read_default", "kernel_reads_ms") / col(r, "read_mostly", "kernel_reads_ms");
            }},
      Claim{"prefetch_round_slower_than_copies",
            "A round with prefetches both ways still takes at least 1.2x a round with explicit pinned copies.",
            "median_ms of prefetch / median_ms of explicit_copy (whole rounds)", Bound::at_least(1.2),
            "prefetching back to the CPU and the CPU's turn on migrated pages are host work that explicit copies "
            "into a pinned buffer avoid",
            ClaimKind::host,
            [](const RunRows& r) { return col(r, "prefetch", "median_ms") / col(r, "explicit_copy", "median_ms"); }},
      Claim{"host_resident_round_like_copies",
            "Keeping the pages on the CPU and letting the kernel reach across PCIe makes a round no slower than "
            "explicit copies.",
            "median_ms of preferred_location_cpu / median_ms of explicit_copy", Bound::at_most(1.1),
            "both move each byte across PCIe once each way per round and never migrate a page; 10% is noise",
            ClaimKind::host,
            [](const RunRows& r) {
              return col(r, "preferred_location_cpu", "median_ms") / col(r, "explicit_copy", "median_ms");
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "managed_memory";
  d.summary =
      "Managed memory: a __managed__ variable; the CPU and GPU taking turns on one buffer with on-demand page\n"
      "faults, prefetching, preferred location / accessed-by advice, read-mostly duplication, and explicit copies.";
  d.size_meaning = "bytes of managed data (a multiple of 4)";
  d.variants = {
      {"managed_variable", "__managed__ int[1000] written by the host, updated by a kernel, read by the host",
       managed_variable},
      {"resident", "increment kernel on GPU-resident managed pages (no migration: the floor)", resident},
      {"on_demand", "CPU +1 / GPU +1 in turn, pages migrate on fault both ways", on_demand},
      {"prefetch", "the same with cudaMemPrefetchAsync to the GPU before and to the CPU after the kernel", prefetch},
      {"preferred_location_cpu", "advise PreferredLocation=CPU + AccessedBy=GPU: the kernel works across PCIe",
       preferred_location_cpu},
      {"explicit_copy", "the reference: pinned buffer, cudaMemcpyAsync in and out, no managed memory", explicit_copy},
      {"read_default", "CPU sums / GPU reads in turn, no advice", [](Context& c) { read_ping_pong(c, false); }},
      {"read_mostly", "the same with cudaMemAdviseSetReadMostly (read-only copies on both sides)",
       [](Context& c) { read_ping_pong(c, true); }},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{256} << 20; };
  d.quick_size = std::uint64_t{4} << 20;
  d.warmup_ms = 20.0;
  d.device_bytes = [](std::uint64_t bytes) {
    if (bytes < 4096 || bytes % sizeof(std::uint32_t) != 0)
      throw CliError("--size: at least 4k and a multiple of 4 bytes, got " + std::to_string(bytes));
    // Managed buffer + device buffer; require_fits() rechecks at allocation.
    return 2.0 * static_cast<double>(bytes);
  };
  d.check_options = [](Context& ctx) { require_fits(ctx.size()); };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
