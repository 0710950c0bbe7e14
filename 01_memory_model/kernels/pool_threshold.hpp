// Stream-ordered allocation: a guard for the default pool's release threshold.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.hpp"

namespace cml::ch01 {
namespace {

// Sets the default pool's release threshold for one variant, and puts it back (and trims the pool) after.
// [doc:release_threshold_guard]
class ReleaseThreshold {
 public:
  ReleaseThreshold(int device, std::uint64_t threshold) {
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool_, device));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &old_));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
  ~ReleaseThreshold() {
    CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
    CUDA_CHECK_NOTHROW(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &old_));
    CUDA_CHECK_NOTHROW(cudaMemPoolTrimTo(pool_, 0));
  }
  // [/doc:release_threshold_guard]
  ReleaseThreshold(const ReleaseThreshold&) = delete;
  ReleaseThreshold& operator=(const ReleaseThreshold&) = delete;
  std::uint64_t attribute(cudaMemPoolAttr a) const {
    std::uint64_t v = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, a, &v));
    return v;
  }

 private:
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t old_ = 0;
};

}  // namespace
}  // namespace cml::ch01
