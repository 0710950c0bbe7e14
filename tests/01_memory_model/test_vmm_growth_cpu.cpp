// vmm_growth's host-side plan: the sizes a growing buffer passes through (fixed steps and doubling, all
// whole granules), what one step copies, maps and holds, and the default final size per card.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "01_memory_model/kernels/vmm_growth_plan.hpp"
#include "common/cli.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

using Plan = std::vector<std::uint64_t>;
constexpr std::uint64_t kGranule = 2 * kMiB;

TEST(FixedStepPlan, DefaultsGiveFifteenEqualSteps) {
  const Plan p = fixed_step_plan(kDefaultFinal, kDefaultStep, kGranule);
  ASSERT_EQ(p.size(), 16u);
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p[i], (i + 1) * kDefaultStep) << "entry " << i;
}

TEST(FixedStepPlan, AFinalSizeBetweenStepsEndsTheSweepRoundedToTheGranule) {
  // 10 MiB + 1 byte in 4 MiB steps: 4, 8, then 12 MiB (10 MiB + 1 rounded up to 2 MiB granules).
  EXPECT_EQ(fixed_step_plan(10 * kMiB + 1, 4 * kMiB, kGranule), (Plan{4 * kMiB, 8 * kMiB, 12 * kMiB}));
  EXPECT_EQ(fixed_step_plan(9 * kMiB, 4 * kMiB, kGranule), (Plan{4 * kMiB, 8 * kMiB, 10 * kMiB}));
}

TEST(FixedStepPlan, AStepBetweenGranulesRoundsUp) {
  // 3 MiB steps on 2 MiB granules are 4 MiB steps; on a 1 MiB granule they stay 3 MiB.
  EXPECT_EQ(fixed_step_plan(12 * kMiB, 3 * kMiB, kGranule), (Plan{4 * kMiB, 8 * kMiB, 12 * kMiB}));
  EXPECT_EQ(fixed_step_plan(9 * kMiB, 3 * kMiB, kMiB), (Plan{3 * kMiB, 6 * kMiB, 9 * kMiB}));
}

TEST(FixedStepPlan, EveryEntryIsWholeGranulesAndGrows) {
  for (std::uint64_t granule : {kGranule, 32 * kMiB})
    for (std::uint64_t step : {kMinGranule, 3 * kMiB, 7 * kMiB, 64 * kMiB})
      for (std::uint64_t final_bytes : {100 * kMiB + 5, 129 * kMiB, 256 * kMiB}) {
        if (round_up_to(final_bytes, granule) <= round_up_to(step, granule)) continue;
        const Plan p = fixed_step_plan(final_bytes, step, granule);
        ASSERT_GE(p.size(), 2u);
        EXPECT_EQ(p.back(), round_up_to(final_bytes, granule));
        for (std::size_t i = 0; i < p.size(); ++i) {
          EXPECT_EQ(p[i] % granule, 0u) << "entry " << i;
          if (i == 0) continue;
          EXPECT_GT(p[i], p[i - 1]) << "entry " << i;
          // Every step but the last is exactly one (rounded) step.
          if (i + 1 < p.size()) {
            EXPECT_EQ(p[i] - p[i - 1], round_up_to(step, granule)) << "entry " << i;
          }
        }
      }
}

TEST(FixedStepPlan, RefusesWhatLeavesNoGrowthStep) {
  EXPECT_THROW(fixed_step_plan(kDefaultFinal, 0, kGranule), CliError);
  EXPECT_THROW(fixed_step_plan(kDefaultFinal, kMiB, kGranule), CliError);  // below one granule
  EXPECT_THROW(fixed_step_plan(256 * kMiB, 256 * kMiB, kGranule), CliError);
  EXPECT_THROW(fixed_step_plan(255 * kMiB, 256 * kMiB, kGranule), CliError);
  EXPECT_THROW(fixed_step_plan(5 * kMiB, 4 * kMiB, 8 * kMiB), CliError);  // both round to one 8 MiB granule
  EXPECT_EQ(fixed_step_plan(4 * kMiB, 2 * kMiB, kGranule), (Plan{2 * kMiB, 4 * kMiB}));
}

TEST(FixedStepPlan, RefusesMoreGrowthStepsThanTheLimit) {
  // The copies realloc makes grow with size x steps: a tiny --step on a large --size is refused up front.
  const std::uint64_t step = 16 * kMiB;
  EXPECT_EQ(fixed_step_plan((kMaxGrowthSteps + 1) * step, step, kGranule).size(), kMaxGrowthSteps + 1);
  EXPECT_EQ(fixed_step_plan((kMaxGrowthSteps + 1) * step - kMiB, step, kGranule).size(), kMaxGrowthSteps + 1);
  EXPECT_THROW(fixed_step_plan((kMaxGrowthSteps + 1) * step + 1, step, kGranule), CliError);
  EXPECT_THROW(fixed_step_plan(16 * kGiB, kMinGranule, kGranule), CliError);
  EXPECT_THROW(doubling_plan(16 * kGiB, kMinGranule, kGranule), CliError);  // the same options, the same answer
}

TEST(DoublingPlan, DoublesFromTheStepAndEndsAtTheFinalSize) {
  EXPECT_EQ(doubling_plan(kDefaultFinal, kDefaultStep, kGranule),
            (Plan{256 * kMiB, 512 * kMiB, kGiB, 2 * kGiB, 4 * kGiB}));
  EXPECT_EQ(doubling_plan(3 * kGiB, kGiB, kGranule), (Plan{kGiB, 2 * kGiB, 3 * kGiB}));
  EXPECT_EQ(doubling_plan(5 * kMiB, 2 * kMiB, kGranule), (Plan{2 * kMiB, 4 * kMiB, 6 * kMiB}));
  EXPECT_THROW(doubling_plan(kGiB, kGiB, kGranule), CliError);
}

TEST(DoublingPlan, NeverMoreThanDoublesAndEndsWhereFixedStepsEnd) {
  for (std::uint64_t final_bytes : {3 * kMiB, 100 * kMiB, 1000 * kMiB + 3, 4 * kGiB}) {
    const std::uint64_t first = final_bytes <= 256 * kMiB ? kMinGranule : 16 * kMiB;  // within kMaxGrowthSteps
    const Plan d = doubling_plan(final_bytes, first, kGranule);
    EXPECT_EQ(d.back(), fixed_step_plan(final_bytes, first, kGranule).back());
    for (std::size_t i = 1; i < d.size(); ++i) {
      EXPECT_GT(d[i], d[i - 1]);
      EXPECT_LE(d[i], 2 * d[i - 1]);
    }
  }
}

TEST(StepCost, MappingAddsOnlyTheStepCopyingMovesAndHoldsEverything) {
  const StepCost m = step_cost(GrowBy::mapping, 3 * kGiB, 4 * kGiB);
  EXPECT_EQ(m.copied, 0u);
  EXPECT_EQ(m.mapped, kGiB);
  EXPECT_EQ(m.peak, 4 * kGiB);
  const StepCost c = step_cost(GrowBy::copying, 3 * kGiB, 4 * kGiB);
  EXPECT_EQ(c.copied, 6 * kGiB);  // read + written
  EXPECT_EQ(c.mapped, 4 * kGiB);
  EXPECT_EQ(c.peak, 7 * kGiB);
  EXPECT_THROW(step_cost(GrowBy::mapping, kGiB, kGiB), std::invalid_argument);
  EXPECT_THROW(step_cost(GrowBy::copying, 2 * kGiB, kGiB), std::invalid_argument);
}

TEST(StepCost, TheDefaultsCopyEightTimesMoreInFixedStepsThanDoubling) {
  // The arithmetic behind the doubling_amortizes claim.
  auto copied = [](const Plan& p) {
    std::uint64_t sum = 0;
    for (std::size_t i = 1; i < p.size(); ++i) sum += step_cost(GrowBy::copying, p[i - 1], p[i]).copied;
    return sum;
  };
  const Plan fixed = fixed_step_plan(kDefaultFinal, kDefaultStep, kGranule);
  const Plan doubling = doubling_plan(kDefaultFinal, kDefaultStep, kGranule);
  EXPECT_EQ(copied(fixed), 2 * 120 * kDefaultStep);
  EXPECT_EQ(copied(doubling), 2 * 15 * kDefaultStep);
}

TEST(StepCost, DoublingCostsAtMostFourTenthsOfFixedStepsInEveryPartFromTenSteps) {
  // The bound of doubling_amortizes: from the 10 fixed steps the claim needs, doubling copies, maps and
  // calls at most 0.4 of what fixed steps do, so any mix of those costs is at most 0.4 of theirs.
  struct Sum {
    double copied = 0, mapped = 0, calls = 0;
  };
  auto sum = [](const Plan& p) {
    Sum s;
    for (std::size_t i = 1; i < p.size(); ++i) {
      const StepCost c = step_cost(GrowBy::copying, p[i - 1], p[i]);
      s.copied += static_cast<double>(c.copied);
      s.mapped += static_cast<double>(c.mapped);
      s.calls += 1;
    }
    return s;
  };
  for (std::uint64_t steps = 10; steps <= 64; ++steps) {
    const std::uint64_t final_bytes = (steps + 1) * kDefaultStep;
    const Sum f = sum(fixed_step_plan(final_bytes, kDefaultStep, kGranule));
    const Sum d = sum(doubling_plan(final_bytes, kDefaultStep, kGranule));
    ASSERT_EQ(f.calls, static_cast<double>(steps));
    EXPECT_LE(d.copied / f.copied, 0.4) << steps << " steps";
    EXPECT_LE(d.mapped / f.mapped, 0.4) << steps << " steps";
    EXPECT_LE(d.calls / f.calls, 0.4) << steps << " steps";
  }
}

TEST(DefaultFinalBytes, FourGiBOrAQuarterOfASmallerCard) {
  EXPECT_EQ(default_final_bytes(80 * kGiB), kDefaultFinal);
  EXPECT_EQ(default_final_bytes(15 * kGiB), 3 * kGiB + 768 * kMiB);
  EXPECT_EQ(default_final_bytes(8 * kGiB), 2 * kGiB);
  EXPECT_EQ(default_final_bytes(kGiB), 2 * kDefaultStep);  // never fewer than one growth step
  for (std::uint64_t total : {kGiB, 6 * kGiB, 15 * kGiB, 24 * kGiB, 80 * kGiB, 141 * kGiB})
    EXPECT_EQ(default_final_bytes(total) % kDefaultStep, 0u);
}

}  // namespace
