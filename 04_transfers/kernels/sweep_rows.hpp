// Finding the rows of a sweep for the claims of this chapter (host-only).
//
// The transfer demos sweep sizes: one variant writes several rows with the same params ("dir=h2d") and
// different sizes, which RunRows::row (one row per params) cannot tell apart. These pick one row of such a
// sweep by its size: the largest, the smallest, or an exact size. A row the claim needs but the run lacks is
// a defect on the default sweep (ClaimError) and not applicable when the options changed the sweep.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/claims.hpp"

namespace cml::ch04 {

// A missing row: an error on the default sweep, not applicable when the options changed it.
[[noreturn]] inline void missing_row(const RunRows& r, const std::string& what) {
  if (r.complete()) throw ClaimError(what);
  throw NotApplicable(what + " in this run (the options changed the sweep)");
}

// Every row of `variant` whose params are exactly `params`, in run order (at least one).
inline std::vector<const Row*> sweep_rows(const RunRows& r, std::string_view variant, std::string_view params) {
  std::vector<const Row*> out;
  for (const Row* row : r.rows(variant))
    if (row->params == params) out.push_back(row);
  if (out.empty()) missing_row(r, fmt::format("no row of variant {} with params '{}'", variant, params));
  return out;
}

// The row of the sweep with the largest size (the end of the sweep: --size).
inline const Row& largest_row(const RunRows& r, std::string_view variant, std::string_view params = "") {
  const auto rows = sweep_rows(r, variant, params);
  return **std::max_element(rows.begin(), rows.end(), [](const Row* a, const Row* b) { return a->size < b->size; });
}

// The row of the sweep with the smallest size (its start, which no option moves).
inline const Row& smallest_row(const RunRows& r, std::string_view variant, std::string_view params = "") {
  const auto rows = sweep_rows(r, variant, params);
  return **std::min_element(rows.begin(), rows.end(), [](const Row* a, const Row* b) { return a->size < b->size; });
}

// The row of the sweep at exactly `size`. A sweep that --size ended below `size` is not applicable.
inline const Row& row_at_size(const RunRows& r, std::string_view variant, std::string_view params,
                              std::uint64_t size) {
  std::uint64_t largest = 0;
  for (const Row* row : sweep_rows(r, variant, params)) {
    if (row->size == size) return *row;
    largest = std::max(largest, row->size);
  }
  if (largest < size)
    throw NotApplicable(fmt::format("the sweep of {} ends at {}, below {}", variant, largest, size));
  missing_row(r, fmt::format("no row of variant {} with params '{}' at size {}", variant, params, size));
}

// Rows of `variant` that failed their check (a fact demo's claim: every documented fact holds).
inline double unverified_rows(const RunRows& r, std::string_view variant) {
  const auto rows = r.rows(variant);
  return static_cast<double>(std::count_if(rows.begin(), rows.end(), [](const Row* row) { return !row->verified; }));
}

}  // namespace cml::ch04
