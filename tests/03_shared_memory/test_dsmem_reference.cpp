// Host-only checks of distributed_shared's references: the ring the chase follows, the closed form of every
// read thread's sum (against a simulation of the kernel's loop), and the histogram reference and its fold.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "03_shared_memory/kernels/dsmem_reference.hpp"
#include "03_shared_memory/kernels/latency_reference.hpp"

namespace {

using namespace cml::ch03;

TEST(Ch03DsmemRing, IsOneRandomCycleThroughEveryWord) {
  const std::size_t words = 8192;  // the demo's ring
  const Chain c = random_chain(words, 1, words, 11);
  std::set<std::uint32_t> seen;
  std::uint32_t off = c.start;
  std::size_t next_word = 0;  // hops to the word right after the current one: what a prefetcher would guess
  for (std::size_t h = 0; h < words; ++h) {
    ASSERT_EQ(off % 4, 0u);
    ASSERT_LT(off / 4, words);
    EXPECT_TRUE(seen.insert(off).second) << "word visited twice";
    const std::uint32_t next = c.words[off / 4];
    if (next == off + 4) ++next_word;
    off = next;
  }
  EXPECT_EQ(off, c.start) << "not one cycle through every word";
  EXPECT_EQ(seen.size(), words);
  EXPECT_LT(next_word, 16u) << "a random order steps to the next word about once in the whole ring";
}

// The kernel's loop, literally: buffers of every rank, each thread reading elements s + j * block, its
// start s rotating by a warp each pass.
std::vector<std::uint32_t> simulate_read(unsigned blocks, unsigned cluster, bool neighbour, int passes) {
  std::vector<std::vector<std::uint32_t>> buffer(cluster, std::vector<std::uint32_t>(kDsmemReadWords));
  for (unsigned r = 0; r < cluster; ++r)
    for (unsigned w = 0; w < static_cast<unsigned>(kDsmemReadWords); ++w) buffer[r][w] = dsmem_read_word(r, w);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(blocks) * kDsmemReadBlock);
  for (unsigned b = 0; b < blocks; ++b) {
    const unsigned rank = b % cluster;
    const auto& src = buffer[neighbour ? (rank + 1) % cluster : rank];
    for (unsigned t = 0; t < static_cast<unsigned>(kDsmemReadBlock); ++t) {
      std::uint32_t acc = 0;
      for (int p = 0; p < passes; ++p) {
        const unsigned start = (t + 32u * static_cast<unsigned>(p)) % kDsmemReadBlock;
        for (int j = 0; j < kDsmemReadSteps; ++j)
          for (unsigned k = 0; k < 4; ++k) acc += src[4 * (start + static_cast<unsigned>(j) * kDsmemReadBlock) + k];
      }
      out[static_cast<std::size_t>(b) * kDsmemReadBlock + t] = acc;
    }
  }
  return out;
}

TEST(Ch03DsmemRead, ClosedFormMatchesSimulation) {
  for (unsigned cluster : {1u, 2u, 4u, 16u})
    for (bool neighbour : {false, true})
      for (int passes : {1, 3, 7, 8, 9, 20})
        EXPECT_EQ(dsmem_read_expected(2 * cluster, cluster, neighbour, static_cast<std::uint64_t>(passes)),
                  simulate_read(2 * cluster, cluster, neighbour, passes))
            << "cluster " << cluster << (neighbour ? " neighbour" : " own") << " passes " << passes;
  EXPECT_THROW(dsmem_read_expected(3, 2, true, 1), std::invalid_argument);
}

TEST(Ch03DsmemRead, EveryRankSumsDifferently) {
  // A thread that read the wrong block's buffer must not get the right sum by accident, at any pass count
  // the demo uses (a power of two multiplies the sum and could hide the rank term).
  for (std::uint64_t passes : {1u, 4u, 256u, 1024u, 100000u})
    for (unsigned t : {0u, 255u}) {
      std::set<std::uint32_t> sums;
      for (unsigned rank = 0; rank < 16; ++rank) sums.insert(dsmem_read_thread_sum(t, rank, passes));
      EXPECT_EQ(sums.size(), 16u) << "passes " << passes << " thread " << t;
    }
  // With a cluster of one, the neighbour is the block itself.
  EXPECT_EQ(dsmem_read_expected(3, 1, true, 5), dsmem_read_expected(3, 1, false, 5));
}

TEST(Ch03DsmemHistogram, CountsEveryKeyOnce) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000003}}) {
    const auto h = histogram_reference(n, 1024);
    std::uint64_t total = 0;
    for (std::uint32_t c : h) total += c;
    EXPECT_EQ(total, n);
  }
  const auto one = histogram_reference(1, 16);
  EXPECT_EQ(one[histogram_bin(histogram_key(0), 16)], 1u);
  EXPECT_THROW(histogram_reference(10, 1000), std::invalid_argument);
}

TEST(Ch03DsmemHistogram, KeysLookRandom) {
  // Distinct keys (the hash is a bijection of the index) spread evenly: with 1M keys in 1024 bins the mean
  // is 1024 and the standard deviation 32, so +-25% is about 8 standard deviations.
  const std::size_t n = 1 << 20;
  std::set<std::uint32_t> distinct;
  for (std::size_t i = 0; i < 100000; ++i) distinct.insert(histogram_key(i));
  EXPECT_EQ(distinct.size(), 100000u);
  for (std::uint32_t c : histogram_reference(n, 1024)) {
    EXPECT_GT(c, 768u);
    EXPECT_LT(c, 1280u);
  }
}

TEST(Ch03DsmemHistogram, FoldEqualsCountingIntoFewerBins) {
  const std::size_t n = 300007;
  const auto fine = histogram_reference(n, 65536);
  for (std::uint32_t bins : {1u, 2u, 1024u, 32768u, 65536u})
    EXPECT_EQ(fold_histogram(fine, bins), histogram_reference(n, bins)) << bins;
  EXPECT_THROW(fold_histogram(fine, 3), std::invalid_argument);
  EXPECT_THROW(fold_histogram(fine, 131072), std::invalid_argument);
}

}  // namespace
