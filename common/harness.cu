#include "common/harness.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include <fmt/format.h>

#include "common/copy_kernels.cuh"

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
  if (opts.csv_path == "-" || opts.json_path == "-") human_ = stderr;
}

Context::~Context() = default;

Context::ProfileRange::ProfileRange(Context& c) {
  const std::string name = fmt::format("{}#{}|{}", c.variant_, c.profile_seq_++, c.profile_label_);
  c.profile_label_.clear();
  CUDA_CHECK(cudaProfilerStart());
  nvtxRangePushA(name.c_str());
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
  if (bytes_per_buffer == 0) bytes_per_buffer = opts_.quick ? (std::uint64_t{16} << 20) : 8 * device_.l2_bytes;
  const std::size_t n = bytes_per_buffer / sizeof(float);
  DeviceBuffer<float> a(n), b(n);
  a.fill_bytes(0x3c, stream_.get());
  TimingOptions o = timing_options();
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

void announce_expected_api_error(const std::string& what, int failing_calls) {
  fmt::print(stderr, "expected CUDA API errors (deliberate): {} failing call(s): {}\n", failing_calls, what);
  std::fflush(stderr);
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
  return true;
}

namespace {

CliSpec make_spec(const Demo& demo) {
  CliSpec spec;
  spec.program = demo.name;
  spec.summary = demo.summary;
  spec.size_meaning = demo.size_meaning;
  for (const auto& v : demo.variants) spec.variants.push_back(v.name);
  spec.extras = demo.extras;
  return spec;
}

int run(const Demo& demo, int argc, char** argv) {
  const CliSpec spec = make_spec(demo);
  Options opts;
  try {
    opts = parse_cli(spec, std::vector<std::string>(argv + 1, argv + argc));
    check_writable(opts.csv_path);
    check_writable(opts.json_path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {} (try --help)\n", demo.name, e.what());
    return kExitUsage;
  }
  if (opts.help) {
    fmt::print("{}", usage(spec));
    return kExitOk;
  }
  if (opts.list) {
    for (const auto& v : demo.variants) fmt::print("{:<28} {}\n", v.name, v.description);
    return kExitOk;
  }

  std::string why;
  if (!gpu_available(&why)) {
    fmt::print(stderr, "{}: waived: no usable CUDA GPU: {}\n", demo.name, why);
    return kExitWaived;
  }
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
    if (!reason.empty()) {
      fmt::print(stderr, "{}: waived: {}\n", demo.name, reason);
      return kExitWaived;
    }
  }

  Context ctx(demo, spec, opts, device);
  if (demo.device_bytes) {
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double need = demo.device_bytes(ctx.size());
    if (need > static_cast<double>(free_b)) {
      fmt::print(stderr, "{}: error: --size {} needs {} of device memory but only {} is free (try --help)\n",
                 demo.name, ctx.size(), format_bytes(need), format_bytes(static_cast<double>(free_b)));
      return kExitUsage;
    }
  }

  print_device_header(device, ctx.human());
  fmt::print(ctx.human(), "demo {}: size {} ({}), timing {}, {} samples\n\n", demo.name, ctx.size(),
             demo.size_meaning, ctx.timing_options().flush_l2 ? "cold (L2 flushed before each sample)" : "warm",
             ctx.timing_options().reps);

  std::vector<std::string> waived;
  int ran = 0;
  for (const auto& v : demo.variants) {
    if (!opts.variants.empty() && std::find(opts.variants.begin(), opts.variants.end(), v.name) == opts.variants.end())
      continue;
    ctx.set_variant(v.name);
    try {
      v.run(ctx);
      ++ran;
    } catch (const Waived& w) {
      fmt::print(ctx.human(), "variant {} waived: {}\n", v.name, w.what());
      waived.push_back(v.name);
    }
  }

  fmt::print(ctx.human(), "\n");
  print_table(ctx.rows(), ctx.human());
  if (!opts.csv_path.empty()) write_file_atomically(opts.csv_path, to_csv(ctx.rows(), device.name));
  if (!opts.json_path.empty()) write_file_atomically(opts.json_path, to_json(ctx.rows(), &device, demo.name));
  if (ctx.failed()) {
    fmt::print(stderr, "{}: verification failed\n", demo.name);
    return kExitFailure;
  }
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
