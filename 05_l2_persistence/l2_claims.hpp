// Reading this chapter's rows for its claims (host-only).
//
// The rows of these demos carry sizes derived from the GPU in their params ("persist_mib=28.12"), so the
// claims find them by variant and by the columns that say what they are (persist_per_set_aside, fits),
// never by a params string that only one GPU produces.
#pragma once

#include <algorithm>
#include <functional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/claims.hpp"

namespace cml::ch05 {

// The one row a single-point variant writes.
inline const Row& only_row(const RunRows& r, std::string_view variant) {
  const auto rows = r.rows(variant);
  if (rows.size() != 1) throw ClaimError(fmt::format("variant {} wrote {} rows, expected one", variant, rows.size()));
  return *rows.front();
}

inline double only_value(const RunRows& r, std::string_view variant, std::string_view column) {
  return RunRows::value(only_row(r, variant), column);
}

// The rows of `variant` for which `keep` is true (at least one: none is not applicable, since the sweep
// the options chose may hold no such point).
inline std::vector<const Row*> rows_where(const RunRows& r, std::string_view variant,
                                          const std::function<bool(const Row&)>& keep, std::string_view what) {
  std::vector<const Row*> out;
  for (const Row* row : r.rows(variant))
    if (keep(*row)) out.push_back(row);
  if (out.empty()) {
    const std::string msg = fmt::format("variant {} has no row {}", variant, what);
    if (r.complete()) throw ClaimError(msg);
    throw NotApplicable(msg + " in this run");
  }
  return out;
}

// Rows of `variant` that failed their check (a fact demo's claim: every documented fact holds).
inline double unverified_rows(const RunRows& r, std::string_view variant) {
  const auto rows = r.rows(variant);
  return static_cast<double>(std::count_if(rows.begin(), rows.end(), [](const Row* row) { return !row->verified; }));
}

}  // namespace cml::ch05
