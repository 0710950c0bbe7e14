// Models of staged copy/compute overlap (host-only).
#pragma once

#include <algorithm>
#include <cstddef>

namespace cml::ch04 {

// Best Practices Guide 9.1.2: a transfer of time t_transfer and a kernel of time t_exec, split into
// `streams` chunks that each copy and then compute, take about t_exec + t_transfer / streams when
// t_exec > t_transfer, and t_transfer + t_exec / streams otherwise: the longer stage is paid in full,
// the shorter one only for the chunk that cannot overlap.
inline double bpg_overlap_model_ms(double t_exec, double t_transfer, int streams) {
  return std::max(t_exec, t_transfer) + std::min(t_exec, t_transfer) / streams;
}

// The same reasoning for a three-stage pipeline (H2D, kernel, D2H) on a GPU with two copy engines, where
// H2D and D2H of different chunks also run at the same time. With one copy engine both directions share
// it, and the two-stage model above (t_transfer = H2D + D2H) applies. When the kernel is the longest stage
// and t_exec >= H2D + D2H the two models agree.
inline double pipeline_model_ms(double t_h2d, double t_exec, double t_d2h, int streams, int copy_engines) {
  if (copy_engines < 2) return bpg_overlap_model_ms(t_exec, t_h2d + t_d2h, streams);
  const double longest = std::max({t_h2d, t_exec, t_d2h});
  return longest + (t_h2d + t_exec + t_d2h - longest) / streams;
}

}  // namespace cml::ch04

namespace cml::ch04 {

// Chunk k of `chunks` over n words, every chunk starting on an `align`-word boundary (so each chunk's
// DMA starts aligned); the last chunks may be shorter or empty (count 0) when n is small or odd.
struct Chunk {
  std::size_t first = 0, count = 0;
};

inline Chunk chunk_of(std::size_t n, int chunks, int k, std::size_t align) {
  const std::size_t per_raw = (n + static_cast<std::size_t>(chunks) - 1) / static_cast<std::size_t>(chunks);
  const std::size_t per = (per_raw + align - 1) / align * align;
  const std::size_t first = static_cast<std::size_t>(k) * per;
  if (first >= n) return {n, 0};
  return {first, std::min(per, n - first)};
}

}  // namespace cml::ch04
