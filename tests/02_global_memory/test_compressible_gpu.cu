// The compressible-memory demo's pieces: VMM buffers (plain and compressible) that keep their contents
// as they grow, and the write / read / copy kernels against the generator at sizes that are not
// multiples of the block or of the grid, outputs poisoned first.
#include <gtest/gtest.h>

#include <vector>

#include "02_global_memory/kernels/compressible.cuh"
#include "02_global_memory/kernels/data_kinds.hpp"
#include "common/pattern_kernels.cuh"
#include "tests/testing.hpp"
#include "common/vmm.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

std::vector<std::uint32_t> expected(DataKind kind, std::size_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = data_word(kind, i);
  return v;
}

std::vector<std::uint32_t> download(const std::uint32_t* p, std::size_t n) {
  std::vector<std::uint32_t> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), p, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  return v;
}

// A VMM buffer of `compressible` memory, or a skip with the reason this GPU cannot give one.
#define REQUIRE_VMM(compressible)                                                   \
  do {                                                                              \
    CML_REQUIRE_GPU();                                                              \
    const std::string why_ = vmm_unavailable(0, compressible);                      \
    if (!why_.empty()) GTEST_SKIP() << why_;                                        \
  } while (0)

TEST(Vmm, GrowingKeepsTheWordsAlreadyThere) {
  REQUIRE_VMM(false);
  VmmBuffer b(0, 64u << 20, false);
  const std::size_t g = b.granularity();
  EXPECT_GT(g, 0u);
  b.grow(1);  // rounds up to one granule
  EXPECT_EQ(b.mapped(), g);
  const std::size_t n1 = g / 4;
  launch_fill_kind(b.data<std::uint32_t>(), n1, DataKind::random, nullptr);
  b.grow(3 * g);
  EXPECT_EQ(b.mapped(), 4 * g);
  // The new memory sits right after the old, at the same addresses.
  CUDA_CHECK(cudaMemset(b.data<std::uint32_t>() + n1, 0xAB, 3 * g));
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(download(b.data<std::uint32_t>(), n1), expected(DataKind::random, n1));
  const std::vector<std::uint32_t> tail = download(b.data<std::uint32_t>() + n1, 3 * g / 4);
  for (std::uint32_t w : tail) ASSERT_EQ(w, 0xABABABABu);
  EXPECT_THROW(b.grow(b.reserved()), CudaError);  // past the reservation: refused, nothing mapped
  EXPECT_EQ(b.mapped(), 4 * g);
}

TEST(Vmm, CompressibleMemoryIsCompressedAndHoldsEveryKind) {
  REQUIRE_VMM(true);
  VmmBuffer b(0, 8u << 20, true);
  b.grow(8u << 20);
  EXPECT_TRUE(b.compressed());
  const std::size_t n = (8u << 20) / 4;
  for (DataKind kind : kDataKinds) {
    CUDA_CHECK(cudaMemset(b.data(), 0xFF, n * 4));
    launch_fill_kind(b.data<std::uint32_t>(), n, kind, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(download(b.data<std::uint32_t>(), n), expected(kind, n)) << data_kind_name(kind);
  }
}

TEST(Vmm, PlainMemoryIsNotCompressed) {
  REQUIRE_VMM(false);
  VmmBuffer b(0, 2u << 20, false);
  b.grow(2u << 20);
  EXPECT_FALSE(b.compressed());
}

TEST(StreamKernels, WriteReadCopyMatchTheGeneratorAtOddSizes) {
  CML_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{4}, std::size_t{1020}, std::size_t{1000004}, std::size_t{(1u << 24) + 12}}) {
    DeviceBuffer<std::uint32_t> a(n + 4), c(n + 4);
    DeviceBuffer<unsigned long long> scratch(1);
    for (DataKind kind : kDataKinds) {
      const std::vector<std::uint32_t> want = expected(kind, n);
      a.poison();
      c.poison();
      launch_fill_kind(a.data(), n, kind, nullptr);
      launch_copy_words(a.data(), c.data(), n, nullptr);
      CUDA_CHECK(cudaMemset(scratch.data(), 0, sizeof(unsigned long long)));
      launch_sum_words(a.data(), n, scratch.data(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(download(a.data(), n), want) << "fill " << data_kind_name(kind) << " n=" << n;
      EXPECT_EQ(download(c.data(), n), want) << "copy " << data_kind_name(kind) << " n=" << n;
      // Nothing written past n.
      EXPECT_EQ(download(c.data() + n, 4), std::vector<std::uint32_t>(4, 0xFFFFFFFFu));
      unsigned long long sum = 0;
      for (std::uint32_t w : want) sum += w;
      EXPECT_EQ(scratch.download().front(), sum) << "sum " << data_kind_name(kind) << " n=" << n;
      // The checker finds every wrong word, and only those.
      EXPECT_TRUE(check_words_on_device(c.data(), n, KindWord{kind}, nullptr).ok());
      CUDA_CHECK(cudaMemset(c.data() + n / 2, 0xEE, 4));
      EXPECT_EQ(check_words_on_device(c.data(), n, KindWord{kind}, nullptr).mismatches,
                data_word(kind, n / 2) == 0xEEEEEEEEu ? 0u : 1u);
    }
  }
}

}  // namespace
