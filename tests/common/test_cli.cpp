// The shared command line: every accepted form and every error it must report.
#include <gtest/gtest.h>

#include "common/cli.hpp"

namespace {

cml::CliSpec spec() {
  cml::CliSpec s;
  s.program = "demo";
  s.summary = "a test demo";
  s.variants = {"copy", "naive"};
  s.extras = {{"offset", "element offset", "32", true, true},
              {"mode", "a mode", "fast", false},
              {"rounds", "a count", "4", true}};
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

TEST(Usage, MentionsEveryFlagAndExtra) {
  const std::string u = cml::usage(spec());
  for (const char* f : {"--help", "--list", "--variant", "--size", "--reps", "--warmup-ms", "--csv", "--json",
                        "--device", "--quick", "--cold", "--profile", "--offset", "--mode", "77"})
    EXPECT_NE(u.find(f), std::string::npos) << f;
}

}  // namespace
