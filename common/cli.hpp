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
#include <utility>
#include <vector>

namespace cml {

class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A demo-specific option, declared through a factory that says what its value is, e.g.
//   ExtraOption::size("offset", "element offset to sweep up to", 32)
// Every option takes a value (--name V or --name=V); `default_value` is what --help shows and what the
// demo reads when the option is absent.
struct ExtraOption {
  // A count or a byte size of at least 1, read with parse_size (suffixes k, M, G).
  static ExtraOption size(std::string name, std::string help, std::uint64_t default_value);
  // The same with a default that is not a number, e.g. "the --size value": the demo reads the option only
  // when it is given.
  static ExtraOption size(std::string name, std::string help, std::string default_shown);
  // A size for which 0 means something (an offset, "0 = calibrate").
  static ExtraOption size_or_zero(std::string name, std::string help, std::uint64_t default_value);
  // Free text the demo parses itself (a keyword, a list): any value but the empty one.
  static ExtraOption text(std::string name, std::string help, std::string default_value);
  // A file the run writes besides its rows; the rows are the default sweep's, so a run that gives it is
  // judged as a full run.
  static ExtraOption output_file(std::string name, std::string help);

  std::string name;  // without the leading "--"
  std::string help;
  std::string default_value;
  bool is_size = true;        // parsed with parse_size when true; free text otherwise
  bool zero_allowed = false;  // a size that may be 0
  bool output_only = false;   // only names a file to write

 private:
  ExtraOption(std::string n, std::string h, std::string d, bool size, bool zero, bool output)
      : name(std::move(n)), help(std::move(h)), default_value(std::move(d)), is_size(size), zero_allowed(zero),
        output_only(output) {}
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
// The inverse of parse_size for a default shown in --help: whole G or M where the value is a multiple of
// one (256M), plain digits otherwise (65536).
std::string size_text(std::uint64_t value);
int parse_positive_int(std::string_view text, std::string_view flag, int max_value);
double parse_non_negative_double(std::string_view text, std::string_view flag, double max_value);

Options parse_cli(const CliSpec& spec, const std::vector<std::string>& args);
std::string usage(const CliSpec& spec);

}  // namespace cml
