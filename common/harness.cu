#include "common/harness.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>

#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include <fmt/format.h>

#include "common/cards.hpp"
#include "common/copy_kernels.cuh"
#include "common/pattern_kernels.cuh"

namespace cml {

Context::Context(const Demo& demo, const CliSpec& spec, const Options& opts, const DeviceInfo& device)
    : demo_(demo),
      spec_(spec),
      opts_(opts),
      device_(device),
      // A blocking stream: ordered with the legacy default stream, so uploads and poisons issued there
      // (DeviceBuffer's defaults) are complete before the benchmark's kernels run.
      stream_(cudaStreamDefault),
      flusher_(std::make_unique<L2Flusher>(device.l2_bytes)),
      timer_(stream_.get(), flusher_.get()) {
  if (opts.size) size_ = *opts.size;
  else if (opts.quick) size_ = demo.quick_size;
  else size_ = demo.default_size ? demo.default_size(device) : demo.quick_size;
  if (opts.csv_path == "-" || opts.json_path == "-" || opts.claims_csv_path == "-") human_ = stderr;
}

Context::~Context() = default;

Context::ProfileRange::ProfileRange(Context& c)
    : name_(fmt::format("{}#{}|{}", c.variant_, c.profile_seq_++, c.profile_label_)) {
  c.profile_label_.clear();
  CUDA_CHECK(cudaProfilerStart());
  nvtxRangePushA(name_.c_str());
}

Context::ProfileRange::~ProfileRange() {
  nvtxRangePop();
  CUDA_CHECK_NOTHROW(cudaProfilerStop());
}

TimingOptions Context::timing_options() const {
  TimingOptions o;
  o.flush_l2 = opts_.cold.value_or(demo_.cold_by_default);
  o.warmup_ms = demo_.warmup_ms;
  if (opts_.quick) {
    o.reps = 3;
    o.warmup_ms = 2.0;
    o.min_sample_ms = 0.05;
  }
  if (opts_.profile) {
    // One timed pass per variant for Nsight Compute; the verification launch precedes it.
    o.reps = 1;
    o.warmup_ms = 0.0;
    o.min_warmup_launches = 0;
    o.max_batch = 1;
    o.flush_l2 = false;
  }
  if (opts_.reps) o.reps = *opts_.reps;
  if (opts_.warmup_ms) o.warmup_ms = *opts_.warmup_ms;
  return o;
}

bool Context::check(const VerifyResult& r, const std::string& what) {
  if (r.ok()) return true;
  failed_ = true;
  fmt::print(stderr, "VERIFICATION FAILED: {} / {}: {} of {} elements differ\n", variant_, what, r.mismatches,
             r.checked);
  for (const auto& m : r.first) fmt::print(stderr, "  {}\n", m);
  return false;
}

Row& Context::measure(const std::string& params, std::uint64_t size, double bytes,
                      const std::function<void(cudaStream_t)>& launch, const std::function<VerifyResult()>& verify,
                      const std::function<void(cudaStream_t)>& prepare) {
  return measure(params, size, bytes, launch, verify, prepare, timing_options());
}

Row& Context::measure(const std::string& params, std::uint64_t size, double bytes,
                      const std::function<void(cudaStream_t)>& launch, const std::function<VerifyResult()>& verify,
                      const std::function<void(cudaStream_t)>& prepare, const TimingOptions& options) {
  if (prepare) prepare(stream_.get());
  launch(stream_.get());
  CUDA_CHECK_LAUNCH();
  stream_.synchronize();
  const bool ok = check(verify(), params.empty() ? variant_ : params);
  if (!ok) return add_row(params, size, false);
  set_profile_label(params);
  const Timing t = time(launch, options);
  Row& row = add_timed_row(params, size, bytes, t, true);
  return row;
}

Row& Context::add_timed_row(const std::string& params, std::uint64_t size, double bytes, const Timing& t,
                            bool verified) {
  Row r;
  r.demo = demo_.name;
  r.variant = variant_;
  r.params = params;
  r.size = size;
  r.bytes = bytes;
  r.median_ms = t.stats.median;
  r.min_ms = t.stats.min;
  r.max_ms = t.stats.max;
  r.spread_pct = t.stats.spread_pct;
  r.reps = t.reps;
  r.batch = t.batch;
  r.cache = t.cold ? "cold" : "warm";
  r.verified = verified;
  if (bytes > 0) {
    r.gb_per_s = gb_per_s(bytes, t.stats.median);
    r.pct_peak = percent_of(r.gb_per_s, device_.peak_gb_per_s);
  }
  // A variant may time baselines between its rows, so the k-th profiled range need not be its k-th row:
  // the row names its range, and scripts/profile_table.py joins on that.
  if (!t.profile_range.empty()) r.set("profile_range", t.profile_range);
  rows_.push_back(std::move(r));
  return rows_.back();
}

Row& Context::add_row(const std::string& params, std::uint64_t size, bool verified) {
  Row r;
  r.demo = demo_.name;
  r.variant = variant_;
  r.params = params;
  r.size = size;
  r.verified = verified;
  rows_.push_back(std::move(r));
  return rows_.back();
}

void Context::note(const std::string& text) { fmt::print(human_, "{}\n", text); }

const CopyCeiling& Context::copy_ceiling(std::uint64_t bytes_per_buffer) {
  if (ceiling_) return *ceiling_;
  // Its buffers must be counted in the run's memory (run_memory), as --plan-sizes and the size check count them.
  if (demo_.device_bytes && !demo_.device_bytes(size_).measures_ceiling)
    throw std::logic_error(demo_.name + " measures the copy ceiling, but its device_bytes does not say so");
  if (bytes_per_buffer == 0) bytes_per_buffer = default_copy_ceiling_bytes(device_, opts_.quick);
  const std::size_t n = bytes_per_buffer / sizeof(float);
  DeviceBuffer<float> a(n), b(n);
  // Random data, like every benchmark's: a ceiling measured on data a compressor could use would flatter
  // itself wherever memory compresses (02_global_memory's compressible_memory shows how much).
  launch_random_fill(a.data(), n, stream_.get());
  TimingOptions o = with_first_warmup(timing_options());
  o.flush_l2 = true;
  auto c = std::make_unique<CopyCeiling>();
  // The ceiling is measured with the plain timer: in --profile mode it is not part of the profile.
  c->bytes = 2 * n * sizeof(float);
  const Timing tm = timer_.time(
      [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), n * sizeof(float), cudaMemcpyDeviceToDevice, s));
      },
      o);
  const Timing tk = timer_.time([&](cudaStream_t s) { launch_copy_vec4(a.data(), b.data(), n, s); }, o);
  c->memcpy_gb_per_s = gb_per_s(static_cast<double>(c->bytes), tm.stats.median);
  c->kernel_gb_per_s = gb_per_s(static_cast<double>(c->bytes), tk.stats.median);
  note(fmt::format("copy ceiling measured in this run ({} per buffer): cudaMemcpy D2D {:.0f} GB/s, "
                   "copy kernel {:.0f} GB/s",
                   format_bytes(static_cast<double>(bytes_per_buffer)), c->memcpy_gb_per_s, c->kernel_gb_per_s));
  ceiling_ = std::move(c);
  return *ceiling_;
}

RunMemory run_memory(const Demo& demo, std::uint64_t size, const DeviceInfo& dev, bool quick) {
  RunMemory m;
  m.flush = static_cast<double>(L2Flusher::buffer_bytes(dev.l2_bytes));
  if (!demo.device_bytes) return m;
  const DemoMemory d = demo.device_bytes(size);
  m.own = d.own;
  if (d.measures_ceiling)
    m.ceiling = 2.0 * (d.ceiling_buffer > 0.0 ? d.ceiling_buffer
                                              : static_cast<double>(default_copy_ceiling_bytes(dev, quick)));
  return m;
}

void announce_expected_api_error(const std::string& what, int failing_calls) {
  fmt::print(stderr, "expected CUDA API errors (deliberate): {} failing call(s): {}\n", failing_calls, what);
  std::fflush(stderr);
}

namespace {
// The smallest kernel there is: whether the runtime can load it says whether this binary has code for
// the device (SASS of a compatible architecture, or PTX it can compile).
__global__ void code_probe_kernel() {}
}  // namespace

const char* built_architectures() {
#ifdef CML_BUILT_ARCHS
  return CML_BUILT_ARCHS;
#else
  return "unknown";
#endif
}

void require_free_device_memory(double need_bytes, const std::string& what) {
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (need_bytes > 0.9 * static_cast<double>(free_b))
    throw CliError(fmt::format("{} need {} of device memory, {} is free", what, format_bytes(need_bytes),
                               format_bytes(static_cast<double>(free_b))));
}

std::string missing_code_reason() {
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, code_probe_kernel);
  if (err == cudaSuccess) return "";
  (void)cudaGetLastError();
  const auto [major, minor] = current_compute_capability();
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction ||
      err == cudaErrorUnsupportedPtxVersion)
    return fmt::format(
        "this binary has no code for the GPU it found (sm_{}{}; built for: {}); reconfigure with "
        "-DCMAKE_CUDA_ARCHITECTURES={}{} (or native) and rebuild",
        major, minor, built_architectures(), major, minor);
  return fmt::format("cannot load a kernel on sm_{}{}: {} ({})", major, minor, cudaGetErrorName(err),
                     cudaGetErrorString(err));
}

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (why) *why = fmt::format("{} ({})", cudaGetErrorName(err), cudaGetErrorString(err));
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device";
    return false;
  }
  if (const std::string missing = missing_code_reason(); !missing.empty()) {
    if (why) *why = missing;
    return false;
  }
  return true;
}

std::map<std::string, double> device_facts(const DeviceInfo& d) {
  return {{"cc", d.cc_major + d.cc_minor / 10.0},
          {"sm_count", static_cast<double>(d.sm_count)},
          {"total_memory_bytes", static_cast<double>(d.total_memory)},
          {"l2_bytes", static_cast<double>(d.l2_bytes)},
          {"persisting_l2_max_bytes", static_cast<double>(d.persisting_l2_max)},
          {"peak_gb_per_s", d.peak_gb_per_s}};
}

namespace {

CliSpec make_spec(const Demo& demo) {
  CliSpec spec;
  spec.program = demo.name;
  spec.summary = demo.summary;
  spec.size_meaning = demo.size_meaning;
  for (const auto& v : demo.variants) spec.variants.push_back(v.name);
  spec.extras = demo.extras;
  for (const auto& c : demo.claims) spec.claims.push_back(c.name);
  spec.claims_help = claims_help(demo.claims);
  return spec;
}

std::vector<Claim> selected_claims(const Demo& demo, const Options& opts) {
  if (opts.claims.empty()) return demo.claims;
  std::vector<Claim> out;
  for (const auto& c : demo.claims)
    if (std::find(opts.claims.begin(), opts.claims.end(), c.name) != opts.claims.end()) out.push_back(c);
  return out;
}

std::vector<std::string> variant_names(const Demo& demo) {
  std::vector<std::string> out;
  for (const auto& v : demo.variants) out.push_back(v.name);
  return out;
}

// Prints the claim results, writes --claims-csv, and returns the exit code the claims ask for (0 or 1).
int report_claims(const Demo& demo, const Options& opts, const std::vector<ClaimResult>& results,
                  const std::string& device_name, std::FILE* human) {
  print_claim_results(results, human);
  if (!opts.claims_csv_path.empty())
    write_file_atomically(opts.claims_csv_path, claims_to_csv(results, demo.name, device_name));
  const ClaimTally t = tally(results);
  if (t.errors > 0) {
    // A claim that cannot find the rows it reads is a defect of the demo, whatever the GPU.
    for (const auto& r : results)
      if (r.status == ClaimStatus::error) fmt::print(stderr, "{}: error: {}\n", demo.name, r.detail);
    return kExitFailure;
  }
  if (opts.strict && t.device_held < t.device_judged) {
    fmt::print(stderr, "{}: --strict: {} device-side claim(s) not held\n", demo.name, t.device_judged - t.device_held);
    return kExitFailure;
  }
  return kExitOk;
}

// --plan-sizes: what a run at the demo's defaults would allocate on each published card, counted as the size
// check counts it (run_memory: the demo's buffers, the copy ceiling's, the L2 flush buffer); exit 1 if one
// does not fit in 90% of the card's memory: the rest belongs to the driver and the CUDA context.
int plan_sizes(const Demo& demo) {
  fmt::print("{:<12} {:>14} {:>12} {:>12} {:>7}  {}\n", "card", "default size", "device MB", "memory MB", "share",
             "fits");
  bool all_fit = true;
  for (const DeviceInfo& card : published_cards()) {
    const std::uint64_t size = demo.default_size ? demo.default_size(card) : demo.quick_size;
    const double need = run_memory(demo, size, card, false).total();
    const double mem = static_cast<double>(card.total_memory);
    const bool fits = need <= 0.9 * mem;
    all_fit = all_fit && fits;
    fmt::print("{:<12} {:>14} {:>12.0f} {:>12.0f} {:>6.1f}%  {}\n", card.name, size, need / 1e6, mem / 1e6,
               100.0 * need / mem, fits ? "yes" : "NO");
  }
  return all_fit ? kExitOk : kExitFailure;
}

// --claims-eval FILE: the claims judged on rows saved with --csv (and its JSON's device facts, if beside it).
int evaluate_offline(const Demo& demo, const Options& opts) {
  std::vector<Row> rows;
  std::string device_name;  // as the rows name it, so the claims CSV says whose data it judged
  try {
    rows = read_rows_csv(opts.claims_eval_path, &device_name);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: --claims-eval: {}\n", demo.name, e.what());
    return kExitUsage;
  }
  std::vector<Row> mine;
  for (auto& r : rows) {
    if (r.demo != demo.name) {
      fmt::print(stderr, "{}: error: --claims-eval: {} holds rows of demo '{}', not '{}'\n", demo.name,
                 opts.claims_eval_path, r.demo, demo.name);
      return kExitUsage;
    }
    mine.push_back(std::move(r));
  }
  // A variant with no rows in the file was not part of that run (waived, or left out with --variant).
  std::vector<std::string> selected;
  for (const auto& v : demo.variants)
    if (std::any_of(mine.begin(), mine.end(), [&](const Row& r) { return r.variant == v.name; }))
      selected.push_back(v.name);
  if (selected.empty()) selected.push_back("(none)");
  std::string json = opts.claims_eval_path;
  if (json.size() > 4 && json.compare(json.size() - 4, 4, ".csv") == 0) json.replace(json.size() - 4, 4, ".json");
  // The run's own JSON says whether it was a --quick, --profile or partial run: judged as that run was.
  const RunMode mode = read_run_mode_json(json);
  RunRows run(std::move(mine), variant_names(demo), {}, selected, mode.complete);
  for (const auto& [k, v] : read_device_facts_json(json)) run.set_fact(k, v);
  std::FILE* human = opts.claims_csv_path == "-" ? stderr : stdout;  // stdout carries the claims CSV then
  fmt::print(human, "{}: claims judged on {}\n", demo.name, opts.claims_eval_path);
  if (!mode.recorded)
    fmt::print(human, "{}: no run record in {}: judged as a full run at the demo's defaults\n", demo.name, json);
  return report_claims(demo, opts, evaluate_claims(selected_claims(demo, opts), run, mode.not_judged), device_name,
                       human);
}

int run(const Demo& demo, int argc, char** argv) {
  const CliSpec spec = make_spec(demo);
  Options opts;
  try {
    opts = parse_cli(spec, std::vector<std::string>(argv + 1, argv + argc));
    check_writable(opts.csv_path);
    check_writable(opts.json_path);
    check_writable(opts.claims_csv_path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {} (try --help)\n", demo.name, e.what());
    return kExitUsage;
  }
  if (const std::string bad = validate_claims(demo.claims); !bad.empty()) {
    fmt::print(stderr, "{}: error: the demo's claim table is invalid: {}\n", demo.name, bad);
    return kExitFailure;
  }
  if (opts.help) {
    fmt::print("{}", usage(spec));
    return kExitOk;
  }
  if (opts.list) {
    for (const auto& v : demo.variants) fmt::print("{:<28} {}\n", v.name, v.description);
    return kExitOk;
  }
  if (opts.claims_list) {
    print_claim_list(selected_claims(demo, opts), stdout);
    return kExitOk;
  }
  if (!opts.claims_eval_path.empty()) return evaluate_offline(demo, opts);
  if (opts.plan_sizes) return plan_sizes(demo);

  std::string why;
  const std::vector<Claim> claims = selected_claims(demo, opts);
  {
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
      // A GPU is there but this build cannot run on it: an error to fix, not a feature to waive.
      CUDA_CHECK(cudaSetDevice(opts.device < n ? opts.device : 0));
      if (const std::string missing = missing_code_reason(); !missing.empty()) {
        fmt::print(stderr, "{}: error: {}\n", demo.name, missing);
        return kExitFailure;
      }
    }
    (void)cudaGetLastError();
  }
  auto waive_all = [&](const std::string& reason, const std::string& device_name) {
    fmt::print(stderr, "{}: waived: {}\n", demo.name, reason);
    if (!opts.claims_csv_path.empty())
      write_file_atomically(opts.claims_csv_path,
                            claims_to_csv(claims_not_applicable(claims, "demo waived: " + reason), demo.name,
                                          device_name));
    return kExitWaived;
  };
  if (!gpu_available(&why)) return waive_all("no usable CUDA GPU: " + why, "");
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (opts.device >= count) {
    fmt::print(stderr, "{}: error: --device {} but only {} device(s) present (try --help)\n", demo.name, opts.device,
               count);
    return kExitUsage;
  }
  CUDA_CHECK(cudaSetDevice(opts.device));
  const DeviceInfo device = query_device(opts.device);
  if (demo.waive_reason) {
    const std::string reason = demo.waive_reason(device);
    if (!reason.empty()) return waive_all(reason, device.name);
  }

  if (demo.max_size && opts.size) {
    const std::uint64_t limit = demo.max_size(device);
    if (*opts.size > limit) {
      fmt::print(stderr, "{}: error: --size {} is above this demo's limit of {} ({}) (try --help)\n", demo.name,
                 *opts.size, limit, demo.max_size_reason);
      return kExitUsage;
    }
  }
  Context ctx(demo, spec, opts, device);
  if (demo.device_bytes) {
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    // The harness's flush buffer is allocated by now: what is free must hold the rest.
    const RunMemory m = run_memory(demo, ctx.size(), device, opts.quick);
    const double need = m.own + m.ceiling;
    if (need > static_cast<double>(free_b)) {
      fmt::print(stderr, "{}: error: --size {} needs {} of device memory but only {} is free (try --help)\n",
                 demo.name, ctx.size(), format_bytes(need), format_bytes(static_cast<double>(free_b)));
      return kExitUsage;
    }
  }

  if (demo.check_options) demo.check_options(ctx);

  print_device_header(device, ctx.human());
  fmt::print(ctx.human(), "demo {}: size {} ({}), timing {}, {} samples\n\n", demo.name, ctx.size(),
             demo.size_meaning, ctx.timing_options().flush_l2 ? "cold (L2 flushed before each sample)" : "warm",
             ctx.timing_options().reps);

  std::map<std::string, std::string> waived;
  int ran = 0;
  int to_run = 0, k = 0;
  for (const auto& v : demo.variants)
    to_run += opts.variants.empty() || std::find(opts.variants.begin(), opts.variants.end(), v.name) != opts.variants.end();
  const auto t_start = std::chrono::steady_clock::now();
  for (const auto& v : demo.variants) {
    if (!opts.variants.empty() && std::find(opts.variants.begin(), opts.variants.end(), v.name) == opts.variants.end())
      continue;
    // Progress on stderr, so a long sweep is never silent and the table on stdout stays clean.
    fmt::print(stderr, "[{}/{}] {} ({:.1f} s so far)\n", ++k, to_run, v.name,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
    std::fflush(stderr);
    ctx.set_variant(v.name);
    try {
      v.run(ctx);
      ++ran;
    } catch (const Waived& w) {
      fmt::print(ctx.human(), "variant {} waived: {}\n", v.name, w.what());
      waived[v.name] = w.what();
    }
  }

  fmt::print(ctx.human(), "\n");
  print_table(ctx.rows(), ctx.human());

  // The claims, judged on this run's rows. A run with the demo's default sweep must contain every row a
  // claim reads; --variant, a demo option or --quick may leave rows out (then the claim is not applicable).
  // An option that only names an output file (stream_overlap's --timeline) leaves the sweep as it is.
  const bool sweep_options = std::any_of(opts.extras.begin(), opts.extras.end(), [&](const auto& given) {
    return std::none_of(demo.extras.begin(), demo.extras.end(),
                        [&](const ExtraOption& e) { return e.name == given.first && e.output_only; });
  });
  const bool complete = opts.variants.empty() && !sweep_options && !opts.quick && !opts.profile;
  RunRows run_rows(ctx.rows(), variant_names(demo), waived, opts.variants, complete);
  for (const auto& [k, v] : device_facts(device)) run_rows.set_fact(k, v);
  std::string not_judged;
  if (opts.quick) not_judged = "--quick run: sizes and samples too small to judge";
  if (opts.profile) not_judged = "--profile run: one sample per point, no warm-up";
  if (ctx.failed()) not_judged = "verification failed: no timing to judge";
  const std::vector<ClaimResult> results = evaluate_claims(claims, run_rows, not_judged);

  std::vector<std::string> json_members;
  {
    std::string w = "\"waived\": {";
    bool first = true;
    for (const auto& [k, v] : waived) {
      w += fmt::format("{}{}: {}", first ? "" : ", ", json_quote(k), json_quote(v));
      first = false;
    }
    json_members.push_back(w + "}");
  }
  json_members.push_back("\"claims\": " + claims_to_json(results));
  json_members.push_back(run_mode_json(RunMode{complete, not_judged}));  // so that --claims-eval judges alike
  if (!opts.csv_path.empty()) write_file_atomically(opts.csv_path, to_csv(ctx.rows(), device.name));
  if (!opts.json_path.empty())
    write_file_atomically(opts.json_path, to_json(ctx.rows(), &device, demo.name, json_members));
  const int claims_rc = report_claims(demo, opts, results, device.name, ctx.human());
  if (ctx.failed()) {
    fmt::print(stderr, "{}: verification failed\n", demo.name);
    return kExitFailure;
  }
  if (claims_rc != kExitOk) return claims_rc;
  if (ran == 0 && !waived.empty()) return kExitWaived;
  return kExitOk;
}

}  // namespace

int run_demo(const Demo& demo, int argc, char** argv) {
  try {
    return run(demo, argc, argv);
  } catch (const CliError& e) {
    fmt::print(stderr, "{}: error: {} (try --help)\n", demo.name, e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", demo.name, e.what());
    return kExitFailure;
  }
}

}  // namespace cml
