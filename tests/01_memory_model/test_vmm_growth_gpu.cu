// vmm_growth's growing buffers on a GPU: both kinds keep every word through odd numbers of steps of odd
// sizes, the mapped one never moves (a pointer taken before it grew still reads the right words), the
// copying one leaves the address it had before each step, and growth past the reservation or backwards
// is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "01_memory_model/kernels/vmm_growth.hpp"
#include "01_memory_model/kernels/vmm_growth_plan.hpp"
#include "common/pattern_kernels.cuh"
#include "tests/testing.hpp"
#include "common/vmm.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

#define REQUIRE_VMM()                                       \
  do {                                                      \
    CML_REQUIRE_GPU();                                      \
    const std::string why_ = vmm_unavailable(0, false);     \
    if (!why_.empty()) GTEST_SKIP() << why_;                \
  } while (0)

const char* name(GrowBy how) { return how == GrowBy::mapping ? "mapping" : "copying"; }

std::string first_mismatch(const VerifyResult& r) { return r.first.empty() ? std::string() : r.first.front(); }

// Grows through `plan`, checking after every step that the words written before it are still there
// (through the pointer taken before the first step, for the mapping kind) and that the whole buffer
// takes a new pattern. Returns how many steps moved the buffer: left it at another address than it had
// just before the step. Only that pair is fixed for the copying kind: its old and new allocations are
// alive at once, so they cannot share an address, but an allocation freed by an earlier step (the first
// one included) may be handed out again by a later cudaMalloc.
std::size_t grow_and_check(GrowBy how, const std::vector<std::uint64_t>& plan) {
  GrowingBuffer b(how, 0, plan.back());
  b.grow_to(plan[0], nullptr);
  auto* const first = b.data<std::uint32_t>();
  std::uint32_t seed = 77;
  launch_pattern_fill(first, plan[0] / 4, seed, nullptr);
  const std::uint32_t* before = first;
  std::size_t moved = 0;
  for (std::size_t i = 1; i < plan.size(); ++i) {
    b.grow_to(plan[i], nullptr);
    EXPECT_EQ(b.bytes(), plan[i]);
    EXPECT_GE(b.held(), plan[i]);
    auto* const now = b.data<std::uint32_t>();
    moved += now != before;
    before = now;
    const std::uint32_t* old_words = how == GrowBy::mapping ? first : now;
    const VerifyResult kept = check_pattern_on_device(old_words, plan[i - 1] / 4, seed, nullptr);
    EXPECT_TRUE(kept.ok()) << name(how) << " step " << i << " lost words: " << first_mismatch(kept);
    ++seed;
    launch_pattern_fill(now, plan[i] / 4, seed, nullptr);
    const VerifyResult whole = check_pattern_on_device(now, plan[i] / 4, seed, nullptr);
    EXPECT_TRUE(whole.ok()) << name(how) << " step " << i << " new part: " << first_mismatch(whole);
  }
  return moved;
}

// (kind, growth steps, step in granules): odd counts of odd-sized steps, so no size is a power of two.
class GrowKeepsContents : public testing::TestWithParam<std::tuple<GrowBy, int, int>> {};

TEST_P(GrowKeepsContents, AfterEveryStep) {
  REQUIRE_VMM();
  const auto [how, steps, granules] = GetParam();
  const std::uint64_t g = vmm_granularity(0, false);
  const std::uint64_t step = granules * g;
  const std::vector<std::uint64_t> plan = fixed_step_plan((steps + 1) * step, step, g);
  ASSERT_EQ(plan.size(), static_cast<std::size_t>(steps) + 1);
  const std::size_t moved = grow_and_check(how, plan);
  // The mapped buffer never moves; the copied one moves at every step (old and new exist at once).
  EXPECT_EQ(moved, how == GrowBy::mapping ? 0u : static_cast<std::size_t>(steps));
}

INSTANTIATE_TEST_SUITE_P(OddSteps, GrowKeepsContents,
                         testing::Combine(testing::Values(GrowBy::mapping, GrowBy::copying), testing::Values(1, 3, 7),
                                          testing::Values(1, 3)),
                         [](const auto& info) {
                           return std::string(name(std::get<0>(info.param))) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "_steps_of_" +
                                  std::to_string(std::get<2>(info.param)) + "_granules";
                         });

TEST(GrowingBuffer, DoublingKeepsContentsToAFinalSizeBetweenPowersOfTwo) {
  REQUIRE_VMM();
  const std::uint64_t g = vmm_granularity(0, false);
  const std::vector<std::uint64_t> plan = doubling_plan(11 * g, g, g);
  ASSERT_EQ(plan, (std::vector<std::uint64_t>{g, 2 * g, 4 * g, 8 * g, 11 * g}));
  EXPECT_EQ(grow_and_check(GrowBy::copying, plan), plan.size() - 1);
  EXPECT_EQ(grow_and_check(GrowBy::mapping, plan), 0u);
}

TEST(GrowingBuffer, CopyingKeepsEveryByteAtSizesBetweenGranules) {
  // The realloc path takes any size: word counts that are not multiples of a block or of a granule.
  CML_REQUIRE_GPU();
  GrowingBuffer b(GrowBy::copying, 0, 0);
  std::size_t words = 0;
  std::uint32_t seed = 5;  // a new one per step: a skipped copy cannot pass on a recycled old pattern
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1000003}, std::size_t{(1u << 22) + 7}}) {
    b.grow_to(n * 4, nullptr);
    EXPECT_EQ(b.held(), n * 4);
    const VerifyResult kept = check_pattern_on_device(b.data<std::uint32_t>(), words, seed, nullptr);
    EXPECT_TRUE(kept.ok()) << "grown to " << n << " words: " << first_mismatch(kept);
    launch_pattern_fill(b.data<std::uint32_t>(), n, ++seed, nullptr);
    words = n;
  }
  EXPECT_TRUE(check_pattern_on_device(b.data<std::uint32_t>(), words, seed, nullptr).ok());
}

TEST(GrowingBuffer, MappingRoundsToGranulesAndAPointerIntoItStaysGood) {
  REQUIRE_VMM();
  const std::uint64_t g = vmm_granularity(0, false);
  GrowingBuffer b(GrowBy::mapping, 0, 4 * g);
  b.grow_to(g + 4, nullptr);  // maps two granules
  EXPECT_EQ(b.held(), 2 * g);
  const std::size_t n = (g + 4) / 4;
  launch_pattern_fill(b.data<std::uint32_t>(), n, 9, nullptr);
  const std::uint32_t* const middle = b.data<std::uint32_t>() + n / 2;  // a pointer into the buffer
  b.grow_to(2 * g, nullptr);                                             // already mapped: nothing to do
  EXPECT_EQ(b.held(), 2 * g);
  b.grow_to(4 * g, nullptr);
  EXPECT_EQ(b.held(), 4 * g);
  std::uint32_t got = 0;
  CUDA_CHECK(cudaMemcpy(&got, middle, sizeof got, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, pattern_word(n / 2, 9));
  EXPECT_TRUE(check_pattern_on_device(b.data<std::uint32_t>(), n, 9, nullptr).ok());
}

TEST(GrowingBuffer, RefusesToShrinkOrToPassTheReservation) {
  REQUIRE_VMM();
  const std::uint64_t g = vmm_granularity(0, false);
  for (GrowBy how : {GrowBy::mapping, GrowBy::copying}) {
    GrowingBuffer b(how, 0, 2 * g);
    b.grow_to(g, nullptr);
    EXPECT_THROW(b.grow_to(g, nullptr), std::invalid_argument) << name(how);
    EXPECT_THROW(b.grow_to(g / 2, nullptr), std::invalid_argument) << name(how);
    EXPECT_EQ(b.bytes(), g);
  }
  GrowingBuffer m(GrowBy::mapping, 0, 2 * g);
  m.grow_to(g, nullptr);
  launch_pattern_fill(m.data<std::uint32_t>(), g / 4, 3, nullptr);
  EXPECT_THROW(m.grow_to(3 * g, nullptr), CudaError);  // past the reserved address space: nothing mapped
  EXPECT_EQ(m.bytes(), g);
  EXPECT_EQ(m.held(), g);
  EXPECT_TRUE(check_pattern_on_device(m.data<std::uint32_t>(), g / 4, 3, nullptr).ok());
}

}  // namespace
