// l2_window_api: does it matter where an L2 access-policy window is attached: a stream, a graph kernel node,
// or one launch?
//
// The three attachments set the same hardware state for the kernels they cover, so on one workload they
// should buy the same time. The stream and node windows are read back and compared with what was set (a
// node's before cudaGraphInstantiate, since the executable graph copies node attributes); a launch attribute
// lives in its launch alone and cannot be. Each is measured against no window and no set-aside, and against
// no window under the same set-aside, which PersistingL2Guard restores afterwards.
//
// Run: build/bin/l2_window_api [--persist 28M] [--set-aside max] [--csv api.csv]
#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "05_l2_persistence/l2_bench.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch05;

struct State {
  std::size_t table_bytes = 0;
  std::unique_ptr<SlidingWorkload> work;
  std::unique_ptr<Timing> baseline;        // no window, no set-aside
  std::unique_ptr<Timing> same_set_aside;  // no window, under the windows' set-aside
};

// Tables in whole 4 KiB pages: the driver "may align" a window, and the read-back must compare equal.
constexpr std::size_t kWindowAlign = 4096;

// --persist, or 3/4 of the largest set-aside (1 MiB under --quick).
std::size_t table_bytes_of(const Context& ctx) {
  if (const auto persist = persist_option(ctx, kWindowAlign)) return *persist;
  if (ctx.quick()) return kMiB;
  const std::size_t bytes = ctx.device().persisting_l2_max / 4 * 3 / kWindowAlign * kWindowAlign;
  if (bytes < kWindowAlign) throw CliError("--persist: at least 4k");  // "auto" under a tiny set-aside
  return bytes;
}

State& prepare(Context& ctx, State& st) {
  if (st.work) return st;
  check_stream_size(ctx);
  st.table_bytes = table_bytes_of(ctx);
  st.work = std::make_unique<SlidingWorkload>(ctx.size(), passes_option(ctx, 2), st.table_bytes,
                                              sliding_window_resident_blocks(ctx.device().sm_count));
  ctx.note(fmt::format("table {:.2f} MiB; windows run with --set-aside {} (largest {:.2f} MiB; {:.2f} MiB at start, "
                       "restored); stream {:.2f} MiB per pass x {} passes",
                       to_mib(st.table_bytes), ctx.extra_text("set-aside"), to_mib(ctx.device().persisting_l2_max),
                       to_mib(persisting_limit()), to_mib(st.work->stream_per_pass()), st.work->passes()));
  ctx.note("speedup: the no-window, no-set-aside time / this time; vs_same_set_aside: no window under the windows' "
           "set-aside / this time");
  return st;
}

cudaAccessPolicyWindow window_of(Context& ctx, const State& st) {
  return make_window(st.work->table(), st.table_bytes, 1.0, ctx.device().access_policy_max_window);
}

// Verifies and times the plain launch on ctx's stream (which must carry no window), under the set-aside in force.
std::unique_ptr<Timing> time_no_window(Context& ctx, State& st, bool without_set_aside, const std::string& what) {
  const auto launch = [&](cudaStream_t s) { st.work->launch(st.table_bytes, s); };
  if (!st.work->verify(ctx, st.table_bytes, launch, what)) return nullptr;
  return std::make_unique<Timing>(without_set_aside ? time_without_set_aside(ctx, launch)
                                                    : time_isolated(ctx, launch));
}

// The two no-window times every row is compared with, each measured once. `guard` holds the windows' set-aside.
void baselines(Context& ctx, State& st, PersistingL2Guard& guard) {
  guard.clear_stream_window(ctx.stream());
  if (!st.baseline) st.baseline = time_no_window(ctx, st, true, "no window, no set-aside");
  if (!st.same_set_aside) st.same_set_aside = time_no_window(ctx, st, false, "no window under the set-aside");
}

std::string params_of(const State& st) { return fmt::format("persist_mib={:.2f}", to_mib(st.table_bytes)); }

Row& add_row(Context& ctx, const State& st, const Timing& t, const cudaAccessPolicyWindow& w, std::size_t set_aside,
             double readback_ok) {
  Row& row = ctx.add_timed_row(params_of(st), ctx.size(), st.work->bytes_per_launch(st.table_bytes), t, true);
  const std::size_t resident = model_resident_bytes(w.num_bytes, w.hitRatio, set_aside);
  const auto vs = [&row](const std::unique_ptr<Timing>& b) { return b ? b->stats.median / row.median_ms : kNaN; };
  row.set("persist_mib", to_mib(st.table_bytes))
      .set("set_aside_mib", to_mib(set_aside))
      .set("window_mib", to_mib(w.num_bytes))
      .set("hit_ratio", w.hitRatio)
      .set("readback_ok", readback_ok)
      .set("speedup", vs(st.baseline))
      .set("vs_same_set_aside", vs(st.same_set_aside))
      .set("model_speedup", model_speedup(st.work->shape(st.table_bytes), resident));
  return row;
}

// The windows' set-aside, with the two baselines measured before the first window is set.
std::unique_ptr<PersistingL2Guard> windows_set_aside(Context& ctx, State& st) {
  prepare(ctx, st);
  auto guard = set_aside_or_waive(set_aside_for_table(ctx, st.table_bytes));
  baselines(ctx, st, *guard);
  return guard;
}

void no_window(Context& ctx, bool under_set_aside) {
  State& st = ctx.state<State>();
  const auto guard = windows_set_aside(ctx, st);
  const std::unique_ptr<Timing>& t = under_set_aside ? st.same_set_aside : st.baseline;
  if (!t) {
    ctx.add_row(params_of(st), ctx.size(), false);
    return;
  }
  add_row(ctx, st, *t, cleared_window(), under_set_aside ? guard->limit() : 0, kNaN);
}

// Verifies one launch through `launch`, times it under the guard's set-aside, and adds the row.
void measure(Context& ctx, State& st, const PersistingL2Guard& guard,
             const std::function<void(cudaStream_t)>& launch, const cudaAccessPolicyWindow& w, double readback_ok) {
  if (!st.work->verify(ctx, st.table_bytes, launch, params_of(st))) {
    ctx.add_row(params_of(st), ctx.size(), false);
    return;
  }
  add_row(ctx, st, time_isolated(ctx, launch), w, guard.limit(), readback_ok);
}

void stream_attribute(Context& ctx) {
  State& st = ctx.state<State>();
  const auto guard = windows_set_aside(ctx, st);
  const cudaAccessPolicyWindow w = window_of(ctx, st);
  guard->set_stream_window(ctx.stream(), w);
  const bool ok = check_window(ctx, stream_window(ctx.stream()), w, "stream window read back");
  measure(ctx, st, *guard, [&](cudaStream_t s) { st.work->launch(st.table_bytes, s); }, w, ok ? 1.0 : 0.0);
}

void graph_node_attribute(Context& ctx) {
  State& st = ctx.state<State>();
  const auto guard = windows_set_aside(ctx, st);
  const cudaAccessPolicyWindow w = window_of(ctx, st);
  Graph graph;
  const cudaGraphNode_t node = add_sliding_window_node(graph.get(), st.work->table(), st.table_bytes / sizeof(uint4),
                                                       st.work->stream(), st.work->chunk_n(), st.work->passes(),
                                                       st.work->max_blocks());
  // [doc:node_window]
  set_node_window(node, w);  // before instantiation: the executable graph copies node attributes
  const bool ok = check_window(ctx, node_window(node), w, "graph kernel node window read back");
  const GraphExec exec(graph);
  // [/doc:node_window]
  measure(ctx, st, *guard, [&](cudaStream_t s) { exec.launch(s); }, w, ok ? 1.0 : 0.0);
}

void launch_attribute(Context& ctx) {
  State& st = ctx.state<State>();
  const auto guard = windows_set_aside(ctx, st);
  const cudaAccessPolicyWindow w = window_of(ctx, st);
  // Nothing to read back: the attribute lives only in this launch's configuration.
  measure(
      ctx, st, *guard,
      [&](cudaStream_t s) {
        launch_sliding_window_with_window(st.work->table(), st.table_bytes / sizeof(uint4), st.work->stream(),
                                          st.work->chunk_n(), st.work->passes(), st.work->max_blocks(), w, s);
      },
      w, kNaN);
}


std::vector<Claim> claims() {
  return {
      Claim{"stream_window_pays",
            "With the set-aside sized to the table, a persisting window on the stream makes the kernel at least "
            "1.05x faster than no window and no set-aside.",
            "speedup of stream_attribute", Bound::at_least(1.05),
            "every pass keeps the table's read misses and write-backs out of DRAM; the no-window run keeps part "
            "of the table in L2 by itself; 5% is above the noise of two medians",
            ClaimKind::device,
            [](const RunRows& r) {
              require_no_set_aside_baseline(r, true);
              if (r.only_value("stream_attribute", "model_speedup") <= 1.0)
                throw NotApplicable("the table does not fit the set-aside (--persist): the model predicts no gain");
              return r.only_value("stream_attribute", "speedup");
            }},
      Claim{"stream_window_under_model",
            "The stream window stays under the speed-up the DRAM-traffic model predicts: the model is an upper "
            "bound.",
            "speedup / model_speedup of stream_attribute", Bound::at_most(1.0),
            "the model counts only the DRAM bytes a window can save and assumes the no-window run misses the "
            "whole table every pass; a measurement above it means the baseline is slower for another reason",
            ClaimKind::device,
            [](const RunRows& r) {
              require_no_set_aside_baseline(r, true);
              return r.only_value("stream_attribute", "speedup") / r.only_value("stream_attribute", "model_speedup");
            }},
      Claim{"graph_node_window_like_stream",
            "The same window on a CUDA graph kernel node buys the same time as on the stream.",
            "median_ms graph_node_attribute / median_ms stream_attribute", Bound::between(0.95, 1.05),
            "one hardware feature set through two APIs; 5% is the noise between two medians",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.only_value("graph_node_attribute", "median_ms") /
                     r.only_value("stream_attribute", "median_ms");
            }},
      Claim{"launch_window_like_stream",
            "The same window as a cudaLaunchKernelEx attribute buys the same time as on the stream.",
            "median_ms launch_attribute / median_ms stream_attribute", Bound::between(0.95, 1.05),
            "one hardware feature set through two APIs; 5% is the noise between two medians",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.only_value("launch_attribute", "median_ms") / r.only_value("stream_attribute", "median_ms");
            }},
      Claim{"windows_read_back",
            "The windows set on the stream and on the graph node read back exactly as set.",
            "lowest readback_ok of stream_attribute and graph_node_attribute (1 = equal)", Bound::at_least(1.0),
            "the runtime stores the window as given (whole pages, hitRatio a float): any difference is a finding",
            ClaimKind::device,
            [](const RunRows& r) {
              return min_of({r.only_value("stream_attribute", "readback_ok"),
                             r.only_value("graph_node_attribute", "readback_ok")});
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "l2_window_api";
  d.summary =
      "One persisting window (hitRatio 1 over a table that fits the set-aside) attached to a stream, to a CUDA\n"
      "graph kernel node and to a single cudaLaunchKernelEx launch, against no window and no set-aside.";
  d.variants = {
      {"no_window", "baseline: no window, no set-aside", [](Context& c) { no_window(c, false); }},
      {"no_window_set_aside", "no window, under the windows' set-aside (what it costs)",
       [](Context& c) { no_window(c, true); }},
      {"stream_attribute", "cudaStreamSetAttribute(cudaStreamAttributeAccessPolicyWindow)", stream_attribute},
      {"graph_node_attribute", "cudaGraphKernelNodeSetAttribute(cudaKernelNodeAttributeAccessPolicyWindow)",
       graph_node_attribute},
      {"launch_attribute", "cudaLaunchKernelEx with cudaLaunchAttributeAccessPolicyWindow", launch_attribute},
  };
  d.claims = claims();
  set_sliding_window_sizes(d, persist_extra("table size", "3/4 of the largest set-aside"), table_bytes_of);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
