// Verification helpers: exact for data movement, tolerance for arithmetic, at most 10 reported.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/verify.hpp"

namespace {

TEST(CompareExact, EqualPasses) {
  std::vector<float> a = {1.f, 2.f, 3.f};
  EXPECT_TRUE(cml::compare_exact(a, a).ok());
}

TEST(CompareExact, CountsEveryMismatchReportsTen) {
  std::vector<int> got(100, 0), want(100, 1);
  const auto r = cml::compare_exact(got, want);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.mismatches, 100u);
  EXPECT_EQ(r.first.size(), 10u);
  EXPECT_EQ(r.first[0], "index 0: got 0, expected 1");
}

TEST(CompareExact, IsBitwise) {
  // -0.0 == 0.0 numerically but not bitwise; a data-movement kernel must move the bits.
  std::vector<float> got = {-0.0f}, want = {0.0f};
  EXPECT_FALSE(cml::compare_exact(got, want).ok());
  // NaN with identical bits is a faithful copy.
  std::vector<float> n = {NAN};
  EXPECT_TRUE(cml::compare_exact(n, n).ok());
}

TEST(CompareExact, SizeMismatchFails) {
  EXPECT_FALSE(cml::compare_exact(std::vector<int>{1}, std::vector<int>{1, 2}).ok());
}

TEST(CompareExact, StructsShowBytes) {
  struct P {
    short x, y;
  };
  std::vector<P> a = {{1, 2}}, b = {{1, 3}};
  const auto r = cml::compare_exact(a, b);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_NE(r.first[0].find("0x"), std::string::npos);
}

TEST(CompareClose, Tolerances) {
  std::vector<double> want = {100.0, 0.0};
  EXPECT_TRUE(cml::compare_close(std::vector<double>{100.0 + 1e-4, 1e-7}, want, 1e-6, 1e-6).ok());
  EXPECT_FALSE(cml::compare_close(std::vector<double>{100.1, 0.0}, want, 1e-6, 1e-6).ok());
  EXPECT_FALSE(cml::compare_close(std::vector<double>{100.0, 1e-3}, want, 1e-6, 1e-6).ok());
}

TEST(CompareClose, NanNeverPasses) {
  std::vector<float> nan = {NAN};
  EXPECT_FALSE(cml::compare_close(nan, nan, 1.0, 1.0).ok());
}

TEST(CompareValue, Scalar) {
  EXPECT_TRUE(cml::compare_value(5.14f, 5.14f, "x").ok());
  EXPECT_FALSE(cml::compare_value(5.0f, 5.14f, "x").ok());
}

}  // namespace
