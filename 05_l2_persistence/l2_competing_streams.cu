// l2_competing_streams: what happens when two concurrent kernels' persisting windows share one set-aside?
//
// Best Practices advises that hitRatio x num_bytes, summed over concurrent kernels, stay within the
// set-aside. Two copies of the sliding-window workload run at once in two streams, each with a window over a
// table as large as the whole set-aside: hitRatio 1.0 asks for twice what exists, 0.5 for exactly it. At
// most a set-aside's worth can persist however much the windows ask; which oversubscribed lines a GPU keeps
// is its replacement policy's business. The pair is timed fork to join, with persisting lines reset and L2
// flushed before every sample, against no window and against no window under the same set-aside.
//
// Run: build/bin/l2_competing_streams [--size 30M] [--csv competing.csv]
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "05_l2_persistence/l2_bench.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch05;

struct State {
  std::size_t set_aside = 0;
  std::size_t table_bytes = 0;  // per kernel
  std::unique_ptr<SlidingWorkload> a, b;
  std::unique_ptr<Stream> sa, sb;
  std::unique_ptr<Event> fork, done_a, done_b;
  std::unique_ptr<Timing> baseline;        // no window, no set-aside
  std::unique_ptr<Timing> same_set_aside;  // no window, under the windows' set-aside
};

// Each kernel's table: --persist, or `set_aside` (in check_options the set-aside asked for, which the driver
// never exceeds, so the memory checked there is enough).
std::size_t table_bytes_of(const Context& ctx, std::size_t set_aside) {
  std::size_t bytes = 0;
  if (const auto persist = persist_option(ctx, 16)) bytes = *persist;
  else if (ctx.quick()) bytes = kMiB;
  else bytes = set_aside / 4096 * 4096;
  if (bytes < 16)  // "auto" under no or a tiny set-aside
    throw CliError(fmt::format("--persist auto: the set-aside ({} bytes) leaves no table; give --persist", set_aside));
  return bytes;
}

State& prepare(Context& ctx, State& st, const PersistingL2Guard& guard) {
  if (st.a) return st;
  check_stream_size(ctx);
  st.set_aside = guard.limit();
  st.table_bytes = table_bytes_of(ctx, st.set_aside);
  const int passes = passes_option(ctx, 2);
  // Half the resident blocks each, so that both grids are on the GPU at once.
  const unsigned half = std::max(1u, sliding_window_resident_blocks(ctx.device().sm_count) / 2);
  st.a = std::make_unique<SlidingWorkload>(ctx.size(), passes, st.table_bytes, half);
  st.b = std::make_unique<SlidingWorkload>(ctx.size(), passes, st.table_bytes, half);
  st.sa = std::make_unique<Stream>();
  st.sb = std::make_unique<Stream>();
  st.fork = std::make_unique<Event>(cudaEventDisableTiming);
  st.done_a = std::make_unique<Event>(cudaEventDisableTiming);
  st.done_b = std::make_unique<Event>(cudaEventDisableTiming);
  ctx.note(fmt::format("two kernels, each: table {:.2f} MiB, stream {:.2f} MiB per pass x {} passes, {} blocks; "
                       "set-aside {:.2f} MiB (the limit was {:.2f} MiB and is restored)",
                       to_mib(st.table_bytes), to_mib(st.a->stream_per_pass()), passes,
                       sliding_window_blocks(st.table_bytes / sizeof(uint4), half), to_mib(st.set_aside),
                       to_mib(guard.previous_limit())));
  return st;
}

// Both kernels, forked from and joined back into the timing stream `s`.
void launch_pair(State& st, cudaStream_t s) {
  st.fork->record(s);
  CUDA_CHECK(cudaStreamWaitEvent(st.sa->get(), st.fork->get(), 0));
  CUDA_CHECK(cudaStreamWaitEvent(st.sb->get(), st.fork->get(), 0));
  st.a->launch(st.table_bytes, st.sa->get());
  st.b->launch(st.table_bytes, st.sb->get());
  st.done_a->record(st.sa->get());
  st.done_b->record(st.sb->get());
  CUDA_CHECK(cudaStreamWaitEvent(s, st.done_a->get(), 0));
  CUDA_CHECK(cudaStreamWaitEvent(s, st.done_b->get(), 0));
}

bool verify_pair(Context& ctx, State& st, const std::string& what) {
  st.a->reset_table(st.table_bytes, ctx.stream());
  st.b->reset_table(st.table_bytes, ctx.stream());
  launch_pair(st, ctx.stream());
  CUDA_CHECK(cudaDeviceSynchronize());
  const bool ok_a = st.a->check_table(ctx, st.table_bytes, what + " (stream 1)");
  const bool ok_b = st.b->check_table(ctx, st.table_bytes, what + " (stream 2)");
  return ok_a && ok_b;
}

// The two no-window times every row is compared with, each verified and measured once. `guard` holds the windows'
// set-aside.
void baselines(Context& ctx, State& st, PersistingL2Guard& guard) {
  guard.clear_stream_window(st.sa->get());
  guard.clear_stream_window(st.sb->get());
  const auto pair = [&](cudaStream_t s) { launch_pair(st, s); };
  if (!st.baseline && verify_pair(ctx, st, "no window, no set-aside"))
    st.baseline = std::make_unique<Timing>(time_without_set_aside(ctx, pair));
  if (!st.same_set_aside && verify_pair(ctx, st, "no window under the set-aside"))
    st.same_set_aside = std::make_unique<Timing>(time_isolated(ctx, pair));
}

void add_pair_row(Context& ctx, const State& st, const std::string& params, const Timing& t,
                  const cudaAccessPolicyWindow& w, std::size_t set_aside) {
  const std::size_t resident = model_resident_bytes(w.num_bytes, w.hitRatio, st.set_aside, 2);
  Row& row = ctx.add_timed_row(params, ctx.size(), 2.0 * st.a->bytes_per_launch(st.table_bytes), t, true);
  const auto vs = [&row](const std::unique_ptr<Timing>& b) { return b ? b->stats.median / row.median_ms : kNaN; };
  row.set("persist_mib_each", to_mib(st.table_bytes))
      .set("hit_ratio", w.hitRatio)
      .set("persisting_demand_mib", 2.0 * w.hitRatio * to_mib(w.num_bytes))
      .set("set_aside_mib", to_mib(set_aside))
      .set("speedup", vs(st.baseline))
      .set("vs_same_set_aside", vs(st.same_set_aside))
      .set("model_speedup", model_speedup(st.a->shape(st.table_bytes), resident));
}

enum class Pair { no_window, no_window_set_aside, windows };

// Runs the pair with a window of `hit_ratio` over each stream's table and adds the row.
void run_pair(Context& ctx, Pair what, double hit_ratio) {
  State& st = ctx.state<State>();
  // The streams live in State for the whole run; this guard is destroyed (and clears their windows) first.
  const auto guard = set_aside_or_waive(set_aside_option(ctx));
  prepare(ctx, st, *guard);
  baselines(ctx, st, *guard);
  // One decimal where it says the ratio exactly (0.5, 1.0); all the digits a finer ratio needs (0.25).
  const std::string ratio =
      hit_ratio * 10 == std::floor(hit_ratio * 10) ? fmt::format("{:.1f}", hit_ratio) : fmt::format("{}", hit_ratio);
  const std::string params = fmt::format("persist_mib={:.2f},hit_ratio={}", to_mib(st.table_bytes), ratio);
  if (what != Pair::windows) {
    const std::unique_ptr<Timing>& t = what == Pair::no_window ? st.baseline : st.same_set_aside;
    if (!t) ctx.add_row(params, ctx.size(), false);
    else add_pair_row(ctx, st, params, *t, cleared_window(), what == Pair::no_window ? 0 : st.set_aside);
    return;
  }
  // [doc:one_window_per_stream]
  const std::size_t max_window = ctx.device().access_policy_max_window;
  const cudaAccessPolicyWindow wa = make_window(st.a->table(), st.table_bytes, hit_ratio, max_window);
  guard->set_stream_window(st.sa->get(), wa);
  guard->set_stream_window(st.sb->get(), make_window(st.b->table(), st.table_bytes, hit_ratio, max_window));
  // [/doc:one_window_per_stream]
  if (!verify_pair(ctx, st, params)) {
    ctx.add_row(params, ctx.size(), false);
    return;
  }
  add_pair_row(ctx, st, params, time_isolated(ctx, [&](cudaStream_t s) { launch_pair(st, s); }), wa, st.set_aside);
}

// The claims compare tables as large as the set-aside: hitRatio 0.5 each then asks for exactly the set-aside,
// and 1.0 for twice it. Other tables (--persist) make another experiment, which the claims do not describe.
// 1% leaves room for the table's rounding down to whole pages.
void require_tables_of_set_aside(const RunRows& r) {
  const Row& row = r.only("hit_ratio_0_5");
  const double share = RunRows::value(row, "persisting_demand_mib") / RunRows::value(row, "set_aside_mib");
  if (!(std::abs(share - 1.0) <= 0.01))
    throw NotApplicable(fmt::format("the hitRatio 0.5 windows ask for {:.2f}x the set-aside, not exactly it "
                                    "(--persist)",
                                    share));
}


std::vector<Claim> claims() {
  return {
      Claim{"set_aside_slows_the_pair",
            "A full set-aside that no window uses makes the pair at least 10% slower than no set-aside.",
            "speedup of no_window_set_aside (no-set-aside time / time)", Bound::at_most(0.9),
            "both kernels write their tables back every pass, and ordinary writes lose L2 to a large set-aside "
            "(l2_set_aside_cost); a GPU that lends the unused set-aside to them fails this claim",
            ClaimKind::device,
            [](const RunRows& r) { return r.only_value("no_window_set_aside", "speedup"); }},
      Claim{"shared_windows_win_back_the_set_aside",
            "Two windows that together fill the set-aside exactly (hitRatio 0.5 each) make the pair at least 1.5x "
            "faster than the same set-aside without windows.",
            "vs_same_set_aside of hit_ratio_0_5", Bound::at_least(1.5),
            "the persisting halves of the tables stop paying for the set-aside and for their own misses; this is "
            "the gain over a set-aside already paid for, not over no set-aside",
            ClaimKind::device,
            [](const RunRows& r) {
              require_tables_of_set_aside(r);
              require_no_set_aside_baseline(r, true);
              return r.only_value("hit_ratio_0_5", "vs_same_set_aside");
            }},
      Claim{"shared_windows_under_model",
            "Against no window and no set-aside, the hitRatio 0.5 pair stays under the speed-up the DRAM-traffic "
            "model predicts: the model is an upper bound.",
            "speedup / model_speedup of hit_ratio_0_5", Bound::at_most(1.0),
            "the model counts only the DRAM bytes the windows can save and assumes the no-window pair misses "
            "both tables every pass",
            ClaimKind::device,
            [](const RunRows& r) {
              require_no_set_aside_baseline(r, true);
              if (r.only_value("hit_ratio_0_5", "model_speedup") <= 1.0)
                throw NotApplicable("the windows ask for more than the set-aside (--persist): the model predicts "
                                    "no gain");
              return r.only_value("hit_ratio_0_5", "speedup") / r.only_value("hit_ratio_0_5", "model_speedup");
            }},
      Claim{"oversubscribing_buys_nothing",
            "Asking for twice the set-aside (hitRatio 1.0 each) makes the pair at most 10% faster than asking for "
            "exactly the set-aside.",
            "median_ms hit_ratio_1_0 / median_ms hit_ratio_0_5", Bound::at_least(0.9),
            "no more than the set-aside can persist whatever the windows ask for; a GPU whose persisting lines "
            "thrash when oversubscribed is slower with 1.0, not faster",
            ClaimKind::device,
            [](const RunRows& r) {
              require_tables_of_set_aside(r);
              return r.only_value("hit_ratio_1_0", "median_ms") / r.only_value("hit_ratio_0_5", "median_ms");
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "l2_competing_streams";
  d.summary =
      "Two concurrent sliding-window kernels in two streams, each with a window over a table as large as the\n"
      "set-aside: hitRatio 1.0 (together they ask for twice the set-aside) vs 0.5 (exactly the set-aside) vs no\n"
      "window and no set-aside, and no window under the same set-aside.";
  d.size_meaning = "bytes streamed per pass by each kernel (default: half the L2 size)";
  d.variants = {
      {"no_window", "baseline: both streams without a window, no set-aside",
       [](Context& c) { run_pair(c, Pair::no_window, 0.0); }},
      {"no_window_set_aside", "both streams without a window, under the windows' set-aside (what it costs)",
       [](Context& c) { run_pair(c, Pair::no_window_set_aside, 0.0); }},
      {"hit_ratio_1_0", "a window over each table, hitRatio 1.0",
       [](Context& c) { run_pair(c, Pair::windows, 1.0); }},
      // [doc:shared_ratio]
      {"hit_ratio_0_5", "a window over each table, hitRatio 0.5",
       [](Context& c) { run_pair(c, Pair::windows, 0.5); }},
      // [/doc:shared_ratio]
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo& dev) { return static_cast<std::uint64_t>(dev.l2_bytes / 2); };
  d.quick_size = 2 * kMiB;
  // Two streams of 8 passes and two tables (< 128 MiB each by default); check_options checks the run's own
  // --passes and --persist.
  d.device_bytes = [](std::uint64_t n) { return 16.0 * static_cast<double>(n) + 2 * 128.0 * kMiB; };
  d.extras = {
      passes_extra("passes per launch", 8),
      set_aside_max_extra("set-aside of the windowed rows", ZeroSetAside::allowed),
      persist_extra("table size of each kernel", "the set-aside"),
  };
  d.check_options = [](Context& ctx) {
    check_stream_size(ctx);
    check_workload_memory(ctx, 2, passes_option(ctx, 2), table_bytes_of(ctx, set_aside_option(ctx)));
  };
  d.warmup_ms = 20.0;
  d.waive_reason = persistence_waive_reason;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
