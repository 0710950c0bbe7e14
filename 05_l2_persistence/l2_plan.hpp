// Host-side planning for the L2 persistence chapter: access-policy window parameters clamped to the device
// maxima, Best Practices' hitRatio tuning, the persistent-size sweep, balanced persistent-thread grids, and the
// DRAM-traffic model of the sliding-window workload. Pure functions (no CUDA calls), so the CPU tests cover them.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.hpp"

namespace cml::ch05 {


inline double to_mib(std::size_t bytes) { return static_cast<double>(bytes) / static_cast<double>(kMiB); }

// ---- Window parameters -------------------------------------------------------------------------------------

// A set-aside request as the device can honour it: at most persistingL2CacheMaxSize.
inline std::size_t clamp_set_aside(std::size_t requested, std::size_t persisting_max) {
  return std::min(requested, persisting_max);
}

// hitRatio is a fraction: anything outside [0, 1] (or NaN) is a caller's bug, so it is pinned into range.
// [doc:clamp_hit_ratio]
inline float clamp_hit_ratio(double hit_ratio) {
  if (!(hit_ratio > 0.0)) return 0.0f;  // also NaN
  return hit_ratio >= 1.0 ? 1.0f : static_cast<float>(hit_ratio);
}
// [/doc:clamp_hit_ratio]

// --set-aside: "max" (persisting_max), 0 (none), a size up to persisting_max, or, where the demo sizes the
// set-aside to its table, "fit" (returned as nullopt). Anything else is a CliError: the run's one-line usage error.
inline std::optional<std::size_t> parse_set_aside(const std::string& text, std::size_t persisting_max,
                                                  bool fit_allowed) {
  if (text == "max") return persisting_max;
  if (text == "fit") {
    if (!fit_allowed) throw CliError("--set-aside: 'fit' is not an option of this demo (max, 0 or a size)");
    return std::nullopt;
  }
  // No set-aside at all: what a program that never asks for persistence runs with. parse_size refuses 0.
  if (!text.empty() && text.find_first_not_of('0') == std::string::npos) return 0;
  const std::uint64_t bytes = parse_size(text, "--set-aside");
  if (bytes > persisting_max)
    throw CliError("--set-aside: " + std::to_string(bytes) + " bytes is more than persistingL2CacheMaxSize (" +
                   std::to_string(persisting_max) + " bytes)");
  return static_cast<std::size_t>(bytes);
}

// A window over [base, base + bytes) with num_bytes capped at accessPolicyMaxWindowSize (a larger request is
// rejected or truncated depending on the driver; capping it here makes the behaviour ours, not the driver's).
inline cudaAccessPolicyWindow make_window(void* base, std::size_t bytes, double hit_ratio, std::size_t max_window,
                                          cudaAccessProperty hit_prop = cudaAccessPropertyPersisting,
                                          cudaAccessProperty miss_prop = cudaAccessPropertyStreaming) {
  cudaAccessPolicyWindow w{};
  w.base_ptr = base;
  w.num_bytes = std::min(bytes, max_window);
  w.hitRatio = clamp_hit_ratio(hit_ratio);
  w.hitProp = hit_prop;
  w.missProp = miss_prop;
  return w;
}

// Best Practices 9.2.2.2: when the persistent data outgrows the set-aside, keep the window over all of it but
// lower hitRatio so that hitRatio x num_bytes = set-aside: that many bytes, picked by the hardware, persist; the
// rest take missProp (streaming) instead of evicting each other in the set-aside.
// [doc:tuned_window]
inline double tuned_hit_ratio(std::size_t window_bytes, std::size_t set_aside) {
  if (window_bytes == 0) return 0.0;
  return std::min(1.0, static_cast<double>(set_aside) / static_cast<double>(window_bytes));
}

inline cudaAccessPolicyWindow tuned_window(void* base, std::size_t region_bytes, std::size_t set_aside,
                                           std::size_t max_window) {
  const std::size_t bytes = std::min(region_bytes, max_window);
  return make_window(base, bytes, tuned_hit_ratio(bytes, set_aside), max_window);
}
// [/doc:tuned_window]

// What "no window" reads back as on a fresh stream: every field zero, both properties normal.
inline cudaAccessPolicyWindow cleared_window() {
  cudaAccessPolicyWindow w{};
  w.base_ptr = nullptr;
  w.num_bytes = 0;
  w.hitRatio = 0.0f;
  w.hitProp = cudaAccessPropertyNormal;
  w.missProp = cudaAccessPropertyNormal;
  return w;
}

inline bool same_window(const cudaAccessPolicyWindow& a, const cudaAccessPolicyWindow& b) {
  return a.base_ptr == b.base_ptr && a.num_bytes == b.num_bytes && a.hitRatio == b.hitRatio &&
         a.hitProp == b.hitProp && a.missProp == b.missProp;
}

inline const char* property_name(cudaAccessProperty p) {
  switch (p) {
    case cudaAccessPropertyNormal: return "normal";
    case cudaAccessPropertyStreaming: return "streaming";
    case cudaAccessPropertyPersisting: return "persisting";
  }
  return "unknown";
}

// ---- The persistent-size sweep -----------------------------------------------------------------------------

// Persistent-region sizes as eighths of the set-aside: seven that fit, three that do not. Exactly 8/8 is left
// out on purpose: at the boundary the result depends on how evenly the hardware hashes lines into sets.
inline std::vector<std::size_t> default_persist_sizes(std::size_t set_aside) {
  static constexpr int kEighths[] = {1, 2, 3, 4, 5, 6, 7, 9, 10, 12};
  std::vector<std::size_t> sizes;
  for (int e : kEighths) {
    const std::size_t bytes = set_aside / 8 * static_cast<std::size_t>(e);
    sizes.push_back(std::max<std::size_t>(bytes / 4096 * 4096, 4096));  // whole 4 KiB pages, never empty
  }
  return sizes;
}

// "5M,10M,20M" -> bytes, each rounded down to whole 16-byte elements. Throws CliError on bad input.
inline std::vector<std::size_t> parse_persist_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::uint64_t bytes = parse_size(item, "--persist-sizes");
    if (bytes < 16) throw CliError("--persist-sizes: each size must be at least 16 bytes, got '" + item + "'");
    sizes.push_back(static_cast<std::size_t>(bytes / 16 * 16));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

// ---- Persistent-thread grids -------------------------------------------------------------------------------

// Blocks for a grid whose threads each own ceil(items / threads) work items for the whole launch. The grid is
// shrunk (never past max_blocks) until every thread has the same count, give or take one: a full grid with
// items = 1.1 x threads would leave 10 % of the threads doing twice the work while the rest sit idle.
inline unsigned balanced_blocks(std::size_t items, unsigned max_blocks, unsigned block) {
  const std::size_t max_threads = static_cast<std::size_t>(std::max(max_blocks, 1u)) * block;
  const std::size_t n = std::max<std::size_t>(items, 1);
  const std::size_t per_thread = (n + max_threads - 1) / max_threads;
  const std::size_t threads = (n + per_thread - 1) / per_thread;
  return static_cast<unsigned>((threads + block - 1) / block);
}

// ---- The traffic model of the sliding-window workload ------------------------------------------------------
//
// One launch runs `passes` passes. A pass streams `stream_per_pass` fresh bytes (read once) and reads and writes
// back every byte of the persistent table once. Between two visits of a table byte a whole pass goes by, i.e.
// stream_per_pass + persist bytes of other traffic: with stream_per_pass >= L2, no replacement policy that keeps
// recently used lines can hold the table, so without a window every pass pays 2 x persist in DRAM traffic (read
// miss + dirty write-back). With `resident` bytes of the table persisting in the set-aside, those bytes cost one
// DRAM read in the first pass and nothing after (their write-back happens after the launch).
struct SlidingShape {
  std::size_t persist_bytes = 0;
  std::size_t stream_per_pass = 0;
  int passes = 1;
};

// [doc:traffic_model]
inline double model_dram_bytes(const SlidingShape& s, std::size_t resident) {
  const double p = static_cast<double>(s.persist_bytes);
  const double r = static_cast<double>(std::min(resident, s.persist_bytes));
  return s.passes * (static_cast<double>(s.stream_per_pass) + 2.0 * (p - r)) + r;
}
// [/doc:traffic_model]

// Bytes of one table that stay resident under a window of `window_bytes` with `hit_ratio`, when `sharers`
// kernels with the same window run concurrently and share the set-aside: if all persisting lines fit, each
// keeps its share; if not, the persisting lines evict each other in a cyclic sweep and an LRU-like cache keeps
// none of them (Best Practices: hitRatio 1 beyond the set-aside is slower than the fitting case).
inline std::size_t model_resident_bytes(std::size_t window_bytes, double hit_ratio, std::size_t set_aside,
                                        int sharers = 1) {
  const double persisting = static_cast<double>(clamp_hit_ratio(hit_ratio)) * static_cast<double>(window_bytes);
  // hitRatio travels as a float: allow its rounding (1e-6 relative) when comparing with the set-aside.
  if (persisting * sharers > static_cast<double>(set_aside) * (1.0 + 1e-6)) return 0;
  return std::min(static_cast<std::size_t>(persisting), set_aside);
}

// Predicted speed-up over no window and no set-aside if DRAM traffic is all that costs time (L2 hits free). An
// upper bound: it assumes the no-window run misses the whole table every pass (a real L2 keeps part of it), that
// L2 bandwidth is unlimited, and it knows nothing of what a set-aside costs the accesses that do not persist.
inline double model_speedup(const SlidingShape& s, std::size_t resident) {
  return model_dram_bytes(s, 0) / model_dram_bytes(s, resident);
}

}  // namespace cml::ch05
