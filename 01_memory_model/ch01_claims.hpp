// Helpers for the chapter's claim tables (common/claims.hpp): the one row of a variant whose params name
// a size that follows the GPU, and the correctness claims of the fact demos (rows that did not verify).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/claims.hpp"

namespace cml::ch01 {

// `column` of the one row of `variant`, whatever its params (they name a size that depends on the GPU).
inline double single_value(const RunRows& r, std::string_view variant, std::string_view column) {
  const std::vector<double> v = r.values(variant, column);
  if (v.size() != 1)
    throw ClaimError("variant " + std::string(variant) + " has " + std::to_string(v.size()) + " rows, expected one");
  return v.front();
}

// A ratio of two such values, with `measure` written from them.
inline Claim single_ratio_claim(std::string name, std::string text, std::string num_variant, std::string den_variant,
                                std::string column, Bound bound, std::string why) {
  std::string measure = column + " " + num_variant + " / " + column + " " + den_variant;
  return Claim{std::move(name), std::move(text), std::move(measure), bound, std::move(why), ClaimKind::device,
               [num_variant, den_variant, column](const RunRows& r) {
                 return single_value(r, num_variant, column) / single_value(r, den_variant, column);
               }};
}

// A claim that every row of `variants` verified: value = the rows that did not, bound <= 0.
inline Claim all_verified_claim(std::string name, std::string text, std::initializer_list<std::string_view> variants,
                                std::string why) {
  std::vector<std::string> names(variants.begin(), variants.end());
  std::string measure = "rows of";
  for (const auto& v : names) measure += " " + v;
  measure += " that did not verify";
  return Claim{std::move(name), std::move(text), std::move(measure), Bound::at_most(0), std::move(why),
               ClaimKind::device, [names](const RunRows& r) {
                 double n = 0;
                 for (const auto& v : names)
                   for (const Row* row : r.rows(v)) n += row->verified ? 0.0 : 1.0;
                 return n;
               }};
}

}  // namespace cml::ch01
