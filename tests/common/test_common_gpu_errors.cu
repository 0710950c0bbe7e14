// Error paths on a real device: these tests provoke CUDA errors on purpose (an invalid device, an
// impossible launch, an impossible allocation) to check that they are caught and reported well. They
// live in their own binary because compute-sanitizer rightly reports every failing API call it sees;
// scripts/sanitize.sh runs the *_gpu_tests binaries, whose calls must all succeed.
#include <gtest/gtest.h>

#include <string>

#include "common/copy_kernels.cuh"
#include "common/harness.hpp"
#include "tests/testing.hpp"

namespace {

TEST(CudaCheck, ThrowsWithExpressionFileAndName) {
  CML_REQUIRE_GPU();
  try {
    CUDA_CHECK(cudaSetDevice(9999));
    FAIL() << "expected a throw";
  } catch (const cml::CudaError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cudaSetDevice(9999)"), std::string::npos) << m;
    EXPECT_NE(m.find("test_common_gpu_errors.cu"), std::string::npos) << m;
    EXPECT_NE(m.find("cudaErrorInvalidDevice"), std::string::npos) << m;
    EXPECT_EQ(e.code(), cudaErrorInvalidDevice);
  }
  // The error was cleared: the next call succeeds.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudaCheck, BadLaunchIsCaught) {
  CML_REQUIRE_GPU();
  cml::DeviceBuffer<float> a(4), b(4);
  // 2048 threads per block is over every GPU's limit: the launch itself fails.
  cml::copy_scalar_kernel<<<1, 2048>>>(a.data(), b.data(), 4);
  EXPECT_THROW(CUDA_CHECK_LAUNCH(), cml::CudaError);
}

TEST(DeviceBuffer, HugeAllocationNamesItself) {
  CML_REQUIRE_GPU();
  try {
    cml::DeviceBuffer<char> huge(std::size_t{1} << 50);
    FAIL();
  } catch (const cml::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cudaMalloc of"), std::string::npos) << e.what();
  }
}

}  // namespace
