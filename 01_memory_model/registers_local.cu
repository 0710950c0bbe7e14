// registers_local: a per-thread array in registers vs in local memory, and what register caps do.
//
// Shows: the same arithmetic on a 32-element per-thread array (kernels/register_array.cuh):
//   registers               - every index known at compile time (unrolled loops): the array is registers;
//   local_runtime_index     - the loops left rolled, so the array is indexed at run time: registers cannot
//                             be addressed that way, the compiler puts the array in local memory;
//   registers_launch_bounds - the register kernel under __launch_bounds__(256, 8): at most 32 registers
//                             per thread, so ptxas spills part of the array to local memory;
//   registers_maxrregcount  - the register kernel from a translation unit built with -maxrregcount=24.
// Next to each timing: num_regs and local_bytes from cudaFuncGetAttributes (localSizeBytes: local memory
// per thread, spills and local arrays alike), so the spill is visible without a profiler. Bytes are the
// 4-byte seed read and the 4-byte result written per thread.
// Expected observation: registers shows local_bytes = 0; local_runtime_index shows local_bytes >= 128 and
// is measurably slower (vs_registers >= 1.5); the two capped builds show local_bytes > 0 and sit between.
// Measured on an H200 (2026-11-21): 0 B; 128 B and 13.8x slower; 40 B / 3.52x and 104 B / 10.3x.
// Run: build/bin/registers_local [--size 4M] [--csv registers_local.csv]
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/register_array.cuh"
#include "01_memory_model/kernels/register_array_maxrreg.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

using Launch = void (*)(const unsigned*, unsigned*, unsigned, cudaStream_t);

struct Buffers {
  unsigned n = 0;
  DeviceBuffer<unsigned> seeds, out;
  std::vector<std::uint32_t> expected;
};

Buffers& buffers(Context& ctx) {
  static std::unique_ptr<Buffers> b;
  if (!b) {
    if (ctx.size() >= (std::uint64_t{1} << 31)) throw CliError("--size must be below 2G threads");
    b = std::make_unique<Buffers>();
    b->n = static_cast<unsigned>(ctx.size());
    std::vector<std::uint32_t> seeds(b->n);
    for (unsigned i = 0; i < b->n; ++i) seeds[i] = i * 2654435761u;
    b->expected = register_array_reference(seeds);
    b->seeds = DeviceBuffer<unsigned>(b->n);
    b->out = DeviceBuffer<unsigned>(b->n);
    b->seeds.upload(seeds);
  }
  return *b;
}

double registers_ms = 0.0;  // this run's registers row, for the vs_registers column

void run(Context& ctx, Launch launch, const cudaFuncAttributes& attr, const std::string& params) {
  Buffers& b = buffers(ctx);
  Row& row = ctx.measure(
      params, b.n, 8.0 * b.n, [&](cudaStream_t s) { launch(b.seeds.data(), b.out.data(), b.n, s); },
      [&] { return compare_exact(b.out.download(), b.expected); }, [&](cudaStream_t s) { b.out.poison(s); });
  row.set("num_regs", attr.numRegs).set("local_bytes", static_cast<double>(attr.localSizeBytes));
  if (!row.verified) return;
  if (ctx.variant() == "registers") registers_ms = row.median_ms;
  else if (registers_ms > 0.0) row.set("vs_registers", row.median_ms / registers_ms);
}

Demo make_demo() {
  Demo d;
  d.name = "registers_local";
  d.summary =
      "A 32-element per-thread array indexed at compile time (registers) vs at run time (local memory),\n"
      "and the register version under __launch_bounds__ and -maxrregcount; num_regs and local_bytes from\n"
      "cudaFuncGetAttributes beside each timing. Expected: local_runtime_index has local_bytes > 0 and\n"
      "vs_registers >= 1.5; registers has local_bytes = 0.";
  d.size_meaning = "threads (one array each)";
  d.variants = {
      {"registers", "compile-time indices: the array stays in registers",
       [](Context& c) { run(c, launch_array_registers, function_attributes(array_registers_kernel), ""); }},
      {"local_runtime_index", "run-time indices: the array goes to local memory",
       [](Context& c) { run(c, launch_array_local, function_attributes(array_local_kernel), ""); }},
      {"registers_launch_bounds", "register kernel under __launch_bounds__(256, 8): <= 32 registers",
       [](Context& c) {
         run(c, launch_array_registers_bounded, function_attributes(array_registers_bounded_kernel),
             fmt::format("launch_bounds=256x{}", kBoundedMinBlocks));
       }},
      {"registers_maxrregcount", "register kernel compiled with -maxrregcount",
       [](Context& c) {
         run(c, launch_array_registers_maxrreg, array_registers_maxrreg_attributes(),
             fmt::format("maxrregcount={}", maxrreg_limit()));
       }},
  };
  // 4M threads: ~15 waves on an H200; the CPU reference (512 operations per thread) stays near a second.
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{4} << 20; };
  d.quick_size = std::uint64_t{1} << 20;
  d.device_bytes = [](std::uint64_t n) { return 8.0 * static_cast<double>(n) + 64e6; };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
