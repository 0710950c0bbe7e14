// The async_pipeline kernels (sync and 1- to 4-stage cuda::pipeline) against the CPU reference, bit for bit:
// short and odd arrays (a short last tile, tail words that are not a whole 16-byte vector), tile counts that
// are not a multiple of the grid, more blocks than tiles, and the demo's own low and high grids.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "03_shared_memory/kernels/async_pipeline.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

constexpr int kAllStages[] = {0, 1, 2, 3, 4};
constexpr std::size_t kGuardWords = 64;  // past the end of the output: must stay poisoned

std::string name_of(int stages) { return stages == 0 ? "sync" : "async_" + std::to_string(stages) + "stage"; }

// Runs one variant on `host` with `blocks` blocks and checks every output word and the guard after them.
void expect_matches(int stages, const std::vector<std::uint32_t>& host, unsigned blocks) {
  const std::size_t n = host.size();
  const auto expected = pipeline_reference(host);
  DeviceBuffer<std::uint32_t> in(n), out(n + kGuardWords);
  in.upload(host);
  out.poison();
  launch_async_pipeline(stages, in.data(), out.data(), n, blocks, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = out.download();
  const std::vector<std::uint32_t> body(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(n));
  EXPECT_EQ(body, expected) << name_of(stages) << " n=" << n << " blocks=" << blocks;
  for (std::size_t i = n; i < got.size(); ++i)
    ASSERT_EQ(got[i], 0xFFFFFFFFu) << name_of(stages) << " wrote past the end: word " << i << ", n=" << n;
}

TEST(Ch03AsyncPipeline, OddSizesAndSmallGrids) {
  CML_REQUIRE_GPU();
  // 1 to 5 words (no whole vector, a vector and a tail), one tile +- 1, 7 tiles + 3 words, an odd size.
  const std::size_t sizes[] = {1, 3, 4, 5, kPipeTileWords - 1, kPipeTileWords, kPipeTileWords + 1,
                               7 * kPipeTileWords + 3, 100003};
  for (std::size_t n : sizes) {
    const auto host = pipeline_input(n, static_cast<std::uint32_t>(n));
    // 1 block (every tile through the same stages), 3 (7 tiles are not a multiple of 3), 64 (more blocks
    // than tiles for the small sizes).
    for (int stages : kAllStages)
      for (unsigned blocks : {1u, 3u, 64u}) expect_matches(stages, host, blocks);
  }
}

// Many tiles per block: every stage buffer is refilled many times, so a missing barrier or a stage
// filtered before its copy landed shows as wrong words.
TEST(Ch03AsyncPipeline, ManyRoundsPerBlock) {
  CML_REQUIRE_GPU();
  const std::size_t n = 63 * kPipeTileWords + 17;  // under 2^17 words: also run under the sanitizers
  CML_SKIP_LARGE_UNDER_SANITIZER(n);
  const auto host = pipeline_input(n, 7);
  for (int stages : kAllStages)
    for (unsigned blocks : {1u, 2u, 5u}) expect_matches(stages, host, blocks);
}

TEST(Ch03AsyncPipeline, DemoGridsLowAndHigh) {
  CML_REQUIRE_GPU();
  const PipelineGrid low = async_pipeline_grid(Occupancy::low), high = async_pipeline_grid(Occupancy::high);
  EXPECT_EQ(low.blocks_per_sm, 1u);
  EXPECT_GE(high.blocks_per_sm, low.blocks_per_sm);
  EXPECT_EQ(high.blocks, high.blocks_per_sm * (low.blocks / low.blocks_per_sm)) << "the same SMs, more blocks each";
  // Enough tiles that every block of the high grid gets some, and a short last tile.
  const std::size_t n = static_cast<std::size_t>(high.blocks) * kPipeTileWords * 2 + 1001;
  CML_SKIP_LARGE_UNDER_SANITIZER(n);
  const auto host = pipeline_input(n, 3);
  for (int stages : kAllStages) {
    expect_matches(stages, host, low.blocks);
    expect_matches(stages, host, high.blocks);
  }
}

TEST(Ch03AsyncPipeline, FourStagesFitWhereCpAsyncExists) {
  CML_REQUIRE_GPU();
  int device = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  const int fit = async_pipeline_fit_per_sm();
  EXPECT_GE(fit, 1);
  // sm_80+ has at least 100 KiB of shared memory per SM: three blocks of four 8 KiB stages or more.
  if (major >= 8) {
    EXPECT_GE(fit, 3) << "high occupancy would hardly be higher than low";
  }
}

TEST(Ch03AsyncPipeline, RejectsWhatTheCopiesCannotDo) {
  CML_REQUIRE_GPU();
  DeviceBuffer<std::uint32_t> in(64), out(64);
  EXPECT_THROW(launch_async_pipeline(2, in.data() + 1, out.data(), 32, 1, nullptr), std::invalid_argument)
      << "16-byte copies need a 16-byte aligned source";
  EXPECT_THROW(launch_async_pipeline(2, in.data(), out.data() + 2, 32, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(launch_async_pipeline(5, in.data(), out.data(), 32, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(launch_async_pipeline(0, in.data(), out.data(), 32, 0, nullptr), std::invalid_argument);
  // An empty array launches nothing.
  out.poison();
  launch_async_pipeline(3, in.data(), out.data(), 0, 4, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(out.download(), std::vector<std::uint32_t>(64, 0xFFFFFFFFu));
}

}  // namespace
