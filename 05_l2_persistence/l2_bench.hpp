// What the timed demos of this chapter share: the waiver, the guarded set-aside, the timing of one launch with
// the persisting lines reset before every sample, and the sliding-window buffers with their verification.
#pragma once

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "05_l2_persistence/kernels/sliding_window.cuh"
#include "05_l2_persistence/l2_plan.hpp"
#include "05_l2_persistence/persisting_l2.hpp"
#include "common/harness.hpp"
#include "common/stats.hpp"

namespace cml::ch05 {

// The access-policy window exists from compute capability 8.0; persistingL2CacheMaxSize is 0 where the
// set-aside is unavailable (older GPUs, MIG instances).
inline std::string persistence_waive_reason(const DeviceInfo& d) {
  if (d.cc_major < 8)
    return fmt::format("L2 persistence needs compute capability 8.0 or newer (this GPU is {}.{})", d.cc_major,
                       d.cc_minor);
  if (d.persisting_l2_max == 0) return "persistingL2CacheMaxSize is 0: no L2 set-aside on this GPU (MIG instance?)";
  return "";
}

// Sets the set-aside through a guard, or waives the variant when the driver refuses or ignores it. A request of
// 0 (no set-aside at all) is always granted: it is what a program that never asks for persistence runs with,
// give or take the driver's default.
inline std::unique_ptr<PersistingL2Guard> set_aside_or_waive(std::size_t bytes) {
  std::unique_ptr<PersistingL2Guard> guard;
  try {
    guard = std::make_unique<PersistingL2Guard>(bytes);
  } catch (const CudaError& e) {
    throw Waived(fmt::format("cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize) refused ({}): MPS clients cannot "
                             "change the set-aside, MIG disables it",
                             cudaGetErrorName(e.code())));
  }
  if (bytes != 0 && guard->limit() == 0)
    throw Waived(fmt::format("asked for a {:.2f} MiB set-aside, the driver set 0", to_mib(guard->requested())));
  return guard;
}

// The --set-aside option, declared beside its parser (set_aside_request); `what` names what the set-aside is
// for in --help.
// A demo whose windowed rows size the set-aside to their table unless told otherwise ("fit", the default).
inline ExtraOption set_aside_fit_extra(const std::string& what) {
  return ExtraOption::text("set-aside",
                           what + ": fit (the table, at most the largest), max (persistingL2CacheMaxSize), 0 (none) "
                                  "or a size",
                           "fit");
}
// A demo without "fit" (default "max"); one with nothing to measure without a set-aside refuses 0 in its
// check_options and says so in --help (ZeroSetAside::refused).
enum class ZeroSetAside { allowed, refused };
inline ExtraOption set_aside_max_extra(const std::string& what, ZeroSetAside zero) {
  return ExtraOption::text("set-aside",
                           what + ": max (persistingL2CacheMaxSize), " +
                               (zero == ZeroSetAside::allowed ? "0 (none) or a size" : "or a size (not 0)"),
                           "max");
}

// --set-aside on this device: see parse_set_aside.
inline std::optional<std::size_t> set_aside_request(const Context& ctx, bool fit_allowed) {
  return parse_set_aside(ctx.extra_text("set-aside"), ctx.device().persisting_l2_max, fit_allowed);
}

// --set-aside of a demo without "fit".
inline std::size_t set_aside_option(const Context& ctx) { return *set_aside_request(ctx, false); }

// The set-aside a windowed row over a table of `table_bytes` asks for: --set-aside, or under "fit" the table
// itself (the driver rounds up to its granularity), at most persistingL2CacheMaxSize. Sizing the set-aside to
// what must persist leaves the rest of the L2 to every access that does not.
inline std::size_t set_aside_for_table(const Context& ctx, std::size_t table_bytes) {
  return set_aside_request(ctx, true).value_or(std::min(table_bytes, ctx.device().persisting_l2_max));
}

// Runs saved before this chapter measured against no set-aside have no no_window_set_aside rows: their speed-ups
// are against another baseline, and a claim about the no-set-aside baseline is not applicable to them
// (RunRows::rows says so for a variant the saved run lacks). `one_row`: the demo writes exactly one such row.
inline void require_no_set_aside_baseline(const RunRows& r, bool one_row) {
  if (one_row) (void)r.only("no_window_set_aside");
  else (void)r.rows("no_window_set_aside");
}

// A table given on the command line: make_window caps num_bytes at accessPolicyMaxWindowSize, so a larger
// table would lie partly outside its window and the run would no longer measure a window over the table.
inline void check_table_bytes(const Context& ctx, std::size_t bytes, const char* flag) {
  const std::size_t max_window = ctx.device().access_policy_max_window;
  if (bytes > max_window)
    throw CliError(fmt::format("{}: {} bytes is more than accessPolicyMaxWindowSize ({} bytes), the most one "
                               "window covers",
                               flag, bytes, max_window));
}

// The --persist option of a demo with one table size; `automatic` says what "auto" (the default) picks.
inline ExtraOption persist_extra(const std::string& what, const std::string& automatic) {
  return ExtraOption::text("persist", what + " (auto: " + automatic + ")", "auto");
}

// --persist: a table size rounded down to whole `align`-byte units, or nothing for "auto" (the demo's own
// choice from the set-aside); less than one unit, or more than one window covers, is a usage error.
inline std::optional<std::size_t> persist_option(const Context& ctx, std::size_t align) {
  const std::string text = ctx.extra_text("persist");
  if (text == "auto") return std::nullopt;
  const std::size_t bytes = static_cast<std::size_t>(parse_size(text, "--persist")) / align * align;
  if (bytes < align) throw CliError(fmt::format("--persist: at least {} bytes, got {}", align, text));
  check_table_bytes(ctx, bytes, "--persist");
  return bytes;
}

// --size of a run that streams its buffer in passes: each pass reads at least one 16-byte load.
inline void check_stream_size(const Context& ctx) {
  if (ctx.size() < sizeof(uint4)) throw CliError("--size: at least 16 bytes per pass");
}

// The --passes option (1 ... 64), declared beside its parser; `what` says what one pass is.
inline ExtraOption passes_extra(const std::string& what, std::uint64_t default_value) {
  return ExtraOption::size("passes", what + " (1 ... 64; --quick: 2)", default_value);
}

// --passes: 1 ... 64 (the default is the option's; --quick uses `quick` unless --passes is given).
inline int passes_option(const Context& ctx, int quick) {
  const std::uint64_t p = ctx.extra_size("passes", static_cast<std::uint64_t>(quick));
  if (p > 64) throw CliError(fmt::format("--passes: at most 64, got {}", p));
  return static_cast<int>(p);
}

// The device memory of `kernels` sliding-window workloads, each with `passes` x --size of stream and a table
// of `table_bytes`, against what is free once the harness holds its own buffers. The stream grows with
// --passes and the table with --persist / --persist-sizes; the harness's --size check assumes the defaults.
inline void check_workload_memory(const Context& ctx, int kernels, int passes, std::size_t table_bytes) {
  const double stream = static_cast<double>(ctx.size() / sizeof(uint4) * sizeof(uint4)) * passes;
  const double need = kernels * (stream + static_cast<double>(table_bytes));
  require_free_device_memory(need, fmt::format("--size {} x --passes {} of stream and a {}-byte table{}", ctx.size(),
                                               passes, table_bytes,
                                               kernels > 1 ? fmt::format(" for each of {} kernels", kernels)
                                                           : std::string()));
}

// The sizes and options of a demo that runs one sliding-window workload with windowed rows (l2_sliding_window,
// l2_window_api): --size bytes of stream per pass, the L2 size by default; --passes, --set-aside ("fit" by
// default) and the demo's own table-size option; `largest_table` gives the largest table of the run, whose
// device memory check_options checks with the run's own --passes.
inline void set_sliding_window_sizes(Demo& d, ExtraOption table_option,
                                     std::function<std::size_t(const Context&)> largest_table) {
  d.size_meaning = "bytes streamed per pass (default: the L2 size)";
  d.default_size = [](const DeviceInfo& dev) { return static_cast<std::uint64_t>(dev.l2_bytes); };
  d.quick_size = 4 * kMiB;
  // The stream (8 passes by default) and the largest table (< 128 MiB by default).
  d.device_bytes = [](std::uint64_t n) { return 8.0 * static_cast<double>(n) + 128.0 * kMiB; };
  d.extras = {
      passes_extra("passes per launch", 8),
      set_aside_fit_extra("set-aside of the windowed rows"),
      std::move(table_option),
  };
  d.check_options = [largest_table = std::move(largest_table)](Context& ctx) {
    check_stream_size(ctx);
    (void)set_aside_request(ctx, true);
    const std::size_t table = largest_table(ctx);
    check_workload_memory(ctx, 1, passes_option(ctx, 2), table);
  };
  d.warmup_ms = 20.0;
  d.waive_reason = persistence_waive_reason;
}

// Records whether a window read back (from a stream or a graph node) equals the one that was set.
inline bool check_window(Context& ctx, const cudaAccessPolicyWindow& got, const cudaAccessPolicyWindow& want,
                         const std::string& what) {
  const auto text = [](const cudaAccessPolicyWindow& w) {
    return fmt::format("{} bytes at {}, hitRatio {}, {}/{}", w.num_bytes, w.base_ptr, w.hitRatio,
                       property_name(w.hitProp), property_name(w.missProp));
  };
  VerifyResult r;
  r.checked = 1;
  if (!same_window(got, want)) r.add(0, text(got), text(want));
  return ctx.check(r, what);
}

// Times `launch` with `prepare` run before every sample, outside the timed region.
//
// GpuTimer (cold) flushes L2 before the start event, but the flush is ordinary writes, and ordinary writes
// cannot evict persisting lines: a window's lines would survive from one sample into the next and the windowed
// kernel would be timed with its table already in L2. So `prepare` (by default: reset the persisting lines)
// runs before each sample's flush, through TimingOptions::before_sample; the flush then evicts the demoted
// lines like any other. Cold samples are one launch each, so every timed launch starts from that state.
// The timing options of such a sample: the demo's, with `prepare` before each sample and one launch per sample.
// [doc:isolated_timing]
inline TimingOptions isolated_timing(const Context& ctx, std::function<void()> prepare = reset_persisting_lines) {
  TimingOptions o = ctx.timing_options();
  o.before_sample = std::move(prepare);
  o.max_batch = 1;  // also when warm (--warm): every sample starts after `prepare`
  return o;
}
// [/doc:isolated_timing]

template <class Launch, class Prepare>
Timing time_isolated(Context& ctx, Launch&& launch, Prepare&& prepare) {
  return ctx.time(std::forward<Launch>(launch), isolated_timing(ctx, std::forward<Prepare>(prepare)));
}

template <class Launch>
Timing time_isolated(Context& ctx, Launch&& launch) {
  return time_isolated(ctx, std::forward<Launch>(launch), reset_persisting_lines);
}

// The baseline of every speed-up in this chapter: no window and no set-aside, the whole L2 for ordinary accesses.
// A set-aside is not free for the accesses that do not persist (l2_set_aside_cost measures what it costs), so a
// window timed against a no-window run under the same large set-aside is credited with winning back that cost.
// The limit is 0 only inside this call; the caller's stream must carry no window.
// [doc:honest_baseline]
template <class Launch>
Timing time_without_set_aside(Context& ctx, Launch&& launch) {
  const PersistingL2Guard none(0);
  return time_isolated(ctx, std::forward<Launch>(launch));
}
// [/doc:honest_baseline]

// The sliding-window workload: a stream of `passes` chunks and a table of up to max_table_bytes, filled with the
// hashed data of sliding_window_reference.hpp. References are cached per table size.
class SlidingWorkload {
 public:
  SlidingWorkload(std::size_t stream_per_pass, int passes, std::size_t max_table_bytes, unsigned max_blocks)
      : chunk_n_(stream_per_pass / sizeof(uint4)),
        passes_(passes),
        max_blocks_(max_blocks),
        stream_(chunk_n_ * static_cast<std::size_t>(passes)),
        table_(max_table_bytes / sizeof(uint4)) {
    launch_fill_elements(stream_.data(), stream_.size(), 0, kStreamSeed, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::size_t chunk_n() const { return chunk_n_; }
  std::size_t stream_per_pass() const { return chunk_n_ * sizeof(uint4); }
  int passes() const { return passes_; }
  unsigned max_blocks() const { return max_blocks_; }
  uint4* table() const { return table_.data(); }
  const uint4* stream() const { return stream_.data(); }
  SlidingShape shape(std::size_t table_bytes) const { return {table_bytes, stream_per_pass(), passes_}; }
  // Bytes one launch asks for: the stream once, the table read and written once per pass.
  double bytes_per_launch(std::size_t table_bytes) const {
    return static_cast<double>(passes_) * (static_cast<double>(stream_per_pass()) + 2.0 * table_bytes);
  }

  // The plain launch: whatever window the stream carries applies.
  void launch(std::size_t table_bytes, cudaStream_t s) const {
    launch_sliding_window(table_.data(), table_bytes / sizeof(uint4), stream_.data(), chunk_n_, passes_, max_blocks_,
                          s);
  }

  // The plain launch with the stream loaded evict-first (__ldcs) instead of a window.
  void launch_evict_first(std::size_t table_bytes, cudaStream_t s) const {
    launch_sliding_window_evict_first(table_.data(), table_bytes / sizeof(uint4), stream_.data(), chunk_n_, passes_,
                                      max_blocks_, s);
  }

  // Writes the table's initial values (the kernel updates it in place, so every verification starts here).
  void reset_table(std::size_t table_bytes, cudaStream_t s) {
    launch_fill_elements(table_.data(), table_bytes / sizeof(uint4), 0, kTableSeed, s);
  }

  // Compares the table (after one launch from reset_table) with the CPU reference. The device must be idle.
  bool check_table(Context& ctx, std::size_t table_bytes, const std::string& what) {
    const std::size_t n = table_bytes / sizeof(uint4);
    std::vector<uint4> got(n);
    CUDA_CHECK(cudaMemcpy(got.data(), table_.data(), n * sizeof(uint4), cudaMemcpyDeviceToHost));
    return ctx.check(compare_exact(got, reference(n)), what);
  }

  // Resets the table, runs `launch` once on ctx's stream and checks the table.
  bool verify(Context& ctx, std::size_t table_bytes, const std::function<void(cudaStream_t)>& launch,
              const std::string& what) {
    reset_table(table_bytes, ctx.stream());
    launch(ctx.stream());
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    return check_table(ctx, table_bytes, what);
  }

 private:
  // The stream enters the result only through its per-position sums over the passes: computed once (the
  // expensive part), then each table size costs one pass over them.
  std::vector<uint4> reference(std::size_t n) {
    if (sums_.size() != chunk_n_) sums_ = chunk_sums(chunk_n_, passes_);
    return sliding_window_reference(sums_, n);
  }

  std::size_t chunk_n_;
  int passes_;
  unsigned max_blocks_;
  DeviceBuffer<uint4> stream_;
  DeviceBuffer<uint4> table_;
  std::vector<uint4> sums_;
};

}  // namespace cml::ch05
