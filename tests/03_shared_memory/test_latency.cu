// The pointer-chase kernels and the global read kernel (smem_vs_global) against the CPU reference.
#include <gtest/gtest.h>

#include <vector>

#include "03_shared_memory/kernels/latency.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

enum class Where { kShared, kGlobalL1, kGlobalL2 };

std::uint32_t chase(const Chain& c, Where where, int warm, int hops) {
  DeviceBuffer<std::uint32_t> chain(c.words.size());
  chain.upload(c.words);
  DeviceBuffer<unsigned long long> out(2);
  out.poison();
  if (where == Where::kShared)
    launch_chase_shared(chain.data(), static_cast<int>(c.words.size()), c.start, hops, out.data(), nullptr);
  else if (where == Where::kGlobalL1) launch_chase_global<true>(chain.data(), c.start, warm, hops, out.data(), nullptr);
  else launch_chase_global<false>(chain.data(), c.start, warm, hops, out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto host = out.download();
  // The poison (all ones) is no plausible count: a kernel that never stores its cycles fails here.
  EXPECT_GT(host[1], 0u) << "cycles";
  EXPECT_LT(host[1], 100000ull * static_cast<unsigned long long>(hops + warm + 1)) << "cycles";
  return static_cast<std::uint32_t>(host[0]);
}

TEST(Ch03Chase, EndsWhereTheCpuWalkEnds) {
  CML_REQUIRE_GPU();
  const Chain small = random_chain(4096, 1, 4096, 1);
  for (int hops : {1, 31, 4097}) EXPECT_EQ(chase(small, Where::kShared, 0, hops), chase_end(small, hops)) << hops;
  const Chain lines = random_chain(1000, kLineWords, 333, 2);
  for (int hops : {1, 31, 1000}) {
    EXPECT_EQ(chase(lines, Where::kGlobalL1, 333, hops), chase_end(lines, 333 + hops)) << hops;
    EXPECT_EQ(chase(lines, Where::kGlobalL2, 0, hops), chase_end(lines, hops)) << hops;
  }
}

TEST(Ch03GlobalRead, XorPerThreadAtOddSizes) {
  CML_REQUIRE_GPU();
  const std::size_t max_n4 = 1000003;
  const auto words = read_words(4 * max_n4);
  DeviceBuffer<std::uint32_t> in(words.size());
  in.upload(words);
  for (int blocks : {1, 7, global_read_blocks()})
    for (std::size_t n4 : {std::size_t{1}, std::size_t{31}, std::size_t{1000}, max_n4}) {
      const std::size_t threads = static_cast<std::size_t>(blocks) * kReadBlock;
      DeviceBuffer<std::uint32_t> out(threads);
      out.poison();
      launch_global_read(reinterpret_cast<const uint4*>(in.data()), n4, out.data(), blocks, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(out.download(), read_xor_expected(words, n4, threads)) << "n4 " << n4 << " blocks " << blocks;
    }
}

}  // namespace
