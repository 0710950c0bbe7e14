// The access model against independent closed forms, over whole parameter ranges (not hand-picked cases).
#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "common/access_model.hpp"

namespace {

using namespace cml::model;

// Distinct 32-byte sectors of n consecutive elements starting at byte `start` (elements never straddle).
std::uint64_t contiguous_sectors(std::uint64_t start, std::uint64_t bytes) {
  return (start + bytes - 1) / kSectorBytes - start / kSectorBytes + 1;
}

TEST(GlobalModelExhaustive, OffsetsMatchTheContiguousSpan) {
  for (unsigned elem : {1u, 2u, 4u, 8u, 16u})
    for (std::uint64_t offset = 0; offset <= 256; ++offset) {
      // One warp: 32 contiguous elements from offset * elem.
      const auto a = global_warp(lanes_of([&](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
        return (l + offset) * elem;
      }, 0), elem);
      ASSERT_EQ(a.sectors, contiguous_sectors(offset * elem, 32ull * elem)) << "elem " << elem << " offset " << offset;
      ASSERT_EQ(a.bytes_requested, 32ull * elem);
      ASSERT_EQ(a.requests, 1u);
    }
}

TEST(GlobalModelExhaustive, StridesMatchCountingDistinctSectors) {
  for (unsigned elem : {1u, 2u, 4u, 8u, 16u})
    for (std::uint64_t stride = 1; stride <= 128; ++stride) {
      // Closed form: lane l touches sector floor(l * stride * elem / 32); lanes share a sector iff their
      // byte addresses fall in the same 32-byte block, i.e. ceil(32 * stride * elem / 32) distinct blocks
      // when stride * elem >= 32, else the span's block count.
      const std::uint64_t step = stride * elem;
      const std::uint64_t expect = step >= kSectorBytes ? 32 : contiguous_sectors(0, 31 * step + elem);
      ASSERT_EQ(stride_access(stride, elem, 1).sectors, expect) << "elem " << elem << " stride " << stride;
      // Efficiency never exceeds 1 and equals requested / moved.
      const auto a = stride_access(stride, elem, 4);
      ASSERT_LE(a.efficiency(), 1.0);
      ASSERT_DOUBLE_EQ(a.efficiency(), double(a.bytes_requested) / double(a.sectors * kSectorBytes));
    }
}

TEST(GlobalModelExhaustive, LinesNeverExceedSectorsAndCoverThem) {
  for (std::uint64_t stride = 1; stride <= 64; ++stride)
    for (std::uint64_t offset = 0; offset < 64; ++offset) {
      const auto a = global_warp(lanes_of([&](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
        return (offset + l * stride) * 4;
      }, 0), 4);
      ASSERT_LE(a.lines, a.sectors);
      ASSERT_GE(a.lines * 4, a.sectors);  // a 128-byte line holds 4 sectors
    }
}

// Wavefronts of a warp whose lane l reads `words` consecutive 4-byte words from element `element_of(l)`, served
// `lanes` lanes per pass: per pass the most distinct words any one bank holds (at least 1), summed over the passes.
// Counted by brute force over plain arrays, independent of the model's own bookkeeping.
template <class ElementOf>
std::uint64_t brute_wavefronts(unsigned lanes, unsigned words, ElementOf element_of) {
  std::uint64_t total = 0;
  for (unsigned p = 0; p < 32 / lanes; ++p) {
    unsigned per_bank[32] = {};
    std::uint64_t seen[32][64];
    for (unsigned l = p * lanes; l < (p + 1) * lanes; ++l)
      for (unsigned w = 0; w < words; ++w) {
        const std::uint64_t word = element_of(l) * words + w;
        const unsigned b = word % 32;
        bool dup = false;
        for (unsigned k = 0; k < per_bank[b]; ++k) dup = dup || seen[b][k] == word;
        if (!dup) seen[b][per_bank[b]++] = word;
      }
    unsigned worst = 1;
    for (unsigned b = 0; b < 32; ++b) worst = std::max(worst, per_bank[b]);
    total += worst;
  }
  return total;
}

TEST(SharedModelExhaustive, FourByteStrideIsGcdWay) {
  for (unsigned stride = 1; stride <= 256; ++stride) {
    const unsigned g = std::gcd(stride, 32u);
    ASSERT_EQ(shared_stride_access(stride, 4).wavefronts, g) << stride;
  }
}

TEST(SharedModelExhaustive, WideStridesFollowThePerPassRule) {
  // 8-byte: two half-warp passes; each pass is 16 lanes x 2 words with a word stride of 2 * stride.
  // 16-byte: four quarter-warp passes of 8 lanes x 4 words with a word stride of 4 * stride.
  for (unsigned width : {8u, 16u}) {
    const unsigned words = width / 4, lanes = 32 / words, passes = words;
    for (unsigned stride = 1; stride <= 64; ++stride) {
      // Per pass: lanes * words word accesses; bank of word (l * stride * words + w). Count the worst bank
      // by brute force over a plain array (independent of the model's std::set bookkeeping).
      const std::uint64_t total = brute_wavefronts(lanes, words, [&](unsigned l) { return l * stride; });
      ASSERT_EQ(passes * lanes, 32u);
      ASSERT_EQ(shared_stride_access(stride, width).wavefronts, total) << "width " << width << " stride " << stride;
      ASSERT_GE(total, passes);
    }
  }
}

// Lanes in pairs at one address (n and n ^ 1, or n and n ^ 2), 16 distinct elements at a stride: each pass
// of a load serves twice the lanes of the unpaired rule, a store's passes stay (NVIDIA's pairing rule for
// LDS.64 / LDS.128; measured here as the 1 and 2 wavefronts of bank_conflicts' 8- and 16-byte broadcasts in
// results/*/profile, and for pairs and stores with ncu on the H200). Brute force over the passes.
TEST(SharedModelExhaustive, PairedLanesFollowTheDoubledPassRule) {
  for (unsigned width : {8u, 16u})
    for (unsigned mask : {1u, 2u})
      for (unsigned stride = 0; stride <= 64; ++stride) {
        const auto element = [&](unsigned l) { return (l / (2 * mask)) * mask + (mask == 2 ? (l & 1) : 0); };
        const unsigned words = width / 4;
        // Wavefronts when each pass serves `lanes` lanes.
        const auto brute = [&](unsigned lanes) {
          return brute_wavefronts(lanes, words, [&](unsigned l) { return std::uint64_t(element(l)) * stride; });
        };
        const LaneAddress f = [&](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
          return std::uint64_t(element(l)) * stride * width;
        };
        const auto ld = shared_pattern(1, width, f, SharedOp::kLoad);
        const auto st = shared_pattern(1, width, f, SharedOp::kStore);
        const std::string where =
            "width " + std::to_string(width) + " mask " + std::to_string(mask) + " stride " + std::to_string(stride);
        ASSERT_EQ(ld.wavefronts, brute(2 * 32 / words)) << where;
        ASSERT_EQ(ld.ideal_wavefronts, words / 2) << where;
        ASSERT_EQ(st.wavefronts, brute(32 / words)) << where;
        ASSERT_EQ(st.ideal_wavefronts, words) << where;
      }
}

TEST(SharedModelExhaustive, PaddedAndSwizzledTilesAreConflictFreeForEveryTileWidth) {
  for (unsigned cols : {8u, 16u, 32u, 64u}) {
    const unsigned rows = 32;
    // Column walks of an unpadded tile whose rows are a multiple of 32 words conflict 32 ways;
    // +1 padding removes every conflict for any width.
    ASSERT_DOUBLE_EQ(shared_tile_access(rows, cols, 1, 4, false).wavefronts_per_request(), 1.0) << cols;
    ASSERT_DOUBLE_EQ(shared_tile_access(rows, cols, 1, 4, true).wavefronts_per_request(), 1.0) << cols;
    if (cols % 32 == 0) {
      ASSERT_DOUBLE_EQ(shared_tile_access(rows, cols, 0, 4, false).wavefronts_per_request(), 32.0) << cols;
    }
  }
  ASSERT_DOUBLE_EQ(shared_tile_access(32, 32, 0, 4, false, true).wavefronts_per_request(), 1.0);
  ASSERT_DOUBLE_EQ(shared_tile_access(32, 32, 0, 4, true, true).wavefronts_per_request(), 1.0);
}

TEST(SharedModelExhaustive, RandomPermutationsOfOneRowAreConflictFree) {
  // Any permutation of 32 consecutive words hits 32 distinct banks.
  std::uint32_t state = 12345;
  for (int trial = 0; trial < 2000; ++trial) {
    unsigned perm[32];
    std::iota(perm, perm + 32, 0u);
    for (unsigned i = 31; i > 0; --i) {
      state = state * 1664525u + 1013904223u;
      std::swap(perm[i], perm[state % (i + 1)]);
    }
    const auto s = shared_pattern(1, 4, [&](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
      return std::uint64_t(perm[l]) * 4 + 4096;
    });
    ASSERT_EQ(s.wavefronts, 1u);
  }
}

}  // namespace
