// The TMA copies of tma_copy, bit-exact on a GPU with compute capability 9.0 or newer: every request size,
// totals that are not a multiple of the request or of 16 bytes, grids small enough that each block goes
// round its ring many times, both ways of handing out the requests, a ticket counter back at zero
// after every launch, and launches on two streams at once; likewise the same ring filled by cp.async, and
// the copy of one request per block, no ring, under each cap on the blocks per SM.
// Bytes past the end of the copy must keep their poison.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/tma_copy_kernels.cuh"
#include "03_shared_memory/kernels/tma_ptx.cuh"
#include "03_shared_memory/kernels/tma_transpose.cuh"
#include "common/pattern.hpp"
#include "common/timer.hpp"
#include "tests/testing.hpp"

namespace {

#define SKIP_WITHOUT_TMA()                                                                             \
  do {                                                                                                 \
    CML_REQUIRE_GPU();                                                                                 \
    if (const std::string cml_why_ = cml::tma::tma_unsupported(); !cml_why_.empty()) GTEST_SKIP() << cml_why_; \
  } while (0)

constexpr std::size_t kGuard = 256;

// Copies `bytes` with `copy`; "" when the copy is exact and the guard after it untouched.
template <class Copy>
std::string check_copy(std::size_t bytes, const Copy& copy) {
  std::vector<std::uint32_t> words(bytes / 4 + 1);
  cml::fill_pattern_host(words.data(), words.size(), 0x51u + std::uint32_t(bytes));
  std::vector<unsigned char> host(bytes + kGuard);
  std::memcpy(host.data(), words.data(), bytes);
  cml::DeviceBuffer<unsigned char> in(bytes + kGuard), out(bytes + kGuard);
  in.upload(host);
  out.poison();
  copy(in.data(), out.data(), bytes);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<unsigned char> got = out.download();
  for (std::size_t i = 0; i < bytes; ++i)
    if (got[i] != host[i]) return std::to_string(bytes) + " bytes: byte " + std::to_string(i) + " differs";
  for (std::size_t i = bytes; i < got.size(); ++i)
    if (got[i] != cml::kPoisonByte) return std::to_string(bytes) + " bytes: wrote past the end at " + std::to_string(i);
  return "";
}

using cml::tma::Schedule;

// The ticket counter of a kernel family on a stream, as the next launch there will find it.
cml::tma::WorkCounter counter_now(cml::tma::Queue q, cudaStream_t s = nullptr) {
  cml::tma::WorkCounter c{};
  CUDA_CHECK(cudaMemcpy(&c, cml::tma::work_counter(q, s), sizeof(c), cudaMemcpyDeviceToHost));
  return c;
}

// Runs `launch(in, out, bytes, chunk, limit)` for every request size in `chunks`, every limit on the blocks
// (0: the launcher's own choice, 1, 3) and totals that are not a multiple of the request or of 16 bytes, then
// `after(chunk, limit, bytes)`; "" when every copy is exact and every `after` returns "", else the first failure.
template <class Launch, class After>
std::string every_request_and_total(std::initializer_list<unsigned> chunks, const Launch& launch, const After& after) {
  const std::size_t totals[] = {1, 15, 16, 17, 255, 256, 4108, 65536 + 48, (std::size_t{3} << 20) + 7};
  for (unsigned chunk : chunks)
    for (unsigned limit : {0u, 1u, 3u})
      for (std::size_t bytes : totals) {
        // Under compute-sanitizer the 3 MiB totals are left to plain ctest: with 16-byte requests a block
        // goes round its ring once per request, and racecheck follows every shared-memory access each turn.
        if (cml::test_support::too_large_under_sanitizer(bytes)) continue;
        std::string why = check_copy(bytes, [&](const unsigned char* in, unsigned char* out, std::size_t n) {
          launch(in, out, n, chunk, limit);
        });
        if (why.empty()) why = after(chunk, limit, bytes);
        if (!why.empty()) return "chunk " + std::to_string(chunk) + " limit " + std::to_string(limit) + ": " + why;
      }
  return "";
}
const auto kNothingAfter = [](unsigned, unsigned, std::size_t) { return std::string(); };

TEST(TmaBulkCopy, EveryRequestSizeAndRaggedTotals) {
  SKIP_WITHOUT_TMA();
  for (Schedule schedule : {Schedule::kTickets, Schedule::kStatic}) {
    const std::string why = every_request_and_total(
        {16u, 256u, 1024u, 4096u, 16384u, 32768u},
        [&](const unsigned char* in, unsigned char* out, std::size_t n, unsigned chunk, unsigned max_blocks) {
          cml::tma::launch_tma_bulk_copy(in, out, n, chunk, nullptr, max_blocks, schedule);
        },
        kNothingAfter);
    ASSERT_TRUE(why.empty()) << (schedule == Schedule::kStatic ? "static " : "tickets ") << why;
  }
}

// Every launch must leave the counter at zero, or the next launch would start past its first items: with
// more blocks than requests, with one block, and with the grid of a large copy.
TEST(TmaBulkCopy, TicketCounterIsZeroAfterEveryLaunch) {
  SKIP_WITHOUT_TMA();
  for (std::size_t bytes : {std::size_t{48}, std::size_t{4096}, (std::size_t{8} << 20) + 16})
    for (unsigned max_blocks : {0u, 1u}) {
      const std::string why = check_copy(bytes, [&](const unsigned char* in, unsigned char* out, std::size_t n) {
        cml::tma::launch_tma_bulk_copy(in, out, n, 1024, nullptr, max_blocks);
      });
      ASSERT_TRUE(why.empty()) << why;
      const cml::tma::WorkCounter c = counter_now(cml::tma::kBulkQueue);
      EXPECT_EQ(c.next, 0u) << bytes << " bytes, max_blocks " << max_blocks;
      EXPECT_EQ(c.finished, 0u) << bytes << " bytes, max_blocks " << max_blocks;
    }
}

TEST(TmaBulkCopy, RefusesUnalignedBuffersAndBadRequests) {
  SKIP_WITHOUT_TMA();
  cml::DeviceBuffer<unsigned char> a(1024), b(1024);
  EXPECT_THROW(cml::tma::launch_tma_bulk_copy(a.data() + 4, b.data(), 512, 256, nullptr), std::invalid_argument);
  EXPECT_THROW(cml::tma::launch_tma_bulk_copy(a.data(), b.data(), 512, 100, nullptr), std::invalid_argument);
}

// One request per block: every request size, ragged totals, and each cap on the blocks per SM (their shared
// memory differs, so the launches in turn also check that one size's limit never refuses another's launch).
TEST(TmaBulkGridCopy, EveryRequestSizeAndRaggedTotals) {
  SKIP_WITHOUT_TMA();
  const std::string why = every_request_and_total(
      {16u, 256u, 4096u, 16384u, 32768u},
      [](const unsigned char* in, unsigned char* out, std::size_t n, unsigned chunk, unsigned per_sm) {
        cml::tma::launch_tma_bulk_grid_copy(in, out, n, chunk, nullptr, per_sm);
      },
      kNothingAfter);
  ASSERT_TRUE(why.empty()) << why;
}

// The reservation is what caps the blocks: exactly `per_sm` fit, and without a cap more than the default's 3.
TEST(TmaBulkGridCopy, ReservedSharedMemoryCapsTheBlocksPerSm) {
  SKIP_WITHOUT_TMA();
  const auto fit = [](unsigned per_sm) {
    return cml::tma::residency(cml::tma::tma_bulk_grid_kernel, 32, cml::tma::bulk_grid_smem(16384, per_sm)).per_sm;
  };
  for (unsigned per_sm : {1u, 2u, 3u, 4u}) EXPECT_EQ(fit(per_sm), per_sm);
  EXPECT_GT(fit(0), cml::tma::kGridBlocksPerSm);
}

TEST(TmaBulkGridCopy, RefusesUnalignedBuffersAndBadRequests) {
  SKIP_WITHOUT_TMA();
  cml::DeviceBuffer<unsigned char> a(1024), b(1024);
  EXPECT_THROW(cml::tma::launch_tma_bulk_grid_copy(a.data() + 4, b.data(), 512, 256, nullptr), std::invalid_argument);
  EXPECT_THROW(cml::tma::launch_tma_bulk_grid_copy(a.data(), b.data(), 512, 100, nullptr), std::invalid_argument);
}

// The same ring without the TMA: the threads' cp.async copies and stores must cover exactly what the bulk
// copies would, for every request size, ragged totals and small grids; the counter back at zero each time.
TEST(CpAsyncRingCopy, EveryRequestSizeAndRaggedTotals) {
  SKIP_WITHOUT_TMA();
  const std::string why = every_request_and_total(
      {16u, 256u, 4096u, 16384u, 32768u},
      [](const unsigned char* in, unsigned char* out, std::size_t n, unsigned chunk, unsigned max_blocks) {
        cml::tma::launch_cp_async_ring_copy(in, out, n, chunk, nullptr, max_blocks);
      },
      [](unsigned, unsigned, std::size_t) {
        const cml::tma::WorkCounter c = counter_now(cml::tma::kCpAsyncQueue);
        return c.next + c.finished == 0 ? std::string() : std::string("the ticket counter was not reset");
      });
  ASSERT_TRUE(why.empty()) << why;
}

TEST(CpAsyncRingCopy, RefusesUnalignedBuffersAndBadRequests) {
  SKIP_WITHOUT_TMA();
  cml::DeviceBuffer<unsigned char> a(1024), b(1024);
  EXPECT_THROW(cml::tma::launch_cp_async_ring_copy(a.data(), b.data() + 8, 512, 256, nullptr), std::invalid_argument);
  EXPECT_THROW(cml::tma::launch_cp_async_ring_copy(a.data(), b.data(), 512, 24, nullptr), std::invalid_argument);
}

// Floats: the whole rows of 4096 go through 64 x 64 boxes (the last box row partial), the rest by threads.
TEST(TmaTensorCopy, WholeRowsPartialBoxesAndTails) {
  SKIP_WITHOUT_TMA();
  const std::size_t counts[] = {1, 4095, 4096, 4096 + 5, 4096 * 64, 4096 * 65 + 100, 4096 * 300 + 3};
  for (unsigned max_blocks : {0u, 1u, 2u})
    for (std::size_t n : counts) {
      const std::string why =
          check_copy(n * sizeof(float), [&](const unsigned char* in, unsigned char* out, std::size_t) {
            cml::tma::launch_tma_tensor_copy(reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), n,
                                             nullptr, max_blocks);
          });
      ASSERT_TRUE(why.empty()) << "max_blocks " << max_blocks << ": " << why;
      const cml::tma::WorkCounter c = counter_now(cml::tma::kTensorQueue);
      EXPECT_EQ(c.next + c.finished, 0u) << "the ticket counter was not reset; max_blocks " << max_blocks;
    }
}

// Two launches of one family on two streams, running at once: a few blocks each, so that each grid is
// still going round its rings while the other takes its tickets. Each must take them from a counter of its
// own, or each copy would skip the items the other took.
TEST(TmaTickets, LaunchesOnTwoStreamsRunAtOnceAndEachCopiesEverything) {
  SKIP_WITHOUT_TMA();
  constexpr std::size_t kSide = 2048, kFloats = kSide * kSide * 4;  // 64 MiB per buffer
  constexpr unsigned kBlocks = 4;
  std::vector<float> host[2];
  std::vector<cml::DeviceBuffer<float>> in, out;
  for (int k = 0; k < 2; ++k) {
    std::vector<std::uint32_t> words(kFloats);
    cml::fill_pattern_host(words.data(), words.size(), 0x7700u + std::uint32_t(k));
    host[k].resize(kFloats);
    std::memcpy(host[k].data(), words.data(), kFloats * sizeof(float));
    in.emplace_back(kFloats);
    out.emplace_back(kFloats);
    in[k].upload(host[k]);
  }
  cml::Stream streams[2];
  // Whether the two grids really ran at once: together they must take clearly less than one after the other
  // (a few blocks each leave the GPU almost idle, so two grids fit side by side unless launches serialize).
  std::string serialized;
  const auto wall_ms = [](const auto& work) {
    return cml::host_ms([&] {
      work();
      CUDA_CHECK(cudaDeviceSynchronize());
    });
  };
  const auto run = [&](const char* family, cml::tma::Queue queue, const auto& launch, bool transposed) {
    double alone = 0.0;
    for (int k = 0; k < 2; ++k) alone += wall_ms([&] { launch(in[k].data(), out[k].data(), streams[k].get()); });
    for (int k = 0; k < 2; ++k) out[k].poison();
    CUDA_CHECK(cudaDeviceSynchronize());
    const double together = wall_ms([&] {
      for (int k = 0; k < 2; ++k) launch(in[k].data(), out[k].data(), streams[k].get());
    });
    if (!(together < 0.75 * alone))
      serialized += fmt::format(" {} ({:.2f} ms together, {:.2f} ms one after the other);", family, together,
                                alone);
    for (int k = 0; k < 2; ++k) {
      const std::vector<float> got = out[k].download();
      std::size_t bad = 0;
      for (std::size_t i = 0; i < kFloats; ++i) {
        // As a transpose, the buffer is a 4 kSide x kSide matrix; element i of the output is (r, c) of the
        // kSide x 4 kSide transpose, which is input element (c, r).
        const std::size_t from = transposed ? (i % (4 * kSide)) * kSide + i / (4 * kSide) : i;
        bad += std::memcmp(&got[i], &host[k][from], sizeof(float)) != 0;
      }
      EXPECT_EQ(bad, 0u) << family << ", stream " << k << ": wrong floats";
      const cml::tma::WorkCounter c = counter_now(queue, streams[k].get());
      EXPECT_EQ(c.next + c.finished, 0u) << family << ", stream " << k << ": the ticket counter was not reset";
    }
  };
  run("bulk copy", cml::tma::kBulkQueue, [&](const float* i, float* o, cudaStream_t s) {
    cml::tma::launch_tma_bulk_copy(i, o, kFloats * sizeof(float), 16384, s, kBlocks);
  }, false);
  run("cp.async copy", cml::tma::kCpAsyncQueue, [&](const float* i, float* o, cudaStream_t s) {
    cml::tma::launch_cp_async_ring_copy(i, o, kFloats * sizeof(float), 16384, s, kBlocks);
  }, false);
  run("tensor copy", cml::tma::kTensorQueue, [&](const float* i, float* o, cudaStream_t s) {
    cml::tma::launch_tma_tensor_copy(i, o, kFloats, s, kBlocks);
  }, false);
  run("TMA transpose", cml::tma::kTransposeQueue, [&](const float* i, float* o, cudaStream_t s) {
    cml::tma::launch_transpose_tma<64, 4, 2>(i, o, 4 * kSide, kSide, s, kBlocks);
  }, true);
  // The copies are checked either way; whether they shared a counter while running at once is shown only if
  // they did run at once (a tool that serializes launches, such as a sanitizer, cannot show it).
  if (!serialized.empty()) GTEST_SKIP() << "the two launches did not overlap:" << serialized;
}

}  // namespace
