// stream_overlap: how much of the host<->device transfer can streams hide behind a kernel (Best Practices
// 9.1.2)?
//
// Split into n chunks, each with its own stream, one chunk's H2D, another's kernel and a third's D2H run at
// once on the GPU's copy engines; only the first copy in and the last copy out stay exposed, the guide's tT/n
// term. The kernel is calibrated to take about as long as both transfers, so the overlap is large enough to
// see, and each staged row carries the model from the measured components. Host buffers are pinned, which
// asynchronous copies require. --timeline writes the overlap as a Chrome trace, visible without Nsight Systems.
//
// Run: build/bin/stream_overlap [--size 64M] [--steps N] [--timeline overlap.json] [--csv overlap.csv]
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "04_transfers/kernels/host_buffers.hpp"
#include "04_transfers/kernels/lcg.cuh"
#include "04_transfers/kernels/overlap_model.hpp"
#include "04_transfers/kernels/pipeline.cuh"
#include "04_transfers/kernels/timeline.hpp"
#include "04_transfers/kernels/transfer_kernels.cuh"
#include "common/harness.hpp"
#include "common/output.hpp"

namespace {

using namespace cml;
using namespace cml::ch04;

constexpr std::uint32_t kSeed = 3;
constexpr int kMaxStreams = 8;
constexpr double kKernelOverTransfer = 1.05;  // calibration target: tE = 1.05 x (H2D + D2H)
constexpr std::uint64_t kMaxSteps = 1 << 20;
// The smallest --size. Chunks are whole kChunkAlignWords, so in a small buffer the last chunks of a split come
// out empty and the staged launch stops before them. From s x (s - 1) x kChunkAlignWords words up, a split into
// s chunks leaves none empty; kMaxStreams^2 x kChunkAlignWords is above that for every row, so streams=n runs
// the n chunks its model divides by.
constexpr std::uint64_t kMinWords = std::uint64_t{kMaxStreams} * kMaxStreams * kChunkAlignWords;

// Everything the variants share: buffers, streams, the calibrated kernel and the measured components.
struct Overlap {
  std::size_t n = 0;
  HostBuffer h_in, h_out;  // pinned
  DeviceBuffer<std::uint32_t> d_in, d_out;
  std::vector<Stream> streams;
  Event fork{cudaEventDisableTiming};
  std::vector<Event> joins;
  std::vector<cudaStream_t> stream_handles;  // the same, as the launcher takes them
  std::vector<cudaEvent_t> join_handles;
  std::uint32_t steps = 0;
  int timeline_streams = 0;
  std::vector<std::uint32_t> expected;
  std::optional<Timing> h2d, kernel, d2h, sequential;

  // Buffers, streams and events, the transfers timed and the kernel sized to them: once per run.
  explicit Overlap(Context& ctx);
};

// ---- The launches ---------------------------------------------------------------------------------------

// The three steps on the whole buffer, for the component timings tT (H2D, D2H) and tE (kernel).
void copy_in(Overlap& o, cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(o.d_in.data(), o.h_in.words(), o.h_in.bytes(), cudaMemcpyHostToDevice, s));
}
void compute(Overlap& o, cudaStream_t s) { launch_lcg_chain(o.d_in.data(), o.d_out.data(), o.n, o.steps, s); }
void copy_out(Overlap& o, cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(o.h_out.words(), o.d_out.data(), o.h_out.bytes(), cudaMemcpyDeviceToHost, s));
}

Pipeline pipeline_of(Overlap& o) {
  return {o.h_in.words(), o.d_in.data(), o.d_out.data(), o.h_out.words(), o.n, o.steps};
}

void launch(Overlap& o, int streams, cudaStream_t s) {
  if (streams == 0) {
    launch_pipeline_sequential(pipeline_of(o), s);
    return;
  }
  launch_pipeline_staged(pipeline_of(o), streams, o.stream_handles.data(), o.fork, o.join_handles.data(), s);
}

// ---- Verified timing ------------------------------------------------------------------------------------

// prepare (untimed) -> launch once -> verify -> time. nullopt (and a recorded failure) if verification fails.
template <class Prepare, class Launch, class Verify>
std::optional<Timing> verified_time(Context& ctx, const std::string& what, Prepare&& prepare, Launch&& launch,
                                    Verify&& verify, const TimingOptions& opts) {
  cudaStream_t s = ctx.stream();
  prepare(s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  launch(s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  if (!ctx.check(verify(), what)) return std::nullopt;
  return ctx.time(launch, opts);
}

void poison_all(Overlap& o, cudaStream_t s) {
  o.d_in.poison(s);
  o.d_out.poison(s);
  poison_host(o.h_out.data(), o.h_out.bytes());
}

VerifyResult check_host_out(const Overlap& o) { return compare_exact(o.h_out.words(), o.expected.data(), o.n); }

std::optional<Timing> measure_h2d(Context& ctx, Overlap& o) {
  return verified_time(
      ctx, "h2d", [&](cudaStream_t s) { o.d_in.poison(s); }, [&](cudaStream_t s) { copy_in(o, s); },
      [&] { return check_pattern_on_device(o.d_in.data(), o.n, kSeed, ctx.stream()); }, ctx.timing_options());
}
std::optional<Timing> measure_d2h(Context& ctx, Overlap& o) {
  // A pattern in d_out (written untimed) tells a faithful D2H from a stale or partial one.
  return verified_time(
      ctx, "d2h",
      [&](cudaStream_t s) {
        launch_pattern_fill(o.d_out.data(), o.n, kSeed + 1, s);
        poison_host(o.h_out.data(), o.h_out.bytes());
      },
      [&](cudaStream_t s) { copy_out(o, s); },
      [&] { return check_pattern_host(o.h_out.words(), o.n, kSeed + 1); }, ctx.timing_options());
}
std::optional<Timing> measure_kernel(Context& ctx, Overlap& o) {
  return verified_time(
      ctx, "kernel",
      [&](cudaStream_t s) {
        poison_all(o, s);
        copy_in(o, s);
      },
      [&](cudaStream_t s) { compute(o, s); },
      [&] { return compare_exact(o.d_out.download(), o.expected); }, ctx.timing_options());
}
std::optional<Timing> measure_pipeline(Context& ctx, Overlap& o, int streams) {
  return verified_time(
      ctx, streams == 0 ? "sequential" : fmt::format("streams={}", streams), [&](cudaStream_t s) { poison_all(o, s); },
      [&o, streams](cudaStream_t s) { launch(o, streams, s); },
      [&] { return check_host_out(o); }, ctx.timing_options());
}

// ---- Set-up and calibration -----------------------------------------------------------------------------

double kernel_ms(Context& ctx, Overlap& o, std::uint32_t steps) {
  // Calibration points only pick the chain length; the kernel at the chosen length is verified before
  // any reported timing.
  o.steps = steps;
  TimingOptions opts = ctx.timing_options();
  opts.reps = std::min(opts.reps, 5);
  return ctx.time([&](cudaStream_t s) { compute(o, s); }, opts).stats.median;
}

// Kernel time is a + b * steps; two points give a and b, a third point at the estimate refines b.
std::uint32_t calibrate_steps(Context& ctx, Overlap& o, double target_ms) {
  const std::uint32_t k1 = 16, k2 = 512;
  const double t1 = kernel_ms(ctx, o, k1), t2 = kernel_ms(ctx, o, k2);
  auto solve = [&](double slope) {
    const double k = k1 + (target_ms - t1) / std::max(slope, 1e-9);
    return static_cast<std::uint32_t>(std::clamp(k, 1.0, static_cast<double>(kMaxSteps)));
  };
  std::uint32_t k = solve((t2 - t1) / (k2 - k1));
  if (k != k1) k = solve((kernel_ms(ctx, o, k) - t1) / (static_cast<double>(k) - k1));
  return k;
}

// --timeline-streams: 1 ... kMaxStreams.
int timeline_streams_option(const Context& ctx) {
  const std::uint64_t ts = ctx.extra_size("timeline-streams");
  if (ts > kMaxStreams) throw CliError(fmt::format("--timeline-streams: at most {}, got {}", kMaxStreams, ts));
  return static_cast<int>(ts);
}

// --steps: the kernel's multiply-adds per word, or nothing for "0" (calibrate them to the transfers).
std::optional<std::uint32_t> steps_option(const Context& ctx) {
  const std::uint64_t k = ctx.extra_size("steps");
  if (k == 0) return std::nullopt;
  if (k > kMaxSteps)
    throw CliError("--steps: at most " + std::to_string(kMaxSteps) + ", got " + ctx.extra_text("steps"));
  return static_cast<std::uint32_t>(k);
}

// Every option at once, before the run: a --timeline file that cannot be written is refused now, not
// after the measurements that would fill it, and so is one that no variant of the run would write.
void check_options(Context& ctx) {
  (void)timeline_streams_option(ctx);
  (void)steps_option(ctx);
  const std::vector<std::string>& only = ctx.options().variants;
  const bool staged_runs = only.empty() || std::find(only.begin(), only.end(), "staged") != only.end();
  if (!ctx.extra_text("timeline").empty() && !staged_runs)
    throw CliError("--timeline: only the staged variant writes it, and --variant leaves that out");
  try {
    check_writable(ctx.extra_text("timeline"));
  } catch (const std::exception& e) {
    throw CliError(std::string("--timeline: ") + e.what());
  }
}

Overlap::Overlap(Context& ctx) : n(ctx.size()) {
  const std::size_t bytes = n * sizeof(std::uint32_t);
  // [doc:pinned_host_buffers]
  h_in = HostBuffer(HostKind::malloc_host, bytes);
  h_out = HostBuffer(HostKind::malloc_host, bytes);
  // [/doc:pinned_host_buffers]
  d_in = DeviceBuffer<std::uint32_t>(n);
  d_out = DeviceBuffer<std::uint32_t>(n);
  for (int k = 0; k < kMaxStreams; ++k) {
    streams.emplace_back(cudaStreamNonBlocking);
    joins.emplace_back(cudaEventDisableTiming);
    stream_handles.push_back(streams.back());
    join_handles.push_back(joins.back());
  }
  fill_pattern_host(h_in.words(), n, kSeed);
  timeline_streams = timeline_streams_option(ctx);

  // The transfers do not depend on the kernel: measure them first, then size the kernel to them.
  h2d = measure_h2d(ctx, *this);
  d2h = measure_d2h(ctx, *this);
  if (const std::optional<std::uint32_t> s = steps_option(ctx)) {
    steps = *s;
  } else {
    copy_in(*this, ctx.stream());
    const double transfer_ms = h2d && d2h ? h2d->stats.median + d2h->stats.median : 1.0;
    steps = calibrate_steps(ctx, *this, kKernelOverTransfer * transfer_ms);
  }
  expected.resize(n);
  lcg_reference(h_in.words(), expected.data(), n, steps);
  kernel = measure_kernel(ctx, *this);
  ctx.note(fmt::format("kernel: {} multiply-adds per word; asyncEngineCount = {}{}", steps, ctx.device().async_engines,
                       ctx.device().async_engines < 2 ? " (H2D and D2H share one copy engine: they serialize)" : ""));
}

// ---- Timeline -------------------------------------------------------------------------------------------

// One run of the pipeline (streams = 0: sequential) with events between the steps of every chunk,
// verified like the timed runs. The events add a few microseconds per step; the timed rows carry none.
std::optional<TimelineRun> trace_pipeline(Context& ctx, Overlap& o, int streams) {
  const int chunks = streams == 0 ? 1 : chunks_used(o.n, streams);
  std::vector<std::array<Event, 4>> events(static_cast<std::size_t>(chunks));
  std::vector<ChunkEvents> marks;
  for (auto& e : events) marks.push_back({e[0], e[1], e[2], e[3]});
  Event origin;
  cudaStream_t s = ctx.stream();
  poison_all(o, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  origin.record(s);
  if (streams == 0)
    launch_pipeline_sequential(pipeline_of(o), s, marks.data());
  else
    launch_pipeline_staged(pipeline_of(o), streams, o.stream_handles.data(), o.fork, o.join_handles.data(), s,
                           marks.data());
  CUDA_CHECK(cudaStreamSynchronize(s));
  const std::string label =
      streams == 0 ? std::string("sequential, one stream") : fmt::format("staged, {} streams", streams);
  if (!ctx.check(check_host_out(o), "timeline: " + label)) return std::nullopt;

  std::vector<StepTimes> steps;
  for (int k = 0; k < chunks; ++k) {
    const Chunk c = streams == 0 ? Chunk{0, o.n} : chunk_of(o.n, streams, k, kChunkAlignWords);
    const std::size_t bytes = c.count * sizeof(std::uint32_t);
    auto at = [&](int i) { return static_cast<double>(events[k][i].elapsed_ms_since(origin)); };
    steps.push_back({k, k, Step::h2d, at(0), at(1), bytes});
    steps.push_back({k, k, Step::kernel, at(1), at(2), 2 * bytes});
    steps.push_back({k, k, Step::d2h, at(2), at(3), bytes});
  }
  TimelineRun run{label, streams == 0 ? 1 : streams, 0.0, engine_spans(steps)};
  for (const Span& sp : run.spans) run.total_ms = std::max(run.total_ms, sp.t.end_ms);
  return run;
}

void write_timeline(Context& ctx, Overlap& o, const std::string& path) {
  std::vector<TimelineRun> runs;
  for (int streams : {0, o.timeline_streams}) {
    std::optional<TimelineRun> r = trace_pipeline(ctx, o, streams);
    if (!r) return;
    runs.push_back(std::move(*r));
  }
  const DeviceInfo& d = ctx.device();
  const std::vector<std::pair<std::string, std::string>> about = {
      {"demo", "stream_overlap"},
      {"device", d.name},
      {"words", std::to_string(o.n)},
      {"bytes_each_way", std::to_string(o.n * sizeof(std::uint32_t))},
      {"kernel_multiply_adds_per_word", std::to_string(o.steps)},
      {"async_engine_count", std::to_string(d.async_engines)},
      {"how", "CUDA events recorded between the steps of every chunk; a step starts when its stream reached it "
              "and its engine had finished the previous chunk's step of the same kind"},
  };
  write_file_atomically(path, chrome_trace_json(runs, about));
  ctx.note(fmt::format("timeline: {} (sequential {:.3f} ms, {} streams {:.3f} ms, traced); open it in "
                       "https://ui.perfetto.dev or draw it with scripts/timeline_plot.py",
                       path, runs[0].total_ms, runs[1].streams, runs[1].total_ms));
}

// ---- Variants -------------------------------------------------------------------------------------------

Row& add_pipeline_row(Context& ctx, const std::string& params, const Timing& t, const Overlap& o) {
  const double payload = 2.0 * static_cast<double>(o.n) * sizeof(std::uint32_t);
  Row& r = ctx.add_timed_row(params, o.n, payload, t, true);
  r.pct_peak = kNaN;
  return r;
}

void sequential(Context& ctx) {
  Overlap& o = ctx.state<Overlap>(ctx);
  const double bytes = static_cast<double>(o.n) * sizeof(std::uint32_t);
  struct Part {
    const char* params;
    const std::optional<Timing>& t;
    double bytes;
  };
  for (const Part& p : {Part{"step=h2d", o.h2d, bytes}, Part{"step=kernel", o.kernel, 2.0 * bytes},
                        Part{"step=d2h", o.d2h, bytes}}) {
    if (!p.t) {
      ctx.add_row(p.params, o.n, false);
      continue;
    }
    Row& r = ctx.add_timed_row(p.params, o.n, p.bytes, *p.t, true);
    if (std::string(p.params) != "step=kernel") r.pct_peak = kNaN;
  }
  o.sequential = measure_pipeline(ctx, o, 0);
  if (!o.sequential) {
    ctx.add_row("step=all", o.n, false);
    return;
  }
  Row& r = add_pipeline_row(ctx, "step=all", *o.sequential, o);
  if (o.h2d && o.kernel && o.d2h) {
    const double model = o.h2d->stats.median + o.kernel->stats.median + o.d2h->stats.median;
    r.set("model_ms", model).set("vs_model", o.sequential->stats.median / model);
  }
  r.set("steps", o.steps);
}

void staged(Context& ctx) {
  Overlap& o = ctx.state<Overlap>(ctx);
  if (!o.sequential) o.sequential = measure_pipeline(ctx, o, 0);
  const bool have_model = o.h2d && o.kernel && o.d2h && o.sequential;
  const double t_e = have_model ? o.kernel->stats.median : 0.0;
  const double t_t = have_model ? o.h2d->stats.median + o.d2h->stats.median : 0.0;
  int best = 0;
  double best_ms = 0.0, best_model = 0.0;
  for (int n = 1; n <= kMaxStreams; ++n) {
    const std::string params = fmt::format("streams={}", n);
    const std::optional<Timing> t = measure_pipeline(ctx, o, n);
    if (!t) {
      ctx.add_row(params, o.n, false);
      continue;
    }
    Row& r = add_pipeline_row(ctx, params, *t, o);
    if (!have_model) continue;
    const double model = bpg_overlap_model_ms(t_e, t_t, n);
    const double pipeline =
        pipeline_model_ms(o.h2d->stats.median, t_e, o.d2h->stats.median, n, ctx.device().async_engines);
    r.set("model_ms", model).set("vs_model", t->stats.median / model).set("model_pipeline_ms", pipeline);
    r.set("speedup", o.sequential->stats.median / t->stats.median);
    if (best == 0 || t->stats.median < best_ms) {
      best = n;
      best_ms = t->stats.median;
      best_model = model;
    }
  }
  if (best != 0)
    ctx.note(fmt::format("best: {} streams, {:.3f} ms measured vs {:.3f} ms modelled ({:.2f}x), {:.2f}x faster than "
                         "sequential ({:.3f} ms); tE = {:.3f} ms, tT = {:.3f} ms",
                         best, best_ms, best_model, best_ms / best_model, o.sequential->stats.median / best_ms,
                         o.sequential->stats.median, t_e, t_t));
  const std::string timeline = ctx.extra_text("timeline");
  if (!timeline.empty()) write_timeline(ctx, o, timeline);
}

// ---- Claims -------------------------------------------------------------------------------------------

std::vector<Claim> claims() {
  return {
      Claim{"staged_follows_model",
            "Staged over 1 to 8 streams, the pipeline takes the time the Best Practices model tE + tT/n gives.",
            "largest |vs_model - 1| over the staged rows (vs_model = measured / model time)", Bound::at_most(0.1),
            "the model is built from this run's own component times; 10% allows for noise in those components",
            ClaimKind::device, [](const RunRows& r) { return max_rel_deviation(r.values("staged", "vs_model"), 1.0); }},
      Claim{"eight_streams_hide_transfers",
            "With 8 streams the copies hide behind the kernel: the pipeline is at least 1.5x faster than "
            "sequential.",
            "speedup of staged at streams=8 (sequential time / staged time)", Bound::at_least(1.5),
            "with tE ~ tT the model gives (tE + tT) / (tE + tT/8) ~ 1.78x; 1.5 leaves room for a copy engine "
            "or kernel that runs a little slower when they share the GPU",
            ClaimKind::device,
            [](const RunRows& r) {
              // The bound is for the calibrated kernel (tE ~ tT); --steps may make either side dominate.
              const double t_e = r.value({"sequential", "step=kernel", "median_ms"});
              const double t_t = r.value({"sequential", "step=h2d", "median_ms"}) +
                                 r.value({"sequential", "step=d2h", "median_ms"});
              if (!(t_e / t_t >= 0.8 && t_e / t_t <= 1.25))
                throw NotApplicable(fmt::format("the kernel takes {:.2f}x the transfers (--steps); the bound is for "
                                                "a kernel as long as them", t_e / t_t));
              return r.value({"staged", "streams=8", "speedup"});
            }},
      Claim{"one_stream_gains_nothing",
            "Staged as a single chunk in one stream, the pipeline takes the sequential time: there is "
            "nothing to overlap.",
            "speedup of staged at streams=1", Bound::between(0.95, 1.05),
            "one stream runs its copies and its kernel in order, just like the sequential variant; 5% is noise",
            ClaimKind::device, [](const RunRows& r) { return r.value({"staged", "streams=1", "speedup"}); }},
      Claim{"sequential_is_the_sum",
            "Run one after the other, the pipeline takes the sum of its three steps timed alone.",
            "vs_model of sequential (measured / (H2D + kernel + D2H))", Bound::between(0.9, 1.1),
            "nothing overlaps in one stream; 10% allows for noise in the three component times",
            ClaimKind::device, [](const RunRows& r) { return r.value({"sequential", "step=all", "vs_model"}); }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "stream_overlap";
  d.summary =
      "Sequential H2D -> kernel -> D2H vs the same staged over 1..8 streams, with the kernel sized to take as long\n"
      "as the transfers; measured time beside the Best Practices model tE + tT/n.";
  d.size_meaning = "32-bit words transferred each way";
  d.variants = {
      {"sequential", "H2D, kernel, D2H of everything in one stream (also the component times tT and tE)",
       sequential},
      {"staged", "n = 1..8 chunks, each H2D -> kernel -> D2H in its own stream", staged},
  };
  d.claims = claims();
  d.extras = {
      ExtraOption::size_or_zero("steps",
                                "multiply-adds per word in the kernel (0 = calibrate to 1.05x the transfer time)", 0),
      ExtraOption::output_file("timeline", "trace one sequential and one staged run with CUDA events into this "
                                           "Chrome-trace JSON (Perfetto opens it; scripts/timeline_plot.py draws it)"),
      ExtraOption::size("timeline-streams", "streams in the staged run of --timeline (1..8)", 4),
  };
  d.check_options = check_options;
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{64} << 20; };
  d.quick_size = std::uint64_t{1} << 20;
  d.cold_by_default = false;
  d.warmup_ms = 20.0;
  d.device_bytes = [](std::uint64_t n) {
    if (n < kMinWords) throw CliError(fmt::format("--size: at least {} words, got {}", kMinWords, n));
    if (n > (std::uint64_t{1} << 30)) throw CliError("--size: at most 1G words, got " + std::to_string(n));
    return 2.0 * static_cast<double>(n) * sizeof(std::uint32_t);
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
