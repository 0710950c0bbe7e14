// Every chapter-02 access-pattern kernel against its CPU reference: odd sizes (1, 31, non-multiples of
// the block and of 4 x the block, 1000003), every offset, stride, block size, load flavour and element
// width the demos use. Outputs are poisoned before each launch and checked in full, tails and the
// elements a kernel must NOT write included.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "02_global_memory/kernels/aos_soa.cuh"
#include "02_global_memory/kernels/aos_soa_reference.hpp"
#include "02_global_memory/kernels/demo_support.hpp"
#include "02_global_memory/kernels/matrix_sum.cuh"
#include "02_global_memory/kernels/matrix_sum_reference.hpp"
#include "02_global_memory/kernels/offset_add.cuh"
#include "02_global_memory/kernels/offset_add_reference.hpp"
#include "02_global_memory/kernels/read_only.cuh"
#include "02_global_memory/kernels/strided_copy.cuh"
#include "02_global_memory/kernels/strided_copy_reference.hpp"
#include "02_global_memory/kernels/unified_memory.hpp"
#include "02_global_memory/kernels/vector_copy.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

void sync() { CUDA_CHECK(cudaDeviceSynchronize()); }

std::string first_mismatch(const VerifyResult& r) { return r.first.empty() ? std::string() : r.first.front(); }

// ---- C[i + w] = A[i + r] + B[i + r] -----------------------------------------------------------------

using OffsetLauncher = void (*)(const float*, const float*, float*, std::size_t, unsigned, unsigned, unsigned,
                                cudaStream_t);

// Device inputs and the reference for n elements.
struct OffsetFixture {
  std::size_t n;
  OffsetAddHost host;
  DeviceBuffer<float> a, b, c;
  explicit OffsetFixture(std::size_t elements)
      : n(elements), host(make_offset_add_host(n)), a(n + kMaxOffset), b(n + kMaxOffset), c(n + kMaxOffset) {
    a.upload(host.a);
    b.upload(host.b);
  }
  // Poison C, launch once, check all of C.
  VerifyResult run(OffsetLauncher launch, unsigned r, unsigned w, unsigned block) {
    c.poison();
    launch(a.data(), b.data(), c.data(), n, r, w, block, nullptr);
    sync();
    const auto got = c.download();
    return verify_offset_add(got.data(), host.sum.data(), n, r, w);
  }
};

const std::vector<std::size_t> kOffsetSizes = {1, 31, 511, 2049, 1000003};

class Ch02OffsetAdd : public testing::TestWithParam<std::tuple<std::size_t, bool>> {};

TEST_P(Ch02OffsetAdd, EveryOffsetOfTheSweepOnReadsWritesAndBoth) {
  CML_REQUIRE_GPU();
  const auto [n, unrolled] = GetParam();
  OffsetFixture f(n);
  const OffsetLauncher launch = unrolled ? launch_offset_add_unroll4<PlainLoad> : launch_offset_add<PlainLoad>;
  for (unsigned k : offset_sweep(false)) {
    const VerifyResult read = f.run(launch, k, 0, kSeedBlock);
    ASSERT_TRUE(read.ok()) << "read offset " << k << ": " << first_mismatch(read);
    const VerifyResult write = f.run(launch, 0, k, kSeedBlock);
    ASSERT_TRUE(write.ok()) << "write offset " << k << ": " << first_mismatch(write);
    const VerifyResult both = f.run(launch, k, k, kSeedBlock);
    ASSERT_TRUE(both.ok()) << "both offset " << k << ": " << first_mismatch(both);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Ch02OffsetAdd, testing::Combine(testing::ValuesIn(kOffsetSizes), testing::Bool()));

TEST(Ch02OffsetAddBlocks, EveryBlockSizeAtTheSeedOffsets) {
  CML_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{1}, std::size_t{4 * 1024 + 3}, std::size_t{1000003}}) {
    OffsetFixture f(n);
    for (unsigned block : block_sweep(false))
      for (unsigned k : seed_offsets(false))
        for (OffsetLauncher launch : {launch_offset_add_unroll4<PlainLoad>, launch_offset_add<PlainLoad>}) {
          const VerifyResult read = f.run(launch, k, 0, block);
          ASSERT_TRUE(read.ok()) << "n " << n << " block " << block << " read " << k << ": " << first_mismatch(read);
          const VerifyResult write = f.run(launch, 0, k, block);
          ASSERT_TRUE(write.ok()) << "n " << n << " block " << block << " write " << k << ": " << first_mismatch(write);
        }
  }
}

TEST(Ch02OffsetAddLoads, EveryCacheHintAndTheReadOnlyPath) {
  CML_REQUIRE_GPU();
  const std::vector<std::pair<const char*, OffsetLauncher>> launchers = {
      {"plain", launch_offset_add_unroll4<PlainLoad>},      {"ldca", launch_offset_add_unroll4<CacheAllLoad>},
      {"ldcg", launch_offset_add_unroll4<CacheGlobalLoad>}, {"ldcs", launch_offset_add_unroll4<StreamingLoad>},
      {"ldg", launch_offset_add_unroll4<ReadOnlyLoad>},     {"ldca simple", launch_offset_add<CacheAllLoad>},
      {"ldcg simple", launch_offset_add<CacheGlobalLoad>},  {"ldcs simple", launch_offset_add<StreamingLoad>}};
  for (std::size_t n : {std::size_t{31}, std::size_t{1000003}}) {
    OffsetFixture f(n);
    for (const auto& [name, launch] : launchers)
      for (unsigned k : {0u, 1u, 11u, 32u, 128u}) {
        const VerifyResult r = f.run(launch, k, 0, kSeedBlock);
        ASSERT_TRUE(r.ok()) << name << " n " << n << " offset " << k << ": " << first_mismatch(r);
      }
  }
}

TEST(Ch02OffsetAddLaunch, RejectsOffsetsPastThePaddingAndBadBlocks) {
  CML_REQUIRE_GPU();
  OffsetFixture f(100);
  EXPECT_THROW(f.run(launch_offset_add_unroll4<PlainLoad>, kMaxOffset + 1, 0, 512), std::invalid_argument);
  EXPECT_THROW(f.run(launch_offset_add<PlainLoad>, 0, kMaxOffset + 1, 512), std::invalid_argument);
  EXPECT_THROW(f.run(launch_offset_add<PlainLoad>, 0, 0, 100), std::invalid_argument);
  EXPECT_THROW(f.run(launch_offset_add<PlainLoad>, 0, 0, 2048), std::invalid_argument);
}

// ---- read-only path: c = a + b through plain, __ldg and const __restrict__ ----------------------------

using AddLauncher = void (*)(const float*, const float*, float*, std::size_t, unsigned, cudaStream_t);

TEST(Ch02ReadOnlyPath, EveryWayOfLoadingAtOddSizes) {
  CML_REQUIRE_GPU();
  const std::vector<std::pair<const char*, AddLauncher>> launchers = {
      {"plain 1", launch_add<1, PlainLoad>},  {"plain 4", launch_add<4, PlainLoad>},
      {"ldg 1", launch_add<1, ReadOnlyLoad>}, {"ldg 4", launch_add<4, ReadOnlyLoad>},
      {"restrict 1", launch_add_restrict<1>}, {"restrict 4", launch_add_restrict<4>}};
  for (std::size_t n : kOffsetSizes) {
    OffsetFixture f(n);
    for (const auto& [name, launch] : launchers)
      for (unsigned block : {128u, 512u}) {
        f.c.poison();
        launch(f.a.data(), f.b.data(), f.c.data(), n, block, nullptr);
        sync();
        const auto got = f.c.download();
        const VerifyResult r = verify_offset_add(got.data(), f.host.sum.data(), n, 0, 0);
        ASSERT_TRUE(r.ok()) << name << " n " << n << " block " << block << ": " << first_mismatch(r);
      }
  }
}

// ---- strided copy --------------------------------------------------------------------------------------

template <class T, class Load>
void check_strided(std::size_t elements) {
  const auto in_host = strided_input<T>(elements);
  DeviceBuffer<T> in(elements), out(elements);
  in.upload(in_host);
  for (unsigned s : stride_sweep(false)) {
    const std::size_t n = strided_count(elements, s);
    out.poison();
    launch_strided_copy<T, Load>(in.data(), out.data(), n, s, nullptr);
    sync();
    const auto got = out.download();
    const VerifyResult copied = verify_strided_copy(got.data(), in_host.data(), n, s);
    ASSERT_TRUE(copied.ok()) << sizeof(T) << " B, " << elements << " elements, stride " << s << ": "
                             << first_mismatch(copied);
    const VerifyResult gaps = verify_strided_gaps(got.data(), elements, s);
    ASSERT_TRUE(gaps.ok()) << sizeof(T) << " B, " << elements << " elements, stride " << s << ": "
                           << first_mismatch(gaps);
  }
}

class Ch02StridedCopy : public testing::TestWithParam<std::size_t> {};

TEST_P(Ch02StridedCopy, EveryStrideAndElementSize) {
  CML_REQUIRE_GPU();
  check_strided<std::uint32_t, PlainLoad>(GetParam());
  check_strided<uint2, PlainLoad>(GetParam());
  check_strided<uint4, PlainLoad>(GetParam());
}

TEST_P(Ch02StridedCopy, EveryCacheHint) {
  CML_REQUIRE_GPU();
  check_strided<std::uint32_t, CacheAllLoad>(GetParam());
  check_strided<std::uint32_t, CacheGlobalLoad>(GetParam());
  check_strided<std::uint32_t, StreamingLoad>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Sizes, Ch02StridedCopy, testing::Values(1, 31, 1000, 100003));

// ---- AoS vs SoA ----------------------------------------------------------------------------------------

// Output arrays get two spare structs that must keep the poison.
constexpr std::size_t kSpare = 2;

struct LayoutFixture {
  std::size_t n;
  LayoutHost host;
  DeviceBuffer<InnerStruct> aos_in, aos_out;
  DeviceBuffer<float> x_in, y_in, x_out, y_out;
  explicit LayoutFixture(std::size_t structs)
      : n(structs),
        host(make_layout_host(n)),
        aos_in(n),
        aos_out(n + kSpare),
        x_in(n),
        y_in(n),
        x_out(n + kSpare),
        y_out(n + kSpare) {
    aos_in.upload(host.aos_in);
    x_in.upload(host.x_in);
    y_in.upload(host.y_in);
  }
  template <class T>
  VerifyResult check(const DeviceBuffer<T>& out, const std::vector<T>& expected) const {
    const auto got = out.download();
    VerifyResult r;
    expect_equal(r, got.data(), expected.data(), n, 0);
    expect_poison(r, got.data() + n, kSpare, n);
    return r;
  }
};

class Ch02Layouts : public testing::TestWithParam<std::size_t> {};

TEST_P(Ch02Layouts, ArrayOfStructsViews) {
  CML_REQUIRE_GPU();
  LayoutFixture f(GetParam());
  using Launch = std::function<void()>;
  const std::vector<std::pair<const char*, Launch>> views = {
      {"aos",
       [&] {
         launch_update(AosLayout<InnerStruct>{f.aos_in.data(), f.aos_out.data()}, f.n, nullptr);
       }},
      {"aos_align8", [&] { launch_update_aligned8(f.aos_in.data(), f.aos_out.data(), f.n, nullptr); }},
      {"aos_float4", [&] { launch_update_pairs(f.aos_in.data(), f.aos_out.data(), f.n, nullptr); }}};
  for (const auto& [name, launch] : views) {
    f.aos_out.poison();
    launch();
    sync();
    const VerifyResult r = f.check(f.aos_out, f.host.aos_out);
    ASSERT_TRUE(r.ok()) << name << " n " << f.n << ": " << first_mismatch(r);
  }
}

TEST_P(Ch02Layouts, StructOfArrays) {
  CML_REQUIRE_GPU();
  LayoutFixture f(GetParam());
  f.x_out.poison();
  f.y_out.poison();
  launch_update(SoaLayout{f.x_in.data(), f.y_in.data(), f.x_out.data(), f.y_out.data()}, f.n, nullptr);
  sync();
  const VerifyResult x = f.check(f.x_out, f.host.x_out);
  ASSERT_TRUE(x.ok()) << "x: " << first_mismatch(x);
  const VerifyResult y = f.check(f.y_out, f.host.y_out);
  ASSERT_TRUE(y.ok()) << "y: " << first_mismatch(y);
}

TEST_P(Ch02Layouts, XOnlyInPlaceLeavesYAlone) {
  CML_REQUIRE_GPU();
  LayoutFixture f(GetParam());
  // In place: the "output" starts as a copy of the input, its spare elements poisoned.
  f.aos_out.poison();
  CUDA_CHECK(cudaMemcpy(f.aos_out.data(), f.aos_in.data(), f.aos_in.bytes(), cudaMemcpyDeviceToDevice));
  launch_update(AosXOnlyLayout{f.aos_out.data()}, f.n, nullptr);
  sync();
  const VerifyResult aos = f.check(f.aos_out, f.host.aos_x_only);
  ASSERT_TRUE(aos.ok()) << first_mismatch(aos);

  f.x_out.poison();
  CUDA_CHECK(cudaMemcpy(f.x_out.data(), f.x_in.data(), f.x_in.bytes(), cudaMemcpyDeviceToDevice));
  launch_update(SoaXOnlyLayout{f.x_out.data()}, f.n, nullptr);
  sync();
  const VerifyResult soa = f.check(f.x_out, f.host.x_out);
  ASSERT_TRUE(soa.ok()) << first_mismatch(soa);
}

// 1, 2, 3 exercise the float4 view's odd tail; 1025 and 1000003 are not multiples of 4 x 256.
INSTANTIATE_TEST_SUITE_P(Sizes, Ch02Layouts, testing::Values(1, 2, 3, 31, 1025, 1000003));

// ---- vector width copy ---------------------------------------------------------------------------------

template <class T>
void check_copy_width(std::size_t bytes) {
  constexpr std::size_t kSpareBytes = 64;
  std::vector<unsigned char> in_host(bytes);
  for (std::size_t j = 0; j < bytes; ++j) in_host[j] = static_cast<unsigned char>(pattern_word(j, 0x5EED) >> 23);
  DeviceBuffer<unsigned char> in(bytes), out(bytes + kSpareBytes);
  in.upload(in_host);
  const std::size_t n = bytes / sizeof(T);
  const T* src = reinterpret_cast<const T*>(in.data());
  T* dst = reinterpret_cast<T*>(out.data());
  // One element per thread; the grid-stride loop over one wave and over a single block (many trips).
  const std::vector<std::pair<std::string, std::function<void()>>> launches = {
      {"per_thread", [&] { launch_copy_per_thread<T>(src, dst, n, nullptr); }},
      {"grid_stride", [&] { launch_copy_grid_stride<T>(src, dst, n, grid_stride_blocks<T>(), nullptr); }},
      {"grid_stride 1 block", [&] { launch_copy_grid_stride<T>(src, dst, n, 1, nullptr); }}};
  for (const auto& [name, launch] : launches) {
    out.poison();
    launch();
    sync();
    const auto got = out.download();
    VerifyResult r;
    expect_equal(r, got.data(), in_host.data(), bytes, 0);
    expect_poison(r, got.data() + bytes, kSpareBytes, bytes);
    ASSERT_TRUE(r.ok()) << name << ", " << sizeof(T) << " B, " << bytes << " bytes: " << first_mismatch(r);
  }
}

class Ch02VectorWidth : public testing::TestWithParam<std::size_t> {};

TEST_P(Ch02VectorWidth, EveryWidthBothLaunchShapes) {
  CML_REQUIRE_GPU();
  const std::size_t bytes = GetParam();
  check_copy_width<std::uint8_t>(bytes);
  check_copy_width<std::uint16_t>(bytes);
  check_copy_width<std::uint32_t>(bytes);
  check_copy_width<uint2>(bytes);
  check_copy_width<uint4>(bytes);
}

// Multiples of 16 bytes (the demo rounds --size down to one): 1, 31 and 1000003 16-byte elements.
INSTANTIATE_TEST_SUITE_P(Sizes, Ch02VectorWidth, testing::Values(16, 16 * 31, 16 * 1000003));

// ---- matrix sum: device memory and managed memory -------------------------------------------------------

VerifyResult check_matrix(const float* c, std::size_t n, std::size_t spare) {
  const auto expected = matrix_sum_reference(n);
  VerifyResult r;
  expect_equal(r, c, expected.data(), n, 0);
  expect_poison(r, c + n, spare, n);
  return r;
}

class Ch02MatrixSum : public testing::TestWithParam<std::pair<unsigned, unsigned>> {};

TEST_P(Ch02MatrixSum, DeviceMemory) {
  CML_REQUIRE_GPU();
  const auto [nx, ny] = GetParam();
  const std::size_t n = std::size_t{nx} * ny, spare = 33;
  std::vector<float> a(n), b(n), c(n);
  init_matrices(a.data(), b.data(), c.data(), n);
  DeviceBuffer<float> da(n), db(n), dc(n + spare);
  da.upload(a);
  db.upload(b);
  dc.poison();
  launch_sum_matrix(da.data(), db.data(), dc.data(), nx, ny, nullptr);
  sync();
  const auto got = dc.download();
  const VerifyResult r = check_matrix(got.data(), n, spare);
  ASSERT_TRUE(r.ok()) << nx << " x " << ny << ": " << first_mismatch(r);
}

// The managed paths of the demo: prefetched to the GPU and back, and mapped with cudaMemAdvise.
TEST_P(Ch02MatrixSum, ManagedMemoryPrefetchedAndAdvised) {
  CML_REQUIRE_GPU();
  int device = 0, concurrent = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device));
  if (!concurrent) GTEST_SKIP() << "no concurrentManagedAccess";
  const auto [nx, ny] = GetParam();
  const std::size_t n = std::size_t{nx} * ny, spare = 33;
  for (bool advised : {false, true}) {
    ManagedBuffer<float> a(n), b(n), c(n + spare);
    init_matrices(a.data(), b.data(), c.data(), n);
    std::memset(c.data() + n, kPoisonByte, spare * sizeof(float));
    if (advised) {
      for (float* p : {a.data(), b.data(), c.data()}) {
        advise(p, n * sizeof(float), cudaMemAdviseSetPreferredLocation, Where::host, device);
        advise(p, n * sizeof(float), cudaMemAdviseSetAccessedBy, Where::device, device);
      }
    } else {
      prefetch(a.data(), a.bytes(), Where::device, device, nullptr);
      prefetch(b.data(), b.bytes(), Where::device, device, nullptr);
      prefetch(c.data(), c.bytes(), Where::device, device, nullptr);
    }
    launch_sum_matrix(a.data(), b.data(), c.data(), nx, ny, nullptr);
    if (!advised) prefetch(c.data(), c.bytes(), Where::host, device, nullptr);
    sync();
    const VerifyResult r = check_matrix(c.data(), n, spare);
    ASSERT_TRUE(r.ok()) << (advised ? "advised " : "prefetched ") << nx << " x " << ny << ": " << first_mismatch(r);
  }
}

// The book's warm-up launch (nx = ny = 1) writes exactly one element.
TEST(Ch02MatrixSumWarmup, OneByOneTouchesOneElement) {
  CML_REQUIRE_GPU();
  const std::size_t n = 64;
  std::vector<float> a(n), b(n), c(n);
  init_matrices(a.data(), b.data(), c.data(), n);
  DeviceBuffer<float> da(n), db(n), dc(n);
  da.upload(a);
  db.upload(b);
  dc.poison();
  launch_sum_matrix(da.data(), db.data(), dc.data(), 1, 1, nullptr);
  sync();
  const auto got = dc.download();
  EXPECT_EQ(got[0], a[0] + b[0]);
  VerifyResult r;
  expect_poison(r, got.data() + 1, n - 1, 1);
  EXPECT_TRUE(r.ok()) << first_mismatch(r);
}

// Square sides that are and are not multiples of the 32 x 32 block, and thin shapes.
INSTANTIATE_TEST_SUITE_P(Shapes, Ch02MatrixSum,
                         testing::Values(std::make_pair(1u, 1u), std::make_pair(31u, 1u), std::make_pair(1u, 31u),
                                         std::make_pair(33u, 65u), std::make_pair(1000u, 37u),
                                         std::make_pair(1024u, 1024u), std::make_pair(1025u, 1023u)));

}  // namespace
