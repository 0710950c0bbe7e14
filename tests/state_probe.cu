// Prints the device state that a demo or test could leave changed, one "key=value" per line, so a
// script can diff it before and after a run: the persisting-L2 limit, the access-policy window of a
// fresh stream, device flags, and the other context limits.
#include <cstdio>

#include "common/cuda_check.hpp"
#include "common/harness.hpp"

int main() {
  try {
    std::string why;
    if (!cml::gpu_available(&why)) {
      std::fprintf(stderr, "state_probe: waived: %s\n", why.c_str());
      return cml::kExitWaived;
    }
    int device = 0, persisting_max = 0, max_window = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    // A GPU without an L2 set-aside (compute capability < 8.0, a MIG instance) reports a maximum of 0, and
    // there cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize) fails; without access-policy windows (cc < 8.0) the
    // window maximum is 0 too. Both states then read "n/a", the same before and after a run.
    CUDA_CHECK(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
    size_t persisting = 0, stack = 0, heap = 0, printf_fifo = 0;
    if (persisting_max > 0) CUDA_CHECK(cudaDeviceGetLimit(&persisting, cudaLimitPersistingL2CacheSize));
    CUDA_CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    CUDA_CHECK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    CUDA_CHECK(cudaDeviceGetLimit(&printf_fifo, cudaLimitPrintfFifoSize));
    unsigned flags = 0;
    CUDA_CHECK(cudaGetDeviceFlags(&flags));
    cudaStreamAttrValue window{};
    cml::Stream s;
    if (max_window > 0) CUDA_CHECK(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &window));
    cudaFuncCache cache{};
    CUDA_CHECK(cudaDeviceGetCacheConfig(&cache));
    if (persisting_max > 0) std::printf("persisting_l2_limit=%zu\n", persisting);
    else std::printf("persisting_l2_limit=n/a\n");
    std::printf("stack_limit=%zu\nmalloc_heap_limit=%zu\nprintf_fifo_limit=%zu\n", stack, heap, printf_fifo);
    std::printf("device_flags=0x%x\n", flags);
    std::printf("cache_config=%d\n", static_cast<int>(cache));
    if (max_window > 0)
      std::printf("new_stream_window_bytes=%zu\nnew_stream_window_hit_ratio=%g\n",
                  window.accessPolicyWindow.num_bytes, window.accessPolicyWindow.hitRatio);
    else
      std::printf("new_stream_window_bytes=n/a\nnew_stream_window_hit_ratio=n/a\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "state_probe: %s\n", e.what());
    return 1;
  }
}
