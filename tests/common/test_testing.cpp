// The sanitizer sweep's switches (tests/testing.hpp): which sizes the GPU tests leave to plain ctest
// when scripts/sanitize.sh sets CML_SANITIZER_SWEEP.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/testing.hpp"

namespace {

namespace ts = cml::test_support;

// Sets CML_SANITIZER_SWEEP for one test and puts back what was there.
class SweepEnv {
 public:
  explicit SweepEnv(const char* value) {
    if (const char* old = std::getenv("CML_SANITIZER_SWEEP")) {
      saved_ = old;
      had_ = true;
    }
    if (value) setenv("CML_SANITIZER_SWEEP", value, 1);
    else unsetenv("CML_SANITIZER_SWEEP");
  }
  ~SweepEnv() {
    if (had_) setenv("CML_SANITIZER_SWEEP", saved_.c_str(), 1);
    else unsetenv("CML_SANITIZER_SWEEP");
  }
  SweepEnv(const SweepEnv&) = delete;
  SweepEnv& operator=(const SweepEnv&) = delete;

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(SanitizerSweep, OnlyANonZeroValueTurnsItOn) {
  { SweepEnv e(nullptr); EXPECT_FALSE(ts::sanitizer_sweep()); }
  { SweepEnv e(""); EXPECT_FALSE(ts::sanitizer_sweep()); }
  { SweepEnv e("0"); EXPECT_FALSE(ts::sanitizer_sweep()); }
  { SweepEnv e("1"); EXPECT_TRUE(ts::sanitizer_sweep()); }
}

TEST(SanitizerSweep, LargeSizesAreLeftToPlainCtestOnlyDuringTheSweep) {
  {
    SweepEnv e("1");
    EXPECT_FALSE(ts::too_large_under_sanitizer(ts::kSanitizerMaxElements));
    EXPECT_TRUE(ts::too_large_under_sanitizer(ts::kSanitizerMaxElements + 1));
    EXPECT_FALSE(ts::too_large_under_sanitizer(1));
  }
  {
    SweepEnv e(nullptr);
    EXPECT_FALSE(ts::too_large_under_sanitizer(ts::kSanitizerMaxElements + 1));
    EXPECT_FALSE(ts::too_large_under_sanitizer(std::size_t{1} << 40));
  }
}

TEST(SanitizerSweep, ShapeSidesKeepEveryBoundaryAndEveryPlainSide) {
  {
    SweepEnv e(nullptr);
    EXPECT_EQ(ts::shape_sides(64).size(), 64u);
  }
  SweepEnv e("1");
  const std::vector<std::size_t> want = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 63, 64};
  EXPECT_EQ(ts::shape_sides(64), want);
}

}  // namespace
