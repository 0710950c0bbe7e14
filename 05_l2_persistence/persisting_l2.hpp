// Owning the L2 persistence state: a guard for the set-aside limit and the stream windows, and read-back
// helpers for the three places a window can live (stream, graph kernel node, launch).
//
// The persisting set-aside and persisting cache lines outlive the code that created them: a later kernel in the
// same process (or a later benchmark sample) would run on a smaller L2 without knowing why. So every demo and
// test of this chapter changes them only through PersistingL2Guard, whose destructor puts everything back.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "05_l2_persistence/l2_plan.hpp"
#include "common/cuda_check.hpp"

namespace cml::ch05 {

inline std::size_t persisting_limit() {
  std::size_t v = 0;
  CUDA_CHECK(cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize));
  return v;
}

inline cudaAccessPolicyWindow stream_window(cudaStream_t s) {
  cudaStreamAttrValue v{};
  CUDA_CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  return v.accessPolicyWindow;
}

inline cudaAccessPolicyWindow node_window(cudaGraphNode_t node) {
  cudaKernelNodeAttrValue v{};
  CUDA_CHECK(cudaGraphKernelNodeGetAttribute(node, cudaKernelNodeAttributeAccessPolicyWindow, &v));
  return v.accessPolicyWindow;
}

inline void set_node_window(cudaGraphNode_t node, const cudaAccessPolicyWindow& w) {
  cudaKernelNodeAttrValue v{};
  v.accessPolicyWindow = w;
  CUDA_CHECK(cudaGraphKernelNodeSetAttribute(node, cudaKernelNodeAttributeAccessPolicyWindow, &v));
}

// Waits for all work, then turns every persisting line back into a normal one. Called before each timed sample:
// the L2 flush that follows is made of ordinary writes, which evict normal lines but never persisting ones.
inline void reset_persisting_lines() {
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaCtxResetPersistingL2Cache());
}

// Sets the persisting set-aside (cudaLimitPersistingL2CacheSize) for its lifetime and puts access-policy
// windows on streams; the destructor puts every such stream's window back as it found it (for a stream nobody
// had set: num_bytes = 0, hitProp normal), resets all persisting lines (cudaCtxResetPersistingL2Cache) and
// restores the previous limit, also during exception unwinding. It must be destroyed before the streams it
// touched (construct it after them, or keep the streams alive longer).
class PersistingL2Guard {
 public:
  // Asks for `set_aside_bytes`, clamped to persistingL2CacheMaxSize. Throws CudaError if the driver refuses
  // (MPS clients cannot change it; MIG disables it), leaving nothing changed.
  explicit PersistingL2Guard(std::size_t set_aside_bytes) {
    int device = 0, persisting_max = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device));
    requested_ = clamp_set_aside(set_aside_bytes, static_cast<std::size_t>(persisting_max));
    previous_ = persisting_limit();
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, requested_));
    // The limit is changed from here on: a failing read-back must not leave it changed.
    const cudaError_t err = cudaDeviceGetLimit(&limit_, cudaLimitPersistingL2CacheSize);
    if (err != cudaSuccess) {
      CUDA_CHECK_NOTHROW(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_));
      throw_cuda_error(err, "cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize)", __FILE__, __LINE__);
    }
  }

  // [doc:guard_restore]
  ~PersistingL2Guard() {
    // Nothing still running may use a window or a persisting line while they are taken away.
    CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
    for (const auto& [s, original] : streams_) {
      cudaStreamAttrValue v{};
      v.accessPolicyWindow = original;
      CUDA_CHECK_NOTHROW(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    }
    CUDA_CHECK_NOTHROW(cudaCtxResetPersistingL2Cache());
    CUDA_CHECK_NOTHROW(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_));
  }
  // [/doc:guard_restore]

  PersistingL2Guard(const PersistingL2Guard&) = delete;
  PersistingL2Guard& operator=(const PersistingL2Guard&) = delete;
  PersistingL2Guard(PersistingL2Guard&&) = delete;
  PersistingL2Guard& operator=(PersistingL2Guard&&) = delete;

  std::size_t previous_limit() const noexcept { return previous_; }
  std::size_t requested() const noexcept { return requested_; }
  // The set-aside as read back after setting it ("can be ignored or clamped depending on the platform").
  std::size_t limit() const noexcept { return limit_; }

  // Puts `w` on `s` (replacing any window there); the first time for a stream, its window is saved for the
  // destructor to put back.
  // [doc:stream_window]
  void set_stream_window(cudaStream_t s, const cudaAccessPolicyWindow& w) {
    const bool known = std::any_of(streams_.begin(), streams_.end(), [s](const auto& e) { return e.first == s; });
    if (!known) streams_.emplace_back(s, stream_window(s));
    cudaStreamAttrValue v{};
    v.accessPolicyWindow = w;
    CUDA_CHECK(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
  }
  // [/doc:stream_window]
  // Switches persistence off on `s` until the next set_stream_window: num_bytes = 0, hitProp normal.
  void clear_stream_window(cudaStream_t s) { set_stream_window(s, cleared_window()); }

 private:
  std::size_t requested_ = 0;
  std::size_t previous_ = 0;
  std::size_t limit_ = 0;
  std::vector<std::pair<cudaStream_t, cudaAccessPolicyWindow>> streams_;  // as found
};

}  // namespace cml::ch05
