// tma_copy: can the Tensor Memory Accelerator copy device memory at the ceiling with one thread per block
// (compute capability 9.0+)?
//
// With the TMA no thread touches the data: one thread per block keeps a ring of shared-memory stages busy
// with bulk loads and stores, each stage's arrival signalled by an mbarrier. The request size sweeps from
// 256 bytes to 32 KiB over the same 64 KiB of ring, so only the number of requests in flight changes;
// tensor-map boxes, cp.async staging and one request per block show what the ring is worth. cudaMemcpy D2D
// and the float4 copy kernel are the baselines; every output is compared bit for bit with the input.
//
// Run: build/bin/tma_copy [--variant bulk_256 --variant bulk_16k]
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/tma_copy_kernels.cuh"
#include "common/copy_bench.hpp"
#include "common/copy_kernels.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::tma;

// A ring too small for two requests of this size (kRingBytes lowered, as chapter 03 suggests) waives the variant.
void require_two_stages(unsigned request_bytes) {
  if (const std::string why = ring_request_unsupported(request_bytes); !why.empty()) throw Waived(why);
}

// A copy through the ring in `chunk`-byte requests: `launch(in, out, bytes, stream)` moves the bytes, and `how`
// ends the row's params (who moves them, how the requests are handed out).
template <class Launch>
void ring_copy(Context& ctx, unsigned chunk, const std::string& how, Launch launch) {
  require_two_stages(chunk);
  const BulkPlan p = bulk_plan(chunk);
  Row& row = measure_copy(ctx, fmt::format("request={}B stages={} {}", chunk, p.stages, how),
                          [launch](const float* in, float* out, std::size_t n, cudaStream_t s) {
                            launch(in, out, n * sizeof(float), s);
                          });
  row.set("request_bytes", double(chunk));
  row.set("stages", double(p.stages));
}

void bulk(Context& ctx, unsigned chunk, Schedule schedule = Schedule::kTickets) {
  ring_copy(ctx, chunk, schedule == Schedule::kStatic ? "static-split" : "tickets",
            [chunk, schedule](const float* in, float* out, std::size_t bytes, cudaStream_t s) {
              launch_tma_bulk_copy(in, out, bytes, chunk, s, 0, schedule);
            });
}

// The bulk variants, smallest request first: one table for the variants and the claims.
const std::vector<std::pair<const char*, unsigned>> kBulk = {
    {"bulk_256", 256}, {"bulk_1k", 1024}, {"bulk_4k", 4096}, {"bulk_16k", 16384}, {"bulk_32k", 32768}};

double gb(const RunRows& r, const std::string& v) { return r.only_value(v, "gb_per_s"); }
double best_bulk(const RunRows& r, const char* column) {
  std::vector<double> v;
  for (const auto& [name, chunk] : kBulk) v.push_back(r.only_value(name, column));
  return max_of(v);
}

Demo make_demo() {
  Demo d;
  d.name = "tma_copy";
  d.summary =
      "Device-to-device copies by the Tensor Memory Accelerator: 1D bulk copies with requests of 256 B to\n"
      "32 KiB (the same bytes in flight at every size) and 64 x 64 tensor boxes, against cudaMemcpy D2D, a\n"
      "float4 copy kernel and the same ring filled by the threads' cp.async in the same run. Needs compute\n"
      "capability 9.0 or newer.";
  d.size_meaning = "floats per buffer (default 8x L2 bytes / 4)";
  d.variants = {
      {"memcpy_d2d", "baseline: cudaMemcpyAsync device-to-device",
       [](Context& ctx) { measure_copy(ctx, "", launch_memcpy_d2d); }},
      {"copy_vec4", "baseline: one float4 per thread (the suite's copy kernel)",
       [](Context& ctx) { measure_copy(ctx, "", launch_copy_vec4); }},
  };
  for (const auto& [name, chunk] : kBulk)
    d.variants.push_back({name,
                          fmt::format("1D bulk copies of {} bytes through a {} KiB ring per block", chunk,
                                      kRingBytes / 1024),
                          [chunk = chunk](Context& ctx) { bulk(ctx, chunk); }});
  d.variants.push_back({"bulk_16k_static",
                        "bulk_16k with the requests split among the blocks in advance instead of taken by ticket",
                        [](Context& ctx) { bulk(ctx, 16384, Schedule::kStatic); }});
  d.variants.push_back({"tensor_64x64", "64 x 64-float boxes through tensor maps (the buffer as a 4096-column matrix)",
                        [](Context& ctx) {
                          require_two_stages(kTensorBoxBytes);
                          Row& row = measure_copy(ctx, "box=64x64 cols=4096",
                                                  [](const float* in, float* out, std::size_t n, cudaStream_t s) {
                                                    launch_tma_tensor_copy(in, out, n, s);
                                                  });
                          row.set("request_bytes", double(kTensorBoxBytes));
                          row.set("stages", double(kRingBytes / kTensorBoxBytes));
                        }});
  d.variants.push_back({"cp_async_16k",
                        "bulk_16k's ring and tickets without the TMA: 256 threads per block stage each request with "
                        "cp.async",
                        [](Context& ctx) {
                          ring_copy(ctx, 16384, fmt::format("tickets threads={}", kCpAsyncThreads),
                                    [](const float* in, float* out, std::size_t bytes, cudaStream_t s) {
                                      launch_cp_async_ring_copy(in, out, bytes, 16384, s);
                                    });
                        }});
  for (const auto& [name, per_sm] : {std::pair{"bulk_16k_grid", kGridBlocksPerSm}, std::pair{"bulk_16k_grid_full", 0u}})
    d.variants.push_back(
        {name,
         per_sm ? fmt::format("one 16 KiB bulk request per block, at most {} blocks per SM, no ring", per_sm)
                : std::string("bulk_16k_grid with as many blocks per SM as fit"),
         [per_sm = per_sm](Context& ctx) {
           const std::string cap = per_sm ? fmt::format("blocks/SM<={}", per_sm) : std::string("blocks/SM=max");
           Row& row = measure_copy(ctx, fmt::format("request=16384B {} grid", cap),
                                   [per_sm](const float* in, float* out, std::size_t n, cudaStream_t s) {
                                     launch_tma_bulk_grid_copy(in, out, n * sizeof(float), 16384, s, per_sm);
                                   });
           row.set("request_bytes", 16384.0);
           row.set("blocks_per_sm", double(residency(tma_bulk_grid_kernel, 32, bulk_grid_smem(16384, per_sm)).per_sm));
         }});
  d.claims = {
      Claim{"bulk_copy_reaches_memcpy",
            "With 16 KiB requests (four stages in the ring), 1D bulk copies run as fast as cudaMemcpy D2D of the "
            "same buffers.",
            "vs_memcpy of bulk_16k", Bound::at_least(0.95),
            "both move the same bytes and four 16 KiB stages keep 64 KiB per block in flight, more than DRAM "
            "latency needs; 5% allows for run-to-run noise. One size, not the best of the sweep: 32 KiB requests "
            "leave the ring two stages and can fall short",
            ClaimKind::device,
            [](const RunRows& r) { return r.only_value("bulk_16k", "vs_memcpy"); }},
      Claim{"tensor_copy_reaches_memcpy",
            "Tensor-map copies of 64 x 64 boxes run as fast as cudaMemcpy D2D.", "vs_memcpy of tensor_64x64",
            Bound::at_least(0.95),
            "each box is 64 rows of 256 contiguous bytes, whole 32-byte sectors, 16 KiB per request; 5% allows for "
            "run-to-run noise",
            ClaimKind::device, [](const RunRows& r) { return r.only_value("tensor_64x64", "vs_memcpy"); }},
      Claim{"tickets_beat_static_split",
            "Taking 16 KiB requests by ticket copies faster than splitting them among the blocks in advance.",
            "GB/s bulk_16k / GB/s bulk_16k_static", Bound::at_least(1.02),
            "the SMs do not stream at one rate: with a static split the grid finishes when its slowest block does, "
            "and the others idle meanwhile; 2% is above the run-to-run noise of either",
            ClaimKind::device, [](const RunRows& r) { return gb(r, "bulk_16k") / gb(r, "bulk_16k_static"); }},
      Claim{"small_requests_do_not_pay",
            "256-byte bulk requests copy clearly slower than the best request size, with the same bytes in flight.",
            "GB/s bulk_256 / max GB/s over bulk_256 .. bulk_32k", Bound::at_most(0.8),
            "one thread issues every request of its block and waits on an mbarrier per request: at 256 B it must "
            "handle 64 times as many as at 16 KiB, and that issue rate, not DRAM, sets the pace",
            ClaimKind::device, [](const RunRows& r) { return gb(r, "bulk_256") / best_bulk(r, "gb_per_s"); }},
      Claim{"tma_stages_like_threads",
            "One thread driving the TMA copies through the ring as fast as 256 threads staging the same requests "
            "with cp.async.",
            "GB/s bulk_16k / GB/s cp_async_16k", Bound::between(0.97, 1.03),
            "both move every byte DRAM to shared memory to DRAM with the same 64 KiB in flight per SM, so DRAM sets "
            "the pace of both; what the TMA saves is the threads' instructions, not time. 3% allows for run-to-run "
            "noise",
            ClaimKind::device, [](const RunRows& r) { return gb(r, "bulk_16k") / gb(r, "cp_async_16k"); }},
      Claim{"capped_grid_beats_full",
            fmt::format("One-request blocks copy faster with at most {} on an SM at once than with as many as fit.",
                        kGridBlocksPerSm),
            "GB/s bulk_16k_grid / GB/s bulk_16k_grid_full", Bound::at_least(1.01),
            fmt::format("{} KiB of 16 KiB requests per SM are already enough bytes in flight to keep DRAM busy; more "
                        "blocks only spread the requests in flight over more of memory at once. 1% is above the "
                        "run-to-run noise of either",
                        16 * kGridBlocksPerSm),
            ClaimKind::device, [](const RunRows& r) { return gb(r, "bulk_16k_grid") / gb(r, "bulk_16k_grid_full"); }},
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = (std::uint64_t{1} << 20) + 3;  // 4 MB, a tail of 12 bytes below one bulk copy
  d.device_bytes = [](std::uint64_t n) {
    const double buffer = static_cast<double>(n) * sizeof(float);
    return DemoMemory::with_ceiling(2.0 * buffer, buffer);  // measure_copy: the ceiling at the same size
  };
  d.waive_reason = [](const DeviceInfo& dev) { return tma_unsupported(dev.cc_major, dev.cc_minor); };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
