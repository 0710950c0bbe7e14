// The barrier kernels and the last-block reductions (sync_fences) against the CPU reference.
#include <gtest/gtest.h>

#include <vector>

#include "03_shared_memory/kernels/sync.cuh"
#include "tests/testing.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

const std::vector<std::size_t> kSizes = {1, 31, 255, 256, 257, 1000003};

TEST(Ch03SegmentReverse, OddSizesAndGrids) {
  CML_REQUIRE_GPU();
  for (std::size_t n : kSizes) {
    std::vector<std::uint32_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<std::uint32_t>(i * 2654435761u);
    DeviceBuffer<unsigned> in(n), out(n);
    in.upload(host);
    for (unsigned blocks : {1u, 7u, segment_reverse_grid(n)}) {
      out.poison();
      launch_segment_reverse(in.data(), out.data(), n, blocks, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(out.download(), segment_reverse_expected(host)) << "n=" << n << " blocks=" << blocks;
    }
  }
}

TEST(Ch03BarrierVote, CountAllAny) {
  CML_REQUIRE_GPU();
  for (std::size_t n : kSizes) {
    const auto host = vote_input(n);
    const auto expected = vote_expected(host);
    DeviceBuffer<unsigned> in(n), out(expected.size());
    in.upload(host);
    out.poison();
    launch_barrier_vote(in.data(), n, kVoteThreshold, out.data(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(out.download(), expected) << "n=" << n;
  }
}

template <bool AtomicRef>
void check_last_block() {
  for (std::size_t n : kSizes) {
    const auto host = reduce_input(n);
    DeviceBuffer<unsigned> in(n);
    in.upload(host);
    for (unsigned blocks : {1u, 3u, last_block_grid(n)}) {
      const int runs = 50;
      DeviceBuffer<Sum> partials(blocks), results(runs);
      DeviceBuffer<unsigned> ticket(1);
      ticket.fill_bytes(0);
      results.poison();
      for (int r = 0; r < runs; ++r) {
        partials.poison();  // a partial read before it is stored must show up as a wrong sum
        launch_reduce_last_block<AtomicRef>(in.data(), n, partials.data(), ticket.data(), results.data() + r, blocks,
                                            nullptr);
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(results.download(), std::vector<Sum>(runs, reduce_cpu(host))) << "n=" << n << " blocks=" << blocks;
      unsigned t = 1;
      ticket.download(&t, 1);
      EXPECT_EQ(t, 0u) << "the last block resets the ticket";
    }
  }
}

TEST(Ch03LastBlock, ThreadFenceEveryRun) {
  CML_REQUIRE_GPU();
  check_last_block<false>();
}

TEST(Ch03LastBlock, AtomicRefEveryRun) {
  CML_REQUIRE_GPU();
  check_last_block<true>();
}

}  // namespace
