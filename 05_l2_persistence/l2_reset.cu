// l2_reset: do persisting lines outlive the kernel that made them, and what gives the L2 back?
//
// Clearing a window does not demote the lines it made persist: until they are reset
// (cudaCtxResetPersistingL2Cache) or read again through a window with hitProp = normal, a later kernel gets
// only the L2 minus the set-aside. So a re-read whose working set fits the L2 but not what the set-aside
// leaves (default 0.7 x L2) is timed after a polluter filled the set-aside and each way of cleaning up,
// with L2 flushed by ordinary writes, which evict only normal lines. state_restored checks that the run
// leaves the persisting limit and the stream's window as it found them.
//
// Run: build/bin/l2_reset [--size 40M] [--passes 16] [--csv reset.csv]
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "05_l2_persistence/l2_bench.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch05;

struct Snapshot {
  std::size_t limit = 0;
  cudaAccessPolicyWindow window{};
};

Snapshot snapshot(cudaStream_t s) { return {persisting_limit(), stream_window(s)}; }

struct State {
  bool have_initial = false;
  Snapshot initial;  // before the first variant touched anything
  std::size_t set_aside = 0;
  int passes = 0;
  std::size_t work_n = 0, polluter_n = 0;
  unsigned work_blocks = 0, polluter_blocks = 0;
  DeviceBuffer<uint4> work, polluter, out, scratch;
  std::vector<uint4> expected;
  std::unique_ptr<Timing> clean;
};

void remember_initial(Context& ctx, State& st) {
  if (st.have_initial) return;
  st.initial = snapshot(ctx.stream());
  st.have_initial = true;
}

State& prepare(Context& ctx, State& st, const PersistingL2Guard& guard) {
  if (st.work_n != 0) return st;
  check_stream_size(ctx);
  st.set_aside = guard.limit();
  st.passes = passes_option(ctx, 2);
  st.work_n = ctx.size() / sizeof(uint4);
  st.polluter_n = st.set_aside / sizeof(uint4);
  const unsigned resident = reread_resident_blocks(ctx.device().sm_count);
  st.work_blocks = reread_blocks(st.work_n, resident);
  st.polluter_blocks = reread_blocks(st.polluter_n, resident);
  st.work = DeviceBuffer<uint4>(st.work_n);
  st.polluter = DeviceBuffer<uint4>(st.polluter_n);
  st.out = DeviceBuffer<uint4>(static_cast<std::size_t>(st.work_blocks) * kBlock);
  st.scratch = DeviceBuffer<uint4>(static_cast<std::size_t>(st.polluter_blocks) * kBlock);
  launch_fill_elements(st.work.data(), st.work_n, 0, kRereadSeed, ctx.stream());
  launch_fill_elements(st.polluter.data(), st.polluter_n, 0, kTableSeed, ctx.stream());
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  st.expected = reread_reference(st.work_n, st.passes, static_cast<std::size_t>(st.work_blocks) * kBlock);
  const std::size_t l2 = ctx.device().l2_bytes;
  ctx.note(fmt::format("working set {:.2f} MiB re-read {} times; L2 {:.2f} MiB, set-aside {:.2f} MiB (the limit "
                       "was {:.2f} MiB and is restored), so stale persisting lines leave {:.2f} MiB",
                       to_mib(ctx.size()), st.passes, to_mib(l2), to_mib(st.set_aside), to_mib(guard.previous_limit()),
                       to_mib(l2 > st.set_aside ? l2 - st.set_aside : 0)));
  return st;
}

enum class After { clean, stale, normal_window, reset };

// Untimed set-up of one sample: start from no persisting lines, then leave the state `after` describes.
// [doc:pollute]
void pollute(Context& ctx, State& st, PersistingL2Guard& guard, After after) {
  reset_persisting_lines();
  if (after == After::clean) return;
  const std::size_t max_window = ctx.device().access_policy_max_window;
  const std::size_t x_bytes = st.polluter_n * sizeof(uint4);
  // [doc:stale_or_reset]
  guard.set_stream_window(ctx.stream(), make_window(st.polluter.data(), x_bytes, 1.0, max_window));
  launch_reread(st.polluter.data(), st.polluter_n, 1, st.scratch.data(), st.polluter_blocks, ctx.stream());
  if (after == After::normal_window) {
    guard.set_stream_window(ctx.stream(), make_window(st.polluter.data(), x_bytes, 1.0, max_window,
                                                      cudaAccessPropertyNormal, cudaAccessPropertyNormal));
    launch_reread(st.polluter.data(), st.polluter_n, 1, st.scratch.data(), st.polluter_blocks, ctx.stream());
  }
  guard.clear_stream_window(ctx.stream());  // num_bytes = 0, hitProp normal
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  if (after == After::reset) CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  // [/doc:stale_or_reset]
}
// [/doc:pollute]

Timing measure_after(Context& ctx, State& st, PersistingL2Guard& guard, After after) {
  const auto launch = [&](cudaStream_t s) {
    launch_reread(st.work.data(), st.work_n, st.passes, st.out.data(), st.work_blocks, s);
  };
  return time_isolated(ctx, launch, [&] { pollute(ctx, st, guard, after); });
}

bool verify(Context& ctx, State& st, const std::string& what) {
  st.out.poison(ctx.stream());
  launch_reread(st.work.data(), st.work_n, st.passes, st.out.data(), st.work_blocks, ctx.stream());
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return ctx.check(compare_exact(st.out.download(), st.expected), what);
}

void run_after(Context& ctx, After after) {
  State& st = ctx.state<State>();
  remember_initial(ctx, st);
  const auto guard = set_aside_or_waive(set_aside_option(ctx));
  prepare(ctx, st, *guard);
  const std::string params = fmt::format("working_set_mib={:.2f}", to_mib(ctx.size()));
  if (!verify(ctx, st, params)) {
    ctx.add_row(params, ctx.size(), false);
    return;
  }
  if (!st.clean) st.clean = std::make_unique<Timing>(measure_after(ctx, st, *guard, After::clean));
  const Timing t = after == After::clean ? *st.clean : measure_after(ctx, st, *guard, after);
  const double bytes = static_cast<double>(st.passes) * static_cast<double>(st.work_n * sizeof(uint4));
  Row& row = ctx.add_timed_row(params, ctx.size(), bytes, t, true);
  row.set("working_set_mib", to_mib(st.work_n * sizeof(uint4)))
      .set("persisting_left_mib", after == After::stale ? to_mib(st.polluter_n * sizeof(uint4)) : 0.0)
      .set("vs_clean", st.clean->stats.median / t.stats.median);
}

void state_restored(Context& ctx) {
  State& st = ctx.state<State>();
  remember_initial(ctx, st);
  const Snapshot now = snapshot(ctx.stream());
  const auto row = [&](const std::string& what, double before, double after) {
    const bool ok = ctx.check(compare_value(after, before, what), what + " restored");
    ctx.add_row(what, 0, ok).set("before", before).set("after", after);
  };
  row("persisting_limit_bytes", static_cast<double>(st.initial.limit), static_cast<double>(now.limit));
  row("window_base_ptr", static_cast<double>(reinterpret_cast<std::uintptr_t>(st.initial.window.base_ptr)),
      static_cast<double>(reinterpret_cast<std::uintptr_t>(now.window.base_ptr)));
  row("window_num_bytes", static_cast<double>(st.initial.window.num_bytes), static_cast<double>(now.window.num_bytes));
  row("window_hit_ratio", st.initial.window.hitRatio, now.window.hitRatio);
  row("window_hit_prop", st.initial.window.hitProp, now.window.hitProp);
  row("window_miss_prop", st.initial.window.missProp, now.window.missProp);
  ctx.note(fmt::format("persisting limit {:.2f} MiB before, {:.2f} MiB after; stream window {} bytes, hitProp {} "
                       "before; {} bytes, hitProp {} after",
                       to_mib(st.initial.limit), to_mib(now.limit), st.initial.window.num_bytes,
                       property_name(st.initial.window.hitProp), now.window.num_bytes,
                       property_name(now.window.hitProp)));
}

std::vector<Claim> claims() {
  return {
      Claim{"reset_restores_clean_speed",
            "After cudaCtxResetPersistingL2Cache the re-read runs as fast as if no persisting lines had ever "
            "been made.",
            "vs_clean of after_reset (clean time / time)", Bound::at_least(0.95),
            "a reset turns every persisting line into a normal one, which the next flush evicts; 5% is noise",
            ClaimKind::device, [](const RunRows& r) { return r.only_value("after_reset", "vs_clean"); }},
      Claim{"normal_window_restores_clean_speed",
            "Reading the persisting buffer once more through a window with hitProp = normal also gives the L2 "
            "back.",
            "vs_clean of after_normal_window", Bound::at_least(0.95),
            "the second pass demotes the lines it touches, and it touches all of them; 5% is noise",
            ClaimKind::device, [](const RunRows& r) { return r.only_value("after_normal_window", "vs_clean"); }},
      Claim{"stale_lines_slow_the_next_kernel",
            "Persisting lines left behind by a cleared window slow a later kernel whose working set needs the "
            "whole L2.",
            "vs_clean of stale_persisting", Bound::at_most(0.97),
            "clearing the window does not demote its lines, so the working set only gets L2 minus the set-aside; "
            "how much that costs depends on how much of it then misses, 3% is above the noise of the medians",
            ClaimKind::device,
            [](const RunRows& r) {
              // Only a working set that fits the L2 but not beside the stale lines can show the loss.
              const Row& row = r.only("stale_persisting");
              const double l2_mib = r.fact("l2_bytes") / (1024.0 * 1024.0);
              const double work = RunRows::value(row, "working_set_mib");
              const double left = RunRows::value(row, "persisting_left_mib");
              if (!(work < l2_mib && work + left > l2_mib))
                throw NotApplicable(fmt::format("a {:.2f} MiB working set with {:.2f} MiB of stale lines in a "
                                                "{:.2f} MiB L2 does not need the set-aside's part of it",
                                                work, left, l2_mib));
              return RunRows::value(row, "vs_clean");
            }},
      Claim{"state_restored",
            "The persisting limit and the stream's window read back after the demo exactly as before it ran.",
            "state_restored rows whose value after differs from before", Bound::at_most(0),
            "every change goes through PersistingL2Guard, which puts it back; any difference leaks into later "
            "programs",
            ClaimKind::device, [](const RunRows& r) { return r.unverified_rows("state_restored"); }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "l2_reset";
  d.summary =
      "A kernel re-reads a working set that fits the L2 but not L2 minus the set-aside, after a persisting window\n"
      "filled the set-aside and was cleared without reset / demoted with hitProp normal / reset with\n"
      "cudaCtxResetPersistingL2Cache; the persisting limit and the stream window, before and after.";
  d.size_meaning = "bytes of the re-read working set (default: 0.7 x the L2 size)";
  d.variants = {
      {"clean", "no persisting lines: the whole L2", [](Context& c) { run_after(c, After::clean); }},
      {"stale_persisting", "window cleared, persisting lines not reset",
       [](Context& c) { run_after(c, After::stale); }},
      {"after_normal_window", "lines demoted by a window with hitProp = normal",
       [](Context& c) { run_after(c, After::normal_window); }},
      {"after_reset", "window cleared and cudaCtxResetPersistingL2Cache()",
       [](Context& c) { run_after(c, After::reset); }},
      {"state_restored", "persisting limit and stream window, before vs after", state_restored},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo& dev) {
    return static_cast<std::uint64_t>(dev.l2_bytes / 10 * 7 / 4096 * 4096);
  };
  d.quick_size = 2 * kMiB;
  // The working set, the polluter (the set-aside, < 128 MiB) and the per-thread outputs (a few MB).
  d.device_bytes = [](std::uint64_t n) { return static_cast<double>(n) + 128.0 * kMiB + 16e6; };
  d.extras = {
      passes_extra("re-reads of the working set per launch", 16),
      set_aside_max_extra("persisting L2 set-aside", ZeroSetAside::refused),
  };
  d.check_options = [](Context& ctx) {
    check_stream_size(ctx);
    (void)passes_option(ctx, 2);
    // Without a set-aside nothing persists and there are no stale lines to measure.
    if (set_aside_option(ctx) == 0) throw CliError("--set-aside: l2_reset needs a set-aside to leave lines in, not 0");
  };
  d.warmup_ms = 20.0;
  d.waive_reason = persistence_waive_reason;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
