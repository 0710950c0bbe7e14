// libFuzzer target for the shared command line: arbitrary bytes become an argument vector (split on
// NUL and newline) for parse_cli, and the raw bytes go to parse_size. Nothing may crash, hang or leak;
// every rejection must be a CliError with a one-line message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/cli.hpp"

namespace {

const cml::CliSpec& spec() {
  static const cml::CliSpec s = [] {
    cml::CliSpec x;
    x.program = "fuzz";
    x.summary = "fuzzed";
    x.variants = {"copy_row", "naive_col", "stride"};
    x.extras = {cml::ExtraOption::size("offset", "offset", "0"), cml::ExtraOption::size("rows", "rows", 8192),
                cml::ExtraOption::text("mode", "mode", "a")};
    return x;
  }();
  return s;
}

void require_one_line(const std::exception& e) {
  const std::string m = e.what();
  if (m.empty() || m.find('\n') != std::string::npos) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  std::string cur;
  for (char c : input) {
    if (c == '\0' || c == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);

  try {
    const cml::Options o = cml::parse_cli(spec(), args);
    // Accepted options must be usable: extras parse, sizes are positive.
    if (o.size && *o.size == 0) std::abort();
    if (o.reps && *o.reps <= 0) std::abort();
    (void)o.extra_size(spec(), "rows");
    (void)o.extra_text(spec(), "mode");
    if (o.extras.count("offset") && o.extras.at("offset") != "0") (void)o.extra_size(spec(), "offset");
  } catch (const cml::CliError& e) {
    require_one_line(e);
  }
  try {
    const std::uint64_t v = cml::parse_size(input);
    if (v == 0) std::abort();
  } catch (const cml::CliError& e) {
    require_one_line(e);
  }
  return 0;
}
