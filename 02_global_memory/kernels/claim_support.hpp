// Small helpers the chapter's claims share: the measured values a claim needs that are more than one
// cell or one ratio (a whole sweep against its reference point, two variants point by point, the
// steps of a trend, the spread within groups of rows). Host-only C++, judged on the rows of one run.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/claims.hpp"

namespace cml::ch02 {

// A row the claim needs is missing: a defect on the default sweep, not applicable when the options
// changed what runs (the same rule as RunRows::row).
[[noreturn]] inline void missing_row(const RunRows& r, const std::string& what) {
  if (r.complete()) throw ClaimError(what);
  throw NotApplicable(what + " in this run (the options changed the sweep)");
}

// The one row of `variant` whose params end with `suffix` (e.g. "block=32x8" whatever the matrix size).
inline const Row& row_ending(const RunRows& r, std::string_view variant, std::string_view suffix) {
  const Row* found = nullptr;
  for (const Row* row : r.rows(variant)) {
    const std::string& p = row->params;
    if (p.size() < suffix.size() || p.compare(p.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (found != nullptr)
      throw ClaimError(fmt::format("variant {}: more than one row ends with '{}'", variant, suffix));
    found = row;
  }
  if (found == nullptr) missing_row(r, fmt::format("variant {}: no row ends with '{}'", variant, suffix));
  return *found;
}

inline double value_ending(const RunRows& r, std::string_view variant, std::string_view suffix,
                           std::string_view column = "gb_per_s") {
  return RunRows::value(row_ending(r, variant, suffix), column);
}

// num / den point by point: for every row of `den`, the row of `num` with the same params.
inline std::vector<double> paired_ratios(const RunRows& r, std::string_view num, std::string_view den,
                                         std::string_view column = "gb_per_s") {
  std::vector<double> out;
  for (const Row* d : r.rows(den)) out.push_back(r.value({std::string(num), d->params, std::string(column)}) /
                                                 RunRows::value(*d, column));
  return out;
}

// v[i] / v[i - 1] for each step of a sweep in run order: min_of / max_of give a trend's worst step.
inline std::vector<double> step_ratios(const std::vector<double>& v) {
  if (v.size() < 2) throw ClaimError("a trend needs at least two points");
  std::vector<double> out;
  for (std::size_t i = 1; i < v.size(); ++i) out.push_back(v[i] / v[i - 1]);
  return out;
}

// The largest max / min within groups of one variant's rows, the group being the part of params before
// `separator` (e.g. "offset=11" of "offset=11 block=256"): the worst spread one parameter causes.
inline double max_spread_within_groups(const RunRows& r, std::string_view variant, std::string_view separator,
                                       std::string_view column = "gb_per_s") {
  std::map<std::string, std::vector<double>> groups;
  for (const Row* row : r.rows(variant)) {
    const std::size_t at = row->params.find(separator);
    groups[row->params.substr(0, at)].push_back(RunRows::value(*row, column));
  }
  std::vector<double> spreads;
  for (const auto& [key, v] : groups) spreads.push_back(max_of(v) / min_of(v));
  return max_of(spreads);
}

}  // namespace cml::ch02
