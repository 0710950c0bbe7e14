// l2_window_api: the three places an L2 access-policy window can be attached, on one workload.
//
// Shows: the sliding-window workload of l2_sliding_window at one table size that fits the set-aside (default
// 3/4 of it), run with no window, then with the same persisting window (hitRatio 1) attached
//   - to the stream: cudaStreamSetAttribute(cudaStreamAttributeAccessPolicyWindow), applies to every later
//     kernel in the stream until cleared;
//   - to a CUDA graph kernel node: cudaGraphKernelNodeSetAttribute(cudaKernelNodeAttributeAccessPolicyWindow)
//     before cudaGraphInstantiate;
//   - to one launch: cudaLaunchKernelEx with a cudaLaunchAttributeAccessPolicyWindow attribute.
// Each window is read back (stream and node) and compared with what was set; the set-aside
// (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)) is set and restored by PersistingL2Guard.
// The three attachments set the same hardware state for the kernels they cover, so they should buy the same
// speed-up; only the stream and the graph node can be read back (a launch attribute lives in the launch alone).
// What you should see is declared in make_demo() as claims, judged after every run (--claims lists them).
// Run: build/bin/l2_window_api [--persist 28M] [--csv api.csv]
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "05_l2_persistence/l2_bench.hpp"
#include "05_l2_persistence/l2_claims.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch05;

struct State {
  std::size_t set_aside = 0;
  std::size_t table_bytes = 0;
  std::unique_ptr<SlidingWorkload> work;
  std::unique_ptr<Timing> baseline;
};

// Tables in whole 4 KiB pages: the driver "may align" a window, and the read-back must compare equal.
constexpr std::size_t kWindowAlign = 4096;

State& prepare(Context& ctx, State& st, const PersistingL2Guard& guard) {
  if (st.work) return st;
  check_stream_size(ctx);
  st.set_aside = guard.limit();
  if (const auto persist = persist_option(ctx, kWindowAlign)) st.table_bytes = *persist;
  else if (ctx.quick()) st.table_bytes = kMiB;
  else st.table_bytes = st.set_aside / 4 * 3 / kWindowAlign * kWindowAlign;
  if (st.table_bytes < kWindowAlign) throw CliError("--persist: at least 4k");  // "auto" under a tiny set-aside
  st.work = std::make_unique<SlidingWorkload>(ctx.size(), passes_option(ctx, 2), st.table_bytes,
                                              sliding_window_resident_blocks(ctx.device().sm_count));
  ctx.note(fmt::format("table {:.2f} MiB in a {:.2f} MiB set-aside (the limit was {:.2f} MiB and is restored); "
                       "stream {:.2f} MiB per pass x {} passes",
                       to_mib(st.table_bytes), to_mib(st.set_aside), to_mib(guard.previous_limit()),
                       to_mib(st.work->stream_per_pass()), st.work->passes()));
  if (st.table_bytes > st.set_aside) ctx.note("note: the table does not fit the set-aside; expect little gain");
  return st;
}

cudaAccessPolicyWindow window_of(Context& ctx, const State& st) {
  return make_window(st.work->table(), st.table_bytes, 1.0, ctx.device().access_policy_max_window);
}

const Timing* baseline(Context& ctx, State& st, PersistingL2Guard& guard) {
  if (st.baseline) return st.baseline.get();
  guard.clear_stream_window(ctx.stream());
  const auto launch = [&](cudaStream_t s) { st.work->launch(st.table_bytes, s); };
  if (!st.work->verify(ctx, st.table_bytes, launch, "no window")) return nullptr;
  st.baseline = std::make_unique<Timing>(time_isolated(ctx, launch));
  return st.baseline.get();
}

// Verifies one launch through `launch`, times it, and adds the row (speed-up against `base`).
void measure(Context& ctx, State& st, const Timing* base, const std::function<void(cudaStream_t)>& launch,
             const cudaAccessPolicyWindow& w, double readback_ok) {
  const std::string params = fmt::format("persist_mib={:.2f}", to_mib(st.table_bytes));
  if (!st.work->verify(ctx, st.table_bytes, launch, params)) {
    ctx.add_row(params, ctx.size(), false);
    return;
  }
  const Timing t = time_isolated(ctx, launch);
  Row& row = ctx.add_timed_row(params, ctx.size(), st.work->bytes_per_launch(st.table_bytes), t, true);
  const std::size_t resident = model_resident_bytes(w.num_bytes, w.hitRatio, st.set_aside);
  row.set("persist_mib", to_mib(st.table_bytes))
      .set("window_mib", to_mib(w.num_bytes))
      .set("hit_ratio", w.hitRatio)
      .set("readback_ok", readback_ok)
      .set("speedup", base != nullptr ? base->stats.median / t.stats.median : kNaN)
      .set("model_speedup", model_speedup(st.work->shape(st.table_bytes), resident));
}

void no_window(Context& ctx, State& st) {
  const auto guard = set_aside_or_waive(set_aside_option(ctx));
  prepare(ctx, st, *guard);
  const Timing* base = baseline(ctx, st, *guard);
  const std::string params = fmt::format("persist_mib={:.2f}", to_mib(st.table_bytes));
  if (base == nullptr) {
    ctx.add_row(params, ctx.size(), false);
    return;
  }
  Row& row = ctx.add_timed_row(params, ctx.size(), st.work->bytes_per_launch(st.table_bytes), *base, true);
  row.set("persist_mib", to_mib(st.table_bytes)).set("window_mib", 0.0).set("hit_ratio", 0.0).set("speedup", 1.0)
      .set("model_speedup", 1.0);
}

void stream_attribute(Context& ctx, State& st) {
  const auto guard = set_aside_or_waive(set_aside_option(ctx));
  prepare(ctx, st, *guard);
  const Timing* base = baseline(ctx, st, *guard);
  const cudaAccessPolicyWindow w = window_of(ctx, st);
  guard->set_stream_window(ctx.stream(), w);
  const bool ok = check_window(ctx, stream_window(ctx.stream()), w, "stream window read back");
  measure(ctx, st, base, [&](cudaStream_t s) { st.work->launch(st.table_bytes, s); }, w, ok ? 1.0 : 0.0);
}

void graph_node_attribute(Context& ctx, State& st) {
  const auto guard = set_aside_or_waive(set_aside_option(ctx));
  prepare(ctx, st, *guard);
  const Timing* base = baseline(ctx, st, *guard);
  guard->clear_stream_window(ctx.stream());  // the node's window must be the only one
  const cudaAccessPolicyWindow w = window_of(ctx, st);
  Graph graph;
  const cudaGraphNode_t node = add_sliding_window_node(graph.get(), st.work->table(), st.table_bytes / sizeof(uint4),
                                                       st.work->stream(), st.work->chunk_n(), st.work->passes(),
                                                       st.work->max_blocks());
  set_node_window(node, w);  // before instantiation: the executable graph copies node attributes
  const bool ok = check_window(ctx, node_window(node), w, "graph kernel node window read back");
  const GraphExec exec(graph);
  measure(ctx, st, base, [&](cudaStream_t s) { exec.launch(s); }, w, ok ? 1.0 : 0.0);
}

void launch_attribute(Context& ctx, State& st) {
  const auto guard = set_aside_or_waive(set_aside_option(ctx));
  prepare(ctx, st, *guard);
  const Timing* base = baseline(ctx, st, *guard);
  guard->clear_stream_window(ctx.stream());
  const cudaAccessPolicyWindow w = window_of(ctx, st);
  // Nothing to read back: the attribute lives only in this launch's configuration.
  measure(
      ctx, st, base,
      [&](cudaStream_t s) {
        launch_sliding_window_with_window(st.work->table(), st.table_bytes / sizeof(uint4), st.work->stream(),
                                          st.work->chunk_n(), st.work->passes(), st.work->max_blocks(), w, s);
      },
      w, kNaN);
}

std::vector<Claim> claims() {
  return {
      Claim{"stream_window_reaches_model",
            "A persisting window on the stream, over a table that fits the set-aside, reaches the speed-up the "
            "DRAM-traffic model predicts over no window.",
            "speedup / model_speedup of stream_attribute", Bound::at_least(0.9),
            "every table byte persists, so each pass saves its DRAM read and write-back; 10% allows for noise "
            "and for the L2 traffic the model ignores",
            ClaimKind::device,
            [](const RunRows& r) {
              if (only_value(r, "stream_attribute", "model_speedup") <= 1.0)
                throw NotApplicable("the table does not fit the set-aside (--persist): the model predicts no gain");
              return only_value(r, "stream_attribute", "speedup") / only_value(r, "stream_attribute", "model_speedup");
            }},
      Claim{"graph_node_window_like_stream",
            "The same window on a CUDA graph kernel node buys the same time as on the stream.",
            "median_ms graph_node_attribute / median_ms stream_attribute", Bound::between(0.95, 1.05),
            "one hardware feature set through two APIs; 5% is the noise between two medians",
            ClaimKind::device,
            [](const RunRows& r) {
              return only_value(r, "graph_node_attribute", "median_ms") /
                     only_value(r, "stream_attribute", "median_ms");
            }},
      Claim{"launch_window_like_stream",
            "The same window as a cudaLaunchKernelEx attribute buys the same time as on the stream.",
            "median_ms launch_attribute / median_ms stream_attribute", Bound::between(0.95, 1.05),
            "one hardware feature set through two APIs; 5% is the noise between two medians",
            ClaimKind::device,
            [](const RunRows& r) {
              return only_value(r, "launch_attribute", "median_ms") / only_value(r, "stream_attribute", "median_ms");
            }},
      Claim{"windows_read_back",
            "The windows set on the stream and on the graph node read back exactly as set.",
            "lowest readback_ok of stream_attribute and graph_node_attribute (1 = equal)", Bound::at_least(1.0),
            "the runtime stores the window as given (whole pages, hitRatio a float): any difference is a finding",
            ClaimKind::device,
            [](const RunRows& r) {
              return min_of({only_value(r, "stream_attribute", "readback_ok"),
                             only_value(r, "graph_node_attribute", "readback_ok")});
            }},
  };
}

Demo make_demo() {
  auto st = std::make_shared<State>();
  Demo d;
  d.name = "l2_window_api";
  d.summary =
      "One persisting window (hitRatio 1 over a table that fits the set-aside) attached to a stream, to a CUDA\n"
      "graph kernel node and to a single cudaLaunchKernelEx launch, against no window.";
  d.size_meaning = "bytes streamed per pass (default: the L2 size)";
  d.variants = {
      {"no_window", "baseline: no access-policy window", [st](Context& c) { no_window(c, *st); }},
      {"stream_attribute", "cudaStreamSetAttribute(cudaStreamAttributeAccessPolicyWindow)",
       [st](Context& c) { stream_attribute(c, *st); }},
      {"graph_node_attribute", "cudaGraphKernelNodeSetAttribute(cudaKernelNodeAttributeAccessPolicyWindow)",
       [st](Context& c) { graph_node_attribute(c, *st); }},
      {"launch_attribute", "cudaLaunchKernelEx with cudaLaunchAttributeAccessPolicyWindow",
       [st](Context& c) { launch_attribute(c, *st); }},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo& dev) { return static_cast<std::uint64_t>(dev.l2_bytes); };
  d.quick_size = 4 * kMiB;
  // The stream (8 passes by default), the table and the L2 flush buffer; check_options checks the run's own
  // --passes and --persist.
  d.device_bytes = [](std::uint64_t n) { return 8.0 * static_cast<double>(n) + 512e6; };
  d.extras = {
      {"passes", "passes per launch (1 ... 64; --quick: 2)", "8", true},
      {"set-aside", "persisting L2 set-aside: max (persistingL2CacheMaxSize) or a size", "max", false},
      {"persist", "table size (auto: 3/4 of the set-aside)", "auto", false},
  };
  d.check_options = [](Context& ctx) {
    check_stream_size(ctx);
    // "auto" takes at most the set-aside asked for (or 1 MiB under --quick).
    const std::size_t table = persist_option(ctx, kWindowAlign).value_or(std::max(set_aside_option(ctx), kMiB));
    check_workload_memory(ctx, 1, passes_option(ctx, 2), table);
  };
  d.warmup_ms = 20.0;
  d.waive_reason = persistence_waive_reason;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
