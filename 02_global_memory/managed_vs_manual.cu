// managed_vs_manual: what does managed memory cost against explicit copies, and where is the cost paid?
//
// The book's managed matrix sum launches a 1 x 1 "warm-up" kernel to migrate the matrices first. That held
// before Pascal; since then pages migrate on demand, when a GPU thread faults on them, so the warm-up moves
// one page per matrix and the first full kernel takes the faults for the rest. A prefetch moves the pages
// up front (the first kernel then runs like the second); with cudaMemAdvise nothing migrates and every
// access crosses the host link. Rows are phases, each managed pass starting with every page on the host.
//
// Run: build/bin/managed_vs_manual [--size 4096] [--csv managed.csv]
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/demo_support.hpp"
#include "02_global_memory/kernels/matrix_sum.cuh"
#include "02_global_memory/kernels/matrix_sum_reference.hpp"
#include "02_global_memory/kernels/pattern_model.hpp"
#include "02_global_memory/kernels/unified_memory.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

struct Problem {
  unsigned side;
  std::size_t n;  // elements per matrix
  double matrix_bytes;
  std::vector<float> expected;
  explicit Problem(const Context& ctx)
      : side(static_cast<unsigned>(ctx.size())),
        n(static_cast<std::size_t>(side) * side),
        matrix_bytes(static_cast<double>(n) * sizeof(float)),
        expected(matrix_sum_reference(n)) {}
};

VerifyResult check_c(const float* c, const Problem& p) {
  VerifyResult r;
  expect_equal(r, c, p.expected.data(), p.n, 0);
  return r;
}

// The kernel rows get the copy ceiling and the access model: 32-wide rows of 4-byte elements.
void set_kernel_columns(Row& row, double ceiling, std::size_t n) {
  const auto per_warp = model::vector_access(sizeof(float));
  const std::uint64_t sectors = distinct_sectors(0, n, 1, sizeof(float));
  set_model_columns(
      row, ceiling,
      {load_traffic(per_warp, warp_requests(n), sectors), load_traffic(per_warp, warp_requests(n), sectors),
       store_traffic(per_warp, warp_requests(n), sectors)});
}

void add_phase(Context& ctx, const Problem& p, const std::string& phase, double bytes, const Timing& t) {
  ctx.add_timed_row("phase=" + phase, p.side, bytes, t, true);
}

// Passes for the managed variants: each migrates the matrices back and forth, so fewer than --reps.
int managed_passes(const Context& ctx) {
  if (ctx.options().reps) return *ctx.options().reps;
  return ctx.quick() ? 2 : 5;
}

void manual(Context& ctx) {
  const double ceiling = ctx.copy_ceiling().best();
  const Problem p(ctx);
  const std::size_t bytes = p.n * sizeof(float);
  // new[] without () leaves the pages untouched, like the book's malloc: init pays the first touch.
  std::unique_ptr<float[]> a(new float[p.n]), b(new float[p.n]), c(new float[p.n]);
  const double init_ms = host_ms([&] { init_matrices(a.get(), b.get(), c.get(), p.n); });

  // The copies go on the demo's stream (a non-blocking one, which a plain cudaMemcpy would not order
  // against) and finish before the lambda returns, as the book's synchronous cudaMemcpy calls do.
  const cudaStream_t s = ctx.stream();
  DeviceBuffer<float> da(p.n), db(p.n), dc(p.n);
  auto h2d = [&] {
    CUDA_CHECK(cudaMemcpyAsync(da.data(), a.get(), bytes, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaMemcpyAsync(db.data(), b.get(), bytes, cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
  };
  auto kernel = [&](cudaStream_t st) { launch_sum_matrix(da.data(), db.data(), dc.data(), p.side, p.side, st); };
  auto d2h = [&] {
    CUDA_CHECK(cudaMemcpyAsync(c.get(), dc.data(), bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
  };

  // One verified pass before anything on the GPU is timed.
  dc.poison(s);
  h2d();
  kernel(s);
  d2h();
  if (!ctx.check(check_c(c.get(), p), "manual")) {
    ctx.add_row("phase=kernel", p.side, false);
    return;
  }
  add_phase(ctx, p, "init", 3 * p.matrix_bytes, timing_of({init_ms}));
  add_phase(ctx, p, "h2d", 2 * p.matrix_bytes, time_host(h2d, ctx.timing_options()));
  ctx.set_profile_label("phase=kernel");
  const Timing tk = ctx.time(kernel);
  ctx.add_timed_row("phase=kernel", p.side, 3 * p.matrix_bytes, tk, true);
  set_kernel_columns(ctx.rows().back(), ceiling, p.n);
  add_phase(ctx, p, "d2h", p.matrix_bytes, time_host(d2h, ctx.timing_options()));
}

// Managed A, B, C, initialised on the host; waived rather than oversubscribing the GPU.
struct ManagedMatrices {
  ManagedBuffer<float> a, b, c;
  double init_ms = 0.0;
  explicit ManagedMatrices(const Problem& p) {
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (3 * p.matrix_bytes > 0.9 * static_cast<double>(free_b))
      throw Waived(fmt::format("three {}x{} matrices need {} of managed memory, only {} is free", p.side, p.side,
                               format_bytes(3 * p.matrix_bytes), format_bytes(static_cast<double>(free_b))));
    a = ManagedBuffer<float>(p.n);
    b = ManagedBuffer<float>(p.n);
    c = ManagedBuffer<float>(p.n);
    init_ms = host_ms([&] { init_matrices(a.data(), b.data(), c.data(), p.n); });
  }
  void prefetch_all(Where where, int device, cudaStream_t s) {
    prefetch(a.data(), a.bytes(), where, device, s);
    prefetch(b.data(), b.bytes(), where, device, s);
    prefetch(c.data(), c.bytes(), where, device, s);
  }
};

// The phases of one pass, timed with events (GPU work) or the host clock (host_read).
struct Phase {
  std::string name;
  double bytes;
  std::vector<double> samples;
};

// One untimed pass that must verify, then `passes` timed ones. Before every pass the matrices go back
// to the host (prefetch to the CPU: the state right after the host initialised them), unless `reset`
// is false (managed_advise keeps them on the host anyway).
template <class Pass>
void run_passes(Context& ctx, const Problem& p, ManagedMatrices& m, std::vector<Phase>& phases, bool reset,
                Pass&& pass) {
  auto back_to_host = [&] {
    if (!reset) return;
    m.prefetch_all(Where::host, ctx.device().ordinal, ctx.stream());
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  };
  std::vector<Phase> scratch = phases;
  if (!ctx.check(pass(scratch), ctx.variant())) {
    ctx.add_row("phase=kernel_first", p.side, false);
    phases.clear();
    return;
  }
  for (int r = 0; r < managed_passes(ctx); ++r) {
    back_to_host();
    if (!ctx.check(pass(phases), ctx.variant())) {
      ctx.add_row("phase=kernel_first", p.side, false);
      phases.clear();
      return;
    }
  }
}

double host_read_ms(const ManagedMatrices& m, const Problem& p, VerifyResult& r) {
  return host_ms([&] { r = check_c(m.c.data(), p); });
}

void report(Context& ctx, const Problem& p, double ceiling, double init_ms, const std::vector<Phase>& phases) {
  if (phases.empty()) return;
  add_phase(ctx, p, "init", 3 * p.matrix_bytes, timing_of({init_ms}));
  for (const Phase& ph : phases) {
    add_phase(ctx, p, ph.name, ph.bytes, timing_of(ph.samples));
    if (ph.name.rfind("kernel", 0) == 0) set_kernel_columns(ctx.rows().back(), ceiling, p.n);
  }
}

void managed(Context& ctx) {
  const double ceiling = ctx.copy_ceiling().best();
  const Problem p(ctx);
  ManagedMatrices m(p);
  const cudaStream_t s = ctx.stream();
  std::vector<Phase> phases = {{"warmup_1x1", 0.0, {}},
                               {"kernel_first", 3 * p.matrix_bytes, {}},
                               {"kernel_second", 3 * p.matrix_bytes, {}},
                               {"host_read", p.matrix_bytes, {}}};
  // [doc:warm_up_and_full_kernels]
  run_passes(ctx, p, m, phases, true, [&](std::vector<Phase>& ph) {
    // The book's warm-up: the full kernel with nx = ny = 1, so one thread touches one element.
    ph[0].samples.push_back(event_ms(s, [&] { launch_sum_matrix(m.a.data(), m.b.data(), m.c.data(), 1, 1, s); }));
    for (int k : {1, 2})
      ph[k].samples.push_back(
          event_ms(s, [&] { launch_sum_matrix(m.a.data(), m.b.data(), m.c.data(), p.side, p.side, s); }));
    // [/doc:warm_up_and_full_kernels]
    VerifyResult r;
    ph[3].samples.push_back(host_read_ms(m, p, r));
    return r;
  });
  report(ctx, p, ceiling, m.init_ms, phases);
}

void managed_prefetch(Context& ctx) {
  const double ceiling = ctx.copy_ceiling().best();
  const Problem p(ctx);
  ManagedMatrices m(p);
  const cudaStream_t s = ctx.stream();
  const int dev = ctx.device().ordinal;
  std::vector<Phase> phases = {{"prefetch_to_gpu", 3 * p.matrix_bytes, {}},
                               {"kernel_first", 3 * p.matrix_bytes, {}},
                               {"kernel_second", 3 * p.matrix_bytes, {}},
                               {"prefetch_to_host", p.matrix_bytes, {}},
                               {"host_read", p.matrix_bytes, {}}};
  run_passes(ctx, p, m, phases, true, [&](std::vector<Phase>& ph) {
    ph[0].samples.push_back(event_ms(s, [&] { m.prefetch_all(Where::device, dev, s); }));
    for (int k : {1, 2})
      ph[k].samples.push_back(
          event_ms(s, [&] { launch_sum_matrix(m.a.data(), m.b.data(), m.c.data(), p.side, p.side, s); }));
    ph[3].samples.push_back(event_ms(s, [&] { prefetch(m.c.data(), m.c.bytes(), Where::host, dev, s); }));
    VerifyResult r;
    ph[4].samples.push_back(host_read_ms(m, p, r));
    return r;
  });
  report(ctx, p, ceiling, m.init_ms, phases);
}

void managed_advise(Context& ctx) {
  const double ceiling = ctx.copy_ceiling().best();
  const Problem p(ctx);
  ManagedMatrices m(p);
  const cudaStream_t s = ctx.stream();
  const int dev = ctx.device().ordinal;
  // Keep every page in host memory and map it into the GPU's page table up front: no faults and no
  // migration; the GPU reads and writes across the host link.
  for (float* ptr : {m.a.data(), m.b.data(), m.c.data()}) {
    advise(ptr, p.n * sizeof(float), cudaMemAdviseSetPreferredLocation, Where::host, dev);
    advise(ptr, p.n * sizeof(float), cudaMemAdviseSetAccessedBy, Where::device, dev);
  }
  std::vector<Phase> phases = {{"kernel_first", 3 * p.matrix_bytes, {}},
                               {"kernel_second", 3 * p.matrix_bytes, {}},
                               {"host_read", p.matrix_bytes, {}}};
  run_passes(ctx, p, m, phases, false, [&](std::vector<Phase>& ph) {
    for (int k : {0, 1})
      ph[k].samples.push_back(
          event_ms(s, [&] { launch_sum_matrix(m.a.data(), m.b.data(), m.c.data(), p.side, p.side, s); }));
    VerifyResult r;
    ph[2].samples.push_back(host_read_ms(m, p, r));
    return r;
  });
  report(ctx, p, ceiling, m.init_ms, phases);
}

Demo make_demo() {
  Demo d;
  d.name = "managed_vs_manual";
  d.summary =
      "The book's matrix sum with explicit copies, with managed memory (and the book's 1x1 warm-up), with\n"
      "cudaMemPrefetchAsync, and with cudaMemAdvise, phase by phase: since Pascal pages migrate on demand,\n"
      "so the warm-up does not move the matrices and a prefetch does.";
  d.size_meaning = "matrix side nx = ny (default: 4096 x 2^k with three matrices >= 8x L2; the book's is 4096)";
  d.variants = {
      {"manual", "malloc + cudaMalloc + cudaMemcpy (the book's sumMatrixGPUManual)", manual},
      {"managed", "cudaMallocManaged and the book's 1x1 warm-up launch (sumMatrixGPUManaged)", managed},
      {"managed_prefetch", "cudaMemPrefetchAsync to the GPU before the kernel, C back to the host after",
       managed_prefetch},
      {"managed_advise", "SetPreferredLocation host + SetAccessedBy GPU: mapped, never migrated", managed_advise},
  };
  d.claims = {
      ratio_claim("warmup_does_not_migrate",
                  "After the book's 1x1 warm-up, the first full kernel on managed memory is still far slower than "
                  "the second: the warm-up migrated almost nothing.",
                  {"managed", "phase=kernel_first"}, {"managed", "phase=kernel_second"}, Bound::at_most(0.1),
                  "the warm-up touches one page per matrix; the first full kernel faults and migrates every other "
                  "page, which costs orders of magnitude more than reading them from device memory"),
      ratio_claim("prefetch_removes_faults",
                  "After cudaMemPrefetchAsync, the first kernel runs about as fast as the second.",
                  {"managed_prefetch", "phase=kernel_first"}, {"managed_prefetch", "phase=kernel_second"},
                  Bound::at_least(0.8),
                  "every page is on the GPU before the kernel starts, so no fault is left; 20% allows for the "
                  "first kernel's TLB misses and the noise of five passes"),
      ratio_claim("prefetched_matches_manual",
                  "Once the pages are on the GPU, the managed kernel runs as fast as the one on cudaMalloc memory.",
                  {"managed_prefetch", "phase=kernel_second"}, {"manual", "phase=kernel"}, Bound::at_least(0.8),
                  "managed pages resident on the GPU are ordinary device memory; 20% allows for the noise of five "
                  "passes"),
      ratio_claim("advise_never_migrates",
                  "With the pages kept on the host and mapped, the first and second kernels run at the same speed.",
                  {"managed_advise", "phase=kernel_first"}, {"managed_advise", "phase=kernel_second"},
                  Bound::between(0.8, 1.25),
                  "nothing migrates, so both kernels read and write across the host link; 20% allows for noise",
                  ClaimKind::host),
      ratio_claim("advise_reads_over_host_link",
                  "A kernel on managed memory kept on the host runs far below the same kernel on device memory.",
                  {"managed_advise", "phase=kernel_second"}, {"manual", "phase=kernel"}, Bound::at_most(0.1),
                  "every byte crosses the host link, which is far slower than device memory (the ratio depends on "
                  "the link)",
                  ClaimKind::host),
      Claim{"host_read_without_faults_is_faster",
            "The host reads C faster when its pages were prefetched back or never left than when every page "
            "faults back.",
            "min of GB/s host_read managed_prefetch and managed_advise / GB/s host_read managed",
            Bound::at_least(1.3),
            "a CPU page fault migrates C one piece at a time; the size of the gain depends on the host",
            ClaimKind::host,
            [](const RunRows& r) {
              const double faulting = r.value({"managed", "phase=host_read"});
              return std::min(r.value({"managed_prefetch", "phase=host_read"}),
                              r.value({"managed_advise", "phase=host_read"})) /
                     faulting;
            }},
  };
  d.default_size = [](const DeviceInfo& dev) {
    std::uint64_t side = 4096;
    while (3.0 * 4.0 * static_cast<double>(side * side) < 8.0 * static_cast<double>(dev.l2_bytes)) side *= 2;
    return side;
  };
  d.quick_size = 1024;
  // manual holds three device matrices, the managed variants three managed ones (never at the same time).
  d.device_bytes = [](std::uint64_t side) {
    return DemoMemory::with_default_ceiling(3.0 * 4.0 * static_cast<double>(side) * static_cast<double>(side));
  };
  d.waive_reason = [](const DeviceInfo& dev) -> std::string {
    if (dev.concurrent_managed) return "";
    return "no concurrentManagedAccess on this GPU/OS: managed pages migrate in bulk at each launch (the "
           "pre-Pascal behaviour the book describes), so there is no on-demand migration to show";
  };
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
