// stream_ordered_alloc: what does allocating device memory cost, and what does a stream-ordered pool buy?
//
// cudaMalloc and cudaFree go to the driver every time (cudaFree waits for the whole device) and map or
// unmap pages, so their cost grows with the size. cudaMallocAsync takes memory from a pool in stream order;
// the pool's release threshold decides whether it keeps that memory across a synchronization (0, the
// default, gives it all back). Every method's buffers are checked word by word before its cycles are timed,
// and the default pool is left as the demo found it.
//
// Run: build/bin/stream_ordered_alloc [--size 1G] [--csv alloc.csv]
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/pool_threshold.hpp"
#include "common/pattern_kernels.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

constexpr int kCyclesPerSample = 8;  // allocate/free cycles per timed sample (the host clock's resolution)
constexpr std::uint64_t kMinSize = std::uint64_t{1} << 20;
constexpr std::uint64_t kClaimSize = std::uint64_t{64} << 20;

// Sizes 1 MiB, 4 MiB, ... (x4) up to `largest`, which is always included.
std::vector<std::uint64_t> sweep(std::uint64_t largest) {
  std::vector<std::uint64_t> s;
  for (std::uint64_t b = kMinSize; b < largest; b *= 4) s.push_back(b);
  s.push_back(largest);
  return s;
}

enum class Method { malloc_free, async_reuse, async_sync };

// One allocate + free cycle of `method`; async_sync ends with a stream synchronize, the moment a pool
// with a zero threshold gives its memory back.
// [doc:alloc_free_cycle]
void cycle(Method method, std::size_t bytes, cudaStream_t s) {
  void* p = nullptr;
  if (method == Method::malloc_free) {
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaFree(p));
    return;
  }
  CUDA_CHECK(cudaMallocAsync(&p, bytes, s));
  CUDA_CHECK(cudaFreeAsync(p, s));
  if (method == Method::async_sync) CUDA_CHECK(cudaStreamSynchronize(s));
}
// [/doc:alloc_free_cycle]

// One buffer from `method`, given back the same way when it goes out of scope (also when a launch or a
// check throws): cudaFree, or cudaFreeAsync in the stream it came from.
class MethodBuffer {
 public:
  MethodBuffer(Method method, std::size_t bytes, cudaStream_t s) : method_(method), s_(s) {
    if (method_ == Method::malloc_free) CUDA_CHECK(cudaMalloc(&p_, bytes));
    else CUDA_CHECK(cudaMallocAsync(&p_, bytes, s_));
  }
  ~MethodBuffer() {
    if (method_ == Method::malloc_free) CUDA_CHECK_NOTHROW(cudaFree(p_));
    else CUDA_CHECK_NOTHROW(cudaFreeAsync(p_, s_));
  }
  MethodBuffer(const MethodBuffer&) = delete;
  MethodBuffer& operator=(const MethodBuffer&) = delete;
  std::uint32_t* get() const noexcept { return p_; }

 private:
  Method method_;
  cudaStream_t s_;
  std::uint32_t* p_ = nullptr;
};

// Two buffers in a row from `method`, each filled with the pattern and checked where it lies: the second
// may reuse the first's memory (freed in stream order, no synchronization between), and must still hold
// its own pattern. An allocator that handed out unmapped, too small or shared memory fails the check, or
// faults under compute-sanitizer.
VerifyResult check_method(Method method, std::size_t bytes, cudaStream_t s) {
  const std::size_t n = bytes / sizeof(std::uint32_t);
  VerifyResult r;
  for (std::uint32_t seed : {11u, 12u}) {
    const MethodBuffer p(method, bytes, s);  // freed at the end of the iteration, before the next allocation
    launch_pattern_fill(p.get(), n, seed, s);
    r = check_pattern_on_device(p.get(), n, seed, s);
    if (!r.ok()) break;
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  return r;
}

void require_pools(Context& ctx) {
  int supported = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, ctx.device().ordinal));
  if (!supported) throw Waived("this GPU or driver has no stream-ordered memory pools (cudaDevAttrMemoryPoolsSupported = 0)");
}

void run_method(Context& ctx, Method method, std::uint64_t threshold) {
  // Only the pooled methods touch the pool: cudaMalloc needs none, and a GPU without pools has none to set.
  std::optional<ReleaseThreshold> pool;
  if (method != Method::malloc_free) {
    require_pools(ctx);
    pool.emplace(ctx.device().ordinal, threshold);
  }
  cudaStream_t s = ctx.stream();
  for (std::uint64_t bytes : sweep(ctx.size())) {
    const std::string params = fmt::format("bytes={}", bytes);
    if (!ctx.check(check_method(method, bytes, s), params)) {
      ctx.add_row(params, bytes, false);
      continue;
    }
    const Timing t = time_host(
        [&] {
          for (int k = 0; k < kCyclesPerSample; ++k) cycle(method, bytes, s);
          CUDA_CHECK(cudaStreamSynchronize(s));
        },
        ctx.timing_options());
    Row& r = ctx.add_timed_row(params, bytes, kNaN, t, true);
    r.set("us_per_cycle", 1e3 * t.stats.median / kCyclesPerSample);
    if (method != Method::malloc_free) {
      // What the pool holds once the stream is idle: a zero threshold gives it all back.
      CUDA_CHECK(cudaStreamSynchronize(s));
      r.set("reserved_after_sync", static_cast<double>(pool->attribute(cudaMemPoolAttrReservedMemCurrent)));
      r.set("used_after_sync", static_cast<double>(pool->attribute(cudaMemPoolAttrUsedMemCurrent)));
    }
  }
}

constexpr std::uint64_t kKeepAll = std::numeric_limits<std::uint64_t>::max();

// us_per_cycle of `variant` at `bytes`.
double cycle_us(const RunRows& r, const char* variant, std::uint64_t bytes) {
  return r.value({variant, fmt::format("bytes={}", bytes), "us_per_cycle"});
}

std::vector<Claim> claims() {
  return {
      Claim{"pool_reuse_beats_malloc",
            "At 64 MiB, allocating and freeing from a pool that keeps its memory costs at most 1/50 of "
            "cudaMalloc + cudaFree.",
            "us_per_cycle malloc_free / us_per_cycle async_reuse at 64 MiB", Bound::at_least(50.0),
            "cudaMalloc maps pages and cudaFree waits for the device and unmaps them; a pool that keeps the "
            "block hands it back with no driver work, only stream bookkeeping",
            ClaimKind::host,
            [](const RunRows& r) { return cycle_us(r, "malloc_free", kClaimSize) / cycle_us(r, "async_reuse", kClaimSize); }},
      Claim{"threshold_zero_gives_memory_back",
            "With the release threshold at 0, the pool holds no memory once the stream has synchronized.",
            "reserved_after_sync of async_sync_threshold_0 at 64 MiB (bytes)", Bound::at_most(0.0),
            "a zero threshold tells the pool to give every unused byte back at each synchronization",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.value({"async_sync_threshold_0", fmt::format("bytes={}", kClaimSize), "reserved_after_sync"});
            }},
      Claim{"threshold_zero_pays_every_sync",
            "With the threshold at 0, an allocate-free-synchronize cycle at 64 MiB costs at least 3x the same "
            "cycle with the threshold at max.",
            "us_per_cycle async_sync_threshold_0 / us_per_cycle async_sync_threshold_max at 64 MiB",
            Bound::at_least(3.0),
            "memory given back at a synchronization must be mapped again by the next allocation; a pool that "
            "keeps it pays only the synchronization",
            ClaimKind::host,
            [](const RunRows& r) {
              return cycle_us(r, "async_sync_threshold_0", kClaimSize) /
                     cycle_us(r, "async_sync_threshold_max", kClaimSize);
            }},
      Claim{"pool_cost_does_not_grow",
            "Reusing pooled memory costs the same for 1 MiB and for the largest size: the pool hands back a "
            "block, it does not map pages.",
            "us_per_cycle async_reuse at the largest size / at 1 MiB", Bound::at_most(2.0),
            "cudaMalloc's cost grows with the pages it maps; a reused block has none to map",
            ClaimKind::host,
            [](const RunRows& r) {
              const std::vector<double> v = r.values("async_reuse", "us_per_cycle");
              if (v.size() < 2) throw NotApplicable("the sweep has one size (--size 1M)");
              return v.back() / v.front();
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "stream_ordered_alloc";
  d.summary =
      "cudaMalloc + cudaFree against cudaMallocAsync + cudaFreeAsync from the default pool, with the release\n"
      "threshold at 0 (memory goes back at every synchronization) and at max (the pool keeps it), 1 MiB to 1 GiB.";
  d.size_meaning = "bytes of the largest allocation (the sweep goes 1 MiB, 4 MiB, ... up to it)";
  d.variants = {
      {"malloc_free", "cudaMalloc + cudaFree", [](Context& c) { run_method(c, Method::malloc_free, 0); }},
      {"async_reuse", "cudaMallocAsync + cudaFreeAsync, threshold max, no synchronize between cycles",
       [](Context& c) { run_method(c, Method::async_reuse, kKeepAll); }},
      {"async_sync_threshold_max", "the same + cudaStreamSynchronize each cycle, threshold max",
       [](Context& c) { run_method(c, Method::async_sync, kKeepAll); }},
      {"async_sync_threshold_0", "the same + cudaStreamSynchronize each cycle, threshold 0 (the default)",
       [](Context& c) { run_method(c, Method::async_sync, 0); }},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{1} << 30; };
  d.quick_size = std::uint64_t{4} << 20;
  d.cold_by_default = false;
  d.warmup_ms = 50.0;
  d.device_bytes = [](std::uint64_t n) {
    if (n < kMinSize) throw CliError("--size: at least 1M bytes, got " + std::to_string(n));
    return static_cast<double>(n);
  };
  d.max_size = [](const DeviceInfo& dev) { return dev.total_memory / 2; };
  d.max_size_reason = "half the GPU's memory: the pool and the driver need room beside the allocation";
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
