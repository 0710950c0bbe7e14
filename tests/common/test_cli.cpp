// The shared command line: every accepted form and every error it must report.
#include <gtest/gtest.h>

#include "common/cli.hpp"

namespace {

cml::CliSpec spec() {
  cml::CliSpec s;
  s.program = "demo";
  s.summary = "a test demo";
  s.variants = {"copy", "naive"};
  s.extras = {cml::ExtraOption::size_or_zero("offset", "element offset", 32),
              cml::ExtraOption::text("mode", "a mode", "fast"), cml::ExtraOption::size("rounds", "a count", 4)};
  return s;
}

cml::Options parse(std::vector<std::string> args) { return cml::parse_cli(spec(), args); }

TEST(ParseSize, PlainAndSuffixes) {
  EXPECT_EQ(cml::parse_size("4096"), 4096u);
  EXPECT_EQ(cml::parse_size("1"), 1u);
  EXPECT_EQ(cml::parse_size("64k"), 64u << 10);
  EXPECT_EQ(cml::parse_size("64K"), 64u << 10);
  EXPECT_EQ(cml::parse_size("16M"), 16u << 20);
  EXPECT_EQ(cml::parse_size("3G"), 3ull << 30);
  EXPECT_EQ(cml::parse_size("+5"), 5u);
  EXPECT_EQ(cml::parse_size("4611686018427387904"), 1ull << 62);
}

TEST(ParseSize, Rejects) {
  for (const char* bad : {"", "-1", "0", "0k", "abc", "10Q", "1T", "k", "1.5M", "1e6", "12 ", " 12", "1kk",
                          "99999999999999999999999", "4611686018427387905", "4294967297G", "--",
                          // would wrap around 2^64 if the digits were checked after the multiply
                          "18446744073709551616", "18446744073709551620", "40000000000000000000"})
    EXPECT_THROW(cml::parse_size(bad), cml::CliError) << "'" << bad << "'";
}

TEST(ParseSize, MessageNamesTheFlagAndIsOneLine) {
  try {
    cml::parse_size("12\nx", "--size");
    FAIL();
  } catch (const cml::CliError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--size"), std::string::npos);
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
}

TEST(ParseCli, Defaults) {
  const auto o = parse({});
  EXPECT_FALSE(o.help);
  EXPECT_FALSE(o.list);
  EXPECT_FALSE(o.size.has_value());
  EXPECT_FALSE(o.reps.has_value());
  EXPECT_FALSE(o.cold.has_value());
  EXPECT_TRUE(o.variants.empty());
  EXPECT_EQ(o.device, 0);
  EXPECT_EQ(o.extra_size(spec(), "offset"), 32u);
  EXPECT_EQ(o.extra_text(spec(), "mode"), "fast");
}

TEST(ParseCli, AllFlags) {
  const auto o = parse({"--variant", "copy", "--variant=naive", "--size", "1M", "--reps", "7", "--warmup-ms",
                        "12.5", "--csv", "out.csv", "--json=-", "--device", "1", "--quick", "--cold", "--profile",
                        "--offset", "11", "--mode", "slow"});
  EXPECT_EQ(o.variants, (std::vector<std::string>{"copy", "naive"}));
  EXPECT_EQ(*o.size, 1u << 20);
  EXPECT_EQ(*o.reps, 7);
  EXPECT_DOUBLE_EQ(*o.warmup_ms, 12.5);
  EXPECT_EQ(o.csv_path, "out.csv");
  EXPECT_EQ(o.json_path, "-");
  EXPECT_EQ(o.device, 1);
  EXPECT_TRUE(o.quick);
  EXPECT_TRUE(o.profile);
  EXPECT_TRUE(*o.cold);
  EXPECT_EQ(o.extra_size(spec(), "offset"), 11u);
  EXPECT_EQ(o.extra_text(spec(), "mode"), "slow");
}

TEST(ParseCli, RepeatedVariantIsKeptOnce) {
  EXPECT_EQ(parse({"--variant", "copy", "--variant", "copy"}).variants.size(), 1u);
}

TEST(ParseCli, SameValueTwiceIsFine) { EXPECT_EQ(*parse({"--reps", "3", "--reps", "3"}).reps, 3); }

TEST(ParseCli, ZeroOnlyWhereTheOptionAllowsIt) {
  const auto o = parse({"--offset", "0"});
  EXPECT_EQ(o.extras.at("offset"), "0");
  EXPECT_EQ(o.extra_size(spec(), "offset"), 0u);
  // A count of zero (no rounds, no runs) would time nothing or index an empty buffer: refused at parse time.
  EXPECT_THROW(parse({"--rounds", "0"}), cml::CliError);
  EXPECT_EQ(parse({"--rounds", "2"}).extra_size(spec(), "rounds"), 2u);
}

TEST(ParseCli, HelpAndList) {
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"--list"}).list);
}

TEST(ParseCli, Errors) {
  const std::vector<std::vector<std::string>> bad = {
      {"--bogus"},
      {"-x"},
      {"positional"},
      {"--size"},
      {"--size", "abc"},
      {"--size", "-1"},
      {"--size", "0"},
      {"--size", "10Q"},
      {"--size", "99999999999999999999"},
      {"--reps", "0"},
      {"--reps", "-2"},
      {"--reps", "x"},
      {"--reps", "2.5"},
      {"--reps", "100001"},
      {"--reps", "99999999999"},
      {"--warmup-ms", "-1"},
      {"--warmup-ms", "abc"},
      {"--warmup-ms", "nan"},
      {"--warmup-ms", "1e400"},
      {"--warmup-ms", "70000"},
      {"--device", "-1"},
      {"--device", "gpu"},
      {"--variant", "nope"},
      {"--variant"},
      {"--csv"},
      {"--csv", ""},
      {"--csv", "-", "--json", "-"},
      {"--cold", "--warm"},
      {"--size", "1M", "--size", "2M"},
      {"--reps", "3", "--reps", "4"},
      {"--help=1"},
      {"--quick=yes"},
      {"--offset", "-3"},
      {"--offset", "x"},
      {"--offset"},
      {"--mode", ""},
  };
  for (const auto& args : bad) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_THROW(parse(args), cml::CliError) << joined;
  }
}

TEST(ParseCli, ErrorMessagesAreOneLine) {
  try {
    parse({"--size", "1\n2"});
    FAIL();
  } catch (const cml::CliError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(SizeText, SuffixOnlyWhereExact) {
  EXPECT_EQ(cml::size_text(256 * cml::kMiB), "256M");
  EXPECT_EQ(cml::size_text(4 * cml::kGiB), "4G");
  EXPECT_EQ(cml::size_text(1536 * cml::kMiB), "1536M");
  EXPECT_EQ(cml::size_text(65536), "65536");
  EXPECT_EQ(cml::size_text(1000), "1000");
  EXPECT_EQ(cml::size_text(0), "0");
  for (std::uint64_t v : {std::uint64_t{1}, std::uint64_t{4099}, 64 * cml::kKiB, 3 * cml::kMiB + 1, 16 * cml::kGiB})
    EXPECT_EQ(cml::parse_size(cml::size_text(v)), v) << v;
}

// Each factory says what its value is; the parser and --help read only that.
TEST(ExtraOption, FactoriesNameWhatTheValueIs) {
  const auto size = cml::ExtraOption::size("rounds", "a count", 256);
  EXPECT_TRUE(size.is_size);
  EXPECT_FALSE(size.zero_allowed);
  EXPECT_FALSE(size.output_only);
  EXPECT_EQ(size.default_value, "256");
  EXPECT_EQ(cml::ExtraOption::size("step", "bytes", 256 * cml::kMiB).default_value, "256M");
  const auto shown = cml::ExtraOption::size("rows", "rows", "the --size value");
  EXPECT_TRUE(shown.is_size);
  EXPECT_EQ(shown.default_value, "the --size value");
  const auto zero = cml::ExtraOption::size_or_zero("steps", "0 = calibrate", 0);
  EXPECT_TRUE(zero.is_size);
  EXPECT_TRUE(zero.zero_allowed);
  EXPECT_EQ(zero.default_value, "0");
  const auto text = cml::ExtraOption::text("set-aside", "max or a size", "max");
  EXPECT_FALSE(text.is_size);
  EXPECT_FALSE(text.output_only);
  const auto file = cml::ExtraOption::output_file("timeline", "a trace");
  EXPECT_FALSE(file.is_size);
  EXPECT_TRUE(file.output_only);
  EXPECT_EQ(file.default_value, "");
}

TEST(ExtraOption, ParsedAsDeclared) {
  cml::CliSpec s = spec();
  s.extras.push_back(cml::ExtraOption::output_file("trace", "a trace"));
  EXPECT_THROW(cml::parse_cli(s, {"--rounds", "0"}), cml::CliError);  // size: 0 refused
  EXPECT_EQ(cml::parse_cli(s, {"--offset", "0"}).extra_size(s, "offset"), 0u);  // size_or_zero
  EXPECT_EQ(cml::parse_cli(s, {"--mode", "0"}).extra_text(s, "mode"), "0");   // text: any non-empty value
  EXPECT_THROW(cml::parse_cli(s, {"--trace", ""}), cml::CliError);
  EXPECT_EQ(cml::parse_cli(s, {"--trace=t.json"}).extra_text(s, "trace"), "t.json");
}

TEST(Usage, MentionsEveryFlagAndExtra) {
  const std::string u = cml::usage(spec());
  for (const char* f : {"--help", "--list", "--variant", "--size", "--reps", "--warmup-ms", "--csv", "--json",
                        "--device", "--quick", "--cold", "--profile", "--offset", "--mode", "77"})
    EXPECT_NE(u.find(f), std::string::npos) << f;
}

}  // namespace
