// Layout and CPU reference of the streaming read kernel (stream_sum.cuh), shared by demos and tests.
//
// The buffer holds n4 uint4 (16-byte) elements. Two layouts:
//   replicated  - every block reads the WHOLE buffer, starting at its own pseudo-random offset and
//                 wrapping around: the working set of every SM is the whole buffer, so the buffer size
//                 decides the level that serves the loads (L1 if it fits in L1, L2 if it fits in L2).
//                 The starts are scattered so that blocks sharing an SM do not walk in step and serve
//                 each other's lines from L1.
//   partitioned - block b reads its own chunk once per pass: each byte is read once per pass by one
//                 thread (the DRAM case: replicating a buffer 8x the L2 would be served from L2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#ifndef __CUDACC__
#define CML_HD
#else
#define CML_HD __host__ __device__
#endif

namespace cml::ch01 {

inline constexpr unsigned kStreamAlign4 = 32;  // starts and chunks are multiples of 32 uint4 = 512 B

struct StreamLayout {
  unsigned n4 = 0;      // uint4 elements in the buffer
  unsigned chunk4 = 0;  // partitioned: elements per block (multiple of kStreamAlign4)
  unsigned grid = 0;    // blocks
  bool replicate = false;
};

// Block b's first element in the replicated layout: a multiplicative hash spread over the buffer.
CML_HD inline unsigned replicated_start(unsigned block, unsigned n4) {
  const unsigned slots = n4 / kStreamAlign4;  // aligned start positions
  if (slots == 0) return 0;
  return static_cast<unsigned>((static_cast<unsigned long long>(block) * 2654435761ull) % slots) * kStreamAlign4;
}

inline StreamLayout make_stream_layout(std::size_t n4, unsigned grid, bool replicate) {
  if (n4 == 0 || grid == 0) throw std::invalid_argument("make_stream_layout: empty buffer or grid");
  if (n4 >= (std::size_t{1} << 31)) throw std::invalid_argument("make_stream_layout: buffer above 2^31 elements");
  StreamLayout L;
  L.n4 = static_cast<unsigned>(n4);
  L.replicate = replicate;
  const std::size_t chunk = (n4 + grid - 1) / grid;
  L.chunk4 = static_cast<unsigned>((chunk + kStreamAlign4 - 1) / kStreamAlign4 * kStreamAlign4);
  // Partitioned: only as many blocks as there are chunks, so no block idles.
  L.grid = replicate ? grid : static_cast<unsigned>((n4 + L.chunk4 - 1) / L.chunk4);
  return L;
}

// Bytes one launch reads (every byte a block requests, whichever level serves it).
inline double stream_bytes(const StreamLayout& L, int passes) {
  const double per_pass = L.replicate ? static_cast<double>(L.grid) * L.n4 : static_cast<double>(L.n4);
  return per_pass * 16.0 * passes;
}

// Expected block_sums[b]: the 32-bit wrapping sum of every word the block reads, `passes` times over.
inline std::vector<std::uint32_t> stream_sum_reference(const std::vector<std::uint32_t>& words, const StreamLayout& L,
                                                       int passes) {
  // prefix[i] = sum of the words of elements [0, i), wrapping mod 2^32 like the kernel.
  std::vector<std::uint32_t> prefix(L.n4 + std::size_t{1}, 0);
  for (std::size_t i = 0; i < L.n4; ++i)
    prefix[i + 1] = prefix[i] + words[4 * i] + words[4 * i + 1] + words[4 * i + 2] + words[4 * i + 3];
  const auto range = [&](std::size_t lo, std::size_t hi) { return prefix[hi] - prefix[lo]; };
  std::vector<std::uint32_t> sums(L.grid);
  for (unsigned b = 0; b < L.grid; ++b) {
    std::uint32_t one_pass;
    if (L.replicate) {
      const unsigned start = replicated_start(b, L.n4);
      one_pass = range(start, L.n4) + range(0, start);
    } else {
      const std::size_t lo = std::size_t{b} * L.chunk4;
      const std::size_t hi = lo + L.chunk4 < L.n4 ? lo + L.chunk4 : L.n4;
      one_pass = lo < hi ? range(lo, hi) : 0u;
    }
    sums[b] = one_pass * static_cast<std::uint32_t>(passes);
  }
  return sums;
}

}  // namespace cml::ch01

#undef CML_HD
