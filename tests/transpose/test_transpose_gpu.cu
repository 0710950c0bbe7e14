// Every transpose kernel of 02_global_memory and 03_shared_memory, bit-exact against the CPU transpose:
// at every shape 1..64 x 1..64 (as Lei Mao's driver does), and at a few large and odd shapes. The output
// is poisoned before each launch, and the elements past rows * cols must still hold the poison afterwards
// (no kernel writes outside its matrix).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "02_global_memory/kernels/transpose_global.cuh"
#include "03_shared_memory/kernels/tma_transpose.cuh"
#include "03_shared_memory/kernels/transpose_shared.cuh"
#include "tests/testing.hpp"
#include "common/transpose.hpp"

namespace {

using cml::transpose::Expect;
using cml::transpose::Launch;
using namespace cml::ch02;
using namespace cml::ch03;

struct Case {
  std::string name;
  Expect expect;
  Launch launch;
};

// GoogleTest prints the parameter in test listings (and CTest keeps it in the test name): the name, not bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

template <class F>
Launch with_block(F f, dim3 block) {
  return [f, block](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t s) {
    f(in, out, r, c, s, block);
  };
}

Launch async_with(unsigned max_blocks) {
  return [max_blocks](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t s) {
    launch_transpose_tile64_async(in, out, r, c, s, max_blocks);
  };
}

std::vector<Case> all_cases() {
  const Expect kT = Expect::kTranspose;
  std::vector<Case> v = {
      // 02_global_memory (names as in the demo)
      {"copy_row", Expect::kCopy, with_block(launch_copy_row, kDefaultBlock)},
      {"copy_col", Expect::kCopy, with_block(launch_copy_col, kDefaultBlock)},
      {"naive_row", kT, with_block(launch_transpose_naive_row<BlockOrder::kRowMajor>, kDefaultBlock)},
      {"naive_col", kT, with_block(launch_transpose_naive_col<BlockOrder::kRowMajor>, kDefaultBlock)},
      {"naive_col_l2only", kT, with_block(launch_transpose_naive_col_l2only, kDefaultBlock)},
      {"unroll4_row", kT, with_block(launch_transpose_unroll4_row, kDefaultBlock)},
      {"unroll4_col", kT, with_block(launch_transpose_unroll4_col, kDefaultBlock)},
      {"diagonal_row", kT, with_block(launch_transpose_diagonal_row, kDefaultBlock)},
      {"diagonal_col", kT, with_block(launch_transpose_diagonal_col, kDefaultBlock)},
      // a few more block shapes for the unrolled and diagonal kernels (non-square tile grids)
      {"unroll4_row_8x32", kT, with_block(launch_transpose_unroll4_row, dim3(8, 32))},
      {"unroll4_col_16x16", kT, with_block(launch_transpose_unroll4_col, dim3(16, 16))},
      {"diagonal_row_16x8", kT, with_block(launch_transpose_diagonal_row, dim3(16, 8))},
      {"diagonal_col_8x32", kT, with_block(launch_transpose_diagonal_col, dim3(8, 32))},
      // 03_shared_memory
      {"tiled_unpadded", kT, launch_transpose_tiled_unpadded},
      {"tiled_padded", kT, launch_transpose_tiled_padded},
      {"tiled_swizzled", kT, launch_transpose_tiled_swizzled},
      {"tiled_multi", kT, launch_transpose_tiled_multi},
      {"tiled_32x4", kT, launch_transpose_padded_tile<32, 4>},
      {"tiled_32x2", kT, launch_transpose_padded_tile<32, 2>},
      {"tiled_64x8", kT, launch_transpose_padded_tile<64, 8>},
      {"tiled_64x4", kT, launch_transpose_padded_tile<64, 4>},
      {"fast_32x4", kT, launch_transpose_fast_tile<32, 4, false>},
      {"fast_32x4_cs", kT, launch_transpose_fast_tile<32, 4, true>},
      {"fast_64x8", kT, launch_transpose_fast_tile<64, 8, false>},
      {"fast_64x8_cs", kT, launch_transpose_fast_tile<64, 8, true>},
      {"fast_64x8_grouped", kT, launch_transpose_fast_tile<64, 8, false, BlockOrder::kGrouped>},
      {"fast_64x8_col", kT, launch_transpose_fast_tile<64, 8, false, BlockOrder::kColumnMajor>},
      {"tile64_vec4", kT, launch_transpose_tile64_vec4<>},
      {"tile64_vec4_3pb", kT, launch_transpose_tile64_vec4_capped<>},
      {"tile64_vec4_l1", kT, launch_transpose_tile64_vec4<BlockOrder::kRowMajor, Carve::kFit>},
      {"tile64_vec4_3pb_l1", kT, launch_transpose_tile64_vec4_capped<BlockOrder::kRowMajor, Carve::kFit>},
      {"tile64_vec4_col", kT, launch_transpose_tile64_vec4<BlockOrder::kColumnMajor>},
      {"tile64_vec4_3pb_col", kT, launch_transpose_tile64_vec4_capped<BlockOrder::kColumnMajor, Carve::kFit>},
      {"tile64_vec4_3pb_col_pf", kT, launch_transpose_tile64_vec4_prefetched},
      // not a transpose: whole tiles moved untransposed, partial tiles transposed (tile_move_reference)
      {"tile_move_vec4_col_pf", Expect::kTileMove64, launch_tile_move_vec4_prefetched},
      {"tile64_async", kT, async_with(0)},
      // persistent grids far smaller than the tile count: every block cycles through both buffers
      {"tile64_async_1block", kT, async_with(1)},
      {"tile64_async_3blocks", kT, async_with(3)},
  };
  // The demo's block_sweep.
  for (unsigned x : {32u, 16u, 8u})
    for (unsigned y : {32u, 16u, 8u}) {
      const std::string b = std::to_string(x) + "x" + std::to_string(y);
      v.push_back({"sweep_naive_row_" + b, kT, with_block(launch_transpose_naive_row<BlockOrder::kRowMajor>, dim3(x, y))});
      v.push_back({"sweep_naive_col_" + b, kT, with_block(launch_transpose_naive_col<BlockOrder::kRowMajor>, dim3(x, y))});
    }
  return v;
}

// Device input and output sized for the largest shape of a test, allocated once; an m x n matrix uses the
// first m * n input elements (element_value(i), so its reference is computed from the same values).
class Fixture {
 public:
  explicit Fixture(std::size_t max_elements, std::size_t guard = 1024)
      : host_in_(max_elements), in_(max_elements), out_(max_elements + guard), got_(max_elements + guard) {
    for (std::size_t i = 0; i < max_elements; ++i) host_in_[i] = cml::transpose::element_value(i);
    in_.upload(host_in_);
  }

  // Runs `c` on an m x n matrix; returns "" if exact and the guard is untouched, else what went wrong.
  std::string check(const Case& c, std::size_t m, std::size_t n) {
    const std::size_t count = m * n;
    out_.poison();
    c.launch(in_.data(), out_.data(), m, n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    out_.download(got_.data(), got_.size());

    std::vector<float> expected(host_in_.begin(), host_in_.begin() + count);
    if (c.expect == Expect::kTranspose) expected = cml::transpose::transpose_reference(expected, m, n);
    if (c.expect == Expect::kTileMove64) expected = cml::transpose::tile_move_reference(expected, m, n, 64);
    const cml::VerifyResult r = cml::compare_exact(got_.data(), expected.data(), count);
    const std::string shape = std::to_string(m) + "x" + std::to_string(n);
    if (!r.ok()) return shape + ": " + std::to_string(r.mismatches) + " of " + std::to_string(count) +
                        " elements differ, first " + r.first.front();
    const std::uint32_t poison = 0xFFFFFFFFu;
    for (std::size_t i = count; i < got_.size(); ++i)
      if (std::memcmp(&got_[i], &poison, sizeof poison) != 0)
        return shape + ": wrote past the matrix at element " + std::to_string(i);
    return "";
  }

 private:
  std::vector<float> host_in_;
  cml::DeviceBuffer<float> in_, out_;
  std::vector<float> got_;
};

class TransposeVariant : public testing::TestWithParam<Case> {};

// tile64_async is cp.async, which needs compute capability 8.0; on an older GPU its launcher refuses.
#define SKIP_WITHOUT_CP_ASYNC(name)                                                              \
  do {                                                                                           \
    if (std::string(name).rfind("tile64_async", 0) == 0) {                                        \
      if (const std::string cml_why_ = tile64_async_unsupported(); !cml_why_.empty()) GTEST_SKIP() << cml_why_; \
    }                                                                                            \
  } while (0)

TEST_P(TransposeVariant, EveryShapeUpTo64x64) {
  CML_REQUIRE_GPU();
  SKIP_WITHOUT_CP_ASYNC(GetParam().name);
  constexpr std::size_t kMax = 64;
  Fixture f(kMax * kMax);
  int failures = 0;
  const auto sides = cml::test_support::shape_sides(kMax);
  for (std::size_t m : sides)
    for (std::size_t n : sides) {
      if (failures >= 5) break;
      const std::string why = f.check(GetParam(), m, n);
      if (!why.empty()) {
        ADD_FAILURE() << GetParam().name << " " << why;
        ++failures;
      }
    }
}

TEST_P(TransposeVariant, LargeAndOddShapes) {
  CML_REQUIRE_GPU();
  SKIP_WITHOUT_CP_ASYNC(GetParam().name);
  const std::pair<std::size_t, std::size_t> shapes[] = {
      {1000, 777}, {1, 4097}, {4097, 1}, {4096, 1024}, {1024, 4096}, {130, 8200}, {2048, 2048}, {1001, 1003}};
  std::size_t largest = 0;
  for (const auto& s : shapes) largest = std::max(largest, s.first * s.second);
  Fixture f(largest);
  for (const auto& [m, n] : shapes) {
    const std::string why = f.check(GetParam(), m, n);
    EXPECT_TRUE(why.empty()) << GetParam().name << " " << why;
  }
}

INSTANTIATE_TEST_SUITE_P(Transpose, TransposeVariant, testing::ValuesIn(all_cases()),
                         [](const testing::TestParamInfo<Case>& i) { return i.param.name; });

// The 64 x 64 kernels take the 4-byte path when a pointer is not 16-byte aligned, even for shapes whose
// sides are multiples of 4; the result must not change (the moved tiles of tile_move_vec4_col_pf included).
TEST(Tile64, UnalignedPointersUseTheScalarPathExactly) {
  CML_REQUIRE_GPU();
  const std::size_t m = 192, n = 132;  // 3 x 3 tiles, the last column of tiles partial
  std::vector<float> host(m * n);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = cml::transpose::element_value(i);
  const std::vector<float> transposed = cml::transpose::transpose_reference(host, m, n);
  const std::vector<float> moved = cml::transpose::tile_move_reference(host, m, n, kWide);
  cml::DeviceBuffer<float> in(m * n + 1), out(m * n + 1);
  CUDA_CHECK(cudaMemcpy(in.data() + 1, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  ASSERT_FALSE(vec4_aligned(in.data() + 1, out.data() + 1, m, n));
  const bool async_ok = tile64_async_unsupported().empty();  // cp.async: compute capability 8.0 or newer
  for (const Case& c : {Case{"tile64_vec4", Expect::kTranspose, launch_transpose_tile64_vec4<>},
                        Case{"tile64_vec4_3pb", Expect::kTranspose, launch_transpose_tile64_vec4_capped<>},
                        Case{"tile64_vec4_3pb_l1", Expect::kTranspose,
                             launch_transpose_tile64_vec4_capped<BlockOrder::kRowMajor, Carve::kFit>},
                        Case{"tile64_async", Expect::kTranspose, async_with(2)},
                        Case{"tile_move_vec4_col_pf", Expect::kTileMove64, launch_tile_move_vec4_prefetched}}) {
    if (c.name == "tile64_async" && !async_ok) continue;
    out.poison();
    c.launch(in.data() + 1, out.data() + 1, m, n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> got(m * n);
    CUDA_CHECK(cudaMemcpy(got.data(), out.data() + 1, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const cml::VerifyResult r = cml::compare_exact(got, c.expect == Expect::kTileMove64 ? moved : transposed);
    EXPECT_TRUE(r.ok()) << c.name << ": " << r.mismatches << " mismatches, first " << r.first.front();
  }
}

// tile64_vec4_3pb_col_pf with other prefetch distances: one block ahead (every block but the last asks for
// a tile, edge tiles among those it skips), three, and past the last block (none asks). A prefetch changes
// nothing the kernel reads, so every result must stay exact and inside its matrix.
TEST(Tile64, PrefetchAtAnyDistanceIsExact) {
  CML_REQUIRE_GPU();
  const cml::ComputeCapability cc = cml::current_compute_capability();
  if (const std::string why = l2_prefetch_unsupported(cc.major, cc.minor); !why.empty()) GTEST_SKIP() << why;
  Fixture f(1000 * 777);
  for (const unsigned ahead : {1u, 3u, 1u << 20}) {
    const Case c{"ahead " + std::to_string(ahead), Expect::kTranspose,
                 [ahead](const float* in, float* out, std::size_t r, std::size_t n, cudaStream_t s) {
                   launch_tile64_vec4_for<BlockOrder::kColumnMajor, kVec4BlocksPerSm, Carve::kFit, true>(in, out, r, n,
                                                                                                         s, ahead);
                 }};
    for (const auto& [m, n] : {std::pair<std::size_t, std::size_t>{1000, 777}, {256, 1024}, {130, 260}})
      EXPECT_EQ(f.check(c, m, n), "") << c.name;
  }
}

// The ways the float4 tiles fit their blocks on an SM, as the occupancy calculator sees them after a launch:
// tile64_vec4_3pb's reservation and tile64_vec4_3pb_l1's carveout cap them at three (and leave room for at
// least one); tile64_vec4_l1's carveout holds as many as the SM can.
TEST(Tile64, ReservationAndCarveoutsFitTheirBlocks) {
  CML_REQUIRE_GPU();
  Fixture f(256 * 256);
  for (const Case& c :
       {Case{"tile64_vec4_3pb", Expect::kTranspose, launch_transpose_tile64_vec4_capped<>},
        Case{"tile64_vec4_l1", Expect::kTranspose, launch_transpose_tile64_vec4<BlockOrder::kRowMajor, Carve::kFit>},
        Case{"tile64_vec4_3pb_l1", Expect::kTranspose,
             launch_transpose_tile64_vec4_capped<BlockOrder::kRowMajor, Carve::kFit>}})
    ASSERT_EQ(f.check(c, 256, 256), "") << c.name;  // the launchers set the carveouts
  constexpr auto capped = transpose_tile64_vec4_kernel<BlockOrder::kRowMajor, kVec4BlocksPerSm, Carve::kMaxShared>;
  const std::size_t reserve = fit_blocks<capped, kVec4BlocksPerSm, Carve::kMaxShared>(kWideThreads);
  int natural = 0, reserved_fit = 0, carved_fit = 0, full_fit = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&natural, capped, kWideThreads, 0));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&reserved_fit, capped, kWideThreads, reserve));
  EXPECT_GE(reserved_fit, 1);
  EXPECT_LE(reserved_fit, kVec4BlocksPerSm);
  if (natural <= kVec4BlocksPerSm) EXPECT_EQ(reserve, 0u);
  else EXPECT_EQ(reserved_fit, kVec4BlocksPerSm) << "the smallest reservation should leave exactly the cap";

  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &carved_fit, transpose_tile64_vec4_kernel<BlockOrder::kRowMajor, kVec4BlocksPerSm, Carve::kFit>, kWideThreads, 0));
  EXPECT_GE(carved_fit, 1);
  EXPECT_LE(carved_fit, kVec4BlocksPerSm);

  int device = 0, max_threads = 0, max_shared = 0, reserved = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_shared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  const int tile_bytes = kWide * kWide * int(sizeof(float));
  const int most = std::min({kVec4BlocksFull, max_threads / kWideThreads, max_shared / (tile_bytes + reserved)});
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &full_fit, transpose_tile64_vec4_kernel<BlockOrder::kRowMajor, kVec4BlocksFull, Carve::kFit>, kWideThreads, 0));
  EXPECT_EQ(full_fit, most) << "tile64_vec4_l1's carveout should hold as many of its blocks as the SM can";
}

// tile_move_64x8 is defined for whole tiles only: exact at shapes made of them, refused at any other.
TEST(TilePlacement, MovedTilesLandUntransposedAndPartialTilesAreRefused) {
  CML_REQUIRE_GPU();
  const Case c{"tile_move_64x8", Expect::kTileMove64, launch_tile_move};
  const std::pair<std::size_t, std::size_t> shapes[] = {{64, 64}, {64, 192}, {320, 64}, {1024, 448}, {2048, 2048}};
  Fixture f(2048 * 2048);
  for (const auto& [m, n] : shapes) EXPECT_EQ(f.check(c, m, n), "") << c.name;
  for (const auto& [m, n] : {std::pair<std::size_t, std::size_t>{64, 100}, {65, 64}, {1000, 1000}})
    EXPECT_THROW(c.launch(nullptr, nullptr, m, n, nullptr), std::invalid_argument) << m << "x" << n;
}

// A launch into an empty matrix does nothing (and in particular launches no zero-block grid).
TEST(Launchers, EmptyMatrixIsANoOp) {
  CML_REQUIRE_GPU();
  for (const Case& c : all_cases()) {
    c.launch(nullptr, nullptr, 0, 5, nullptr);
    c.launch(nullptr, nullptr, 5, 0, nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << c.name;
  }
}

}  // namespace

// ---- The TMA transpose (compute capability 9.0 or newer; both sides multiples of 4) ----------------

#define SKIP_WITHOUT_TMA()                                                                             \
  do {                                                                                                 \
    CML_REQUIRE_GPU();                                                                                 \
    if (const std::string cml_why_ = cml::tma::tma_unsupported(); !cml_why_.empty()) GTEST_SKIP() << cml_why_; \
  } while (0)

// The demo's TMA transposes, with the grid capped at `max_blocks` (0: as many as fit).
std::vector<Case> tma_cases(unsigned max_blocks) {
  using cml::ch02::BlockOrder;
  const auto with = [max_blocks](auto launch) {
    return Launch([max_blocks, launch](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t s) {
      launch(in, out, r, c, s, max_blocks);
    });
  };
  // The demo's four (tma_64x64 with tickets, in row and column order and with a static split, tma_128x128),
  // and one in grouped order (the kernel takes any order; the demo shows grouped order for fast_64x8).
  return {{"tma_64x64", Expect::kTranspose, with(cml::tma::launch_transpose_tma<64, 4, 2, BlockOrder::kRowMajor>)},
          {"tma_128x128", Expect::kTranspose, with(cml::tma::launch_transpose_tma<128, 2, 1, BlockOrder::kRowMajor>)},
          {"tma_64x64_grouped", Expect::kTranspose, with(cml::tma::launch_transpose_tma<64, 4, 2, BlockOrder::kGrouped>)},
          {"tma_64x64_col", Expect::kTranspose,
           with(cml::tma::launch_transpose_tma<64, 4, 2, BlockOrder::kColumnMajor>)},
          {"tma_64x64_static", Expect::kTranspose,
           with(cml::tma::launch_transpose_tma<64, 4, 2, BlockOrder::kRowMajor, cml::tma::Schedule::kStatic>)}};
}

// Every shape with sides 4..136 in steps of 4: partial tiles at the bottom and at the right, whose
// out-of-range parts the TMA must zero-fill on load and drop on store.
TEST(TransposeTma, EveryShapeUpTo136x136) {
  SKIP_WITHOUT_TMA();
  Fixture f(136 * 136);
  for (unsigned max_blocks : {0u, 1u})
    for (const Case& c : tma_cases(max_blocks))
      for (std::size_t m = 4; m <= 136; m += 4)
        for (std::size_t n = 4; n <= 136; n += 4) {
          if (cml::test_support::sanitizer_sweep() && m % 64 > 8 && n % 64 > 8) continue;
          const std::string why = f.check(c, m, n);
          ASSERT_TRUE(why.empty()) << c.name << " max_blocks " << max_blocks << ": " << why;
        }
}

// Large and ragged shapes; small persistent grids make every block go round its four stages and both
// output buffers many times.
TEST(TransposeTma, LargeShapesAndSmallGrids) {
  SKIP_WITHOUT_TMA();
  const std::pair<std::size_t, std::size_t> shapes[] = {{1000, 776}, {4, 4100}, {4100, 4}, {4096, 1024},
                                                        {1024, 4096}, {132, 8200}, {2048, 2048}, {1028, 36}};
  std::size_t largest = 0;
  for (const auto& s : shapes) largest = std::max(largest, s.first * s.second);
  Fixture f(largest);
  for (unsigned max_blocks : {0u, 1u, 3u, 7u})
    for (const Case& c : tma_cases(max_blocks))
      for (const auto& [m, n] : shapes) {
        const std::string why = f.check(c, m, n);
        EXPECT_TRUE(why.empty()) << c.name << " max_blocks " << max_blocks << ": " << why;
      }
}

// A side that is not a multiple of 4 floats cannot be described by a tensor map: refused, nothing launched.
TEST(TransposeTma, RefusesSidesNotMultiplesOf4) {
  SKIP_WITHOUT_TMA();
  cml::DeviceBuffer<float> in(64 * 64), out(64 * 64);
  for (const Case& c : tma_cases(0)) {
    EXPECT_THROW(c.launch(in.data(), out.data(), 30, 32, nullptr), std::invalid_argument) << c.name;
    EXPECT_THROW(c.launch(in.data(), out.data(), 32, 31, nullptr), std::invalid_argument) << c.name;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}
