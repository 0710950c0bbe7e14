#include "common/claims.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace cml {

const char* to_string(ClaimKind k) { return k == ClaimKind::device ? "device" : "host"; }

const char* to_string(ClaimStatus s) {
  switch (s) {
    case ClaimStatus::held: return "held";
    case ClaimStatus::not_held: return "not_held";
    case ClaimStatus::not_applicable: return "not_applicable";
    case ClaimStatus::error: return "error";
  }
  return "error";
}

bool Bound::holds(double v) const { return std::isfinite(v) && v >= lo && v <= hi; }

namespace {

std::string number(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  return fmt::format("{:.4g}", v);
}

bool is_snake_case(const std::string& s) {
  if (s.empty() || !std::islower(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string where(std::string_view variant, std::string_view params) {
  return params.empty() ? fmt::format("variant {}", variant) : fmt::format("variant {} row {}", variant, params);
}

}  // namespace

std::string json_quote(const std::string& s) { return json_string(s); }

std::string Bound::describe() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi) return fmt::format("{} .. {}", number(lo), number(hi));
  if (has_lo) return ">= " + number(lo);
  if (has_hi) return "<= " + number(hi);
  return "any finite value";
}

std::string At::describe() const {
  return params.empty() ? fmt::format("{} {}", column, variant) : fmt::format("{} {}[{}]", column, variant, params);
}

RunRows::RunRows(std::vector<Row> rows, std::vector<std::string> variants, std::map<std::string, std::string> waived,
                 std::vector<std::string> selected, bool complete)
    : rows_(std::move(rows)),
      variants_(std::move(variants)),
      waived_(std::move(waived)),
      selected_(selected.begin(), selected.end()),
      complete_(complete) {}

void RunRows::check_variant(std::string_view variant) const {
  if (std::find(variants_.begin(), variants_.end(), variant) == variants_.end())
    throw ClaimError(fmt::format("no variant '{}' in this demo", variant));
  if (auto it = waived_.find(std::string(variant)); it != waived_.end())
    throw NotApplicable(fmt::format("variant {} waived: {}", variant, it->second));
  if (!selected_.empty() && selected_.count(std::string(variant)) == 0)
    throw NotApplicable(fmt::format("variant {} not run (--variant)", variant));
}

bool RunRows::ran(std::string_view variant) const {
  return std::any_of(rows_.begin(), rows_.end(), [&](const Row& r) { return r.variant == variant; });
}

std::vector<const Row*> RunRows::rows(std::string_view variant) const {
  check_variant(variant);
  std::vector<const Row*> out;
  for (const auto& r : rows_)
    if (r.variant == variant) out.push_back(&r);
  if (out.empty()) {
    const std::string msg = fmt::format("{} produced no rows", where(variant, ""));
    if (complete_) throw ClaimError(msg);
    throw NotApplicable(msg + " in this run (the options changed what runs)");
  }
  return out;
}

const Row& RunRows::row(std::string_view variant, std::string_view params) const {
  const Row* found = nullptr;
  for (const Row* r : rows(variant)) {
    if (r->params != params) continue;
    if (found != nullptr) throw ClaimError(fmt::format("{} appears more than once", where(variant, params)));
    found = r;
  }
  if (found == nullptr) missing(fmt::format("no row for {}", where(variant, params.empty() ? "(no params)" : params)));
  return *found;
}

void RunRows::missing(const std::string& what) const {
  if (complete_) throw ClaimError(what);
  throw NotApplicable(what + " in this run (the options changed the sweep)");
}

const Row& RunRows::only(std::string_view variant) const {
  const auto rs = rows(variant);
  if (rs.size() != 1) throw ClaimError(fmt::format("variant {} wrote {} rows, expected one", variant, rs.size()));
  return *rs.front();
}

std::vector<const Row*> RunRows::rows_where(std::string_view variant, const std::function<bool(const Row&)>& keep,
                                            std::string_view what) const {
  std::vector<const Row*> out;
  for (const Row* r : rows(variant))
    if (keep(*r)) out.push_back(r);
  if (out.empty()) missing(fmt::format("variant {} has no row {}", variant, what));
  return out;
}

const Row& RunRows::only_where(std::string_view variant, const std::function<bool(const Row&)>& keep,
                               std::string_view what) const {
  const auto rs = rows_where(variant, keep, what);
  if (rs.size() != 1)
    throw ClaimError(fmt::format("variant {} has {} rows {}, expected one", variant, rs.size(), what));
  return *rs.front();
}

std::vector<const Row*> RunRows::sweep(std::string_view variant, std::string_view params) const {
  return rows_where(variant, [params](const Row& r) { return r.params == params; },
                    fmt::format("with params '{}'", params));
}

const Row& RunRows::at_size(std::string_view variant, std::string_view params, std::uint64_t size) const {
  std::uint64_t end = 0;
  for (const Row* r : sweep(variant, params)) {
    if (r->size == size) return *r;
    end = std::max(end, r->size);
  }
  if (end < size) throw NotApplicable(fmt::format("the sweep of {} ends at {}, below {}", variant, end, size));
  missing(fmt::format("variant {} has no row with params '{}' at size {}", variant, params, size));
}

const Row& RunRows::largest(std::string_view variant, std::string_view column) const {
  return cml::largest(rows(variant), column);
}

double RunRows::unverified_rows(std::string_view variant) const {
  const auto rs = rows(variant);
  return static_cast<double>(std::count_if(rs.begin(), rs.end(), [](const Row* r) { return !r->verified; }));
}

std::vector<double> RunRows::paired_ratios(std::string_view num, std::string_view den, std::string_view column) const {
  std::vector<double> out;
  for (const Row* d : rows(den))
    out.push_back(value(row(num, d->params), column) / value(*d, column));
  return out;
}

double RunRows::max_spread_within_groups(std::string_view variant, std::string_view separator,
                                         std::string_view column) const {
  std::map<std::string, std::vector<double>> groups;
  for (const Row* r : rows(variant))
    groups[r->params.substr(0, r->params.find(separator))].push_back(value(*r, column));
  std::vector<double> spreads;
  for (const auto& [group, v] : groups) spreads.push_back(max_of(v) / min_of(v));
  return max_of(spreads);
}

double RunRows::value(const Row& r, std::string_view column) {
  if (column == "gb_per_s") return r.gb_per_s;
  if (column == "median_ms") return r.median_ms;
  if (column == "min_ms") return r.min_ms;
  if (column == "max_ms") return r.max_ms;
  if (column == "spread_pct") return r.spread_pct;
  if (column == "pct_peak") return r.pct_peak;
  if (column == "bytes") return r.bytes;
  if (column == "size") return static_cast<double>(r.size);
  if (column == "verified") return r.verified ? 1.0 : 0.0;
  const std::string* v = r.get(std::string(column));
  if (v == nullptr) throw ClaimError(fmt::format("{} has no column '{}'", where(r.variant, r.params), column));
  if (v->empty()) return kNaN;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (end != v->c_str() + v->size())
    throw ClaimError(fmt::format("{} column '{}' is not a number: '{}'", where(r.variant, r.params), column, *v));
  return d;
}

std::vector<double> RunRows::values(std::string_view variant, std::string_view column) const {
  std::vector<double> out;
  for (const Row* r : rows(variant)) out.push_back(value(*r, column));
  return out;
}

double min_of(const std::vector<double>& v) {
  if (v.empty()) throw ClaimError("no values to take the minimum of");
  double m = v.front();
  for (double x : v) {
    if (std::isnan(x)) return kNaN;
    m = std::min(m, x);
  }
  return m;
}

double max_of(const std::vector<double>& v) {
  if (v.empty()) throw ClaimError("no values to take the maximum of");
  double m = v.front();
  for (double x : v) {
    if (std::isnan(x)) return kNaN;
    m = std::max(m, x);
  }
  return m;
}

double max_rel_deviation(const std::vector<double>& v, double ref) {
  std::vector<double> d;
  for (double x : v) d.push_back(std::fabs(x / ref - 1.0));
  return max_of(d);
}

std::vector<double> step_ratios(const std::vector<double>& v) {
  if (v.size() < 2) throw ClaimError("a trend needs at least two points");
  std::vector<double> out;
  for (std::size_t i = 1; i < v.size(); ++i) out.push_back(v[i] / v[i - 1]);
  return out;
}

namespace {

// The first row whose `column` beats every earlier one (as max_element / min_element pick). Every cell is
// read, so a missing column is an error even where a single row leaves nothing to compare.
template <class Beats>
const Row& pick_row(const std::vector<const Row*>& rows, std::string_view column, const char* which, Beats beats) {
  if (rows.empty()) throw ClaimError(fmt::format("no rows to take the {} {} of", which, column));
  const Row* best = rows.front();
  double best_value = RunRows::value(*best, column);
  for (const Row* r : rows) {
    const double v = RunRows::value(*r, column);
    if (beats(v, best_value)) {
      best = r;
      best_value = v;
    }
  }
  return *best;
}

}  // namespace

const Row& largest(const std::vector<const Row*>& rows, std::string_view column) {
  return pick_row(rows, column, "largest", [](double v, double best) { return best < v; });
}

const Row& smallest(const std::vector<const Row*>& rows, std::string_view column) {
  return pick_row(rows, column, "smallest", [](double v, double best) { return v < best; });
}

double RunRows::fact(const std::string& name) const {
  auto it = facts_.find(name);
  if (it == facts_.end()) throw NotApplicable(fmt::format("the run did not record the device fact '{}'", name));
  return it->second;
}

Claim only_ratio_claim(std::string name, std::string text, std::string num_variant, std::string den_variant,
                       std::string column, Bound bound, std::string why) {
  std::string measure = column + " " + num_variant + " / " + column + " " + den_variant;
  return Claim{std::move(name), std::move(text), std::move(measure), bound, std::move(why), ClaimKind::device,
               [num_variant, den_variant, column](const RunRows& r) {
                 return r.only_value(num_variant, column) / r.only_value(den_variant, column);
               }};
}

Claim all_verified_claim(std::string name, std::string text, std::vector<std::string> variants, std::string why) {
  std::string measure = "rows of";
  for (const auto& v : variants) measure += " " + v;
  measure += " that did not verify";
  return Claim{std::move(name), std::move(text), std::move(measure), Bound::at_most(0), std::move(why),
               ClaimKind::device, [variants](const RunRows& r) {
                 double n = 0;
                 for (const auto& v : variants) n += r.unverified_rows(v);
                 return n;
               }};
}

Claim ratio_claim(std::string name, std::string text, At num, At den, Bound bound, std::string why, ClaimKind kind) {
  Claim c;
  c.name = std::move(name);
  c.text = std::move(text);
  c.measure = num.describe() + " / " + den.describe();
  c.bound = bound;
  c.why = std::move(why);
  c.kind = kind;
  c.value = [num, den](const RunRows& r) { return r.ratio(num, den); };
  return c;
}

namespace {

ClaimResult result_of(const Claim& c) {
  ClaimResult r;
  r.name = c.name;
  r.text = c.text;
  r.measure = c.measure;
  r.bound = c.bound.describe();
  r.why = c.why;
  r.kind = c.kind;
  return r;
}

}  // namespace

std::vector<ClaimResult> evaluate_claims(const std::vector<Claim>& claims, const RunRows& rows,
                                         const std::string& not_judged) {
  std::vector<ClaimResult> out;
  for (const auto& c : claims) {
    ClaimResult r = result_of(c);
    try {
      if (!c.value) throw ClaimError("the claim has no value function");
      r.value = c.value(rows);
      if (!not_judged.empty()) {
        r.status = ClaimStatus::not_applicable;
        r.detail = not_judged;
      } else if (c.bound.holds(r.value)) {
        r.status = ClaimStatus::held;
      } else {
        r.status = ClaimStatus::not_held;
        if (!std::isfinite(r.value)) r.detail = "the value is not finite (a row without a measurement)";
      }
    } catch (const NotApplicable& e) {
      r.status = ClaimStatus::not_applicable;
      r.detail = e.what();
    } catch (const ClaimError& e) {
      r.status = ClaimStatus::error;
      r.detail = fmt::format("claim '{}': {}", c.name, e.what());
    } catch (const std::exception& e) {
      r.status = ClaimStatus::error;
      r.detail = fmt::format("claim '{}': {}", c.name, e.what());
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ClaimResult> claims_not_applicable(const std::vector<Claim>& claims, const std::string& reason) {
  std::vector<ClaimResult> out;
  for (const auto& c : claims) {
    ClaimResult r = result_of(c);
    r.status = ClaimStatus::not_applicable;
    r.detail = reason;
    out.push_back(std::move(r));
  }
  return out;
}

ClaimTally tally(const std::vector<ClaimResult>& results) {
  ClaimTally t;
  for (const auto& r : results) {
    const bool judged = r.status == ClaimStatus::held || r.status == ClaimStatus::not_held;
    const bool held = r.status == ClaimStatus::held;
    if (r.status == ClaimStatus::not_applicable) ++t.not_applicable;
    if (r.status == ClaimStatus::error) ++t.errors;
    if (r.kind == ClaimKind::device) {
      t.device_judged += judged;
      t.device_held += held;
    } else {
      t.host_judged += judged;
      t.host_held += held;
    }
  }
  return t;
}

std::string validate_claims(const std::vector<Claim>& claims) {
  std::set<std::string> seen;
  for (const auto& c : claims) {
    if (!is_snake_case(c.name)) return fmt::format("claim name '{}' is not snake_case", c.name);
    if (!seen.insert(c.name).second) return fmt::format("claim '{}' is declared twice", c.name);
    if (c.text.empty()) return fmt::format("claim '{}' has no text", c.name);
    if (c.measure.empty()) return fmt::format("claim '{}' does not say what it measures", c.name);
    if (c.why.empty()) return fmt::format("claim '{}' does not say why its bound", c.name);
    if (!c.value) return fmt::format("claim '{}' has no value function", c.name);
    if (!std::isfinite(c.bound.lo) && !std::isfinite(c.bound.hi))
      return fmt::format("claim '{}' has no bound: it could never fail", c.name);
    if (std::isfinite(c.bound.lo) && std::isfinite(c.bound.hi) && c.bound.lo > c.bound.hi)
      return fmt::format("claim '{}' has an empty bound {}", c.name, c.bound.describe());
  }
  return "";
}

void print_claim_list(const std::vector<Claim>& claims, std::FILE* out) {
  for (const auto& c : claims) {
    fmt::print(out, "{} ({})\n  {}\n  measures: {}  {}\n  why: {}\n", c.name, to_string(c.kind), c.text, c.measure,
               c.bound.describe(), c.why);
  }
}

void print_claim_results(const std::vector<ClaimResult>& results, std::FILE* out) {
  if (results.empty()) return;
  const ClaimTally t = tally(results);
  fmt::print(out, "\nclaims: device-side held {} of {}", t.device_held, t.device_judged);
  if (t.host_judged > 0) fmt::print(out, "; host-dependent held {} of {}", t.host_held, t.host_judged);
  if (t.not_applicable > 0) fmt::print(out, "; {} not applicable", t.not_applicable);
  if (t.errors > 0) fmt::print(out, "; {} ERROR", t.errors);
  fmt::print(out, "\n");
  for (const auto& r : results) {
    const char* mark = r.status == ClaimStatus::held               ? "held    "
                       : r.status == ClaimStatus::not_held         ? "NOT HELD"
                       : r.status == ClaimStatus::not_applicable ? "n/a     "
                                                                   : "ERROR   ";
    const std::string kind = r.kind == ClaimKind::host ? " [host]" : "";
    fmt::print(out, "  {} {}{}: {}\n", mark, r.name, kind, r.text);
    if (r.status == ClaimStatus::held || r.status == ClaimStatus::not_held)
      fmt::print(out, "           {} = {} (bound {})\n", r.measure, number(r.value), r.bound);
    if (!r.detail.empty()) fmt::print(out, "           {}\n", r.detail);
  }
}

std::string claims_help(const std::vector<Claim>& claims) {
  if (claims.empty()) return "";
  std::string s = "claims checked after every run (--claims for the details):\n";
  for (const auto& c : claims)
    s += fmt::format("  {}{}: {}\n", c.name, c.kind == ClaimKind::host ? " [host-dependent]" : "", c.text);
  return s;
}

std::string claims_to_csv(const std::vector<ClaimResult>& results, const std::string& demo,
                          const std::string& device_name) {
  std::string s = "device,demo,claim,kind,status,value,bound,measure,text,detail\n";
  for (const auto& r : results)
    s += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", csv_escape(device_name), csv_escape(demo), csv_escape(r.name),
                     to_string(r.kind), to_string(r.status), std::isfinite(r.value) ? fmt::format("{}", r.value) : "",
                     csv_escape(r.bound), csv_escape(r.measure), csv_escape(r.text), csv_escape(r.detail));
  return s;
}

std::string claims_to_json(const std::vector<ClaimResult>& results) {
  std::string s = "[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    s += i == 0 ? "\n    {" : ",\n    {";
    s += fmt::format(
        "\"claim\": {}, \"kind\": \"{}\", \"status\": \"{}\", \"value\": {}, \"bound\": {}, \"measure\": {}, "
        "\"text\": {}, \"why\": {}, \"detail\": {}}}",
        json_string(r.name), to_string(r.kind), to_string(r.status),
        std::isfinite(r.value) ? fmt::format("{}", r.value) : "null", json_string(r.bound), json_string(r.measure),
        json_string(r.text), json_string(r.why), json_string(r.detail));
  }
  s += results.empty() ? "]" : "\n  ]";
  return s;
}

namespace {

// Splits one CSV record (to_csv's quoting: fields with , " or newline in double quotes, "" for a quote).
// Reads further lines from `in` while a quoted field is open.
bool read_record(std::istream& in, std::vector<std::string>& fields, int& line_no) {
  fields.clear();
  std::string line;
  if (!std::getline(in, line)) return false;
  ++line_no;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0;; ++i) {
    if (i == line.size()) {
      if (!quoted) break;
      std::string more;
      if (!std::getline(in, more)) throw std::runtime_error("unterminated quoted field");
      ++line_no;
      field += '\n';
      line = more;
      i = static_cast<std::size_t>(-1);
      continue;
    }
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(field);
  return true;
}

double to_double(const std::string& s) {
  if (s.empty()) return kNaN;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) throw std::runtime_error("not a number: '" + s + "'");
  return d;
}

}  // namespace

std::vector<Row> read_rows_csv(const std::string& path, std::string* device) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  static const std::vector<std::string> core = {"device", "demo", "variant", "params", "size", "bytes",
                                                "median_ms", "min_ms", "max_ms", "spread_pct", "gb_per_s",
                                                "pct_peak", "reps", "batch", "cache", "verified"};
  std::vector<std::string> header, f;
  int line_no = 0;
  try {
    if (!read_record(in, header, line_no)) throw std::runtime_error("empty file");
    if (header.size() < core.size() || !std::equal(core.begin(), core.end(), header.begin()))
      throw std::runtime_error("not a demo CSV (the header does not start with device,demo,variant,...)");
    std::vector<Row> rows;
    while (read_record(in, f, line_no)) {
      if (f.size() == 1 && f[0].empty()) continue;
      if (f.size() != header.size())
        throw std::runtime_error(fmt::format("{} fields, the header has {}", f.size(), header.size()));
      if (device != nullptr && rows.empty()) *device = f[0];
      Row r;
      r.demo = f[1];
      r.variant = f[2];
      r.params = f[3];
      r.size = f[4].empty() ? 0 : static_cast<std::uint64_t>(std::stoull(f[4]));
      r.bytes = to_double(f[5]);
      r.median_ms = to_double(f[6]);
      r.min_ms = to_double(f[7]);
      r.max_ms = to_double(f[8]);
      r.spread_pct = to_double(f[9]);
      r.gb_per_s = to_double(f[10]);
      r.pct_peak = to_double(f[11]);
      r.reps = f[12].empty() ? 0 : std::stoi(f[12]);
      r.batch = f[13].empty() ? 0 : std::stoi(f[13]);
      r.cache = f[14];
      r.verified = f[15] == "true";
      for (std::size_t k = core.size(); k < header.size(); ++k) {
        // A cell left empty means the row does not have that column (to_csv writes the union).
        if (f[k].empty()) continue;
        char* end = nullptr;
        const double d = std::strtod(f[k].c_str(), &end);
        if (end == f[k].c_str() + f[k].size()) r.set(header[k], d);
        else r.set(header[k], f[k]);
        // Keep the text exactly as written (set(double) would reformat it).
        r.extra.back().second = f[k];
      }
      rows.push_back(std::move(r));
    }
    return rows;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("{}:{}: {}", path, line_no, e.what()));
  }
}

namespace {

// The whole file, or "" when it cannot be read (the JSON readers below are lenient by design).
std::string file_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Reads the JSON string whose opening quote is at text[i]; leaves i after the closing quote.
std::string json_string_at(const std::string& text, std::size_t& i) {
  std::string out;
  for (++i; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    out += text[i];
  }
  ++i;
  return out;
}

}  // namespace

std::map<std::string, double> read_device_facts_json(const std::string& path) {
  std::map<std::string, double> facts;
  const std::string text = file_text(path);
  const auto start = text.find("\"device\": {");
  if (start == std::string::npos) return facts;
  std::size_t i = start + std::string("\"device\": {").size();
  auto skip_space = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == ',' || text[i] == ':')) ++i;
  };
  std::string key, value;
  while (true) {
    skip_space();
    if (i >= text.size() || text[i] != '"') break;  // '}' or anything unexpected ends the object
    key = json_string_at(text, i);
    skip_space();
    if (i >= text.size()) break;
    if (text[i] == '"') {
      value = json_string_at(text, i);
      // "cc": "9.0" is the one string the claims may want as a number.
      if (key == "cc") {
        char* end = nullptr;
        const double d = std::strtod(value.c_str(), &end);
        if (end != value.c_str()) facts[key] = d;
      }
      continue;
    }
    char* end = nullptr;
    const double d = std::strtod(text.c_str() + i, &end);
    if (end == text.c_str() + i) break;  // null, an object: stop rather than guess
    facts[key] = d;
    i = static_cast<std::size_t>(end - text.c_str());
  }
  return facts;
}

std::string run_mode_json(const RunMode& m) {
  return fmt::format("\"run\": {{\"complete\": {}, \"not_judged\": {}}}", m.complete ? "true" : "false",
                     json_quote(m.not_judged));
}

RunMode read_run_mode_json(const std::string& path) {
  RunMode m;
  const std::string text = file_text(path);
  const std::string head = "\"run\": {\"complete\": ";
  const auto at = text.find(head);
  if (at == std::string::npos) return m;
  m.recorded = true;
  m.complete = text.compare(at + head.size(), 5, "false") != 0;
  const std::string key = "\"not_judged\": ";
  std::size_t i = text.find(key, at);
  if (i == std::string::npos) return m;
  i += key.size();
  if (i < text.size() && text[i] == '"') m.not_judged = json_string_at(text, i);
  return m;
}

}  // namespace cml
