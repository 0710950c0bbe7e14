// The harness on a real device: RAII buffers, error checking, the copy kernels, the timer.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "common/copy_kernels.cuh"
#include "common/harness.hpp"
#include "common/pattern_kernels.cuh"
#include "tests/testing.hpp"

namespace {

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 9973) * 0.5f - 7.0f;
  return v;
}

TEST(DeviceBuffer, RoundTripAndMove) {
  CML_REQUIRE_GPU();
  const auto h = ramp(1000);
  cml::DeviceBuffer<float> d(h.size());
  d.upload(h);
  cml::DeviceBuffer<float> moved(std::move(d));
  EXPECT_EQ(d.data(), nullptr);
  EXPECT_EQ(moved.download(), h);
}

TEST(DeviceBuffer, PoisonIsNaN) {
  CML_REQUIRE_GPU();
  cml::DeviceBuffer<float> d(3);
  d.poison();
  CUDA_CHECK(cudaDeviceSynchronize());
  for (float v : d.download()) EXPECT_TRUE(std::isnan(v));
}

// The device writes the same benchmark data as the host (bit for bit), including past the last distinct
// index, where the values repeat.
TEST(RandomFill, MatchesTheHost) {
  CML_REQUIRE_GPU();
  const std::size_t n = (std::size_t{1} << 20) + 3;
  cml::DeviceBuffer<float> d(n);
  d.poison();
  cml::launch_random_fill(d.data(), n, nullptr);
  const std::vector<float> got = d.download();
  for (std::size_t i = 0; i < n; ++i) {
    const float want = cml::random_float(i);
    ASSERT_EQ(std::memcmp(&got[i], &want, sizeof want), 0) << "element " << i;
  }
}

class CopyKernels : public testing::TestWithParam<std::size_t> {};

TEST_P(CopyKernels, ExactAtOddSizes) {
  CML_REQUIRE_GPU();
  const std::size_t n = GetParam();
  const auto h = ramp(n);
  cml::DeviceBuffer<float> in(n), out(n);
  in.upload(h);
  using Launch = void (*)(const float*, float*, std::size_t, cudaStream_t);
  const std::pair<const char*, Launch> launches[] = {{"scalar", cml::launch_copy_scalar},
                                                     {"vec4", cml::launch_copy_vec4},
                                                     {"vec4_ilp4", cml::launch_copy_vec4_ilp<4>},
                                                     {"vec4_ilp8", cml::launch_copy_vec4_ilp<8>}};
  for (const auto& [name, launch] : launches) {
    out.poison();
    launch(in.data(), out.data(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto r = cml::compare_exact(out.download(), h);
    EXPECT_TRUE(r.ok()) << name << " n=" << n << ": " << (r.first.empty() ? "" : r.first[0]);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, CopyKernels,
                         testing::Values(1, 2, 3, 4, 5, 31, 255, 256, 1023, 1025, 4097, 1000003, (1 << 20) + 3));

TEST(GpuTimer, MeasuresSomethingPositive) {
  CML_REQUIRE_GPU();
  cml::Stream s;
  cml::L2Flusher flusher(1 << 20);
  cml::GpuTimer timer(s, &flusher);
  cml::DeviceBuffer<float> a(1 << 20), b(1 << 20);
  a.fill_bytes(0x3f, s);  // never time (or let initcheck see) reads of uninitialized memory
  cml::TimingOptions o;
  o.reps = 5;
  o.warmup_ms = 5;
  const auto t = timer.time([&](cudaStream_t st) { cml::launch_copy_vec4(a.data(), b.data(), a.size(), st); }, o);
  EXPECT_EQ(t.stats.count, 5u);
  EXPECT_GT(t.stats.min, 0.0);
  EXPECT_LE(t.stats.min, t.stats.median);
  EXPECT_LE(t.stats.median, t.stats.max);
  // A 4 MB copy takes microseconds, so warm it would be batched; cold, each sample must be one launch.
  EXPECT_EQ(t.batch, 1);
  EXPECT_TRUE(t.cold);
  int hook_calls = 0;
  o.before_sample = [&] { ++hook_calls; };
  o.flush_l2 = false;
  const auto w = timer.time([&](cudaStream_t st) { cml::launch_copy_vec4(a.data(), b.data(), a.size(), st); }, o);
  EXPECT_EQ(hook_calls, o.reps);
  EXPECT_FALSE(w.cold);
  // Warm, launches shorter than min_sample_ms are batched. Under compute-sanitizer one launch takes
  // milliseconds and is rightly timed alone, so the check applies only when the launch is clearly short.
  if (t.stats.median < o.min_sample_ms / 5) EXPECT_GT(w.batch, 1) << "cold median " << t.stats.median << " ms";
}

// Sets *flag once `ns` nanoseconds of GPU time have passed since the thread started.
__global__ void flag_after_kernel(int* flag, unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(100000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  *reinterpret_cast<volatile int*>(flag) = 1;
}

// cudaStreamDestroy alone returns while the stream's work still runs; cml::Stream waits for it, so the
// handle cannot be reused while that work runs (the TMA copies key their ticket counters by stream).
TEST(Stream, DestructorWaitsForTheStreamsWork) {
  CML_REQUIRE_GPU();
  cml::PinnedBuffer<int> flag(1, cudaHostAllocMapped);
  flag[0] = 0;
  int* device_flag = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flag), flag.data(), 0));
  {
    cml::Stream s;
    flag_after_kernel<<<1, 1, 0, s>>>(device_flag, 200'000'000ull);  // 200 ms
    CUDA_CHECK_LAUNCH();
  }
  // Read without any CUDA call that could wait for the kernel itself.
  EXPECT_EQ(*reinterpret_cast<volatile int*>(flag.data()), 1) << "the stream was destroyed with its kernel running";
  CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(DeviceInfo, Sane) {
  CML_REQUIRE_GPU();
  const auto d = cml::query_device(0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 0u);
  EXPECT_GT(d.peak_gb_per_s, 100.0);
  EXPECT_FALSE(d.slug().empty());
}

}  // namespace

// A build without code for the GPU it runs on makes every other GPU test skip with one line (through
// gpu_available); this test is the one that fails, so the mismatch cannot go unnoticed.
TEST(Build, HasCodeForThisGpu) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    GTEST_SKIP() << "no CUDA device";
  }
  EXPECT_EQ(cml::missing_code_reason(), "") << "built for: " << cml::built_architectures();
}
