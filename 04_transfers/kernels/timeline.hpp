// A timeline of the staged pipeline from CUDA events, written as a Chrome trace (host-only).
//
// Nsight Systems draws this picture from the driver's own records; without it, events recorded between
// the steps of each chunk give the same story to within a few microseconds. Perfetto
// (https://ui.perfetto.dev) and chrome://tracing open the JSON; scripts/timeline_plot.py draws it as a PNG.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/output.hpp"

namespace cml::ch04 {

enum class Step { h2d = 0, kernel = 1, d2h = 2 };

inline const char* step_name(Step s) {
  switch (s) {
    case Step::h2d: return "H2D";
    case Step::kernel: return "kernel";
    case Step::d2h: return "D2H";
  }
  return "?";
}

// One step of one chunk as the events saw it, in milliseconds from the trace's first event: `ready_ms`
// is when its stream reached it (the chunk's previous step had finished), `end_ms` when it finished.
struct StepTimes {
  int stream = 0;
  int chunk = 0;
  Step step = Step::h2d;
  double ready_ms = 0.0, end_ms = 0.0;
  std::size_t bytes = 0;  // moved by a copy; read + written by the kernel
};

// The same step with the moment its engine could take it.
struct Span {
  StepTimes t;
  double start_ms = 0.0;
};

// An event marks when a stream reaches it, not when an engine starts: every chunk's H2D is "ready" at
// the fork, though the copy engine is still busy with the chunks before it. Each engine (H2D copies,
// the SMs, D2H copies) takes the steps of one kind in the order they were issued, so a step starts at
// the later of its ready time and the end of the previous chunk's step of the same kind. (Two kernels
// can share the SMs for a moment while one drains; the picture draws them back to back.)
// `steps` must be in issue order (chunk 0's three steps, then chunk 1's, ...).
inline std::vector<Span> engine_spans(const std::vector<StepTimes>& steps) {
  std::vector<Span> out;
  out.reserve(steps.size());
  std::array<double, 3> engine_free{0.0, 0.0, 0.0};
  for (const StepTimes& t : steps) {
    double& free_at = engine_free[static_cast<int>(t.step)];
    const double start = std::min(std::max(t.ready_ms, free_at), t.end_ms);
    out.push_back({t, start});
    free_at = std::max(free_at, t.end_ms);
  }
  return out;
}

// One traced run of the pipeline (e.g. "sequential, one stream" and "staged, 4 streams").
struct TimelineRun {
  std::string label;
  int streams = 1;
  double total_ms = 0.0;  // first event to the last step's end
  std::vector<Span> spans;
};

inline constexpr int kEngineLaneBase = 100;  // trace rows 100..102: the engines; 0..streams-1: the streams

inline const char* engine_lane_name(Step s) {
  switch (s) {
    case Step::h2d: return "H2D copies (host to device)";
    case Step::kernel: return "kernels (SMs)";
    case Step::d2h: return "D2H copies (device to host)";
  }
  return "?";
}

// The Chrome trace event format ("X" complete events, microseconds): one process per run, one row per
// stream and one per engine, so Perfetto shows both views. `about` (strings) lands in otherData.
inline std::string chrome_trace_json(const std::vector<TimelineRun>& runs,
                                     const std::vector<std::pair<std::string, std::string>>& about) {
  std::vector<std::string> events;
  auto meta = [&](int pid, int tid, const char* what, const std::string& name) {
    events.push_back(fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"{}","args":{{"name":{}}}}})", pid, tid,
                                 what, json_string(name)));
  };
  auto sort_index = [&](int pid, int tid, int index) {
    events.push_back(
        fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", pid,
                    tid, index));
  };
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const TimelineRun& run = runs[r];
    const int pid = static_cast<int>(r) + 1;
    meta(pid, 0, "process_name", fmt::format("{} ({:.3f} ms)", run.label, run.total_ms));
    events.push_back(
        fmt::format(R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})", pid,
                    pid));
    for (int s = 0; s < run.streams; ++s) {
      meta(pid, s, "thread_name", fmt::format("stream {}", s));
      sort_index(pid, s, s);
    }
    for (Step st : {Step::h2d, Step::kernel, Step::d2h}) {
      const int tid = kEngineLaneBase + static_cast<int>(st);
      meta(pid, tid, "thread_name", engine_lane_name(st));
      sort_index(pid, tid, tid);
    }
    for (const Span& sp : run.spans) {
      const std::string name = fmt::format("{} chunk {}", step_name(sp.t.step), sp.t.chunk);
      const std::string args =
          fmt::format(R"({{"chunk":{},"stream":{},"bytes":{},"ready_us":{:.3f},"end_us":{:.3f}}})", sp.t.chunk,
                      sp.t.stream, sp.t.bytes, sp.t.ready_ms * 1e3, sp.t.end_ms * 1e3);
      for (int tid : {sp.t.stream, kEngineLaneBase + static_cast<int>(sp.t.step)})
        events.push_back(fmt::format(
            R"({{"ph":"X","pid":{},"tid":{},"name":{},"cat":"{}","ts":{:.3f},"dur":{:.3f},"args":{}}})", pid, tid,
            json_string(name), step_name(sp.t.step), sp.start_ms * 1e3, (sp.t.end_ms - sp.start_ms) * 1e3, args));
    }
  }
  std::string other;
  for (const auto& [k, v] : about) other += (other.empty() ? "" : ",") + json_string(k) + ":" + json_string(v);
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{" + other + "},\n\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events.size(); ++i) out += events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  out += "]}\n";
  return out;
}

}  // namespace cml::ch04
