// Claims: what a demo expects to see on the reader's GPU, declared beside its variant table and judged
// against the rows of the same run.
//
// A claim is one measured value (a ratio of two variants, a column against the model, the worst point of
// a sweep ...) and one bound on it. The value is computed from the run's rows only, so every claim is
// relative to something measured in the same process (the copy ceiling, another variant, the model, the
// L2 size the demo recorded) and holds on any GPU where the lesson is true.
//
//   Claim{"vec4_reaches_memcpy",
//         "One float4 per thread copies as fast as cudaMemcpy.",
//         "GB/s copy_vec4 / GB/s memcpy", Bound::at_least(0.95),
//         "16 bytes in flight per thread are enough to saturate DRAM; 5% is run-to-run noise",
//         ClaimKind::device,
//         [](const RunRows& r) { return r.ratio({"copy_vec4"}, {"memcpy"}); }}
//
// Host-only C++ (no CUDA): --claims, the CPU tests and offline evaluation use it without a GPU.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/output.hpp"

namespace cml {

// device: the lesson about the GPU; a claim that does not hold is a finding (and fails --strict).
// host: depends on the host too (PCIe link, CPU, OS); reported, never counted against the lesson.
enum class ClaimKind { device, host };
enum class ClaimStatus { held, not_held, not_applicable, error };

const char* to_string(ClaimKind k);
const char* to_string(ClaimStatus s);

// A bound on the measured value: [lo, hi], either side open.
struct Bound {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();

  static Bound at_least(double v) { return {v, std::numeric_limits<double>::infinity()}; }
  static Bound at_most(double v) { return {-std::numeric_limits<double>::infinity(), v}; }
  static Bound between(double lo, double hi) { return {lo, hi}; }

  // NaN and infinities never hold: a value that could not be measured confirms nothing.
  bool holds(double v) const;
  std::string describe() const;  // ">= 0.95", "<= 1.02", "0.8 .. 1.25"
};

// The run lacks what the claim needs (a waived variant, a feature, a size): reported as not applicable.
class NotApplicable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The claim asks for something the demo never produces (unknown variant, missing row or column): a defect.
class ClaimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One cell of the run: the row of `variant` with exactly these `params`, and one of its columns (a core
// column such as gb_per_s, median_ms, bytes, size, or a demo column such as vs_ceiling).
struct At {
  std::string variant;
  std::string params;
  std::string column = "gb_per_s";
  At(std::string v, std::string p = "", std::string c = "gb_per_s")
      : variant(std::move(v)), params(std::move(p)), column(std::move(c)) {}
  At(const char* v) : At(std::string(v)) {}
  std::string describe() const;
};

// The rows of one run as the claims see them, with what the run left out and why.
class RunRows {
 public:
  // `variants`: every variant of the demo's table. `waived`: variant -> reason. `selected`: the
  // variants the user asked for (empty: all). `complete`: the run used the demo's default sweep (no
  // --variant, no demo option, not --quick), so a row the claim needs must exist; otherwise a missing
  // row means the options changed the sweep, and the claim is not applicable.
  RunRows(std::vector<Row> rows, std::vector<std::string> variants, std::map<std::string, std::string> waived = {},
          std::vector<std::string> selected = {}, bool complete = true);

  const std::vector<Row>& all() const { return rows_; }
  bool complete() const { return complete_; }

  // Every row of `variant`, in run order. Unknown variant -> ClaimError; waived or not selected ->
  // NotApplicable; a variant that ran and produced no row -> ClaimError (NotApplicable when incomplete).
  std::vector<const Row*> rows(std::string_view variant) const;
  // The one row of `variant` with these params (same rules; a missing row names the params it wanted).
  const Row& row(std::string_view variant, std::string_view params = "") const;
  // True when the variant produced rows in this run (no exception for waived or unselected variants).
  bool ran(std::string_view variant) const;

  // The rows a claim needs where row() cannot name them: params that hold a size following the GPU, rows that
  // meet a condition, a point of a sweep. Each follows rows() for the variant itself; a row they need that
  // the run lacks is a ClaimError in a complete run and NotApplicable otherwise (the options chose a sweep
  // without it).

  // The one row a single-point variant writes, whatever its params. A second row is a ClaimError: a claim
  // that reads one row must not silently ignore another.
  const Row& only(std::string_view variant) const;
  double only_value(std::string_view variant, std::string_view column) const { return value(only(variant), column); }
  // The rows of `variant` for which `keep` is true, in run order (at least one). `what` names them in the
  // message: "variant V has no row <what>".
  std::vector<const Row*> rows_where(std::string_view variant, const std::function<bool(const Row&)>& keep,
                                     std::string_view what) const;
  // The one row of rows_where (a second is a ClaimError).
  const Row& only_where(std::string_view variant, const std::function<bool(const Row&)>& keep,
                        std::string_view what) const;
  // A sweep over sizes: the rows of `variant` with exactly `params` (at least one), which row() cannot tell
  // apart because only their size differs.
  std::vector<const Row*> sweep(std::string_view variant, std::string_view params = "") const;
  // The row of that sweep at exactly `size`. A sweep that ends below `size` is not applicable (--size cut it
  // short); one that reaches past `size` without a row there is missing a row.
  const Row& at_size(std::string_view variant, std::string_view params, std::uint64_t size) const;
  // The row of `variant` with the largest `column` (as cml::largest).
  const Row& largest(std::string_view variant, std::string_view column) const;
  // How many rows of `variant` did not verify: the value of a fact demo's claim that every fact holds.
  double unverified_rows(std::string_view variant) const;
  // num / den point by point: for every row of `den`, the row of `num` with the same params.
  std::vector<double> paired_ratios(std::string_view num, std::string_view den,
                                    std::string_view column = "gb_per_s") const;
  // The largest max / min within groups of `variant`'s rows, a group being the part of params before
  // `separator` ("offset=11" of "offset=11 block=256"): the worst spread the rest of the params causes.
  double max_spread_within_groups(std::string_view variant, std::string_view separator,
                                  std::string_view column = "gb_per_s") const;

  // A numeric column of a row; an empty cell is NaN. A column the row does not have -> ClaimError.
  static double value(const Row& r, std::string_view column);
  double value(const At& at) const { return value(row(at.variant, at.params), at.column); }
  // One column over every row of a variant, in run order (a sweep).
  std::vector<double> values(std::string_view variant, std::string_view column) const;
  double ratio(const At& num, const At& den) const { return value(num) / value(den); }

  // Device facts recorded with the run (l2_bytes, persisting_l2_max_bytes, sm_count, cc ...). A fact the
  // run did not record -> NotApplicable (offline data may lack it).
  double fact(const std::string& name) const;
  void set_fact(const std::string& name, double v) { facts_[name] = v; }

 private:
  void check_variant(std::string_view variant) const;
  [[noreturn]] void missing(const std::string& what) const;
  std::vector<Row> rows_;
  std::vector<std::string> variants_;
  std::map<std::string, std::string> waived_;
  std::set<std::string> selected_;
  bool complete_;
  std::map<std::string, double> facts_;
};

// Extremes of a sweep. Any NaN in `v` (a point without a measurement) makes the result NaN, so a claim
// over a sweep cannot hold by skipping the points it could not read. Empty -> ClaimError.
double min_of(const std::vector<double>& v);
double max_of(const std::vector<double>& v);
// The largest |x / ref - 1| over `v`: how far a sweep strays from a reference point (NaN-propagating).
double max_rel_deviation(const std::vector<double>& v, double ref);
// v[i] / v[i - 1] for each step of a sweep in run order: min_of / max_of give a trend's worst step.
std::vector<double> step_ratios(const std::vector<double>& v);
// The row with the largest (smallest) `column`, the first of equal ones; "size" gives the end (start) of a
// sweep. Empty -> ClaimError.
const Row& largest(const std::vector<const Row*>& rows, std::string_view column);
const Row& smallest(const std::vector<const Row*>& rows, std::string_view column);

struct Claim {
  std::string name;     // snake_case, unique within the demo: --claim, JSON and the claims CSV
  std::string text;     // the expectation in one sentence, true on any GPU where the lesson is
  std::string measure;  // what the value is, e.g. "GB/s copy_vec4 / GB/s memcpy"
  Bound bound;
  std::string why;      // one line: why this bound (the model, the noise it allows)
  ClaimKind kind = ClaimKind::device;
  std::function<double(const RunRows&)> value;
};

// A ratio of two cells, with `measure` written from the cells.
Claim ratio_claim(std::string name, std::string text, At num, At den, Bound bound, std::string why,
                  ClaimKind kind = ClaimKind::device);
// The same for the one rows (RunRows::only) of two single-point variants whose params name a size that
// follows the GPU, so no At could spell them.
Claim only_ratio_claim(std::string name, std::string text, std::string num_variant, std::string den_variant,
                       std::string column, Bound bound, std::string why);
// Every row of `variants` verified: the value is how many did not, the bound <= 0.
Claim all_verified_claim(std::string name, std::string text, std::vector<std::string> variants, std::string why);

struct ClaimResult {
  std::string name;
  std::string text;
  std::string measure;
  std::string bound;
  std::string why;
  ClaimKind kind = ClaimKind::device;
  ClaimStatus status = ClaimStatus::error;
  double value = kNaN;
  std::string detail;  // why not applicable, what is missing, or "value is not finite"
};

// Judges each claim; never throws for a claim's own failure (it becomes its result). `not_judged`:
// when non-empty, every claim whose value can be computed is reported not applicable with this reason
// (e.g. a --quick run), so missing rows still surface as errors.
std::vector<ClaimResult> evaluate_claims(const std::vector<Claim>& claims, const RunRows& rows,
                                         const std::string& not_judged = "");
// The results as if every claim were not applicable for `reason` (a waived demo).
std::vector<ClaimResult> claims_not_applicable(const std::vector<Claim>& claims, const std::string& reason);

struct ClaimTally {
  int device_held = 0, device_judged = 0;  // judged = held + not held
  int host_held = 0, host_judged = 0;
  int not_applicable = 0, errors = 0;
};
ClaimTally tally(const std::vector<ClaimResult>& results);

// Checks a demo's table: names unique snake_case, text/measure/why present, a value function, a bound.
// Returns "" or the first problem found.
std::string validate_claims(const std::vector<Claim>& claims);

// --claims: the declarations, without running anything.
void print_claim_list(const std::vector<Claim>& claims, std::FILE* out);
// The results after a run, for people.
void print_claim_results(const std::vector<ClaimResult>& results, std::FILE* out);
// Text for --help: one line per claim (name, bound, sentence).
std::string claims_help(const std::vector<Claim>& claims);
// One row per claim: device,demo,claim,kind,status,value,bound,measure,text,detail.
std::string claims_to_csv(const std::vector<ClaimResult>& results, const std::string& demo,
                          const std::string& device_name);
// A JSON array (no trailing newline) for the "claims" member of a run's JSON.
std::string claims_to_json(const std::vector<ClaimResult>& results);

// A JSON string literal for `s` (quotes, backslashes and control characters escaped).
std::string json_quote(const std::string& s);

// Reads a CSV written by to_csv() back into rows (to judge rows saved with --csv), and the device that
// made them into `device` when given. Throws std::runtime_error with the file name and line on
// malformed input.
std::vector<Row> read_rows_csv(const std::string& path, std::string* device = nullptr);
// The numeric members of the "device" object of a run's JSON (l2_bytes, sm_count ...), read leniently:
// a missing file or member yields no entry.
std::map<std::string, double> read_device_facts_json(const std::string& path);

// How the run behind a saved JSON was made, as its "run" member records it: whether it had the demo's
// default sweep (no --variant, --quick, --profile or sweep option) and, if its claims were not judged, why.
// A missing file or member reads as a complete, judged run (files written before the member existed).
struct RunMode {
  bool complete = true;
  std::string not_judged;
  bool recorded = false;  // read back from a run's JSON (false: none there, a full run assumed)
};
std::string run_mode_json(const RunMode& m);  // the member, "\"run\": {...}"
RunMode read_run_mode_json(const std::string& path);

}  // namespace cml
