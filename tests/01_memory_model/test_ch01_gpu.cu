// Every chapter-01 kernel against its CPU reference, at odd sizes (1, 31, 1000003, and sizes that are
// not multiples of the block), outputs poisoned first so a skipped element cannot pass. The litmus and
// growing-buffer kernels have files of their own (test_litmus_gpu.cu, test_vmm_growth_gpu.cu).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "01_memory_model/ch01_resources.hpp"
#include "01_memory_model/kernels/box_filter.cuh"
#include "01_memory_model/kernels/launch_bounds.hpp"
#include "01_memory_model/kernels/pitched.cuh"
#include "01_memory_model/kernels/pointer_chase.cuh"
#include "01_memory_model/kernels/pool_threshold.hpp"
#include "01_memory_model/kernels/register_array.cuh"
#include "01_memory_model/kernels/register_array_maxrreg.hpp"
#include "01_memory_model/kernels/reverse_chunks.cuh"
#include "01_memory_model/kernels/stencil_1d.cuh"
#include "01_memory_model/kernels/stream_sum.cuh"
#include "01_memory_model/kernels/symbols.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

void sync() { CUDA_CHECK(cudaDeviceSynchronize()); }

// The first mismatch of a failed comparison, for the failure message.
std::string first_mismatch(const VerifyResult& r) { return r.first.empty() ? std::string() : r.first.front(); }

std::vector<float> small_integers(std::size_t n, unsigned modulus) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7919u + 13u) % modulus);
  return v;
}

// ---- pointer chase ---------------------------------------------------------------------------------------

class GlobalChase : public testing::TestWithParam<std::size_t> {};

TEST_P(GlobalChase, BuildsTheChainAndLandsWhereTheCpuWalkLands) {
  CML_REQUIRE_GPU();
  const std::size_t nodes = GetParam();
  const auto next = make_single_cycle(nodes, 99);
  DeviceBuffer<unsigned long long> lines(nodes * kChaseWordsPerLine);
  DeviceBuffer<std::uint32_t> next_dev(nodes);
  DeviceBuffer<ChaseState> state(1);
  next_dev.upload(next);
  lines.poison();
  launch_build_chase(lines.data(), next_dev.data(), nodes, nullptr);
  sync();
  const auto base = reinterpret_cast<unsigned long long>(lines.data());
  if (nodes <= 100000) {
    const auto host = lines.download();
    for (std::size_t i = 0; i < nodes; ++i)
      ASSERT_EQ(host[i * kChaseWordsPerLine], base + next[i] * kChaseLineBytes) << "line " << i;
  }
  // Successive launches continue from the stored cursor.
  const ChaseState start{base, -1};
  CUDA_CHECK(cudaMemcpy(state.data(), &start, sizeof start, cudaMemcpyHostToDevice));
  std::uint64_t total = 0;
  for (const auto& [warm, hops] : {std::pair{0u, 1u}, std::pair{0u, 7u}, std::pair{5u, 0u},
                                    std::pair{3u, static_cast<unsigned>(nodes) + 3u}}) {
    launch_global_chase(state.data(), warm, hops, nullptr);
    total += warm + hops;
    ChaseState got{};
    CUDA_CHECK(cudaMemcpy(&got, state.data(), sizeof got, cudaMemcpyDeviceToHost));
    EXPECT_EQ((got.cursor - base) / kChaseLineBytes, walk_chain(next, 0, total)) << "after " << total << " hops";
    if (hops > 0) EXPECT_GT(got.cycles, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, GlobalChase, testing::Values(1, 31, 1000, 1000003));

class SharedChase : public testing::TestWithParam<unsigned> {};

TEST_P(SharedChase, LandsWhereTheCpuWalkLands) {
  CML_REQUIRE_GPU();
  const unsigned nodes = GetParam();
  const auto next = make_single_cycle(nodes, 5);
  DeviceBuffer<std::uint32_t> next_dev(nodes);
  DeviceBuffer<ChaseState> state(1);
  next_dev.upload(next);
  ChaseState got{0, -1};
  std::uint64_t total = 0;
  for (const unsigned hops : {1u, 5u, 2 * nodes + 1}) {
    got.cycles = -1;  // each launch must store its own count: an earlier launch's cannot pass for it
    CUDA_CHECK(cudaMemcpy(state.data(), &got, sizeof got, cudaMemcpyHostToDevice));
    launch_shared_chase(next_dev.data(), nodes, state.data(), hops, nullptr);
    total += hops;
    CUDA_CHECK(cudaMemcpy(&got, state.data(), sizeof got, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got.cursor, walk_chain(next, 0, total)) << "after " << total << " hops";
    EXPECT_GT(got.cycles, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, SharedChase, testing::Values(1u, 31u, 257u, 4093u, 12288u));

// ---- streaming reads ---------------------------------------------------------------------------------------

class StreamSum : public testing::TestWithParam<std::tuple<std::size_t, unsigned, bool>> {};

TEST_P(StreamSum, BlockSumsMatchReference) {
  CML_REQUIRE_GPU();
  const auto [n4, grid, replicate] = GetParam();
  std::vector<std::uint32_t> words(4 * n4);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 2654435761u) >> 3;
  const StreamLayout L = make_stream_layout(n4, grid, replicate);
  DeviceBuffer<std::uint32_t> buf(words.size());
  DeviceBuffer<unsigned> sums(L.grid);
  buf.upload(words);
  for (const int passes : {1, 3}) {
    sums.poison();
    launch_stream_sum<0>(reinterpret_cast<const uint4*>(buf.data()), L, passes, sums.data(), nullptr);
    sync();
    const VerifyResult r = compare_exact(sums.download(), stream_sum_reference(words, L, passes));
    EXPECT_TRUE(r.ok()) << "passes=" << passes << ": " << first_mismatch(r);
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, StreamSum,
                         testing::Combine(testing::Values<std::size_t>(1, 31, 4096, 1000003),
                                          testing::Values(1u, 7u, 130u), testing::Bool()));

// ---- registers vs local memory -----------------------------------------------------------------------------

class RegisterArray : public testing::TestWithParam<unsigned> {};

TEST_P(RegisterArray, AllFourBuildsMatchReference) {
  CML_REQUIRE_GPU();
  const unsigned n = GetParam();
  std::vector<std::uint32_t> seeds(n);
  for (unsigned i = 0; i < n; ++i) seeds[i] = i * 2654435761u + 1u;
  const auto want = register_array_reference(seeds);
  DeviceBuffer<unsigned> in(n), out(n);
  in.upload(seeds);
  using Launch = void (*)(const unsigned*, unsigned*, unsigned, cudaStream_t);
  const std::pair<const char*, Launch> builds[] = {{"registers", launch_array_registers},
                                                   {"local", launch_array_local},
                                                   {"bounded", launch_array_registers_bounded},
                                                   {"maxrreg", launch_array_registers_maxrreg}};
  for (const auto& [name, launch] : builds) {
    out.poison();
    launch(in.data(), out.data(), n, nullptr);
    sync();
    const VerifyResult r = compare_exact(out.download(), want);
    EXPECT_TRUE(r.ok()) << name << ": " << first_mismatch(r);
  }
}

INSTANTIATE_TEST_SUITE_P(OddSizes, RegisterArray, testing::Values(1u, 31u, 257u, 1000003u));

TEST(RegisterArray, AttributesShowWhereTheArrayLives) {
  CML_REQUIRE_GPU();
  const cudaFuncAttributes regs = function_attributes(array_registers_kernel);
  const cudaFuncAttributes local = function_attributes(array_local_kernel);
  const cudaFuncAttributes bounded = function_attributes(array_registers_bounded_kernel);
  const cudaFuncAttributes capped = array_registers_maxrreg_attributes();
  EXPECT_EQ(regs.localSizeBytes, 0u) << "the unrolled array should stay in registers";
  EXPECT_GE(local.localSizeBytes, kRegArray * sizeof(unsigned)) << "the run-time indexed array should be local";
  // __launch_bounds__(256, 8) leaves 32 registers only where an SM holds 8 x 256 threads; elsewhere ptxas
  // drops the promise and only the block size limits the registers (kernels/launch_bounds.hpp).
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  const LaunchBoundsCap cap =
      launch_bounds_register_cap(kRegBlock, kBoundedMinBlocks, p.regsPerMultiprocessor, p.maxThreadsPerMultiProcessor);
  EXPECT_LE(bounded.numRegs, cap.registers_per_thread)
      << p.maxThreadsPerMultiProcessor << " threads per SM: " << cap.blocks_per_sm << " blocks";
  if (cap.honoured)
    EXPECT_GT(bounded.localSizeBytes, 0u) << cap.registers_per_thread << " registers should not hold the array";
  EXPECT_LE(capped.numRegs, maxrreg_limit());
  EXPECT_GT(capped.localSizeBytes, 0u) << "a " << maxrreg_limit() << "-register cap should spill";
}

// ---- stencil ---------------------------------------------------------------------------------------------

class Stencil : public testing::TestWithParam<std::tuple<std::size_t, unsigned>> {};

template <CoeffSource S, RowPick P>
void check_stencil(std::size_t n, unsigned max_blocks, const char* name) {
  const auto table = make_stencil_table();
  const auto in_host = make_stencil_input(n);
  const auto want = stencil_1d_reference(in_host, table, P);
  upload_stencil_coefficients(table);
  DeviceBuffer<float> in(n), out(n), table_dev(table.size());
  in.upload(in_host);
  table_dev.upload(table);
  out.poison();
  launch_stencil_1d<S, P>(in.data(), out.data(), n, table_dev.data(), max_blocks, nullptr);
  sync();
  const VerifyResult r = compare_exact(out.download(), want);
  EXPECT_TRUE(r.ok()) << name << " n=" << n << " blocks<=" << max_blocks << ": "
                      << first_mismatch(r);
}

TEST_P(Stencil, EverySourceAndRowPickMatchesReference) {
  CML_REQUIRE_GPU();
  const auto [n, max_blocks] = GetParam();
  CML_SKIP_LARGE_UNDER_SANITIZER(n);
  using CS = CoeffSource;
  using RP = RowPick;
  check_stencil<CS::constant_memory, RP::fixed>(n, max_blocks, "constant_fixed");
  check_stencil<CS::constant_memory, RP::warp_uniform>(n, max_blocks, "constant_uniform");
  check_stencil<CS::constant_memory, RP::per_lane>(n, max_blocks, "constant_divergent");
  check_stencil<CS::ldg, RP::warp_uniform>(n, max_blocks, "ldg_uniform");
  check_stencil<CS::ldg, RP::per_lane>(n, max_blocks, "ldg_divergent");
  check_stencil<CS::global, RP::warp_uniform>(n, max_blocks, "global_uniform");
  check_stencil<CS::global, RP::per_lane>(n, max_blocks, "global_divergent");
}

// max_blocks 3: every block runs many grid-stride iterations, which is where a missing barrier before
// the tile refill would show; 0: one block per tile.
INSTANTIATE_TEST_SUITE_P(OddSizes, Stencil,
                         testing::Combine(testing::Values<std::size_t>(1, 4, 31, 255, 257, 1000003),
                                          testing::Values(3u, 0u)));

// ---- static device symbols -------------------------------------------------------------------------------

TEST(Symbols, ScalarReachedThroughTheSymbolApiAndItsAddress) {
  CML_REQUIRE_GPU();
  const float initial = 3.14f;
  CUDA_CHECK(cudaMemcpyToSymbol(g_value, &initial, sizeof initial));
  launch_add_two(nullptr);  // the legacy stream, like the copy: ordered after it
  sync();
  float back = 0.0f;
  CUDA_CHECK(cudaMemcpyFromSymbol(&back, g_value, sizeof back));
  EXPECT_EQ(back, initial + 2.0f);
  float* address = nullptr;
  CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&address), g_value));
  launch_add_two(nullptr);
  sync();
  CUDA_CHECK(cudaMemcpy(&back, address, sizeof back, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, initial + 2.0f + 2.0f);
  std::size_t size = 0;
  CUDA_CHECK(cudaGetSymbolSize(&size, g_value));
  EXPECT_EQ(size, sizeof(float));
  CUDA_CHECK(cudaGetSymbolSize(&size, c_coeffs));
  EXPECT_EQ(size, sizeof(float) * kCoeffCount);
}

class Symbols : public testing::TestWithParam<int> {};

TEST_P(Symbols, ConstantArrayAndPointerSymbolMatchReference) {
  CML_REQUIRE_GPU();
  const int n = GetParam();
  std::vector<float> coeffs(kCoeffCount);
  for (int i = 0; i < kCoeffCount; ++i) coeffs[i] = 0.25f * static_cast<float>(i + 1);
  CUDA_CHECK(cudaMemcpyToSymbol(c_coeffs, coeffs.data(), coeffs.size() * sizeof(float)));
  DeviceBuffer<float> out(n);
  out.poison();
  launch_scale_by_coeffs(out.data(), n, nullptr);
  sync();
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = coeffs[i % kCoeffCount] * static_cast<float>(i);
  VerifyResult r = compare_exact(out.download(), want);
  EXPECT_TRUE(r.ok()) << "c_coeffs: " << first_mismatch(r);

  float* const target = out.data();
  CUDA_CHECK(cudaMemcpyToSymbol(g_target, &target, sizeof target));
  out.poison();
  launch_write_through_symbol_pointer(n, nullptr);
  sync();
  for (int i = 0; i < n; ++i) want[i] = 3.0f * static_cast<float>(i);
  r = compare_exact(out.download(), want);
  EXPECT_TRUE(r.ok()) << "g_target: " << first_mismatch(r);
}

INSTANTIATE_TEST_SUITE_P(OddSizes, Symbols, testing::Values(1, 31, 257, 1000003));

// ---- dynamic shared memory above 48 KiB --------------------------------------------------------------------

constexpr std::size_t kBig = 100 * 1024;

TEST(ReverseChunks, Over48KiBFailsWithoutTheAttributeAndWorksWithIt) {
  CML_REQUIRE_GPU();
  int dev = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (static_cast<std::size_t>(optin) < kBig) GTEST_SKIP() << "this GPU allows only " << optin << " bytes per block";
  const std::size_t n = 1000003;
  const auto chunk = static_cast<unsigned>(kBig / sizeof(float));
  const auto host = small_integers(n, 100000);
  DeviceBuffer<float> in(n), out(n);
  in.upload(host);
  // Back to the default limit (an earlier test in this process may have opted in).
  allow_reverse_chunks_smem(48 * 1024);
  out.poison();
  sync();
  cml::announce_expected_api_error("launch with 100 KiB of dynamic shared memory and no opt-in attribute", 2);
  EXPECT_THROW(launch_reverse_chunks(in.data(), out.data(), n, chunk, 8, nullptr), CudaError);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a refused launch must not leave a sticky error";
  std::vector<float> poisoned(n);
  std::memset(poisoned.data(), kPoisonByte, n * sizeof(float));
  EXPECT_TRUE(compare_exact(out.download(), poisoned).ok()) << "the refused launch wrote output";

  allow_reverse_chunks_smem(kBig);
  launch_reverse_chunks(in.data(), out.data(), n, chunk, 8, nullptr);
  sync();
  EXPECT_TRUE(compare_exact(out.download(), reverse_chunks_reference(host, chunk)).ok());
}

class ReverseChunks : public testing::TestWithParam<std::tuple<std::size_t, unsigned>> {};

TEST_P(ReverseChunks, MatchesReference) {
  CML_REQUIRE_GPU();
  const auto [n, chunk] = GetParam();
  CML_SKIP_LARGE_UNDER_SANITIZER(n);
  const auto host = small_integers(n, 100000);
  DeviceBuffer<float> in(n), out(n);
  in.upload(host);
  out.poison();
  launch_reverse_chunks(in.data(), out.data(), n, chunk, 5, nullptr);  // small chunks: under 48 KiB
  sync();
  const VerifyResult r = compare_exact(out.download(), reverse_chunks_reference(host, chunk));
  EXPECT_TRUE(r.ok()) << first_mismatch(r);
}

INSTANTIATE_TEST_SUITE_P(OddSizes, ReverseChunks,
                         testing::Combine(testing::Values<std::size_t>(1, 31, 1000003), testing::Values(1u, 7u, 513u,
                                                                                                        12288u)));

// ---- pitched 2-D and 3-D -----------------------------------------------------------------------------------

class Pitched2D : public testing::TestWithParam<std::tuple<unsigned, unsigned>> {};

TEST_P(Pitched2D, PitchedAndUnpaddedMatchReference) {
  CML_REQUIRE_GPU();
  const auto [w, h] = GetParam();
  const std::size_t n = std::size_t{w} * h;
  // 1 x 1000003 is a 512 MB pitched allocation of which 4 MB is data: initcheck did not finish it in minutes.
  CML_SKIP_LARGE_UNDER_SANITIZER(n);
  const auto host = small_integers(n, 1024);
  const auto want = vertical_sum_reference(host, w, h);

  PitchedBuffer<float> pin(w, h), pout(w, h);
  ASSERT_GE(pin.pitch(), w * sizeof(float));
  pin.upload(host.data());
  pout.poison();
  launch_vertical_sum_2d(pin.data(), pin.pitch(), pout.data(), pout.pitch(), w, h, nullptr);
  sync();
  std::vector<float> got(n);
  pout.download(got.data());
  VerifyResult r = compare_exact(got, want);
  EXPECT_TRUE(r.ok()) << "pitched: " << first_mismatch(r);

  DeviceBuffer<float> in(n), out(n);
  in.upload(host);
  out.poison();
  launch_vertical_sum_2d(in.data(), w * sizeof(float), out.data(), w * sizeof(float), w, h, nullptr);
  sync();
  r = compare_exact(out.download(), want);
  EXPECT_TRUE(r.ok()) << "unpadded: " << first_mismatch(r);
}

// (1, 1000003): more rows than grid.y * 8, so the row loop strides.
INSTANTIATE_TEST_SUITE_P(OddSizes, Pitched2D,
                         testing::Values(std::make_tuple(1u, 1u), std::make_tuple(31u, 1u), std::make_tuple(1u, 31u),
                                         std::make_tuple(33u, 257u), std::make_tuple(4099u, 9u),
                                         std::make_tuple(1000003u, 1u), std::make_tuple(1u, 1000003u)));

class Pitched3D : public testing::TestWithParam<std::tuple<unsigned, unsigned, unsigned>> {};

TEST_P(Pitched3D, MatchesReference) {
  CML_REQUIRE_GPU();
  const auto [w, h, d] = GetParam();
  const std::size_t n = std::size_t{w} * h * d;
  const auto host = small_integers(n, 1024);
  Pitched3DBuffer<float> in(w, h, d), out(w, h, d);
  EXPECT_GE(in.pitch(), w * sizeof(float));
  EXPECT_EQ(in.slice_pitch(), in.pitch() * h);
  in.upload(host.data());
  out.poison();
  launch_scale_3d(in.ptr(), out.ptr(), w, h, d, nullptr);
  sync();
  std::vector<float> got(n);
  out.download(got.data());
  const VerifyResult r = compare_exact(got, scale_3d_reference(host, w, h, d));
  EXPECT_TRUE(r.ok()) << first_mismatch(r);
}

// Depth 70001: more slices than grid.z allows, so the slice loop strides.
INSTANTIATE_TEST_SUITE_P(OddSizes, Pitched3D,
                         testing::Values(std::make_tuple(1u, 1u, 1u), std::make_tuple(31u, 3u, 5u),
                                         std::make_tuple(255u, 129u, 31u), std::make_tuple(1000003u, 1u, 1u),
                                         std::make_tuple(3u, 1u, 70001u)));

// ---- texture vs global 3x3 ---------------------------------------------------------------------------------

class Box3x3 : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(Box3x3, GlobalTexturePitchedAndTextureArrayMatchReference) {
  CML_REQUIRE_GPU();
  const int w = std::get<0>(GetParam()), h = std::get<1>(GetParam());  // captured below: no structured binding
  const std::size_t n = static_cast<std::size_t>(w) * h;
  const auto host = small_integers(n, 16);
  const auto want = box3x3_reference(host, w, h);
  PitchedBuffer<float> in(w, h), out(w, h);
  in.upload(host.data());
  std::vector<float> got(n);
  const auto check = [&](const char* name) {
    sync();
    out.download(got.data());
    const VerifyResult r = compare_exact(got, want);
    EXPECT_TRUE(r.ok()) << name << " " << w << "x" << h << ": " << first_mismatch(r);
  };

  out.poison();
  launch_box3x3_global(in.data(), in.pitch(), out.data(), out.pitch(), w, h, nullptr);
  check("global");

  const TextureObject pitched_tex(in.data(), w, h, in.pitch());
  out.poison();
  launch_box3x3_texture(pitched_tex.get(), out.data(), out.pitch(), w, h, nullptr);
  check("texture over pitched memory");

  CudaArray2D array(w, h);
  array.upload(host.data());
  const TextureObject array_tex(array.get());
  out.poison();
  launch_box3x3_texture(array_tex.get(), out.data(), out.pitch(), w, h, nullptr);
  check("texture over a CUDA array");
}

INSTANTIATE_TEST_SUITE_P(OddSizes, Box3x3,
                         testing::Values(std::make_tuple(1, 1), std::make_tuple(31, 1), std::make_tuple(1, 31),
                                         std::make_tuple(33, 9), std::make_tuple(1001, 999)));

// ---- stream-ordered allocation ----------------------------------------------------------------------------

TEST(Pool, ThresholdDecidesWhatThePoolKeepsAfterASync) {
  CML_REQUIRE_GPU();
  int pools = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
  if (!pools) GTEST_SKIP() << "no stream-ordered memory pools on this GPU";
  const std::size_t bytes = std::size_t{64} << 20;
  Stream s;
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  std::uint64_t before = 0;
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &before));
  auto reserved_after_cycle = [&](std::uint64_t threshold) {
    ReleaseThreshold guard(0, threshold);
    void* p = nullptr;
    CUDA_CHECK(cudaMallocAsync(&p, bytes, s));
    CUDA_CHECK(cudaFreeAsync(p, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::uint64_t reserved = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    return reserved;
  };
  EXPECT_GE(reserved_after_cycle(std::numeric_limits<std::uint64_t>::max()), bytes);
  EXPECT_EQ(reserved_after_cycle(0), 0u);
  // The guard put the threshold back and trimmed the pool.
  std::uint64_t after = 0, reserved = 0;
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &after));
  CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  EXPECT_EQ(after, before);
  EXPECT_EQ(reserved, 0u);
}

}  // namespace
