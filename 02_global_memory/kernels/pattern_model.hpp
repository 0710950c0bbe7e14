// The access model (common/access_model.hpp) applied to whole launches, and the model columns every
// table of this chapter prints next to its measurement:
//
//   vs_ceiling                measured GB/s / the copy ceiling measured in the same run
//   model_ld_sectors_per_req  32-byte sectors one warp-wide load touches (ncu:
//                             l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio)
//   model_st_sectors_per_req  the same for stores (..._op_st.ratio)
//   model_efficiency          bytes the lanes asked for / bytes of the sectors their requests touch,
//                             over all requests (nvprof's gld/gst_efficiency, loads and stores together)
//   model_mb_moved            distinct sectors the launch touches x 32 B, in MB: what DRAM must move at
//                             least. Compare with "MB moved", the bytes the kernel asks for.
//
// Sectors per request is L1<->L2 traffic per instruction; model_mb_moved is DRAM traffic over the
// whole launch. They differ whenever neighbouring warps share sectors (a misaligned warp's fifth sector
// is the next warp's first), which is why a pattern can waste L2 bandwidth without wasting DRAM bandwidth.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common/access_model.hpp"
#include "common/output.hpp"

namespace cml::ch02 {

// Distinct 32-byte sectors touched by `count` accesses of `elem` bytes at element indices
// first + k * stride (k < count), the array starting at a 256-byte aligned address (cudaMalloc).
// Closed form; tests/02_global_memory checks it against brute-force counting.
inline std::uint64_t distinct_sectors(std::uint64_t first, std::uint64_t count, std::uint64_t stride, unsigned elem) {
  model::check_width(elem);
  if (count == 0) return 0;
  if (stride == 0) throw std::invalid_argument("distinct_sectors: stride must be >= 1");
  // An aligned access of <= 16 bytes lies inside one sector; accesses >= 32 bytes apart never share one.
  if (stride * elem >= model::kSectorBytes) return count;
  // Closer than a sector: no sector between the first and the last access is skipped.
  const std::uint64_t first_byte = first * elem;
  const std::uint64_t last_byte = (first + (count - 1) * stride) * elem + elem - 1;
  return last_byte / model::kSectorBytes - first_byte / model::kSectorBytes + 1;
}

// One array's share of a launch: `requests` warp-wide instructions shaped like `per_warp` (the model
// averaged over a sample of warps) that together touch `sectors` distinct sectors.
struct ArrayTraffic {
  bool store = false;
  model::GlobalAccess per_warp;
  double requests = 0.0;
  std::uint64_t sectors = 0;
};

inline ArrayTraffic load_traffic(const model::GlobalAccess& per_warp, double requests, std::uint64_t sectors) {
  return {false, per_warp, requests, sectors};
}
inline ArrayTraffic store_traffic(const model::GlobalAccess& per_warp, double requests, std::uint64_t sectors) {
  return {true, per_warp, requests, sectors};
}

// Warp-wide requests for `elements` accesses made 32 consecutive elements per warp instruction.
inline double warp_requests(std::uint64_t elements) {
  return static_cast<double>((elements + model::kWarp - 1) / model::kWarp);
}

struct LaunchModel {
  double ld_sectors_per_req = kNaN;
  double st_sectors_per_req = kNaN;
  double efficiency = kNaN;
  double bytes_moved = 0.0;  // distinct sectors x 32
};

inline LaunchModel summarize_traffic(const std::vector<ArrayTraffic>& arrays) {
  double ld_req = 0, ld_sec = 0, st_req = 0, st_sec = 0, asked = 0, sector_bytes = 0;
  LaunchModel m;
  for (const auto& a : arrays) {
    const double spr = a.per_warp.sectors_per_request();
    const double asked_per_req =
        a.per_warp.requests ? static_cast<double>(a.per_warp.bytes_requested) / a.per_warp.requests : 0.0;
    (a.store ? st_req : ld_req) += a.requests;
    (a.store ? st_sec : ld_sec) += a.requests * spr;
    asked += a.requests * asked_per_req;
    sector_bytes += a.requests * spr * model::kSectorBytes;
    m.bytes_moved += static_cast<double>(a.sectors) * model::kSectorBytes;
  }
  if (ld_req > 0) m.ld_sectors_per_req = ld_sec / ld_req;
  if (st_req > 0) m.st_sectors_per_req = st_sec / st_req;
  if (sector_bytes > 0) m.efficiency = asked / sector_bytes;
  return m;
}

// Writes the chapter's model columns (see the top of this file) into a result row.
// Values that do not apply (no stores, an unverified and so untimed row) are left empty.
inline void set_model_columns(Row& row, double ceiling_gb_per_s, const std::vector<ArrayTraffic>& arrays) {
  const LaunchModel m = summarize_traffic(arrays);
  auto set = [&row](const char* key, double v) {
    if (std::isfinite(v)) row.set(key, v);
  };
  set("vs_ceiling", ceiling_gb_per_s > 0 ? row.gb_per_s / ceiling_gb_per_s : kNaN);
  set("model_ld_sectors_per_req", m.ld_sectors_per_req);
  set("model_st_sectors_per_req", m.st_sectors_per_req);
  set("model_efficiency", m.efficiency);
  set("model_mb_moved", m.bytes_moved / 1e6);
}

}  // namespace cml::ch02
