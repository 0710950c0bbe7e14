// weak_ordering's kernels on a GPU: for every test, order and scope the demo runs (and the ones it does not),
// every trial is counted exactly once, every pair meets every iteration, every location ends holding its last
// store, and where the PTX memory model forbids the weak outcome none appears.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "01_memory_model/kernels/litmus.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

using Case = std::tuple<Litmus, Order, Scope>;

std::vector<Case> all_cases() {
  std::vector<Case> c;
  for (Litmus t : {Litmus::mp, Litmus::sb}) {
    for (Order o : {Order::plain, Order::volatile_access, Order::fence_block, Order::fence_device})
      c.emplace_back(t, o, Scope::device);
    for (Order o : {Order::release_acquire, Order::seq_cst})
      for (Scope s : {Scope::block, Scope::device, Scope::system}) c.emplace_back(t, o, s);
  }
  return c;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  static const char* orders[] = {"plain", "volatile", "fence_block", "fence_device", "release_acquire", "seq_cst"};
  static const char* scopes[] = {"block", "device", "system"};
  const auto [t, o, s] = info.param;
  return std::string(t == Litmus::mp ? "mp_" : "sb_") + orders[static_cast<int>(o)] + "_" + scopes[static_cast<int>(s)];
}

LitmusResult run(Litmus t, Order o, Scope s, const LitmusPlan& plan) {
  LitmusBuffers b(plan);
  b.place.upload(litmus_placement(plan.instances, 99));
  launch_litmus(t, o, s, plan, b, nullptr);
  return read_litmus(plan, b, nullptr);
}

class LitmusVariants : public testing::TestWithParam<Case> {};

TEST_P(LitmusVariants, CountsEveryTrialOnceAndKeepsTheModelsPromise) {
  CML_REQUIRE_GPU();
  const auto [t, o, s] = GetParam();
  const unsigned grid = litmus_grid_for_device(t, o, s);
  if (grid < 2) GTEST_SKIP() << "no cooperative launch, or fewer than two resident blocks";
  // Enough trials for the sum to mean something; under compute-sanitizer, a few iterations.
  const std::uint64_t wanted = test_support::sanitizer_sweep() ? 3 * std::uint64_t{grid / 2} * kLitmusThreads
                                                               : std::uint64_t{1} << 21;
  const LitmusPlan plan = plan_litmus(grid, wanted);
  const LitmusResult r = run(t, o, s, plan);
  EXPECT_EQ(r.stuck, 0u) << "threads gave up waiting for their partner";
  EXPECT_EQ(r.counts.total(), plan.trials);
  EXPECT_EQ(r.stale_lines, 0u) << "locations not holding the last iteration's value";
  if (model_forbids_weak(t, o, s))
    EXPECT_EQ(r.counts.weak(t), 0u) << "a weak outcome the memory model forbids";
}

INSTANTIATE_TEST_SUITE_P(EveryVariant, LitmusVariants, testing::ValuesIn(all_cases()), case_name);

// The smallest grid (one pair of blocks) and a single iteration: the edges of the handshake (SB classifies
// its only trial at the closing handshake).
TEST(LitmusShape, OnePairOneIteration) {
  CML_REQUIRE_GPU();
  if (litmus_grid_for_device(Litmus::sb, Order::seq_cst, Scope::device) < 2) GTEST_SKIP() << "no cooperative launch";
  for (Litmus t : {Litmus::mp, Litmus::sb}) {
    const LitmusPlan plan = plan_litmus(2, 1);
    ASSERT_EQ(plan.iterations, 1u);
    const LitmusResult r = run(t, Order::seq_cst, Scope::device, plan);
    EXPECT_EQ(r.stuck, 0u);
    EXPECT_EQ(r.counts.total(), plan.trials);
    EXPECT_EQ(r.counts.weak(t), 0u);
    EXPECT_EQ(r.stale_lines, 0u);
  }
}

// A second launch on the same buffers starts from zero again (launch_litmus resets what it counts on).
TEST(LitmusShape, RelaunchStartsFromZero) {
  CML_REQUIRE_GPU();
  const unsigned grid = litmus_grid_for_device(Litmus::mp, Order::release_acquire, Scope::device);
  if (grid < 2) GTEST_SKIP() << "no cooperative launch";
  const LitmusPlan plan = plan_litmus(grid, 100000);
  LitmusBuffers b(plan);
  b.place.upload(litmus_placement(plan.instances, 5));
  for (int k = 0; k < 2; ++k) {
    launch_litmus(Litmus::mp, Order::release_acquire, Scope::device, plan, b, nullptr);
    const LitmusResult r = read_litmus(plan, b, nullptr);
    EXPECT_EQ(r.counts.total(), plan.trials) << "launch " << k;
    EXPECT_EQ(r.counts.weak(Litmus::mp), 0u) << "launch " << k;
    EXPECT_EQ(r.stuck, 0u) << "launch " << k;
  }
}

}  // namespace
