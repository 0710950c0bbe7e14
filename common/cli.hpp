// The command line every demo shares (host-only C++: no CUDA, so it can be fuzzed and tested anywhere).
//
//   --help  --list  --variant NAME (repeatable)  --size N[k|M|G]  --reps N  --warmup-ms X
//   --csv FILE|-  --json FILE|-  --device N  --quick  --cold | --warm  --profile
//   --claims  --claim NAME (repeatable)  --claims-csv FILE|-  --strict  --claims-eval FILE.csv  --plan-sizes
//   plus the demo's own options (declared in its table).
//
// Any error throws CliError; the harness prints its one-line message and exits 2.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cml {

class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A demo-specific option, e.g. {"offset", "element offset to sweep up to", "32", true}.
struct ExtraOption {
  std::string name;           // without the leading "--"
  std::string help;
  std::string default_value;  // shown in --help; used when the option is absent
  bool is_size = true;        // parsed with parse_size (k/M/G suffixes) when true; free text otherwise
  bool zero_allowed = false;  // a size option for which 0 means something (an offset, "0 = calibrate")
  bool output_only = false;   // only names a file to write: the rows measured are the default sweep's
};

struct CliSpec {
  std::string program;
  std::string summary;  // one paragraph shown by --help
  std::string size_meaning = "elements per buffer";
  std::vector<std::string> variants;
  std::vector<ExtraOption> extras;
  std::vector<std::string> claims;  // claim names, for --claim
  std::string claims_help;          // the claims as --help shows them
};

struct Options {
  bool help = false;
  bool list = false;
  bool quick = false;
  bool profile = false;
  bool claims_list = false;           // --claims: print the declared claims and exit
  bool plan_sizes = false;            // --plan-sizes: the default size on published cards, no GPU
  bool strict = false;                // --strict: a device-side claim not held exits 1
  std::vector<std::string> variants;  // empty: all
  std::vector<std::string> claims;    // --claim: judge/list only these (empty: all)
  std::string claims_csv_path;        // one row per claim ("" none, "-" stdout)
  std::string claims_eval_path;       // judge the claims on rows saved with --csv instead of running
  std::optional<std::uint64_t> size;
  std::optional<int> reps;
  std::optional<double> warmup_ms;
  std::optional<bool> cold;  // unset: the demo's default
  std::string csv_path;      // "" none, "-" stdout
  std::string json_path;
  int device = 0;
  std::map<std::string, std::string> extras;  // explicitly given demo options

  // Value of a demo option as a size (explicit or the spec's default).
  std::uint64_t extra_size(const CliSpec& spec, const std::string& name) const;
  std::string extra_text(const CliSpec& spec, const std::string& name) const;
};

// The binary units of sizes, as parse_size reads their suffixes (k, M, G).
inline constexpr std::uint64_t kKiB = std::uint64_t{1} << 10;
inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// Parses "4096", "64k", "16M", "1G" (binary multiples: k = 2^10, M = 2^20, G = 2^30). Rejects empty,
// negative, zero, non-numeric, unknown suffixes and values above 2^62 (with or without the suffix).
std::uint64_t parse_size(std::string_view text, std::string_view flag = "--size");
int parse_positive_int(std::string_view text, std::string_view flag, int max_value);
double parse_non_negative_double(std::string_view text, std::string_view flag, double max_value);

Options parse_cli(const CliSpec& spec, const std::vector<std::string>& args);
std::string usage(const CliSpec& spec);

}  // namespace cml
