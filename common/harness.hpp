// The demo harness: a demo is a table of variants; run_demo() turns it into a program with the shared
// CLI, the device header, verification before timing, the timing loop, the table and the CSV/JSON rows.
//
//   int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
//
// Inside a variant, Context::measure() is the usual path: it poisons the outputs, launches once,
// verifies against the reference, and only then times the launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "common/bandwidth.hpp"
#include "common/claims.hpp"
#include "common/cli.hpp"
#include "common/cuda_check.hpp"
#include "common/device_info.hpp"
#include "common/output.hpp"
#include "common/resources.hpp"
#include "common/timer.hpp"
#include "common/verify.hpp"

namespace cml {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitWaived = 77;

// Thrown by a variant (or a demo's waive check) when this GPU lacks what it needs.
class Waived : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Context;

// What a demo allocates on the device at one --size (Demo::device_bytes): its own buffers at their peak, and
// whether it measures the copy ceiling (Context::copy_ceiling), whose two buffers the harness counts. A plain
// number is a demo that measures no ceiling. Nothing of the harness's own belongs here: run_memory adds the
// L2 flush buffer the harness holds for every run.
struct DemoMemory {
  DemoMemory(double own_bytes = 0.0) : own(own_bytes) {}  // implicit: a plain number measures no ceiling
  // The demo measures the copy ceiling at `bytes_per_buffer` (e.g. as large as its own buffers).
  static DemoMemory with_ceiling(double own_bytes, double bytes_per_buffer) {
    DemoMemory m(own_bytes);
    m.measures_ceiling = true;
    m.ceiling_buffer = bytes_per_buffer;
    return m;
  }
  // The demo measures the copy ceiling at the harness's default buffers (default_copy_ceiling_bytes).
  static DemoMemory with_default_ceiling(double own_bytes) { return with_ceiling(own_bytes, 0.0); }

  double own = 0.0;
  bool measures_ceiling = false;
  double ceiling_buffer = 0.0;  // bytes per buffer; 0: the default
};

struct Variant {
  std::string name;         // stable snake_case: CLI, CSV rows and test names
  std::string description;  // one line for --list
  std::function<void(Context&)> run;
};

struct Demo {
  std::string name;
  std::string summary;  // what it shows and the expected observation (shown by --help)
  std::string size_meaning = "elements per buffer";
  std::vector<Variant> variants;
  // Default problem size for this device (working sets >= 8x L2 unless the demo is about caches).
  std::function<std::uint64_t(const DeviceInfo&)> default_size;
  std::uint64_t quick_size = 1 << 20;
  // What the demo allocates at `size` (DemoMemory). With the harness's own buffers (run_memory), a size whose
  // run cannot fit is rejected (exit 2) before allocating, and --plan-sizes shows the same total per card.
  // It may throw a CliError for a --size the demo cannot take.
  std::function<DemoMemory(std::uint64_t size)> device_bytes;
  // The largest --size that finishes in reasonable time on this device, and why (empty: no limit). A
  // larger size is refused up front (exit 2) with this limit.
  std::function<std::uint64_t(const DeviceInfo&)> max_size;
  std::string max_size_reason;
  std::vector<ExtraOption> extras;
  // Checks the demo's own options, alone and with --size, on this device, before the run prints or
  // allocates anything: a CliError thrown here is the run's one-line usage error (exit 2). The variants
  // read their options through the same functions, so each rule is written once.
  std::function<void(Context&)> check_options;
  bool cold_by_default = true;
  // Time-based warm-up before each measurement (--warmup-ms overrides). The first measurement of the
  // process always warms up for at least kFirstWarmupMs so the clocks have ramped from idle.
  double warmup_ms = 100.0;
  // Returns a reason to waive the whole demo on this device (exit 77), or "" to run.
  std::function<std::string(const DeviceInfo&)> waive_reason;
  // What the reader should see, judged on the rows of every run (common/claims.hpp).
  std::vector<Claim> claims;
};

// The device facts a claim may use (RunRows::fact), under the names the run's JSON gives them.
std::map<std::string, double> device_facts(const DeviceInfo& d);

struct CopyCeiling {
  double memcpy_gb_per_s = 0.0;  // cudaMemcpyAsync device-to-device
  double kernel_gb_per_s = 0.0;  // the suite's best copy kernel
  std::uint64_t bytes = 0;       // bytes moved per copy (read + written)
  // The stricter of the two: what "the copy ceiling" means in every vs_ceiling column.
  double best() const { return memcpy_gb_per_s > kernel_gb_per_s ? memcpy_gb_per_s : kernel_gb_per_s; }
};

inline constexpr double kFirstWarmupMs = 300.0;

// The copy ceiling's bytes per buffer when a demo asks for none in particular: 8x L2, 16 MiB under --quick.
inline std::uint64_t default_copy_ceiling_bytes(const DeviceInfo& dev, bool quick) {
  return quick ? std::uint64_t{16} << 20 : 8 * static_cast<std::uint64_t>(dev.l2_bytes);
}

// The device memory of one run at `size` on `dev`, counted once: the demo's own buffers, the copy ceiling's
// two buffers for a demo that measures it, and the L2 flush buffer the harness holds for the whole run.
struct RunMemory {
  double own = 0.0;
  double ceiling = 0.0;
  double flush = 0.0;
  double total() const { return own + ceiling + flush; }
};
RunMemory run_memory(const Demo& demo, std::uint64_t size, const DeviceInfo& dev, bool quick);

// What a demo keeps for the length of one run (its buffers, host references, baselines measured once),
// one object per type: get<T>(args...) makes T(args...) on its first call, and every later call returns
// that object (its arguments then unused). The objects die with the RunState, the last made first, so
// nothing of one run outlives it or leaks into the next run in the same process.
class RunState {
 public:
  RunState() = default;
  ~RunState() { clear(); }
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  template <class T, class... A>
  T& get(A&&... args) {
    const std::type_index key(typeid(T));
    for (const Slot& s : slots_)
      if (s.key == key) return *static_cast<T*>(s.object.get());
    // Made before its slot exists: a constructor that throws leaves nothing behind, and one that makes
    // other state first is destroyed before that state.
    auto object = std::make_unique<T>(std::forward<A>(args)...);
    T& made = *object;
    slots_.push_back(Slot{key, Object(object.release(), [](void* p) { delete static_cast<T*>(p); })});
    return made;
  }
  void clear() {
    while (!slots_.empty()) slots_.pop_back();
  }

 private:
  using Object = std::unique_ptr<void, void (*)(void*)>;
  struct Slot {
    std::type_index key;
    Object object;
  };
  std::vector<Slot> slots_;
};

class Context {
 public:
  Context(const Demo& demo, const CliSpec& spec, const Options& opts, const DeviceInfo& device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Options& options() const { return opts_; }
  const DeviceInfo& device() const { return device_; }
  cudaStream_t stream() const { return stream_.get(); }
  std::uint64_t size() const { return size_; }
  bool quick() const { return opts_.quick; }
  bool profiling() const { return opts_.profile; }
  const std::string& variant() const { return variant_; }
  std::uint64_t extra_size(const std::string& name) const { return opts_.extra_size(spec_, name); }
  std::string extra_text(const std::string& name) const { return opts_.extra_text(spec_, name); }
  bool extra_given(const std::string& name) const { return opts_.extras.count(name) != 0; }
  // The same, except that under --quick an option the user did not give is `quick_value`.
  std::uint64_t extra_size(const std::string& name, std::uint64_t quick_value) const {
    return quick() && !extra_given(name) ? quick_value : extra_size(name);
  }

  // Timing options from the command line and the demo's defaults.
  TimingOptions timing_options() const;
  template <class Launch>
  Timing time(Launch&& launch) {
    return time(std::forward<Launch>(launch), timing_options());
  }
  template <class Launch>
  Timing time(Launch&& launch, TimingOptions o) {
    o = with_first_warmup(o);
    if (!opts_.profile) return timer_.time(std::forward<Launch>(launch), o);
    // --profile: the single timed launch is the only profiled work (see scripts/profile.sh).
    ProfileRange range(*this);
    Timing t = timer_.time(std::forward<Launch>(launch), o);
    t.profile_range = range.name();
    return t;
  }
  // Names the next profiled launch "variant#k|label" (default label: none; measure() uses the row's params).
  void set_profile_label(const std::string& label) { profile_label_ = label; }
  L2Flusher& flusher() { return *flusher_; }

  // The demo's T for this run (see RunState): made as T(args...) on first use, destroyed with the run.
  template <class T, class... A>
  T& state(A&&... args) {
    return state_.get<T>(std::forward<A>(args)...);
  }

  // Records a verification result; prints the first mismatches on failure. Returns r.ok().
  bool check(const VerifyResult& r, const std::string& what);

  // Poison (prepare) -> one launch -> verify -> time. `bytes` = bytes read + written by one launch.
  // The row is added (verified = false and untimed if verification failed) and returned for extra columns.
  Row& measure(const std::string& params, std::uint64_t size, double bytes,
               const std::function<void(cudaStream_t)>& launch, const std::function<VerifyResult()>& verify,
               const std::function<void(cudaStream_t)>& prepare = {});
  // The same with explicit timing options (e.g. a row that must be warm or cold whatever --cold says).
  Row& measure(const std::string& params, std::uint64_t size, double bytes,
               const std::function<void(cudaStream_t)>& launch, const std::function<VerifyResult()>& verify,
               const std::function<void(cudaStream_t)>& prepare, const TimingOptions& options);

  // Adds a row for the current variant from a Timing (fills ms, GB/s, % of peak).
  Row& add_timed_row(const std::string& params, std::uint64_t size, double bytes, const Timing& t, bool verified);
  // Adds a row with no timing (facts, verified values).
  Row& add_row(const std::string& params, std::uint64_t size, bool verified);

  // Prints an explanatory line with the human-readable output (not in CSV/JSON).
  void note(const std::string& text);

  // cudaMemcpy D2D and the suite's copy kernel, measured once in this run, at `bytes_per_buffer` (default:
  // default_copy_ceiling_bytes). Only a demo whose device_bytes says it measures the ceiling may ask.
  const CopyCeiling& copy_ceiling(std::uint64_t bytes_per_buffer = 0);

  // Used by run_demo.
  void set_variant(const std::string& v) { variant_ = v; }
  std::vector<Row>& rows() { return rows_; }
  bool failed() const { return failed_; }
  std::FILE* human() const { return human_; }

 private:
  // cudaProfilerStart + an NVTX range "variant#k|label" around one timed measurement in --profile mode.
  class ProfileRange {
   public:
    explicit ProfileRange(Context& c);
    ~ProfileRange();
    ProfileRange(const ProfileRange&) = delete;
    ProfileRange& operator=(const ProfileRange&) = delete;
    const std::string& name() const { return name_; }

   private:
    std::string name_;
  };
  int profile_seq_ = 0;
  std::string profile_label_;

  // The process's first measurement, whichever it is (a variant or the copy ceiling), warms up for at least
  // kFirstWarmupMs: the clocks ramp slowly from idle, and a short warm-up would time them ramping.
  TimingOptions with_first_warmup(TimingOptions o) {
    if (first_timing_ && !opts_.profile && !opts_.quick && !opts_.warmup_ms)
      o.warmup_ms = o.warmup_ms > kFirstWarmupMs ? o.warmup_ms : kFirstWarmupMs;
    first_timing_ = false;
    return o;
  }

  const Demo& demo_;
  const CliSpec& spec_;
  const Options& opts_;
  const DeviceInfo& device_;
  Stream stream_;
  std::unique_ptr<L2Flusher> flusher_;
  GpuTimer timer_;
  std::uint64_t size_ = 0;
  std::string variant_;
  std::vector<Row> rows_;
  bool failed_ = false;
  bool first_timing_ = true;
  std::FILE* human_ = stdout;
  std::unique_ptr<CopyCeiling> ceiling_;
  RunState state_;  // last, so destroyed first: a demo's state may hold work on stream_
};

// For a demo's check_options: throws a CliError (the run's one-line usage error) unless `need_bytes` fit in
// 90% of the device memory free now; the rest is left to allocation rounding and the driver. `what` names
// what needs them, e.g. "--size 1G with --width 7".
void require_free_device_memory(double need_bytes, const std::string& what);

// Returns the process exit code: 0 ok, 1 verification/CUDA failure (or, with --strict, a device-side
// claim not held; or a claim that cannot find its rows), 2 bad command line, 77 waived.
int run_demo(const Demo& demo, int argc, char** argv);

// A demo about to make a CUDA call that fails on purpose (to show what the runtime answers) announces it
// first, with the number of API calls that will return the error (typically 2: the failing call and the
// cudaGetLastError that reads the error back). compute-sanitizer reports every failed API call;
// scripts/sanitize.sh counts a run clean only when it has no memory errors and exactly the announced
// number of API errors.
void announce_expected_api_error(const std::string& what, int failing_calls);

// True when a CUDA device is usable (for tests: GTEST_SKIP otherwise). `why` gets the reason if not,
// including a binary built without code for the GPU it finds (see missing_code_reason).
bool gpu_available(std::string* why = nullptr);

// "" when this binary carries code the current device can run; otherwise one line naming the device's
// architecture, the architectures built, and the CMake flag that fixes it.
std::string missing_code_reason();
// The CUDA architectures this build was configured with (CMAKE_CUDA_ARCHITECTURES).
const char* built_architectures();

}  // namespace cml
