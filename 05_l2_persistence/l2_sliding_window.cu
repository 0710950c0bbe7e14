// l2_sliding_window: does Best Practices' sliding-window experiment (9.2.2.2) hold up against the baseline a
// reader really has, the same kernel with no window and no set-aside?
//
// Each pass streams a fresh chunk once and reads and writes back a small table; the table grows from 1/8 to
// 12/8 of the largest set-aside. A set-aside takes L2 from every access that does not persist, so each size
// also runs with no window under the same set-aside, and by default each windowed size gets a set-aside
// sized to its table (--set-aside fit). Loading the stream evict-first (__ldcs) is the per-load alternative.
// The DRAM-traffic model is an upper bound on a window's gain: it assumes every pass misses the whole table.
//
// Run: build/bin/l2_sliding_window [--passes 8] [--persist-sizes 5M,10M,40M] [--set-aside max] [--csv sweep.csv]
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "05_l2_persistence/l2_bench.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch05;

enum class Setting { no_window, no_window_set_aside, hit_ratio_1, tuned, evict_first_stream };

// Buffers, sizes and the baselines, made by the run's first variant and shared by the rest.
struct Sweep {
  std::size_t max_set_aside = 0;  // persistingL2CacheMaxSize
  std::size_t max_window = 0;
  std::vector<std::size_t> persist;
  std::unique_ptr<SlidingWorkload> work;
  std::map<std::size_t, Timing> baseline;                                // per table: no window, no set-aside
  std::map<std::pair<std::size_t, std::size_t>, Timing> same_set_aside;  // per (table, set-aside): no window

  explicit Sweep(Context& ctx);
};

// The table sizes of the sweep: --persist-sizes, or eighths of the largest set-aside.
std::vector<std::size_t> persist_sizes(const Context& ctx) {
  const std::string sizes = ctx.extra_text("persist-sizes");
  if (sizes == "auto")
    return ctx.quick() ? std::vector<std::size_t>{1 * kMiB, 3 * kMiB}
                       : default_persist_sizes(ctx.device().persisting_l2_max);
  std::vector<std::size_t> v = parse_persist_sizes(sizes);
  for (const std::size_t bytes : v) check_table_bytes(ctx, bytes, "--persist-sizes");
  return v;
}

Sweep::Sweep(Context& ctx) {
  check_stream_size(ctx);
  max_set_aside = ctx.device().persisting_l2_max;
  max_window = ctx.device().access_policy_max_window;
  persist = persist_sizes(ctx);
  const std::size_t largest = *std::max_element(persist.begin(), persist.end());
  const int passes = passes_option(ctx, 2);
  work = std::make_unique<SlidingWorkload>(ctx.size(), passes, largest,
                                           sliding_window_resident_blocks(ctx.device().sm_count));
  ctx.note(fmt::format("set-aside at start {:.2f} MiB (the driver's default), largest {:.2f} MiB; windows run with "
                       "--set-aside {}; max window {:.2f} MiB, L2 {:.2f} MiB",
                       to_mib(persisting_limit()), to_mib(max_set_aside), ctx.extra_text("set-aside"),
                       to_mib(max_window), to_mib(ctx.device().l2_bytes)));
  ctx.note(fmt::format("stream {:.2f} MiB per pass x {} passes = {:.2f}x L2, read once; the table is read and "
                       "written once per pass",
                       to_mib(work->stream_per_pass()), passes,
                       static_cast<double>(work->stream_per_pass()) * passes /
                           static_cast<double>(ctx.device().l2_bytes)));
  ctx.note("speedup: the no-window, no-set-aside time / this time; vs_same_set_aside: no window under this row's "
           "set-aside / this time. Every sample: persisting lines reset, then L2 flushed, outside the timed region");
}

std::string params_of(std::size_t bytes) { return fmt::format("persist_mib={:.2f}", to_mib(bytes)); }

// Verifies `launch` (on the stream as it is), then times it; nothing if the table came out wrong.
std::optional<Timing> verified_time(Context& ctx, Sweep& sw, std::size_t bytes, const std::string& what,
                                    const std::function<void(cudaStream_t)>& launch, bool without_set_aside) {
  if (!sw.work->verify(ctx, bytes, launch, params_of(bytes) + " " + what)) return std::nullopt;
  return without_set_aside ? time_without_set_aside(ctx, launch) : time_isolated(ctx, launch);
}

// The baseline of one table size: no window, no set-aside; measured (after verification) the first time any
// variant needs it.
const Timing* baseline(Context& ctx, Sweep& sw, std::size_t bytes) {
  if (auto it = sw.baseline.find(bytes); it != sw.baseline.end()) return &it->second;
  const auto t = verified_time(ctx, sw, bytes, "no window, no set-aside",
                               [&](cudaStream_t s) { sw.work->launch(bytes, s); }, true);
  return t ? &sw.baseline.emplace(bytes, *t).first->second : nullptr;
}

// No window under the guard's set-aside (the stream's window must be clear).
const Timing* same_set_aside(Context& ctx, Sweep& sw, std::size_t bytes, const PersistingL2Guard& guard) {
  const auto key = std::make_pair(bytes, guard.limit());
  if (auto it = sw.same_set_aside.find(key); it != sw.same_set_aside.end()) return &it->second;
  const auto t = verified_time(ctx, sw, bytes, "no window under the set-aside",
                               [&](cudaStream_t s) { sw.work->launch(bytes, s); }, false);
  return t ? &sw.same_set_aside.emplace(key, *t).first->second : nullptr;
}

void describe(Row& row, const Sweep& sw, std::size_t bytes, std::size_t set_aside, const cudaAccessPolicyWindow& w,
              const Timing* base, const Timing* same) {
  const SlidingShape shape = sw.work->shape(bytes);
  const std::size_t resident = model_resident_bytes(w.num_bytes, w.hitRatio, set_aside);
  const auto vs = [&row](const Timing* t) { return t != nullptr ? t->stats.median / row.median_ms : kNaN; };
  row.set("persist_mib", to_mib(bytes))
      .set("persist_per_max", static_cast<double>(bytes) / static_cast<double>(sw.max_set_aside))
      .set("set_aside_mib", to_mib(set_aside))
      .set("fits", set_aside != 0 && bytes <= set_aside ? 1.0 : 0.0)
      .set("window_mib", to_mib(w.num_bytes))
      .set("hit_ratio", w.hitRatio)
      .set("baseline_ms", base != nullptr ? base->stats.median : kNaN)
      .set("speedup", vs(base))
      .set("vs_same_set_aside", vs(same))
      .set("model_dram_mib", model_dram_bytes(shape, resident) / static_cast<double>(kMiB))
      .set("model_speedup", model_speedup(shape, resident));
}

void run_setting(Context& ctx, Setting setting) {
  Sweep& sw = ctx.state<Sweep>(ctx);
  for (const std::size_t bytes : sw.persist) {
    const std::string params = params_of(bytes);
    const Timing* base = baseline(ctx, sw, bytes);
    const auto launch = [&](cudaStream_t s) { sw.work->launch(bytes, s); };
    if (setting == Setting::no_window || setting == Setting::evict_first_stream) {
      std::optional<Timing> own;
      if (setting == Setting::evict_first_stream)
        own = verified_time(ctx, sw, bytes, "stream evict-first",
                            [&](cudaStream_t s) { sw.work->launch_evict_first(bytes, s); }, true);
      const Timing* t = setting == Setting::no_window ? base : (own ? &*own : nullptr);
      if (t == nullptr) {
        ctx.add_row(params, ctx.size(), false);
        continue;
      }
      Row& row = ctx.add_timed_row(params, ctx.size(), sw.work->bytes_per_launch(bytes), *t, true);
      describe(row, sw, bytes, 0, cleared_window(), base, base);
      continue;
    }
    const auto guard = set_aside_or_waive(set_aside_for_table(ctx, bytes));
    const std::size_t set_aside = guard->limit();
    guard->clear_stream_window(ctx.stream());
    const Timing* same = same_set_aside(ctx, sw, bytes, *guard);
    if (setting == Setting::no_window_set_aside) {
      if (same == nullptr) {
        ctx.add_row(params, ctx.size(), false);
        continue;
      }
      Row& row = ctx.add_timed_row(params, ctx.size(), sw.work->bytes_per_launch(bytes), *same, true);
      describe(row, sw, bytes, set_aside, cleared_window(), base, same);
      continue;
    }
    // [doc:two_windows]
    const cudaAccessPolicyWindow w = setting == Setting::hit_ratio_1
                                         ? make_window(sw.work->table(), bytes, 1.0, sw.max_window)
                                         : tuned_window(sw.work->table(), bytes, set_aside, sw.max_window);
    guard->set_stream_window(ctx.stream(), w);
    // [/doc:two_windows]
    const auto t = verified_time(ctx, sw, bytes, "", launch, false);
    guard->clear_stream_window(ctx.stream());
    if (!t) {
      ctx.add_row(params, ctx.size(), false);
      continue;
    }
    Row& row = ctx.add_timed_row(params, ctx.size(), sw.work->bytes_per_launch(bytes), *t, true);
    describe(row, sw, bytes, set_aside, w, base, same);
  }
}

// ---- Claims ---------------------------------------------------------------------------------------------

bool fits(const Row& row) { return RunRows::value(row, "fits") == 1.0; }


// The row of `variant` at the largest table that fits its set-aside, if that table is at least half of the
// largest set-aside (smaller tables leave a window little to win).
const Row& largest_fitting(const RunRows& r, std::string_view variant) {
  require_no_set_aside_baseline(r, false);
  const Row& row = largest(r.rows_where(variant, fits, "whose table fits its set-aside"), "persist_mib");
  if (RunRows::value(row, "persist_per_max") < 0.5)
    throw NotApplicable("no table of at least half the largest set-aside in this sweep");
  return row;
}

std::vector<Claim> claims() {
  return {
      Claim{"fitting_window_pays",
            "With the set-aside sized to the table, a hitRatio 1 window over a table of at least half the largest "
            "set-aside makes the kernel at least 1.05x faster than no window and no set-aside.",
            "speedup of hit_ratio_1 at the largest table that fits its set-aside", Bound::at_least(1.05),
            "every pass keeps the table's read misses and write-backs out of DRAM; the no-window run keeps part "
            "of the table in L2 by itself, so the gain is far below the model's; 5% is above the noise of two "
            "medians",
            ClaimKind::device,
            [](const RunRows& r) { return RunRows::value(largest_fitting(r, "hit_ratio_1"), "speedup"); }},
      Claim{"window_stays_under_model",
            "No window beats the DRAM-traffic model's speed-up over no window and no set-aside: the model is an "
            "upper bound.",
            "highest speedup / model_speedup over hit_ratio_1 where the table fits and tuned everywhere",
            Bound::at_most(1.0),
            "the model counts only the DRAM bytes a window can save and assumes the no-window run misses the "
            "whole table every pass; a measurement above it means the baseline is slower for another reason",
            ClaimKind::device,
            [](const RunRows& r) {
              require_no_set_aside_baseline(r, false);
              std::vector<double> v;
              for (const Row* row : r.rows_where("hit_ratio_1", fits, "whose table fits its set-aside"))
                v.push_back(RunRows::value(*row, "speedup") / RunRows::value(*row, "model_speedup"));
              for (const Row* row : r.rows("tuned"))
                v.push_back(RunRows::value(*row, "speedup") / RunRows::value(*row, "model_speedup"));
              return max_of(v);
            }},
      Claim{"set_aside_slows_the_no_window_run",
            "The set-aside of the largest fitting table, unused by any window, makes the same kernel at least 5% "
            "slower than no set-aside.",
            "speedup of no_window_set_aside at the largest table that fits its set-aside", Bound::at_most(0.95),
            "the table's write-backs are ordinary writes, and ordinary writes lose L2 to a large set-aside "
            "(l2_set_aside_cost); a GPU that lends the unused set-aside to them fails this claim",
            ClaimKind::device,
            [](const RunRows& r) { return RunRows::value(largest_fitting(r, "no_window_set_aside"), "speedup"); }},
      Claim{"evict_first_stream_beats_window",
            "Loading the stream evict-first (__ldcs), with no window and no set-aside, is at least 1.05x faster "
            "than the hitRatio 1 window at the largest fitting table.",
            "median_ms hit_ratio_1 / median_ms evict_first_stream at that table", Bound::at_least(1.05),
            "the hint keeps the stream from evicting the table without taking any L2 away from the table's "
            "write-backs; 5% is above the noise of two medians",
            ClaimKind::device,
            [](const RunRows& r) {
              const Row& window = largest_fitting(r, "hit_ratio_1");
              return window.median_ms / r.row("evict_first_stream", window.params).median_ms;
            }},
      Claim{"tuned_beats_hit_ratio_1_when_oversized",
            "At the largest table, well beyond the largest set-aside, the tuned window is faster than a hitRatio 1 "
            "window over the same table.",
            "median_ms tuned / median_ms hit_ratio_1 at the largest table (at least 1.25x the set-aside)",
            Bound::at_most(0.97),
            "hitRatio 1 asks for more persisting room than exists and its lines compete for it; the tuned "
            "window keeps a set-aside's worth and streams the rest; 3% is above the noise of two medians",
            ClaimKind::device,
            [](const RunRows& r) {
              require_no_set_aside_baseline(r, false);
              const Row& tuned = r.largest("tuned", "persist_mib");
              const Row& hit_1 = r.largest("hit_ratio_1", "persist_mib");
              if (RunRows::value(tuned, "persist_mib") < 1.25 * RunRows::value(tuned, "set_aside_mib"))
                throw NotApplicable("no table of at least 1.25x the set-aside in this sweep");
              if (tuned.params != hit_1.params) throw ClaimError("tuned and hit_ratio_1 swept different tables");
              return tuned.median_ms / hit_1.median_ms;
            }},
      Claim{"oversized_window_buys_little",
            "At the largest table, well beyond the largest set-aside, even the tuned window is at most 1.10x faster "
            "than no window and no set-aside.",
            "speedup of tuned at the largest table (at least 1.25x the set-aside)", Bound::at_most(1.1),
            "at most a set-aside's worth persists, and that set-aside slows every write-back of the rest; a GPU "
            "whose window still pays there fails this claim, which is worth knowing",
            ClaimKind::device,
            [](const RunRows& r) {
              require_no_set_aside_baseline(r, false);
              const Row& tuned = r.largest("tuned", "persist_mib");
              if (RunRows::value(tuned, "persist_mib") < 1.25 * RunRows::value(tuned, "set_aside_mib"))
                throw NotApplicable("no table of at least 1.25x the set-aside in this sweep");
              return RunRows::value(tuned, "speedup");
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "l2_sliding_window";
  d.summary =
      "Best Practices' sliding-window experiment against no window and no set-aside: a table read and written\n"
      "once per pass, a stream of --size bytes per pass read once; table size swept over 1/8 ... 12/8 of the\n"
      "largest set-aside, with no window under the set-aside, a hitRatio 1 window, the tuned window (hitRatio =\n"
      "set-aside / table) and the stream loaded evict-first instead of any window.";
  const auto variant = [](Setting s) { return [s](Context& c) { run_setting(c, s); }; };
  d.variants = {
      {"no_window", "baseline: no window, no set-aside", variant(Setting::no_window)},
      {"no_window_set_aside", "no window, under the set-aside the windows use (what it costs)",
       variant(Setting::no_window_set_aside)},
      {"hit_ratio_1", "stream window over the whole table, hitRatio 1", variant(Setting::hit_ratio_1)},
      {"tuned", "stream window over the table, hitRatio = set-aside / window (Best Practices)",
       variant(Setting::tuned)},
      {"evict_first_stream", "no window, no set-aside; the stream loaded with __ldcs (evict-first)",
       variant(Setting::evict_first_stream)},
  };
  d.claims = claims();
  set_sliding_window_sizes(
      d,
      ExtraOption::text("persist-sizes", "table sizes, e.g. 5M,10M,40M (auto: 1/8 ... 12/8 of the largest set-aside)",
                        "auto"),
      [](const Context& ctx) {
        const std::vector<std::size_t> sizes = persist_sizes(ctx);
        return *std::max_element(sizes.begin(), sizes.end());
      });
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
