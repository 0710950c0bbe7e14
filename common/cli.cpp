#include "common/cli.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace cml {
namespace {

std::string quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    // Keep the message on one line whatever the user typed.
    if (c == '\n' || c == '\r' || c == '\t') out += ' ';
    else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) out += '?';
    else out += c;
  }
  if (out.size() > 80) out = out.substr(0, 77) + "...";
  return out + "'";
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Flags that take a value, and flags that may be given more than once.
bool takes_value(std::string_view name) {
  return name == "variant" || name == "size" || name == "reps" || name == "warmup-ms" || name == "csv" ||
         name == "json" || name == "device" || name == "claim" || name == "claims-csv" || name == "claims-eval";
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view flag) {
  const std::string f(flag);
  if (text.empty()) throw CliError(f + ": empty value");
  if (text.front() == '-') throw CliError(f + ": must be positive, got " + quoted(text));
  if (text.front() == '+') text.remove_prefix(1);
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) throw CliError(f + ": not a number: " + quoted(text));
  std::string_view suffix = text.substr(digits);
  std::uint64_t multiplier = 1;
  if (suffix.empty()) multiplier = 1;
  else if (suffix == "k" || suffix == "K") multiplier = std::uint64_t{1} << 10;
  else if (suffix == "m" || suffix == "M") multiplier = std::uint64_t{1} << 20;
  else if (suffix == "g" || suffix == "G") multiplier = std::uint64_t{1} << 30;
  else throw CliError(f + ": bad suffix in " + quoted(text) + " (use k, M or G)");
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    // Checked before the multiply, so that no number of digits can wrap around 2^64.
    if (value > (limit - digit) / 10) throw CliError(f + ": value too large: " + quoted(text));
    value = value * 10 + digit;
  }
  if (value == 0) throw CliError(f + ": must be positive, got " + quoted(text));
  if (value > limit / multiplier) throw CliError(f + ": value too large: " + quoted(text));
  return value * multiplier;
}

int parse_positive_int(std::string_view text, std::string_view flag, int max_value) {
  const std::string f(flag);
  if (!text.empty() && text.front() == '-') throw CliError(f + ": must be positive, got " + quoted(text));
  if (!all_digits(text)) throw CliError(f + ": not a whole number: " + quoted(text));
  if (text.size() > 9) throw CliError(f + ": value too large: " + quoted(text));
  const long v = std::strtol(std::string(text).c_str(), nullptr, 10);
  if (v <= 0) throw CliError(f + ": must be positive, got " + quoted(text));
  if (v > max_value) throw CliError(f + ": at most " + std::to_string(max_value) + ", got " + quoted(text));
  return static_cast<int>(v);
}

double parse_non_negative_double(std::string_view text, std::string_view flag, double max_value) {
  const std::string f(flag);
  const std::string s(text);
  if (s.empty()) throw CliError(f + ": empty value");
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'))
      throw CliError(f + ": not a number: " + quoted(text));
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    throw CliError(f + ": not a number: " + quoted(text));
  if (v < 0.0) throw CliError(f + ": must not be negative, got " + quoted(text));
  if (v > max_value) throw CliError(f + ": at most " + std::to_string(static_cast<long>(max_value)) + ", got " + quoted(text));
  return v;
}

ExtraOption ExtraOption::size(std::string name, std::string help, std::uint64_t default_value) {
  return {std::move(name), std::move(help), size_text(default_value), true, false, false};
}
ExtraOption ExtraOption::size(std::string name, std::string help, std::string default_shown) {
  return {std::move(name), std::move(help), std::move(default_shown), true, false, false};
}
ExtraOption ExtraOption::size_or_zero(std::string name, std::string help, std::uint64_t default_value) {
  return {std::move(name), std::move(help), size_text(default_value), true, true, false};
}
ExtraOption ExtraOption::text(std::string name, std::string help, std::string default_value) {
  return {std::move(name), std::move(help), std::move(default_value), false, false, false};
}
ExtraOption ExtraOption::output_file(std::string name, std::string help) {
  return {std::move(name), std::move(help), "", false, false, true};
}

std::string size_text(std::uint64_t value) {
  if (value != 0 && value % kGiB == 0) return std::to_string(value / kGiB) + "G";
  if (value != 0 && value % kMiB == 0) return std::to_string(value / kMiB) + "M";
  return std::to_string(value);
}

std::uint64_t Options::extra_size(const CliSpec& spec, const std::string& name) const {
  for (const auto& e : spec.extras) {
    if (e.name != name) continue;
    auto it = extras.find(name);
    const std::string& v = it != extras.end() ? it->second : e.default_value;
    // Only an option that declares 0 meaningful takes it; a count of zero is refused like --size 0.
    if (v == "0" && e.zero_allowed) return 0;
    return parse_size(v, "--" + name);
  }
  throw CliError("internal: demo option --" + name + " is not declared");
}

std::string Options::extra_text(const CliSpec& spec, const std::string& name) const {
  for (const auto& e : spec.extras) {
    if (e.name != name) continue;
    auto it = extras.find(name);
    return it != extras.end() ? it->second : e.default_value;
  }
  throw CliError("internal: demo option --" + name + " is not declared");
}

Options parse_cli(const CliSpec& spec, const std::vector<std::string>& args) {
  Options o;
  std::map<std::string, std::string> seen;  // single-valued flags already given, with their value
  auto once = [&](const std::string& name, const std::string& value) {
    auto it = seen.find(name);
    if (it != seen.end() && it->second != value)
      throw CliError("--" + name + " given twice with different values (" + quoted(it->second) + " and " +
                     quoted(value) + ")");
    seen[name] = value;
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 3 || arg[0] != '-' || arg[1] != '-')
      throw CliError("unexpected argument " + quoted(arg) + " (options start with --)");
    std::string name = arg.substr(2);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }

    const ExtraOption* extra = nullptr;
    for (const auto& e : spec.extras)
      if (e.name == name) extra = &e;

    const bool needs_value = takes_value(name) || extra != nullptr;
    if (!needs_value) {
      if (inline_value) throw CliError("--" + name + " takes no value");
      if (name == "help") o.help = true;
      else if (name == "list") o.list = true;
      else if (name == "quick") o.quick = true;
      else if (name == "profile") o.profile = true;
      else if (name == "claims") o.claims_list = true;
      else if (name == "strict") o.strict = true;
      else if (name == "plan-sizes") o.plan_sizes = true;
      else if (name == "cold" || name == "warm") {
        once("cold/--warm", name);
        o.cold = (name == "cold");
      } else {
        throw CliError("unknown option " + quoted(arg));
      }
      continue;
    }

    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else {
      if (i + 1 >= args.size()) throw CliError("--" + name + " needs a value");
      value = args[++i];
    }

    if (name == "variant") {
      bool known = false;
      for (const auto& v : spec.variants) known = known || v == value;
      if (!known) throw CliError("unknown variant " + quoted(value) + " (see --list)");
      bool dup = false;
      for (const auto& v : o.variants) dup = dup || v == value;
      if (!dup) o.variants.push_back(value);
    } else if (name == "size") {
      once(name, value);
      o.size = parse_size(value, "--size");
    } else if (name == "reps") {
      once(name, value);
      o.reps = parse_positive_int(value, "--reps", 100000);
    } else if (name == "warmup-ms") {
      once(name, value);
      o.warmup_ms = parse_non_negative_double(value, "--warmup-ms", 60000.0);
    } else if (name == "claim") {
      bool known = false;
      for (const auto& c : spec.claims) known = known || c == value;
      if (!known) throw CliError("unknown claim " + quoted(value) + " (see --claims)");
      bool dup = false;
      for (const auto& c : o.claims) dup = dup || c == value;
      if (!dup) o.claims.push_back(value);
    } else if (name == "csv" || name == "json" || name == "claims-csv" || name == "claims-eval") {
      once(name, value);
      if (value.empty()) throw CliError("--" + name + ": empty file name");
      if (name == "claims-eval" && value == "-") throw CliError("--claims-eval: give a file, not -");
      (name == "csv" ? o.csv_path : name == "json" ? o.json_path : name == "claims-csv" ? o.claims_csv_path
                                                                                       : o.claims_eval_path) = value;
    } else if (name == "device") {
      once(name, value);
      // An ordinal counts from 0; anything else that is not a whole number is refused the same way.
      if (!value.empty() && value.front() == '-')
        throw CliError("--device: a device ordinal is 0 or more, got " + quoted(value));
      if (value == "0") o.device = 0;
      else o.device = parse_positive_int(value, "--device", 1024);
    } else if (extra != nullptr) {
      once(name, value);
      if (extra->is_size) {
        if (value != "0" || !extra->zero_allowed) (void)parse_size(value, "--" + name);
      } else if (value.empty()) {
        throw CliError("--" + name + ": empty value");
      }
      o.extras[name] = value;
    }
  }
  int to_stdout = (o.csv_path == "-") + (o.json_path == "-") + (o.claims_csv_path == "-");
  if (to_stdout > 1) throw CliError("only one of --csv, --json and --claims-csv can write to stdout (-)");
  return o;
}

std::string usage(const CliSpec& spec) {
  std::ostringstream u;
  u << "usage: " << spec.program << " [options]\n\n" << spec.summary << "\n\n";
  u << "options:\n"
    << "  --help              show this help and exit\n"
    << "  --list              list the variants and exit\n"
    << "  --variant NAME      run only this variant (repeatable; default: all)\n"
    << "  --size N            problem size: " << spec.size_meaning << "; suffixes k, M, G = 2^10, 2^20, 2^30\n"
    << "  --reps N            timed samples per measurement (default 20)\n"
    << "  --warmup-ms X       time-based warm-up before each measurement, in ms (default 100)\n"
    << "  --cold | --warm     flush L2 before each sample, or not (default: the demo's choice)\n"
    << "  --csv FILE|-        write result rows as CSV (- for stdout)\n"
    << "  --json FILE|-       write result rows as JSON (- for stdout)\n"
    << "  --device N          CUDA device ordinal (default 0)\n"
    << "  --quick             small sizes and few samples (smoke tests)\n"
    << "  --profile           one pass per variant, minimal warm-up (for ncu)\n"
    << "  --claims            list what this demo expects to see (its claims) and exit; needs no GPU\n"
    << "  --claim NAME        judge (or list) only this claim (repeatable; default: all)\n"
    << "  --claims-csv FILE|- write one row per claim: held, not held or not applicable, value and bound\n"
    << "  --strict            exit 1 when a device-side claim does not hold\n"
    << "  --claims-eval FILE  judge the claims on rows saved with --csv FILE (no GPU)\n"
    << "  --plan-sizes        show the default size and device memory on common GPUs and exit; needs no GPU\n";
  for (const auto& e : spec.extras) {
    std::string flag = "--" + e.name + " " + (e.is_size ? "N" : "X");
    if (flag.size() < 18) flag.resize(18, ' ');
    u << "  " << flag << "  " << e.help << (e.default_value.empty() ? "" : " (default " + e.default_value + ")")
      << "\n";
  }
  if (!spec.claims_help.empty()) u << "\n" << spec.claims_help;
  u << "\nexit codes: 0 ok (also when a claim does not hold, unless --strict), 1 verification or CUDA failure,\n"
    << "2 bad command line, 77 waived (no GPU or feature)\n";
  return u.str();
}

}  // namespace cml
