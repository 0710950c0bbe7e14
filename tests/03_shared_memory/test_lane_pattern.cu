// The lane-pattern kernel (bank_conflicts, bank_width, smem_vs_global) against the CPU reference for every
// width and the patterns the demos use.
#include <gtest/gtest.h>

#include <vector>

#include "03_shared_memory/kernels/lane_pattern.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

std::vector<std::uint32_t> run(const LanePattern& p, unsigned width, int rounds, int blocks) {
  const auto words = pattern_init_words(width);
  DeviceBuffer<std::uint32_t> init(words.size()), out(static_cast<std::size_t>(blocks) * kPatternBlock * (width / 4));
  DeviceBuffer<int> offsets(32);
  init.upload(words);
  offsets.upload(p.offsets.data(), 32);
  out.poison();
  switch (width) {
    case 4: launch_lane_pattern_read(init.data(), offsets.data(), rounds, out.data(), blocks, nullptr); break;
    case 8:
      launch_lane_pattern_read(reinterpret_cast<const uint2*>(init.data()), offsets.data(), rounds,
                               reinterpret_cast<uint2*>(out.data()), blocks, nullptr);
      break;
    default:
      launch_lane_pattern_read(reinterpret_cast<const uint4*>(init.data()), offsets.data(), rounds,
                               reinterpret_cast<uint4*>(out.data()), blocks, nullptr);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return out.download();
}

TEST(Ch03LanePatternKernel, MatchesReferenceForEveryWidthAndPattern) {
  CML_REQUIRE_GPU();
  std::vector<LanePattern> patterns;
  for (int s : {1, 2, 3, 16, 31, 32, 33}) patterns.push_back(stride_pattern(s));
  patterns.push_back(broadcast_pattern());
  patterns.push_back(permutation_pattern(2024));
  patterns.push_back(random_pattern(2024));
  patterns.push_back(column_pad_pattern());
  patterns.push_back(column_swizzle_pattern());
  for (unsigned width : {4u, 8u, 16u}) {
    const auto words = pattern_init_words(width);
    for (const auto& p : patterns)
      for (int rounds : {1, 130}) {  // 130 rounds: the per-round shift wraps around the window
        const int blocks = 3;
        EXPECT_EQ(run(p, width, rounds, blocks),
                  pattern_expected(p, width, rounds, static_cast<std::size_t>(blocks) * kPatternBlock, words))
            << p.name << " width " << width << " rounds " << rounds;
      }
  }
}

}  // namespace
