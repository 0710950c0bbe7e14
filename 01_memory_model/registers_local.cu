// registers_local: when does a per-thread array leave the registers, and what does local memory cost?
//
// Registers cannot be indexed at run time: an array whose indices are not known at compile time goes to
// local memory, which is device memory behind L1 and L2. Register caps (__launch_bounds__, -maxrregcount)
// push part of an array out the same way, as spills. Each row carries num_regs and local_bytes from
// cudaFuncGetAttributes, so a spill is visible without a profiler; every spilled value costs a store and a
// load where a register cost nothing.
//
// Run: build/bin/registers_local [--size 4M] [--csv registers_local.csv]
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/launch_bounds.hpp"
#include "01_memory_model/kernels/register_array.cuh"
#include "01_memory_model/kernels/register_array_maxrreg.hpp"
#include "common/harness.hpp"
#include "common/pattern.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

using Launch = void (*)(const unsigned*, unsigned*, unsigned, cudaStream_t);

void check_size(const Context& ctx) {
  if (ctx.size() >= (std::uint64_t{1} << 31)) throw CliError("--size must be below 2G threads");
}

// The run's buffers, made by its first variant: one random-looking seed per thread, every one different.
struct Buffers {
  unsigned n = 0;
  DeviceBuffer<unsigned> seeds, out;
  std::vector<std::uint32_t> expected;
  double registers_ms = 0.0;  // the registers row, for the vs_registers column

  explicit Buffers(const Context& ctx) {
    check_size(ctx);
    n = static_cast<unsigned>(ctx.size());
    std::vector<std::uint32_t> host(n);
    for (unsigned i = 0; i < n; ++i) host[i] = fmix32(i);
    expected = register_array_reference(host);
    seeds = DeviceBuffer<unsigned>(n);
    out = DeviceBuffer<unsigned>(n);
    seeds.upload(host);
  }
};

Row& run(Context& ctx, Launch launch, const cudaFuncAttributes& attr, const std::string& params) {
  Buffers& b = ctx.state<Buffers>(ctx);
  Row& row = ctx.measure(
      params, b.n, 8.0 * b.n, [&](cudaStream_t s) { launch(b.seeds.data(), b.out.data(), b.n, s); },
      [&] { return compare_exact(b.out.download(), b.expected); }, [&](cudaStream_t s) { b.out.poison(s); });
  row.set("num_regs", attr.numRegs).set("local_bytes", static_cast<double>(attr.localSizeBytes));
  if (!row.verified) return row;
  if (ctx.variant() == "registers") b.registers_ms = row.median_ms;
  else if (b.registers_ms > 0.0) row.set("vs_registers", row.median_ms / b.registers_ms);
  return row;
}

// The bounded kernel, with the register cap its launch bounds imply on this GPU beside it.
void registers_launch_bounds(Context& ctx) {
  const DeviceInfo& dev = ctx.device();
  const LaunchBoundsCap cap = launch_bounds_register_cap(kRegBlock, kBoundedMinBlocks, dev.regs_per_sm,
                                                         dev.max_threads_per_sm);
  if (!cap.honoured)
    ctx.note(fmt::format("an SM of this GPU holds {} threads, fewer than {} blocks of {}: ptxas drops the promise "
                         "of __launch_bounds__({}, {}) (\".minnctapersm will be ignored\") and the kernel keeps the "
                         "registers it wants",
                         dev.max_threads_per_sm, kBoundedMinBlocks, kRegBlock, kRegBlock, kBoundedMinBlocks));
  run(ctx, launch_array_registers_bounded, function_attributes(array_registers_bounded_kernel),
      fmt::format("launch_bounds=256x{}", kBoundedMinBlocks))
      .set("max_threads_per_sm", dev.max_threads_per_sm)
      .set("bound_blocks_per_sm", cap.blocks_per_sm)
      .set("bound_reg_cap", cap.registers_per_thread)
      .set("bound_honoured", cap.honoured ? 1 : 0);
}

// Claims about the spill under __launch_bounds__ need the promise to bind as written: on a GPU whose SMs
// cannot hold kBoundedMinBlocks blocks, ptxas may leave enough registers that nothing spills. For a run
// recorded before the bound_* columns existed, the promise counts as binding if it lowered num_regs.
void require_bound_honoured(const RunRows& r) {
  const Row& row = r.only("registers_launch_bounds");
  if (row.get("bound_honoured") != nullptr) {
    if (RunRows::value(row, "bound_honoured") != 0.0) return;
    throw NotApplicable(fmt::format(
        "an SM of this GPU holds {:g} threads, fewer than {} blocks of {}: ptxas drops the promise of "
        "__launch_bounds__ and lets a thread keep up to {:g} registers, so the array need not spill",
        RunRows::value(row, "max_threads_per_sm"), kBoundedMinBlocks, kRegBlock,
        RunRows::value(row, "bound_reg_cap")));
  }
  if (!(RunRows::value(row, "num_regs") < r.only_value("registers", "num_regs")))
    throw NotApplicable("the launch bounds did not lower the register count on this GPU");
}

Demo make_demo() {
  Demo d;
  d.name = "registers_local";
  d.summary =
      "A 32-element per-thread array indexed at compile time (registers) vs at run time (local memory),\n"
      "and the register version under __launch_bounds__ and -maxrregcount; num_regs and local_bytes from\n"
      "cudaFuncGetAttributes beside each timing.";
  d.size_meaning = "threads (one array each)";
  d.variants = {
      {"registers", "compile-time indices: the array stays in registers",
       [](Context& c) { run(c, launch_array_registers, function_attributes(array_registers_kernel), ""); }},
      {"local_runtime_index", "run-time indices: the array goes to local memory",
       [](Context& c) { run(c, launch_array_local, function_attributes(array_local_kernel), ""); }},
      {"registers_launch_bounds", "register kernel under __launch_bounds__(256, 8): <= 32 registers where 8 blocks fit",
       registers_launch_bounds},
      {"registers_maxrregcount", "register kernel compiled with -maxrregcount",
       [](Context& c) {
         run(c, launch_array_registers_maxrreg, array_registers_maxrreg_attributes(),
             fmt::format("maxrregcount={}", maxrreg_limit()));
       }},
  };
  const auto col = [](const char* variant, const char* column) {
    return [variant, column](const RunRows& r) { return r.only_value(variant, column); };
  };
  d.claims = {
      Claim{"registers_need_no_local_memory",
            "With every index known at compile time, the 32-element array needs no local memory at all.",
            "local_bytes registers", Bound::at_most(0),
            "32 live values fit in the registers a thread may use; any local memory means the compiler did not "
            "keep the array in registers",
            ClaimKind::device, col("registers", "local_bytes")},
      Claim{"runtime_index_goes_local",
            "Indexed at run time, the whole array lives in local memory.",
            "local_bytes local_runtime_index / (32 x 4 bytes)", Bound::at_least(1),
            "registers cannot be addressed by a run-time index, so all 128 bytes of the array go to local memory",
            ClaimKind::device,
            [col](const RunRows& r) {
              return col("local_runtime_index", "local_bytes")(r) / (kRegArray * sizeof(unsigned));
            }},
      only_ratio_claim("local_array_is_slower",
                       "The array in local memory makes the same arithmetic at least twice as slow as the "
                       "array in registers.",
                       "local_runtime_index", "registers", "median_ms", Bound::at_least(2.0),
                       "every element access becomes a load or store through L1 where a register cost "
                       "nothing; 2x is far below the cost of 32 x 16 such round trips per thread"),
      Claim{"launch_bounds_cap_respected",
            "ptxas keeps the bounded kernel within the registers per thread its launch bounds leave on this GPU.",
            "num_regs registers_launch_bounds / bound_reg_cap registers_launch_bounds", Bound::at_most(1),
            "the cap is the register file divided among the promised blocks (among the warps of one block where "
            "the SM cannot hold them all and ptxas drops the promise), rounded down to the allocation unit; "
            "ptxas must not exceed it",
            ClaimKind::device,
            [col](const RunRows& r) {
              if (r.only("registers_launch_bounds").get("bound_reg_cap") == nullptr)
                throw NotApplicable("the run did not record the register cap of its launch bounds");
              return col("registers_launch_bounds", "num_regs")(r) / col("registers_launch_bounds", "bound_reg_cap")(r);
            }},
      Claim{"launch_bounds_spill",
            "Where the SM can hold all 8 promised blocks, the bounded kernel spills part of the array to local "
            "memory.",
            "local_bytes registers_launch_bounds", Bound::at_least(4),
            "32 registers cannot hold 32 live values plus the loop's bookkeeping; not applicable where the "
            "SM holds fewer than 2048 threads and ptxas drops the promise",
            ClaimKind::device,
            [col](const RunRows& r) {
              require_bound_honoured(r);
              return col("registers_launch_bounds", "local_bytes")(r);
            }},
      Claim{"partial_spill_cheaper_than_local",
            "Spilling part of the array under the launch bounds costs well under half of what moving the whole "
            "array to local memory costs.",
            "median_ms registers_launch_bounds / median_ms local_runtime_index", Bound::at_most(0.5),
            "only the spilled values make round trips to local memory, the rest stay in registers; not "
            "applicable where the launch bounds do not force a spill",
            ClaimKind::device,
            [col](const RunRows& r) {
              require_bound_honoured(r);
              return col("registers_launch_bounds", "median_ms")(r) / col("local_runtime_index", "median_ms")(r);
            }},
      only_ratio_claim(
          "maxrregcount_spill_is_slower",
          fmt::format("Capping the kernel at {} registers with -maxrregcount spills most of the array and makes it "
                      "at least twice as slow as the register version.",
                      maxrreg_limit()),
          "registers_maxrregcount", "registers", "median_ms", Bound::at_least(2.0),
          fmt::format("{} registers cannot hold a {}-element array on any GPU, so most of it round-trips through "
                      "local memory; 2x is far below that cost",
                      maxrreg_limit(), kRegArray)),
  };
  // 4M threads: many waves of blocks on any GPU; the CPU reference (512 operations per thread) stays near a second.
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{4} << 20; };
  d.quick_size = std::uint64_t{1} << 20;
  d.device_bytes = [](std::uint64_t n) { return 8.0 * static_cast<double>(n); };
  d.check_options = check_size;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
