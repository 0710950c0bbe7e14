// Summary statistics of timing samples (host-only).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace cml {

struct Stats {
  double median = NAN;
  double min = NAN;
  double max = NAN;
  double mean = NAN;
  // (max - min) / median, in percent: how far apart the fastest and slowest samples are.
  double spread_pct = NAN;
  std::size_t count = 0;
};

inline Stats summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  for (double s : samples)
    if (!std::isfinite(s)) throw std::invalid_argument("summarize: non-finite sample");
  std::sort(samples.begin(), samples.end());
  Stats st;
  st.count = samples.size();
  st.min = samples.front();
  st.max = samples.back();
  const std::size_t mid = samples.size() / 2;
  st.median = samples.size() % 2 == 1 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
  double sum = 0.0;
  for (double s : samples) sum += s;
  st.mean = sum / static_cast<double>(samples.size());
  st.spread_pct = st.median > 0.0 ? 100.0 * (st.max - st.min) / st.median : 0.0;
  return st;
}

}  // namespace cml
