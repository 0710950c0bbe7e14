// Statistics, bandwidth arithmetic and the host side of the timer.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "common/bandwidth.hpp"
#include "common/stats.hpp"
#include "common/timer.hpp"

namespace {

TEST(Summarize, OddCount) {
  const auto s = cml::summarize({5.0, 1.0, 3.0});
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.spread_pct, 100.0 * 4.0 / 3.0);
  EXPECT_EQ(s.count, 3u);
}

TEST(Summarize, EvenCountTakesMidpoint) {
  const auto s = cml::summarize({4.0, 1.0, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
}

TEST(Summarize, SingleSample) {
  const auto s = cml::summarize({2.0});
  EXPECT_DOUBLE_EQ(s.median, 2.0);
  EXPECT_DOUBLE_EQ(s.spread_pct, 0.0);
}

TEST(Summarize, RejectsEmptyAndNonFinite) {
  EXPECT_THROW(cml::summarize({}), std::invalid_argument);
  EXPECT_THROW(cml::summarize({1.0, NAN}), std::invalid_argument);
  EXPECT_THROW(cml::summarize({INFINITY}), std::invalid_argument);
}

TEST(Timer, TimingOfSummarizesTheCallersSamples) {
  const cml::Timing t = cml::timing_of({3.0, 1.0, 2.0});
  EXPECT_EQ(t.reps, 3);
  EXPECT_DOUBLE_EQ(t.stats.median, 2.0);
  EXPECT_DOUBLE_EQ(t.stats.min, 1.0);
  EXPECT_EQ(t.batch, 1);
  EXPECT_FALSE(t.cold);
  EXPECT_THROW(cml::timing_of({}), std::invalid_argument);
}

TEST(Timer, HostMsMeasuresWallClock) {
  const double ms = cml::host_ms([] { std::this_thread::sleep_for(std::chrono::milliseconds(5)); });
  EXPECT_GE(ms, 5.0);
  EXPECT_LT(ms, 5000.0);
}

TEST(Timer, TimeHostWarmsUpThenTakesRepsSamples) {
  cml::TimingOptions o;
  o.reps = 5;
  o.warmup_ms = 0.0;
  int calls = 0;
  const cml::Timing t = cml::time_host([&] { ++calls; }, o);
  EXPECT_EQ(t.reps, 5);
  EXPECT_EQ(t.stats.count, 5u);
  EXPECT_EQ(calls, o.min_warmup_launches + 5);
  EXPECT_EQ(t.batch, 1);
  EXPECT_FALSE(t.cold);
}

TEST(Bandwidth, GigabytesAreDecimal) {
  // 1e9 bytes in 1 ms = 1000 GB/s.
  EXPECT_DOUBLE_EQ(cml::gb_per_s(1e9, 1.0), 1000.0);
  // A copy of 2^28 floats reads and writes 2 GiB = 2.147 GB; in 1 ms that is 2147.48 GB/s.
  EXPECT_NEAR(cml::gb_per_s(2.0 * (1 << 28) * 4, 1.0), 2147.483648, 1e-6);
  EXPECT_TRUE(std::isnan(cml::gb_per_s(1.0, 0.0)));
}

TEST(Bandwidth, TheoreticalFromAttributes) {
  // H100 SXM: 2619 MHz, 5120-bit bus -> 3352 GB/s (the datasheet's 3.35 TB/s).
  EXPECT_NEAR(cml::theoretical_gb_per_s(2619000, 5120), 3352.32, 0.01);
  // A100 40GB: 1215 MHz, 5120-bit -> 1555 GB/s.
  EXPECT_NEAR(cml::theoretical_gb_per_s(1215000, 5120), 1555.2, 0.01);
}

TEST(Bandwidth, PercentOf) {
  EXPECT_DOUBLE_EQ(cml::percent_of(50.0, 200.0), 25.0);
  EXPECT_TRUE(std::isnan(cml::percent_of(1.0, 0.0)));
}

}  // namespace
