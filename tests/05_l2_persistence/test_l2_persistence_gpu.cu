// The L2 persistence chapter on a device: its kernels against the CPU references at odd sizes, the same results
// through every way of attaching a window, and PersistingL2Guard putting the limit and the windows back.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "05_l2_persistence/kernels/set_aside_cost.cuh"
#include "05_l2_persistence/kernels/sliding_window.cuh"
#include "05_l2_persistence/persisting_l2.hpp"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch05;

constexpr std::size_t kGuardElements = 17;  // poisoned elements after every output, checked untouched

struct Limits {
  std::size_t persisting_max = 0;
  std::size_t max_window = 0;
};

// Skips (never passes) where the feature is missing.
bool persistence_supported(Limits* limits, std::string* why) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (prop.major < 8) {
    *why = "L2 persistence needs compute capability 8.0";
    return false;
  }
  if (prop.persistingL2CacheMaxSize <= 0) {
    *why = "persistingL2CacheMaxSize is 0 (MIG?)";
    return false;
  }
  limits->persisting_max = static_cast<std::size_t>(prop.persistingL2CacheMaxSize);
  limits->max_window = static_cast<std::size_t>(prop.accessPolicyMaxWindowSize);
  return true;
}

#define REQUIRE_PERSISTENCE(limits)                                             \
  CML_REQUIRE_GPU();                                                            \
  Limits limits;                                                                \
  do {                                                                          \
    std::string why_;                                                           \
    if (!persistence_supported(&limits, &why_)) GTEST_SKIP() << why_;          \
  } while (0)

bool poisoned(const uint4& e) {
  return e.x == 0xffffffffu && e.y == 0xffffffffu && e.z == 0xffffffffu && e.w == 0xffffffffu;
}

void expect_prefix_equal(const std::vector<uint4>& got, const std::vector<uint4>& want, const std::string& what) {
  ASSERT_GE(got.size(), want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(uint4)) != 0 && bad++ < 5) ADD_FAILURE() << what << ": element " << i;
  EXPECT_EQ(bad, 0u) << what;
  for (std::size_t i = want.size(); i < got.size(); ++i) EXPECT_TRUE(poisoned(got[i])) << what << ": guard " << i;
}

// ---- Kernels vs the CPU ------------------------------------------------------------------------------------

TEST(L2Kernels, FillWritesTheHashedElements) {
  CML_REQUIRE_GPU();
  const std::size_t n = 1000003;
  DeviceBuffer<uint4> buf(n + kGuardElements);
  buf.poison();
  launch_fill_elements(buf.data(), n, 7, kStreamSeed, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint4> want(n);
  for (std::size_t e = 0; e < n; ++e) want[e] = element_value(7 + e, kStreamSeed);
  expect_prefix_equal(buf.download(), want, "fill");
}

struct SlidingCase {
  std::size_t table_n, chunk_n;
  int passes;
  unsigned max_blocks;
};

class L2SlidingWindowKernel : public testing::TestWithParam<SlidingCase> {};

TEST_P(L2SlidingWindowKernel, MatchesTheCpuReference) {
  CML_REQUIRE_GPU();
  const SlidingCase c = GetParam();
  DeviceBuffer<uint4> table(c.table_n + kGuardElements);
  DeviceBuffer<uint4> stream(c.chunk_n * c.passes + kGuardElements);
  launch_fill_elements(stream.data(), c.chunk_n * c.passes, 0, kStreamSeed, nullptr);
  table.poison();
  launch_fill_elements(table.data(), c.table_n, 0, kTableSeed, nullptr);
  launch_sliding_window(table.data(), c.table_n, stream.data(), c.chunk_n, c.passes, c.max_blocks, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint4> want = sliding_window_reference(chunk_sums(c.chunk_n, c.passes), c.table_n);
  expect_prefix_equal(table.download(), want, "sliding window");
  // The evict-first loads are a cache hint only: the same table, bit for bit.
  table.poison();
  launch_fill_elements(table.data(), c.table_n, 0, kTableSeed, nullptr);
  launch_sliding_window_evict_first(table.data(), c.table_n, stream.data(), c.chunk_n, c.passes, c.max_blocks,
                                    nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  expect_prefix_equal(table.download(), want, "sliding window, stream evict-first");
}

INSTANTIATE_TEST_SUITE_P(OddSizes, L2SlidingWindowKernel,
                         testing::Values(SlidingCase{1, 0, 1, 4},           // no stream at all
                                         SlidingCase{1, 31, 3, 4},          // one entry gets everything
                                         SlidingCase{31, 1000, 2, 1},       // one block, many items each
                                         SlidingCase{1000, 31, 2, 1056},    // most entries get no stream
                                         SlidingCase{257, 1000003, 3, 2},   // long inner loops
                                         SlidingCase{1000003, 1000003, 2, 1056},
                                         SlidingCase{300007, 4000037, 2, 1056}),
                         [](const testing::TestParamInfo<SlidingCase>& i) {
                           return "table" + std::to_string(i.param.table_n) + "_chunk" +
                                  std::to_string(i.param.chunk_n) + "_passes" + std::to_string(i.param.passes) +
                                  "_blocks" + std::to_string(i.param.max_blocks);
                         });

class L2StreamingKernels : public testing::TestWithParam<std::size_t> {};

TEST_P(L2StreamingKernels, WriteAndReadMatchTheClosedForm) {
  CML_REQUIRE_GPU();
  const std::size_t n = GetParam();
  constexpr std::uint32_t seed = 0x1234567u;
  DeviceBuffer<std::uint32_t> buf(n + kGuardElements);
  buf.poison();
  launch_write_pattern(buf.data(), n, seed, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint32_t> got = buf.download();
  std::size_t bad = 0;
  unsigned want_xor = 0;
  for (std::size_t i = 0; i < n; ++i) {
    want_xor ^= pattern_word(i, seed);
    if (got[i] != pattern_word(i, seed) && bad++ < 5) ADD_FAILURE() << "write: word " << i;
  }
  EXPECT_EQ(bad, 0u);
  for (std::size_t i = n; i < got.size(); ++i) EXPECT_EQ(got[i], 0xffffffffu) << "write: guard " << i;
  DeviceBuffer<unsigned> result(1);
  for (const unsigned blocks : {1u, 3u, 1056u}) {
    CUDA_CHECK(cudaMemset(result.data(), 0, sizeof(unsigned)));
    launch_xor_read(buf.data(), n, result.data(), blocks, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(result.download()[0], want_xor) << "read with " << blocks << " blocks";
  }
}

// Sizes around the kernels' edges: a tail shorter than a uint4, fewer elements than one grid-stride step, more.
INSTANTIATE_TEST_SUITE_P(OddSizes, L2StreamingKernels, testing::Values(1, 3, 4, 7, 1025, 1000003, 16777219));

class L2RereadKernel : public testing::TestWithParam<std::tuple<std::size_t, int, unsigned>> {};

TEST_P(L2RereadKernel, MatchesTheCpuReference) {
  CML_REQUIRE_GPU();
  const auto [n, passes, max_blocks] = GetParam();
  DeviceBuffer<uint4> data(n);
  launch_fill_elements(data.data(), n, 0, kRereadSeed, nullptr);
  const unsigned blocks = reread_blocks(n, max_blocks);
  const std::size_t threads = static_cast<std::size_t>(blocks) * kBlock;
  DeviceBuffer<uint4> out(threads + kGuardElements);
  out.poison();
  launch_reread(data.data(), n, passes, out.data(), blocks, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  expect_prefix_equal(out.download(), reread_reference(n, passes, threads), "reread");
}

INSTANTIATE_TEST_SUITE_P(OddSizes, L2RereadKernel,
                         testing::Values(std::make_tuple(std::size_t{1}, 1, 4u),
                                         std::make_tuple(std::size_t{31}, 2, 1u),
                                         std::make_tuple(std::size_t{4097}, 5, 2u),
                                         std::make_tuple(std::size_t{1000003}, 3, 1056u)),
                         [](const testing::TestParamInfo<std::tuple<std::size_t, int, unsigned>>& i) {
                           return "n" + std::to_string(std::get<0>(i.param)) + "_passes" +
                                  std::to_string(std::get<1>(i.param)) + "_blocks" +
                                  std::to_string(std::get<2>(i.param));
                         });

// ---- Windows: same results whichever way they are attached ------------------------------------------------

TEST(L2Windows, ResultsAreTheSameThroughEveryAttachment) {
  REQUIRE_PERSISTENCE(limits);
  const std::size_t table_n = 100003, chunk_n = 300007;
  const int passes = 3;
  const unsigned max_blocks = 1056;
  Stream s;
  DeviceBuffer<uint4> table(table_n + kGuardElements), stream(chunk_n * passes);
  launch_fill_elements(stream.data(), chunk_n * passes, 0, kStreamSeed, s);
  const auto want = sliding_window_reference(chunk_sums(chunk_n, passes), table_n);
  const auto run = [&](const std::string& what, auto&& launch) {
    table.poison(s);
    launch_fill_elements(table.data(), table_n, 0, kTableSeed, s);
    launch(s.get());
    CUDA_CHECK(cudaStreamSynchronize(s));
    expect_prefix_equal(table.download(), want, what);
  };
  PersistingL2Guard guard(limits.persisting_max);
  // The window need not cover the whole (odd-sized) table; whole pages keep the read-back exact.
  const std::size_t bytes = table_n * sizeof(uint4) / 4096 * 4096;
  for (const cudaAccessPolicyWindow& w : {make_window(table.data(), bytes, 1.0, limits.max_window),
                                          make_window(table.data(), bytes, 0.25, limits.max_window)}) {
    const auto plain = [&](cudaStream_t st) {
      launch_sliding_window(table.data(), table_n, stream.data(), chunk_n, passes, max_blocks, st);
    };
    guard.set_stream_window(s, w);
    run("stream window", plain);
    guard.clear_stream_window(s);
    run("launch attribute", [&](cudaStream_t st) {
      launch_sliding_window_with_window(table.data(), table_n, stream.data(), chunk_n, passes, max_blocks, w, st);
    });
    Graph graph;
    const cudaGraphNode_t node =
        add_sliding_window_node(graph.get(), table.data(), table_n, stream.data(), chunk_n, passes, max_blocks);
    set_node_window(node, w);
    EXPECT_TRUE(same_window(node_window(node), w));
    const GraphExec exec(graph);
    run("graph kernel node", [&](cudaStream_t st) { exec.launch(st); });
    reset_persisting_lines();
  }
}

TEST(L2Windows, ClampedWindowIsAcceptedAndReadsBack) {
  REQUIRE_PERSISTENCE(limits);
  DeviceBuffer<unsigned char> buf(limits.max_window);
  Stream s;
  PersistingL2Guard guard(limits.persisting_max);
  const cudaAccessPolicyWindow w = make_window(buf.data(), 2 * limits.max_window, 1.5, limits.max_window);
  EXPECT_EQ(w.num_bytes, limits.max_window);
  EXPECT_EQ(w.hitRatio, 1.0f);
  guard.set_stream_window(s, w);
  EXPECT_TRUE(same_window(stream_window(s), w));
  const cudaAccessPolicyWindow tuned =
      tuned_window(buf.data(), 2 * limits.max_window, guard.limit(), limits.max_window);
  EXPECT_EQ(tuned.num_bytes, limits.max_window);
  guard.set_stream_window(s, tuned);
  EXPECT_TRUE(same_window(stream_window(s), tuned));
}

// ---- The guard ---------------------------------------------------------------------------------------------

TEST(L2Guard, RestoresTheLimit) {
  REQUIRE_PERSISTENCE(limits);
  const std::size_t before = persisting_limit();
  const std::size_t target = before == limits.persisting_max ? limits.persisting_max / 2 : limits.persisting_max;
  {
    PersistingL2Guard guard(target);
    EXPECT_EQ(guard.previous_limit(), before);
    EXPECT_EQ(guard.requested(), target);
    EXPECT_GT(guard.limit(), 0u);
    // The set-aside really changed inside the scope; otherwise the check below would pass with no restore.
    ASSERT_NE(guard.limit(), before);
  }
  EXPECT_EQ(persisting_limit(), before);
}

// No set-aside at all is the baseline of every speed-up in the chapter: it must really be 0 inside the scope
// (also under a guard that raised it) and come back as it was after.
TEST(L2Guard, ZeroMeansNoSetAsideAndNestsInsideALargerOne) {
  REQUIRE_PERSISTENCE(limits);
  const std::size_t before = persisting_limit();
  {
    PersistingL2Guard outer(limits.persisting_max);
    ASSERT_GT(outer.limit(), 0u);
    {
      PersistingL2Guard none(0);
      EXPECT_EQ(none.requested(), 0u);
      EXPECT_EQ(none.limit(), 0u);
      EXPECT_EQ(persisting_limit(), 0u);
    }
    EXPECT_EQ(persisting_limit(), outer.limit());
  }
  EXPECT_EQ(persisting_limit(), before);
}

TEST(L2Guard, ClampsTheSetAsideToTheDeviceMaximum) {
  REQUIRE_PERSISTENCE(limits);
  const std::size_t before = persisting_limit();
  {
    PersistingL2Guard guard(2 * limits.persisting_max + 12345);
    EXPECT_EQ(guard.requested(), limits.persisting_max);
    EXPECT_LE(guard.limit(), limits.persisting_max);
  }
  EXPECT_EQ(persisting_limit(), before);
}

TEST(L2Guard, RestoresEverythingWhenAnExceptionUnwinds) {
  REQUIRE_PERSISTENCE(limits);
  const std::size_t n = 1 << 20;
  DeviceBuffer<uint4> data(n), out(static_cast<std::size_t>(reread_blocks(n, 64)) * kBlock);
  launch_fill_elements(data.data(), n, 0, kRereadSeed, nullptr);
  Stream s;
  const std::size_t before = persisting_limit();
  const cudaAccessPolicyWindow window_before = stream_window(s);
  try {
    PersistingL2Guard guard(limits.persisting_max);
    guard.set_stream_window(s, make_window(data.data(), n * sizeof(uint4), 1.0, limits.max_window));
    launch_reread(data.data(), n, 2, out.data(), reread_blocks(n, 64), s);  // leaves persisting lines behind
    throw std::runtime_error("thrown inside the guard's scope");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(persisting_limit(), before);
  EXPECT_TRUE(same_window(stream_window(s), window_before));
  EXPECT_EQ(stream_window(s).num_bytes, 0u);
}

TEST(L2Guard, RestoresTheLimitWhenACudaCallThrowsInsideItsScope) {
  REQUIRE_PERSISTENCE(limits);
  const std::size_t before = persisting_limit();
  cml::announce_expected_api_error("cudaSetDevice(9999) inside a PersistingL2Guard", 2);
  EXPECT_THROW(
      {
        PersistingL2Guard guard(limits.persisting_max);
        CUDA_CHECK(cudaSetDevice(9999));
      },
      CudaError);
  EXPECT_EQ(persisting_limit(), before);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
