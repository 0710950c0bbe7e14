// bandwidth_ceiling: how fast can this GPU's memory move data at all?
//
// Every later demo states its bandwidth as a share of this ceiling, so the ceiling must be DRAM's, not a
// cache's: buffers of 8x the L2, bytes counted as read + written. cudaMemcpy D2D is the reference a program
// gets for free; the copy kernels show how little a kernel needs to match it (one float4 per thread) and
// that piling up more loads in flight per thread buys nothing once DRAM is saturated.
//
// Run: build/bin/bandwidth_ceiling [--size 1G] [--csv ceiling.csv]
#include <cstdint>

#include "common/copy_bench.hpp"
#include "common/copy_kernels.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;

Demo make_demo() {
  Demo d;
  d.name = "bandwidth_ceiling";
  d.summary =
      "cudaMemcpy D2D and coalesced copy kernels at 8x L2: the DRAM bandwidth every later demo is compared\n"
      "against, and how many bytes each thread must keep in flight to reach it.";
  d.size_meaning = "floats per buffer (default 8x L2 bytes / 4)";
  d.variants = {
      {"memcpy_d2d", "cudaMemcpyAsync device-to-device", [](Context& c) { measure_copy(c, "", launch_memcpy_d2d); }},
      {"copy_scalar", "one float per thread", [](Context& c) { measure_copy(c, "", launch_copy_scalar); }},
      {"copy_vec4", "one float4 (16 bytes) per thread", [](Context& c) { measure_copy(c, "", launch_copy_vec4); }},
      {"copy_vec4_ilp4", "four float4 loads in flight per thread",
       [](Context& c) { measure_copy(c, "", launch_copy_vec4_ilp<4>); }},
      {"copy_vec4_ilp8", "eight float4 loads in flight per thread",
       [](Context& c) { measure_copy(c, "", launch_copy_vec4_ilp<8>); }},
  };
  d.claims = {
      ratio_claim("vec4_reaches_memcpy", "One float4 (16 bytes) per thread copies as fast as cudaMemcpy D2D.",
                  {"copy_vec4"}, {"memcpy_d2d"}, Bound::at_least(0.95),
                  "16 bytes in flight per thread keep enough requests outstanding to saturate DRAM; 5% allows "
                  "for run-to-run noise"),
      ratio_claim("scalar_falls_short", "One float (4 bytes) per thread stays clearly below one float4 per thread.",
                  {"copy_scalar"}, {"copy_vec4"}, Bound::at_most(0.9),
                  "a quarter of the bytes in flight per thread cannot cover DRAM latency on a GPU with this much "
                  "bandwidth; the gap is smaller on GPUs with less bandwidth per SM"),
      ratio_claim("more_ilp_buys_nothing", "Eight float4 loads in flight per thread are no faster than one.",
                  {"copy_vec4_ilp8"}, {"copy_vec4"}, Bound::at_most(1.03),
                  "once one float4 per thread saturates DRAM, more loads per thread only mean fewer threads; "
                  "3% is the noise between two copies"),
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  // Two buffers, and the in-run ceiling at the same size.
  d.device_bytes = [](std::uint64_t n) {
    const double buffer = static_cast<double>(n) * sizeof(float);
    return DemoMemory::with_ceiling(2.0 * buffer, buffer);
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
