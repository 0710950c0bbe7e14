// Every reduction (the book's ladder, the fast kernels, CUB) against the exact CPU sum at odd sizes, and
// once past 2^32 so the 64-bit totals are exercised.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "03_shared_memory/kernels/reduce.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

using Launch = void (*)(const unsigned*, std::size_t, Sum*, cudaStream_t);
using InPlaceLaunch = void (*)(unsigned*, std::size_t, Sum*, cudaStream_t);

const std::vector<std::size_t> kSizes = {1, 2, 3, 4, 5, 31, 255, 256, 257, 1023, 1024, 1025, 4099, 1000003};

Sum read_total(const DeviceBuffer<Sum>& total) {
  CUDA_CHECK(cudaDeviceSynchronize());
  Sum got = 0;
  total.download(&got, 1);
  return got;
}

TEST(Ch03Reduce, OutOfPlaceRungsAtOddSizes) {
  CML_REQUIRE_GPU();
  const std::pair<const char*, Launch> rungs[] = {
      {"smem", launch_reduce_smem},         {"smem_unroll4", launch_reduce_smem_unroll},
      {"smem_unroll4_dyn", launch_reduce_smem_unroll_dyn}, {"shfl", launch_reduce_shfl},
      {"vec4_shfl", launch_reduce_vec4},    {"vec4_cub_block", launch_reduce_vec4_cub_block},
  };
  DeviceBuffer<Sum> total(1);
  for (std::size_t n : kSizes) {
    const auto host = reduce_input(n);
    DeviceBuffer<unsigned> in(n);
    in.upload(host);
    for (const auto& [name, launch] : rungs) {
      total.poison();  // the launchers zero the total themselves
      launch(in.data(), n, total.data(), nullptr);
      EXPECT_EQ(read_total(total), reduce_cpu(host)) << name << " n=" << n;
    }
  }
}

TEST(Ch03Reduce, InPlaceRungsAtOddSizes) {
  CML_REQUIRE_GPU();
  const std::pair<const char*, InPlaceLaunch> rungs[] = {
      {"gmem_neighbored", launch_reduce_gmem_neighbored}, {"gmem_interleaved", launch_reduce_gmem_interleaved}};
  DeviceBuffer<Sum> total(1);
  for (std::size_t n : kSizes) {
    auto host = reduce_input(n);
    std::vector<unsigned> padded(inplace_scratch_elems(n), 0u);
    std::copy(host.begin(), host.end(), padded.begin());
    DeviceBuffer<unsigned> scratch(padded.size());
    for (const auto& [name, launch] : rungs) {
      scratch.upload(padded);
      total.poison();
      launch(scratch.data(), n, total.data(), nullptr);
      EXPECT_EQ(read_total(total), reduce_cpu(host)) << name << " n=" << n;
    }
  }
}

TEST(Ch03Reduce, CubDeviceReduceAtOddSizes) {
  CML_REQUIRE_GPU();
  DeviceBuffer<Sum> total(1);
  for (std::size_t n : kSizes) {
    const auto host = reduce_input(n);
    DeviceBuffer<unsigned> in(n);
    in.upload(host);
    CubDeviceSum cub(in.data(), total.data(), n);
    total.poison();
    cub.launch(nullptr);
    EXPECT_EQ(read_total(total), reduce_cpu(host)) << "n=" << n;
  }
}

// 20M elements of 255: the total (5.1e9) does not fit in 32 bits.
TEST(Ch03Reduce, TotalsPast32Bits) {
  CML_REQUIRE_GPU();
  const std::size_t n = 20'000'003;
  const std::vector<unsigned> host(n, 255u);
  const Sum expected = Sum{255} * n;
  ASSERT_GT(expected, Sum{0xffffffffu});
  DeviceBuffer<unsigned> in(n);
  in.upload(host);
  DeviceBuffer<Sum> total(1);
  for (Launch launch : {launch_reduce_smem_unroll, launch_reduce_shfl, launch_reduce_vec4, launch_reduce_vec4_cub_block}) {
    total.poison();
    launch(in.data(), n, total.data(), nullptr);
    EXPECT_EQ(read_total(total), expected);
  }
  CubDeviceSum cub(in.data(), total.data(), n);
  total.poison();
  cub.launch(nullptr);
  EXPECT_EQ(read_total(total), expected);
}

TEST(Ch03Reduce, FastKernelsRejectMisalignedInput) {
  CML_REQUIRE_GPU();
  DeviceBuffer<unsigned> in(64);
  DeviceBuffer<Sum> total(1);
  EXPECT_THROW(launch_reduce_vec4(in.data() + 1, 8, total.data(), nullptr), std::invalid_argument);
}

}  // namespace
