// The claim checks: held, not held, not applicable, errors that name the claim, non-finite values, and
// the files a run writes and reads back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "common/claims.hpp"
#include "common/output.hpp"

namespace {

using namespace cml;

Row row(const std::string& variant, const std::string& params, double gb_per_s) {
  Row r;
  r.demo = "demo";
  r.variant = variant;
  r.params = params;
  r.gb_per_s = gb_per_s;
  r.median_ms = 1.0;
  r.verified = true;
  return r;
}

RunRows sample(std::map<std::string, std::string> waived = {}, std::vector<std::string> selected = {},
               bool complete = true) {
  std::vector<Row> rows = {row("fast", "", 100.0), row("slow", "", 40.0), row("sweep", "k=0", 100.0),
                           row("sweep", "k=1", 98.0), row("sweep", "k=2", 103.0)};
  rows[0].set("vs_ceiling", 0.97);
  return RunRows(rows, {"fast", "slow", "sweep", "other"}, std::move(waived), std::move(selected), complete);
}

const ClaimResult& only(const std::vector<ClaimResult>& r) {
  EXPECT_EQ(r.size(), 1u);
  return r.front();
}

TEST(Bound, HoldsAndDescribes) {
  EXPECT_TRUE(Bound::at_least(0.95).holds(0.95));
  EXPECT_FALSE(Bound::at_least(0.95).holds(0.9499));
  EXPECT_TRUE(Bound::at_most(2.0).holds(-5.0));
  EXPECT_FALSE(Bound::at_most(2.0).holds(2.01));
  EXPECT_TRUE(Bound::between(0.9, 1.1).holds(1.0));
  EXPECT_FALSE(Bound::between(0.9, 1.1).holds(1.2));
  EXPECT_EQ(Bound::at_least(0.95).describe(), ">= 0.95");
  EXPECT_EQ(Bound::at_most(1.03).describe(), "<= 1.03");
  EXPECT_EQ(Bound::between(0.8, 1.25).describe(), "0.8 .. 1.25");
}

TEST(Bound, NonFiniteNeverHolds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const Bound& b : {Bound::at_least(0.0), Bound::at_most(1e300), Bound::between(-1e300, 1e300)}) {
    EXPECT_FALSE(b.holds(nan));
    EXPECT_FALSE(b.holds(inf));
    EXPECT_FALSE(b.holds(-inf));
  }
}

TEST(Claims, RatioHeldAndNotHeld) {
  const auto held = only(evaluate_claims(
      {ratio_claim("slow_is_slower", "slow is slower", {"slow"}, {"fast"}, Bound::at_most(0.5), "why")}, sample()));
  EXPECT_EQ(held.status, ClaimStatus::held);
  EXPECT_DOUBLE_EQ(held.value, 0.4);
  EXPECT_EQ(held.measure, "gb_per_s slow / gb_per_s fast");
  EXPECT_EQ(held.bound, "<= 0.5");

  const auto missed = only(evaluate_claims(
      {ratio_claim("too_strict", "slow is much slower", {"slow"}, {"fast"}, Bound::at_most(0.3), "why")}, sample()));
  EXPECT_EQ(missed.status, ClaimStatus::not_held);
  EXPECT_DOUBLE_EQ(missed.value, 0.4);
}

TEST(Claims, ExtraColumnAndSweepHelpers) {
  Claim c{"near_ceiling", "fast is near the ceiling", "vs_ceiling fast", Bound::at_least(0.95), "why",
          ClaimKind::device, [](const RunRows& r) { return r.value(At{"fast", "", "vs_ceiling"}); }};
  EXPECT_EQ(only(evaluate_claims({c}, sample())).status, ClaimStatus::held);

  Claim flat{"flat_sweep", "every k within 5% of k=0", "max |k / k0 - 1|", Bound::at_most(0.05), "why",
             ClaimKind::device, [](const RunRows& r) {
               return max_rel_deviation(r.values("sweep", "gb_per_s"), r.value(At{"sweep", "k=0"}));
             }};
  const auto res = only(evaluate_claims({flat}, sample()));
  EXPECT_EQ(res.status, ClaimStatus::held);
  EXPECT_NEAR(res.value, 0.03, 1e-12);
}

TEST(Claims, WaivedOrUnselectedVariantIsNotApplicable) {
  const Claim c = ratio_claim("r", "t", {"slow"}, {"fast"}, Bound::at_most(0.5), "why");
  const auto waived = only(evaluate_claims({c}, sample({{"slow", "needs cp.async"}})));
  EXPECT_EQ(waived.status, ClaimStatus::not_applicable);
  EXPECT_NE(waived.detail.find("needs cp.async"), std::string::npos);

  const auto unselected = only(evaluate_claims({c}, sample({}, {"fast"})));
  EXPECT_EQ(unselected.status, ClaimStatus::not_applicable);
  EXPECT_NE(unselected.detail.find("--variant"), std::string::npos);
}

TEST(Claims, FeatureMissingIsNotApplicable) {
  Claim c{"needs_window", "t", "m", Bound::at_least(1.0), "why", ClaimKind::device,
          [](const RunRows&) -> double { throw NotApplicable("this GPU has no persisting L2"); }};
  const auto r = only(evaluate_claims({c}, sample()));
  EXPECT_EQ(r.status, ClaimStatus::not_applicable);
  EXPECT_EQ(r.detail, "this GPU has no persisting L2");
}

TEST(Claims, UnknownVariantIsAnErrorNamingTheClaim) {
  const auto r = only(evaluate_claims(
      {ratio_claim("typo_claim", "t", {"fsat"}, {"fast"}, Bound::at_most(1.0), "why")}, sample()));
  EXPECT_EQ(r.status, ClaimStatus::error);
  EXPECT_NE(r.detail.find("typo_claim"), std::string::npos);
  EXPECT_NE(r.detail.find("fsat"), std::string::npos);
}

TEST(Claims, MissingColumnIsAnErrorNamingTheClaim) {
  const auto r = only(evaluate_claims(
      {ratio_claim("col_claim", "t", {"fast", "", "no_such_column"}, {"fast"}, Bound::at_most(1.0), "why")},
      sample()));
  EXPECT_EQ(r.status, ClaimStatus::error);
  EXPECT_NE(r.detail.find("col_claim"), std::string::npos);
  EXPECT_NE(r.detail.find("no_such_column"), std::string::npos);
}

TEST(Claims, MissingRowIsAnErrorInADefaultRunAndNotApplicableOtherwise) {
  const Claim c = ratio_claim("row_claim", "t", {"sweep", "k=9"}, {"fast"}, Bound::at_most(1.0), "why");
  const auto in_default = only(evaluate_claims({c}, sample()));
  EXPECT_EQ(in_default.status, ClaimStatus::error);
  EXPECT_NE(in_default.detail.find("k=9"), std::string::npos);
  const auto with_options = only(evaluate_claims({c}, sample({}, {}, false)));
  EXPECT_EQ(with_options.status, ClaimStatus::not_applicable);
  // A variant of the table that produced no rows at all.
  const auto empty = only(evaluate_claims(
      {ratio_claim("other_claim", "t", {"other"}, {"fast"}, Bound::at_most(1.0), "why")}, sample()));
  EXPECT_EQ(empty.status, ClaimStatus::error);
}

TEST(Claims, NonFiniteValuesAreNotHeld) {
  std::vector<Row> rows = {row("a", "", std::numeric_limits<double>::quiet_NaN()), row("b", "", 0.0)};
  RunRows run(rows, {"a", "b"});
  const auto nan = only(evaluate_claims({ratio_claim("nan", "t", {"a"}, {"b"}, Bound::at_most(1e9), "w")}, run));
  EXPECT_EQ(nan.status, ClaimStatus::not_held);
  EXPECT_FALSE(nan.detail.empty());
  // 1 / 0: infinite, which no bound accepts.
  rows[0].gb_per_s = 1.0;
  RunRows run2(rows, {"a", "b"});
  const auto inf = only(evaluate_claims({ratio_claim("inf", "t", {"a"}, {"b"}, Bound::at_least(0.0), "w")}, run2));
  EXPECT_EQ(inf.status, ClaimStatus::not_held);
}

TEST(Claims, SweepHelpersPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(max_of({1.0, nan, 3.0})));
  EXPECT_TRUE(std::isnan(min_of({1.0, nan})));
  EXPECT_TRUE(std::isnan(max_rel_deviation({1.0, nan}, 1.0)));
  EXPECT_DOUBLE_EQ(max_of({1.0, 3.0, 2.0}), 3.0);
  EXPECT_DOUBLE_EQ(min_of({1.0, 3.0, 2.0}), 1.0);
  EXPECT_THROW(max_of({}), ClaimError);
}

// ---- Finding rows for a claim -----------------------------------------------------------------------------

Row sized(const std::string& variant, const std::string& params, std::uint64_t size, double gb_per_s) {
  Row r = row(variant, params, gb_per_s);
  r.size = size;
  return r;
}

// A single-point variant whose params name a size, one that wrote two rows (one failed its check), a size
// sweep in two directions, a variant of the table that wrote nothing and a waived one.
RunRows helper_rows(bool complete = true, std::vector<std::string> selected = {}) {
  std::vector<Row> rows = {row("one", "n=4096", 10.0), row("twice", "", 1.0), row("twice", "", 2.0)};
  rows[2].verified = false;
  for (std::uint64_t size : {1024, 4096, 16384}) {
    rows.push_back(sized("copy", "dir=h2d", size, static_cast<double>(size) / 1024));
    rows.push_back(sized("copy", "dir=d2h", size, static_cast<double>(size) / 512));
  }
  return RunRows(rows, {"one", "twice", "copy", "none", "waived"}, {{"waived", "needs two GPUs"}},
                 std::move(selected), complete);
}

TEST(RunRowsHelpers, OnlyIsExactlyOneRow) {
  const RunRows r = helper_rows();
  EXPECT_EQ(r.only("one").params, "n=4096");
  EXPECT_DOUBLE_EQ(r.only_value("one", "gb_per_s"), 10.0);
  EXPECT_THROW(r.only("twice"), ClaimError);  // a second row is a defect, never ignored
  EXPECT_THROW(r.only_value("twice", "gb_per_s"), ClaimError);
  EXPECT_THROW(r.only("none"), ClaimError);  // the default sweep must have the row
  EXPECT_THROW(helper_rows(false).only("none"), NotApplicable);
  EXPECT_THROW(r.only("waived"), NotApplicable);
  EXPECT_THROW(helper_rows(true, {"twice"}).only("one"), NotApplicable);
  EXPECT_THROW(r.only("nope"), ClaimError);
  // Two rows stay an error whatever the options: they are not a sweep the options chose.
  EXPECT_THROW(helper_rows(false).only("twice"), ClaimError);
}

TEST(RunRowsHelpers, RowsWhereNeedsAtLeastOne) {
  const RunRows r = helper_rows();
  const auto wide = [](const Row& row) { return row.size >= 4096; };
  EXPECT_EQ(r.rows_where("copy", wide, "of 4 KiB or more").size(), 4u);
  const auto huge = [](const Row& row) { return row.size > 16384; };
  try {
    (void)r.rows_where("copy", huge, "above 16 KiB");
    ADD_FAILURE() << "no row matched, yet no exception";
  } catch (const ClaimError& e) {
    EXPECT_EQ(std::string(e.what()), "variant copy has no row above 16 KiB");
  }
  EXPECT_THROW(helper_rows(false).rows_where("copy", huge, "above 16 KiB"), NotApplicable);
  EXPECT_THROW(r.rows_where("waived", wide, "w"), NotApplicable);
  // only_where: the one such row.
  const auto h2d_4k = [](const Row& row) { return row.params == "dir=h2d" && row.size == 4096; };
  EXPECT_DOUBLE_EQ(RunRows::value(r.only_where("copy", h2d_4k, "at 4 KiB to the device"), "gb_per_s"), 4.0);
  EXPECT_THROW(r.only_where("copy", wide, "of 4 KiB or more"), ClaimError);
  EXPECT_THROW(helper_rows(false).only_where("copy", huge, "above 16 KiB"), NotApplicable);
}

TEST(RunRowsHelpers, LargestSmallestAndSizes) {
  const RunRows r = helper_rows();
  EXPECT_EQ(r.largest("copy", "size").size, 16384u);
  EXPECT_EQ(r.largest("copy", "size").params, "dir=h2d");  // the first of equal rows
  EXPECT_DOUBLE_EQ(r.largest("copy", "gb_per_s").gb_per_s, 32.0);
  EXPECT_DOUBLE_EQ(largest(r.sweep("copy", "dir=d2h"), "size").gb_per_s, 32.0);
  EXPECT_EQ(smallest(r.sweep("copy", "dir=d2h"), "size").size, 1024u);
  EXPECT_THROW(largest({}, "size"), ClaimError);
  EXPECT_THROW(r.largest("one", "no_such_column"), ClaimError);

  EXPECT_EQ(r.sweep("copy", "dir=h2d").size(), 3u);
  EXPECT_THROW(r.sweep("copy", "dir=d2d"), ClaimError);
  EXPECT_THROW(helper_rows(false).sweep("copy", "dir=d2d"), NotApplicable);
  EXPECT_DOUBLE_EQ(r.at_size("copy", "dir=d2h", 4096).gb_per_s, 8.0);
  EXPECT_THROW(r.at_size("copy", "dir=h2d", 65536), NotApplicable);  // the sweep ends below it
  EXPECT_THROW(r.at_size("copy", "dir=h2d", 2048), ClaimError);      // passed without a row there
  EXPECT_THROW(helper_rows(false).at_size("copy", "dir=h2d", 2048), NotApplicable);
}

TEST(RunRowsHelpers, UnverifiedRowsAndTheirClaim) {
  const RunRows r = helper_rows();
  EXPECT_DOUBLE_EQ(r.unverified_rows("twice"), 1.0);
  EXPECT_DOUBLE_EQ(r.unverified_rows("copy"), 0.0);
  EXPECT_THROW(r.unverified_rows("none"), ClaimError);

  const auto res = evaluate_claims({all_verified_claim("all_good", "t", {"one", "twice"}, "w")}, r);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0].status, ClaimStatus::not_held);
  EXPECT_DOUBLE_EQ(res[0].value, 1.0);
  EXPECT_EQ(res[0].measure, "rows of one twice that did not verify");
  EXPECT_EQ(res[0].bound, "<= 0");
}

TEST(RunRowsHelpers, OnlyRatioClaimReadsOneRowsWhateverTheirParams) {
  std::vector<Row> rows = {row("l1", "n=512", 400.0), row("l2", "n=4096", 100.0), row("two", "", 1.0),
                           row("two", "", 1.0)};
  const RunRows r(rows, {"l1", "l2", "two"});
  const auto held = evaluate_claims(
      {only_ratio_claim("l1_beats_l2", "t", "l1", "l2", "gb_per_s", Bound::at_least(2.0), "w")}, r);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].status, ClaimStatus::held);
  EXPECT_DOUBLE_EQ(held[0].value, 4.0);
  EXPECT_EQ(held[0].measure, "gb_per_s l1 / gb_per_s l2");
  const auto two = evaluate_claims({only_ratio_claim("c", "t", "two", "l2", "gb_per_s", Bound::at_least(0), "w")}, r);
  EXPECT_EQ(two[0].status, ClaimStatus::error);
}

// Two variants swept over offset and block, for the point-by-point and per-group helpers.
RunRows offset_rows() {
  return RunRows({row("a", "offset=0 block=128", 100.0), row("a", "offset=0 block=256", 104.0),
                  row("a", "offset=11 block=128", 90.0), row("a", "offset=11 block=256", 99.0),
                  row("b", "offset=0 block=128", 50.0), row("b", "offset=0 block=256", 52.0),
                  row("b", "offset=11 block=128", 45.0), row("b", "offset=11 block=256", 33.0)},
                 {"a", "b"});
}

TEST(RunRowsHelpers, PairedRatiosMatchParams) {
  EXPECT_EQ(offset_rows().paired_ratios("b", "a"), (std::vector<double>{0.5, 0.5, 0.5, 33.0 / 99.0}));
  const RunRows missing({row("a", "offset=0", 1.0), row("b", "offset=1", 1.0)}, {"a", "b"});
  EXPECT_THROW(missing.paired_ratios("b", "a"), ClaimError);
}

TEST(RunRowsHelpers, StepRatiosAndGroupSpreads) {
  EXPECT_EQ(step_ratios({1.0, 2.0, 1.0}), (std::vector<double>{2.0, 0.5}));
  EXPECT_THROW(step_ratios({1.0}), ClaimError);
  EXPECT_TRUE(std::isnan(max_of(step_ratios({1.0, kNaN, 2.0}))));
  // Within offset=0: 104 / 100; within offset=11: 99 / 90 (the offsets are not compared with each other).
  EXPECT_DOUBLE_EQ(offset_rows().max_spread_within_groups("a", " block="), 99.0 / 90.0);
  EXPECT_DOUBLE_EQ(offset_rows().max_spread_within_groups("b", " block="), 45.0 / 33.0);
}

TEST(Claims, NotJudgedStillSurfacesErrors) {
  const std::vector<Claim> claims = {ratio_claim("ok", "t", {"slow"}, {"fast"}, Bound::at_most(0.1), "w"),
                                     ratio_claim("broken", "t", {"nope"}, {"fast"}, Bound::at_most(1.0), "w")};
  const auto r = evaluate_claims(claims, sample(), "--quick run");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].status, ClaimStatus::not_applicable);
  EXPECT_EQ(r[0].detail, "--quick run");
  EXPECT_EQ(r[1].status, ClaimStatus::error);
}

TEST(Claims, TallyCountsDeviceAndHostApart) {
  std::vector<Claim> claims = {
      ratio_claim("d_held", "t", {"slow"}, {"fast"}, Bound::at_most(0.5), "w"),
      ratio_claim("d_missed", "t", {"slow"}, {"fast"}, Bound::at_most(0.1), "w"),
      ratio_claim("h_missed", "t", {"slow"}, {"fast"}, Bound::at_most(0.1), "w", ClaimKind::host),
      ratio_claim("d_na", "t", {"sweep", "k=0"}, {"fast"}, Bound::at_most(2.0), "w"),
  };
  const ClaimTally t = tally(evaluate_claims(claims, sample({{"sweep", "not here"}})));
  EXPECT_EQ(t.device_held, 1);
  EXPECT_EQ(t.device_judged, 2);
  EXPECT_EQ(t.host_held, 0);
  EXPECT_EQ(t.host_judged, 1);
  EXPECT_EQ(t.not_applicable, 1);
  EXPECT_EQ(t.errors, 0);
}

TEST(Claims, ValidateRejectsBadTables) {
  const Claim good = ratio_claim("good_name", "t", {"a"}, {"b"}, Bound::at_most(1.0), "w");
  EXPECT_EQ(validate_claims({good}), "");
  Claim bad_name = good;
  bad_name.name = "Bad-Name";
  EXPECT_NE(validate_claims({bad_name}), "");
  EXPECT_NE(validate_claims({good, good}).find("twice"), std::string::npos);
  Claim unbounded = good;
  unbounded.bound = Bound{};
  EXPECT_NE(validate_claims({unbounded}).find("never fail"), std::string::npos);
  Claim empty = good;
  empty.bound = Bound::between(2.0, 1.0);
  EXPECT_NE(validate_claims({empty}), "");
  Claim no_why = good;
  no_why.why.clear();
  EXPECT_NE(validate_claims({no_why}), "");
}

TEST(Claims, NotApplicableForAWaivedDemo) {
  const auto r = claims_not_applicable({ratio_claim("x", "t", {"a"}, {"b"}, Bound::at_most(1.0), "w")},
                                       "demo waived: needs two GPUs");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, ClaimStatus::not_applicable);
  EXPECT_EQ(r[0].detail, "demo waived: needs two GPUs");
}

TEST(ClaimFiles, CsvAndJsonEscapeText) {
  ClaimResult r;
  r.name = "c";
  r.text = "a, \"quoted\" sentence";
  r.measure = "m";
  r.bound = "<= 1";
  r.why = "w";
  r.status = ClaimStatus::held;
  r.value = 0.5;
  const std::string csv = claims_to_csv({r}, "demo", "GPU, big");
  EXPECT_NE(csv.find("\"GPU, big\",demo,c,device,held,0.5,<= 1,m,\"a, \"\"quoted\"\" sentence\","), std::string::npos);
  const std::string json = claims_to_json({r});
  EXPECT_NE(json.find("\"text\": \"a, \\\"quoted\\\" sentence\""), std::string::npos);
  EXPECT_NE(json.find("\"value\": 0.5"), std::string::npos);
  r.value = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(claims_to_json({r}).find("\"value\": null"), std::string::npos);
}

// A file named after the running test: ctest runs the tests of this binary as separate processes at once,
// so a name made from a per-process counter alone would be shared by two of them.
class TempFile {
 public:
  explicit TempFile(const std::string& content) : path_(name()) { std::ofstream(path_) << content; }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static std::string name() {
    const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
    return ::testing::TempDir() + "claims_test_" + (t ? std::string(t->test_suite_name()) + "." + t->name() : "") +
           "_" + std::to_string(++n_);
  }
  static inline int n_ = 0;
  std::string path_;
};

TEST(ClaimFiles, RowsSurviveACsvRoundTrip) {
  std::vector<Row> rows = {row("a", "k=1", 12.5), row("b", "x, \"y\"", 7.0)};
  rows[0].set("vs_ceiling", 0.97).set("note", "plain");
  rows[1].set("note", "with, comma");
  TempFile f(to_csv(rows, "GPU"));
  std::string device;
  const std::vector<Row> back = read_rows_csv(f.path(), &device);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(device, "GPU");  // the claims judged on these rows say whose they are
  EXPECT_EQ(back[1].params, "x, \"y\"");
  EXPECT_DOUBLE_EQ(back[0].gb_per_s, 12.5);
  EXPECT_DOUBLE_EQ(RunRows::value(back[0], "vs_ceiling"), 0.97);
  EXPECT_EQ(*back[1].get("note"), "with, comma");
  // b has no vs_ceiling cell: the column is absent for it, which a claim reports as an error.
  EXPECT_EQ(back[1].get("vs_ceiling"), nullptr);
  EXPECT_THROW(RunRows::value(back[1], "vs_ceiling"), ClaimError);
}

TEST(ClaimFiles, MalformedCsvNamesFileAndLine) {
  TempFile bad("device,demo,variant,params,size,bytes,median_ms,min_ms,max_ms,spread_pct,gb_per_s,pct_peak,reps,"
               "batch,cache,verified\nGPU,d,v,,1,2,3,4,5,6,7,8,9,10,cold,true\nGPU,d,v,,1\n");
  try {
    read_rows_csv(bad.path());
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad.path() + ":3"), std::string::npos) << e.what();
  }
  TempFile other("a,b,c\n1,2,3\n");
  EXPECT_THROW(read_rows_csv(other.path()), std::runtime_error);
  EXPECT_THROW(read_rows_csv("/no/such/file.csv"), std::runtime_error);
}

TEST(ClaimFiles, DeviceFactsFromRunJson) {
  TempFile f("{\n  \"demo\": \"d\",\n  \"device\": {\"name\": \"X, \\\"Y\\\"\", \"cc\": \"9.0\", \"sm_count\": 132, "
             "\"l2_bytes\": 62914560, \"driver\": \"13.0\"},\n  \"rows\": []\n}\n");
  const auto facts = read_device_facts_json(f.path());
  EXPECT_DOUBLE_EQ(facts.at("sm_count"), 132);
  EXPECT_DOUBLE_EQ(facts.at("l2_bytes"), 62914560);
  EXPECT_EQ(facts.count("name"), 0u);
  EXPECT_TRUE(read_device_facts_json("/no/such.json").empty());
}

// A saved run says how it was made, so that --claims-eval judges a --quick or partial run as the live run did.
TEST(ClaimFiles, RunModeRoundTripsThroughTheJson) {
  const RunMode quick{false, "--quick run: sizes and \"samples\" too small to judge"};
  TempFile f("{\n  \"demo\": \"d\",\n  " + run_mode_json(quick) + ",\n  \"rows\": []\n}\n");
  const RunMode back = read_run_mode_json(f.path());
  EXPECT_FALSE(back.complete);
  EXPECT_EQ(back.not_judged, quick.not_judged);
  TempFile full("{\n  " + run_mode_json(RunMode{}) + "\n}\n");
  EXPECT_TRUE(read_run_mode_json(full.path()).complete);
  EXPECT_TRUE(read_run_mode_json(full.path()).not_judged.empty());
  // Files from before the member, or none at all: a complete, judged run.
  TempFile old("{\n  \"demo\": \"d\",\n  \"rows\": []\n}\n");
  EXPECT_TRUE(read_run_mode_json(old.path()).complete);
  EXPECT_TRUE(read_run_mode_json("/no/such.json").complete);
  // ... and --claims-eval says it assumed so: only a file with the member counts as recorded.
  EXPECT_TRUE(read_run_mode_json(full.path()).recorded);
  EXPECT_TRUE(read_run_mode_json(f.path()).recorded);
  EXPECT_FALSE(read_run_mode_json(old.path()).recorded);
  EXPECT_FALSE(read_run_mode_json("/no/such.json").recorded);
}

TEST(ClaimFiles, FactsMissingAreNotApplicable) {
  RunRows run = sample();
  Claim c{"needs_l2", "t", "m", Bound::at_least(1.0), "w", ClaimKind::device,
          [](const RunRows& r) { return r.fact("l2_bytes"); }};
  EXPECT_EQ(only(evaluate_claims({c}, run)).status, ClaimStatus::not_applicable);
  run.set_fact("l2_bytes", 4e6);
  EXPECT_EQ(only(evaluate_claims({c}, run)).status, ClaimStatus::held);
}

}  // namespace
