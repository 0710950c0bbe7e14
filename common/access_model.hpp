// A model of what the memory system does with one warp-wide access (host-only C++, no GPU needed).
//
// Global memory (L1TEX on compute capability 7.0+): the unit of traffic is the 32-byte sector. A warp
// instruction is one *request*; it costs as many sectors as distinct 32-byte sectors its active lanes
// touch. Nsight Compute reports this as l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_{ld,st}.
//
// Shared memory: 32 banks of 4 bytes. Lanes reading the same 4-byte word are served together
// (broadcast/multicast); distinct words in the same bank are serialized into extra *wavefronts*.
// A wavefront moves at most 128 bytes, one 4-byte register per lane, so 8-byte accesses are processed a
// half-warp at a time and 16-byte accesses a quarter-warp at a time: their conflict-free minimum is 2 and
// 4 wavefronts. Loads make one exception: when no active lane n has a different address from lane n ^ 1
// (or none from lane n ^ 2), the hardware returns one lane's registers to both lanes of each pair, and a
// wavefront serves twice the lanes (a whole warp of 8-byte loads, a half-warp of 16-byte ones). NVIDIA
// states the pairs rule for compute capability 7.x (developer forums, "Unexpected shared memory bank
// conflict": LDS.128 then takes 2 requests instead of 4); on the H100 and H200 bank_conflicts' 8- and
// 16-byte broadcasts take 1 and 2 wavefronts (results/*/profile/bank_conflicts, where ncu's ideal count
// agrees), and a probe kernel under ncu on the H200 gave the same halving for pairs n, n ^ 1 and n, n ^ 2
// and for pairs with one lane inactive, none for n, n ^ 4 or n, n ^ 16, and none for stores: an 8- or
// 16-byte store takes 2 or 4 wavefronts even when every lane stores to one address. Nsight Compute reports
// wavefronts as l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

namespace cml::model {

inline constexpr unsigned kWarp = 32;
inline constexpr unsigned kSectorBytes = 32;
inline constexpr unsigned kLineBytes = 128;
inline constexpr unsigned kBanks = 32;
inline constexpr unsigned kBankBytes = 4;

inline void check_width(unsigned width) {
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16)
    throw std::invalid_argument("access width must be 1, 2, 4, 8 or 16 bytes");
}

// One or more warp-wide global accesses, summed.
struct GlobalAccess {
  std::uint64_t requests = 0;
  std::uint64_t sectors = 0;
  std::uint64_t lines = 0;
  std::uint64_t bytes_requested = 0;  // bytes the active lanes asked for
  std::uint64_t bytes_moved() const { return sectors * kSectorBytes; }
  // n accesses like these (a launch's tiles that all access memory the same way).
  GlobalAccess& operator*=(std::uint64_t n) {
    requests *= n;
    sectors *= n;
    lines *= n;
    bytes_requested *= n;
    return *this;
  }
  double sectors_per_request() const { return requests ? double(sectors) / double(requests) : 0.0; }
  // Fraction of moved bytes that were requested: nvprof's gld_efficiency / ncu's bytes-per-sector %.
  double efficiency() const { return sectors ? double(bytes_requested) / double(bytes_moved()) : 0.0; }
  GlobalAccess& operator+=(const GlobalAccess& o) {
    requests += o.requests;
    sectors += o.sectors;
    lines += o.lines;
    bytes_requested += o.bytes_requested;
    return *this;
  }
};

// Lane addresses of one warp instruction; std::nullopt marks an inactive lane. Addresses must be
// aligned to `width` (the hardware requires natural alignment).
inline GlobalAccess global_warp(const std::vector<std::optional<std::uint64_t>>& lanes, unsigned width) {
  check_width(width);
  if (lanes.size() > kWarp) throw std::invalid_argument("a warp has at most 32 lanes");
  std::set<std::uint64_t> sectors, lines;
  GlobalAccess a;
  for (const auto& addr : lanes) {
    if (!addr) continue;
    if (*addr % width != 0) throw std::invalid_argument("misaligned lane address");
    a.bytes_requested += width;
    // An aligned access of <= 16 bytes never straddles a 32-byte sector.
    sectors.insert(*addr / kSectorBytes);
    lines.insert(*addr / kLineBytes);
  }
  if (a.bytes_requested == 0) return a;  // a fully inactive warp issues no request
  a.requests = 1;
  a.sectors = sectors.size();
  a.lines = lines.size();
  return a;
}

// One warp-wide shared-memory access.
struct SharedAccess {
  std::uint64_t requests = 0;
  std::uint64_t wavefronts = 0;
  std::uint64_t ideal_wavefronts = 0;  // with no bank conflicts (1, 2 or 4 per request by width; a load of pairs half)
  double wavefronts_per_request() const { return requests ? double(wavefronts) / double(requests) : 0.0; }
  SharedAccess& operator*=(std::uint64_t n) {
    requests *= n;
    wavefronts *= n;
    ideal_wavefronts *= n;
    return *this;
  }
  // Extra wavefronts caused by bank conflicts (what ncu calls bank conflicts, approximately).
  std::uint64_t conflicts() const { return wavefronts - ideal_wavefronts; }
  SharedAccess& operator+=(const SharedAccess& o) {
    requests += o.requests;
    wavefronts += o.wavefronts;
    ideal_wavefronts += o.ideal_wavefronts;
    return *this;
  }
};

// Shared loads and stores follow the same bank rule but not the same packing (see the top of this file).
enum class SharedOp { kLoad, kStore };

// Whether no active lane n has a different address from lane n ^ mask (inactive or equal partners).
inline bool lanes_pair_up(const std::vector<std::optional<std::uint64_t>>& lanes, unsigned mask) {
  for (unsigned n = 0; n < lanes.size(); ++n) {
    const unsigned partner = n ^ mask;
    if (lanes[n] && partner < lanes.size() && lanes[partner] && *lanes[partner] != *lanes[n]) return false;
  }
  return true;
}

inline SharedAccess shared_warp(const std::vector<std::optional<std::uint64_t>>& lanes, unsigned width,
                                SharedOp op = SharedOp::kLoad) {
  check_width(width);
  if (lanes.size() > kWarp) throw std::invalid_argument("a warp has at most 32 lanes");
  // Lanes served per pass: 32 for <= 4-byte accesses, 16 for 8-byte, 8 for 16-byte; twice as many for
  // wide loads whose lanes pair up (n and n ^ 1, or n and n ^ 2, at one address).
  unsigned per_pass = width <= kBankBytes ? kWarp : kWarp / (width / kBankBytes);
  if (op == SharedOp::kLoad && width > kBankBytes && (lanes_pair_up(lanes, 1) || lanes_pair_up(lanes, 2)))
    per_pass *= 2;
  SharedAccess s;
  bool any = false;
  for (unsigned first = 0; first < kWarp; first += per_pass) {
    std::vector<std::set<std::uint64_t>> words_in_bank(kBanks);
    bool active = false;
    for (unsigned lane = first; lane < std::min<unsigned>(first + per_pass, unsigned(lanes.size())); ++lane) {
      if (!lanes[lane]) continue;
      const std::uint64_t addr = *lanes[lane];
      if (addr % width != 0) throw std::invalid_argument("misaligned lane address");
      active = true;
      const unsigned words = width <= kBankBytes ? 1 : width / kBankBytes;
      for (unsigned w = 0; w < words; ++w) {
        const std::uint64_t word = addr / kBankBytes + w;
        words_in_bank[word % kBanks].insert(word);
      }
    }
    if (!active) continue;
    any = true;
    std::uint64_t worst = 1;
    for (const auto& b : words_in_bank) worst = std::max<std::uint64_t>(worst, b.size());
    s.wavefronts += worst;
    s.ideal_wavefronts += 1;
  }
  if (any) s.requests = 1;
  return s;
}

// Lane address generator for warp `warp`: returns the byte address of `lane`, or nullopt if inactive.
using LaneAddress = std::function<std::optional<std::uint64_t>(std::uint64_t warp, unsigned lane)>;

inline std::vector<std::optional<std::uint64_t>> lanes_of(const LaneAddress& f, std::uint64_t warp) {
  std::vector<std::optional<std::uint64_t>> lanes(kWarp);
  for (unsigned l = 0; l < kWarp; ++l) lanes[l] = f(warp, l);
  return lanes;
}

// Sums global_warp over warps [0, warps).
inline GlobalAccess global_pattern(std::uint64_t warps, unsigned width, const LaneAddress& f) {
  GlobalAccess total;
  for (std::uint64_t w = 0; w < warps; ++w) total += global_warp(lanes_of(f, w), width);
  return total;
}

inline SharedAccess shared_pattern(std::uint64_t warps, unsigned width, const LaneAddress& f,
                                   SharedOp op = SharedOp::kLoad) {
  SharedAccess total;
  for (std::uint64_t w = 0; w < warps; ++w) total += shared_warp(lanes_of(f, w), width, op);
  return total;
}

// ---- Pattern helpers for the demos ---------------------------------------------------------------

// a[i + offset] for i = thread index, elements of `elem` bytes, base address 0 (cudaMalloc aligns to
// 256 B). Averaged over `warps` consecutive warps.
inline GlobalAccess offset_access(std::uint64_t offset, unsigned elem, std::uint64_t warps = 64) {
  return global_pattern(warps, elem, [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
    return (w * kWarp + l + offset) * elem;
  });
}

// a[i * stride] with elements of `elem` bytes.
inline GlobalAccess stride_access(std::uint64_t stride, unsigned elem, std::uint64_t warps = 64) {
  return global_pattern(warps, elem, [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
    return (w * kWarp + l) * stride * elem;
  });
}

// One field of `field_bytes` at `field_offset` inside an array of structs of `struct_bytes`.
inline GlobalAccess aos_field_access(unsigned struct_bytes, unsigned field_offset, unsigned field_bytes,
                                     std::uint64_t warps = 64) {
  return global_pattern(warps, field_bytes, [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
    return (w * kWarp + l) * struct_bytes + field_offset;
  });
}

// Contiguous accesses of `width` bytes per lane (the vector-width copy).
inline GlobalAccess vector_access(unsigned width, std::uint64_t warps = 64) {
  return global_pattern(warps, width, [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
    return (w * kWarp + l) * width;
  });
}

// A block of bx x by threads reading row-major matrix element (row, col) of a matrix with `ld`
// elements per row, where row/col come from the thread's position: row_major_read = true means
// thread x walks along a row (coalesced); false means thread x walks down a column (strided).
// Returns the average over the warps of one block at block origin (0, 0).
inline GlobalAccess tile_access(unsigned bx, unsigned by, std::uint64_t ld, unsigned elem, bool along_row) {
  const std::uint64_t threads = std::uint64_t(bx) * by;
  const std::uint64_t warps = (threads + kWarp - 1) / kWarp;
  return global_pattern(warps, elem, [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
    const std::uint64_t t = w * kWarp + l;
    if (t >= threads) return std::nullopt;
    const std::uint64_t x = t % bx, y = t / bx;
    return along_row ? (y * ld + x) * elem : (x * ld + y) * elem;
  });
}

// Shared tile of `rows` x (`cols` + `pad`) elements of `elem` bytes, accessed by one warp of a
// cols-wide block: along_row = lane walks a row (tile[r][lane]); otherwise down a column (tile[lane][c]).
// swizzle = XOR the column with the row (col ^ row) % cols, as the swizzled transpose does.
inline SharedAccess shared_tile_access(unsigned rows, unsigned cols, unsigned pad, unsigned elem, bool along_row,
                                       bool swizzle = false) {
  const std::uint64_t ld = std::uint64_t(cols) + pad;
  const std::uint64_t warps = along_row ? rows : cols;
  return shared_pattern(warps, elem, [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
    std::uint64_t r = along_row ? w : l, c = along_row ? l : w;
    if (r >= rows || c >= cols) return std::nullopt;
    if (swizzle) c = (c ^ r) % cols;
    return (r * ld + c) * elem;
  });
}

// A warp reading shared memory with `stride` elements of `elem` bytes between lanes.
inline SharedAccess shared_stride_access(unsigned stride, unsigned elem) {
  return shared_pattern(1, elem, [&](std::uint64_t, unsigned l) -> std::optional<std::uint64_t> {
    return std::uint64_t(l) * stride * elem;
  });
}

}  // namespace cml::model
