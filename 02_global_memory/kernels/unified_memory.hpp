// cudaMemPrefetchAsync and cudaMemAdvise for both toolkits: CUDA 13 takes a cudaMemLocation where 12.x
// took a device ordinal (cudaCpuDeviceId for the host).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/cuda_check.hpp"

namespace cml::ch02 {

enum class Where { host, device };

#if CUDART_VERSION >= 13000
inline cudaMemLocation location(Where where, int device) {
  cudaMemLocation loc{};
  loc.type = where == Where::host ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = where == Where::host ? 0 : device;  // the id is ignored for the host
  return loc;
}
#else
inline int location(Where where, int device) { return where == Where::host ? cudaCpuDeviceId : device; }
#endif

// Migrates [p, p + bytes) of managed memory to `where`, in stream order.
inline void prefetch(const void* p, std::size_t bytes, Where where, int device, cudaStream_t s) {
#if CUDART_VERSION >= 13000
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, location(where, device), 0, s));
#else
  CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, location(where, device), s));
#endif
}

inline void advise(const void* p, std::size_t bytes, cudaMemoryAdvise advice, Where where, int device) {
  CUDA_CHECK(cudaMemAdvise(p, bytes, advice, location(where, device)));
}

}  // namespace cml::ch02
