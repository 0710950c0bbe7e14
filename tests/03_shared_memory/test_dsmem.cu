// The distributed-shared-memory kernels (distributed_shared) against the CPU: chase ends, per-thread read sums,
// exact histograms at small and odd sizes. Skipped (never passed) without a GPU or below compute capability 9.0.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "03_shared_memory/kernels/dsmem.cuh"
#include "03_shared_memory/kernels/latency_reference.hpp"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

#define CML_REQUIRE_CLUSTERS()                                                    \
  do {                                                                            \
    CML_REQUIRE_GPU();                                                            \
    int cml_device_ = 0;                                                          \
    CUDA_CHECK(cudaGetDevice(&cml_device_));                                      \
    const std::string cml_no_ = cluster_unavailable_reason(cml_device_);          \
    if (!cml_no_.empty()) GTEST_SKIP() << cml_no_;                                \
  } while (0)

template <ChaseTarget Target>
std::uint32_t chase(const Chain& c, int hops) {
  DeviceBuffer<std::uint32_t> ring(c.words.size());
  ring.upload(c.words);
  DeviceBuffer<unsigned long long> out(2);
  out.poison();
  launch_dsmem_chase<Target>(ring.data(), static_cast<int>(c.words.size()), c.start, hops, out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto host = out.download();
  // The poison (all ones) is no plausible count: a kernel that never stores its cycles fails here.
  EXPECT_GT(host[1], 0u) << "cycles";
  EXPECT_LT(host[1], 100000ull * static_cast<unsigned long long>(hops + 1)) << "cycles";
  return static_cast<std::uint32_t>(host[0]);
}

TEST(Ch03DsmemChase, EndsWhereTheCpuWalkEnds) {
  CML_REQUIRE_CLUSTERS();
  // Odd ring sizes (not a multiple of the copying block), one over 48 KiB (opt-in shared memory).
  for (std::size_t words : {std::size_t{1}, std::size_t{257}, std::size_t{8192}, std::size_t{20001}}) {
    const Chain ring = random_chain(words, 1, words, 5 + words);
    for (int hops : {1, 31, 8193}) {
      const std::uint32_t want = chase_end(ring, static_cast<std::uint64_t>(hops));
      EXPECT_EQ(chase<ChaseTarget::own>(ring, hops), want) << words << " words, " << hops << " hops";
      EXPECT_EQ(chase<ChaseTarget::own_mapped>(ring, hops), want) << words << " words, " << hops << " hops";
      EXPECT_EQ(chase<ChaseTarget::neighbour>(ring, hops), want) << words << " words, " << hops << " hops";
    }
  }
}

TEST(Ch03DsmemRead, EveryThreadSumsItsOwnOrNeighboursBuffer) {
  CML_REQUIRE_CLUSTERS();
  for (unsigned cluster : {1u, 2u, 4u, 8u, 16u})
    for (bool neighbour : {false, true}) {
      std::string why;
      const unsigned full = dsmem_read_blocks(cluster, neighbour, &why);
      if (full == 0) {
        EXPECT_GT(cluster, 8u) << "portable cluster size " << cluster << " cannot run: " << why;
        continue;
      }
      for (unsigned blocks : {cluster, 3 * cluster, full})
        for (int passes : {1, 3}) {
          DeviceBuffer<std::uint32_t> out(static_cast<std::size_t>(blocks) * kDsmemReadBlock);
          out.poison();
          launch_dsmem_read(neighbour, blocks, cluster, passes, out.data(), nullptr);
          CUDA_CHECK(cudaDeviceSynchronize());
          EXPECT_EQ(out.download(), dsmem_read_expected(blocks, cluster, neighbour, static_cast<std::uint64_t>(passes)))
              << "cluster " << cluster << (neighbour ? " neighbour" : " own") << " blocks " << blocks << " passes "
              << passes;
        }
    }
}

std::vector<std::uint32_t> run_histogram(const HistogramLaunch& h, std::size_t n) {
  DeviceBuffer<std::uint32_t> keys(n == 0 ? 1 : n);
  launch_fill_histogram_keys(keys.data(), n, nullptr);
  const std::uint32_t bins = 1u << h.bins_log2;
  DeviceBuffer<std::uint32_t> out(bins);
  out.poison();
  launch_histogram(h, keys.data(), n, out.data(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return out.download();
}

TEST(Ch03DsmemHistogram, MatchesCpuAtSmallAndOddSizes) {
  CML_REQUIRE_CLUSTERS();
  const std::vector<std::size_t> sizes = {0, 1, 3, 5, 1023, 100003, 4000037};
  for (std::uint32_t bins : {1024u, 32768u, 65536u}) {
    std::vector<HistogramLaunch> plans = {plan_histogram_global(bins)};
    for (unsigned cluster : {1u, 2u, 4u, 8u}) {
      const HistogramLaunch h = plan_histogram_cluster(cluster, bins);
      if (!h.why_not.empty()) {
        // Only the whole 65536-bin histogram in one block may not fit (256 KiB).
        EXPECT_TRUE(cluster == 1 && bins == 65536u) << "cluster " << cluster << " bins " << bins << ": " << h.why_not;
        continue;
      }
      plans.push_back(h);
    }
    for (std::size_t n : sizes) {
      if (test_support::too_large_under_sanitizer(n)) continue;
      const auto want = histogram_reference(n, bins);
      for (const HistogramLaunch& h : plans)
        EXPECT_EQ(run_histogram(h, n), want)
            << "bins " << bins << " cluster " << h.cluster << " (0: global) blocks " << h.blocks << " n " << n;
    }
  }
}

TEST(Ch03DsmemHistogram, SmallGridsStillCountEveryKey) {
  CML_REQUIRE_CLUSTERS();
  // One cluster (or one block) walks all the keys: the grid-stride loop and the tail, not the grid, cover n.
  const std::size_t n = 77777;
  for (unsigned cluster : {0u, 1u, 2u, 4u, 8u}) {
    HistogramLaunch h = cluster == 0 ? plan_histogram_global(4096) : plan_histogram_cluster(cluster, 4096);
    ASSERT_TRUE(h.why_not.empty()) << h.why_not;
    h.blocks = cluster == 0 ? 1 : cluster;
    EXPECT_EQ(run_histogram(h, n), histogram_reference(n, 4096)) << "cluster " << cluster;
  }
}

TEST(Ch03DsmemKeys, DeviceKeysMatchTheHostFunction) {
  CML_REQUIRE_GPU();
  const std::size_t n = 100003;
  DeviceBuffer<std::uint32_t> keys(n);
  keys.poison();
  launch_fill_histogram_keys(keys.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto got = keys.download();
  std::vector<std::uint32_t> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = histogram_key(i);
  EXPECT_EQ(got, want);
}

}  // namespace
