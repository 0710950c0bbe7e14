// shared_carveout: which function attributes does the driver obey, and which are only hints?
//
// Dynamic shared memory above 48 KiB is a requirement: without cudaFuncAttributeMaxDynamicSharedMemorySize
// the launch is refused (deliberately, announced for compute-sanitizer). The L1/shared carveout and the
// legacy cudaFuncSetCacheConfig are preferences the driver overrides when a kernel needs more shared
// memory, yet applies to one that needs almost none: a 64 KiB working set then falls out of L1. Each
// setting gets a grid sized after it, so no row times a partial second wave instead of the L1.
//
// Run: build/bin/shared_carveout [--size 64M] [--csv shared_carveout.csv]
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/reverse_chunks.cuh"
#include "01_memory_model/kernels/stream_sum.cuh"
#include "common/access_model.hpp"
#include "common/harness.hpp"
#include "common/pattern.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

constexpr std::size_t kBigSmemBytes = 100 * 1024;  // over the 48 KiB a launch gets without opting in
constexpr std::size_t kL1WorkingSet = 64 * 1024;
constexpr int kL1Passes = 64;

// ---- dynamic shared memory above 48 KiB -------------------------------------------------------------

// Shared wavefronts per warp request when lane l reads buf[len - 1 - j] (j = warp * 32 + l): 32
// consecutive words in reverse order, one per bank, so no conflict.
double reversed_read_wavefronts() {
  const std::uint64_t len = kBigSmemBytes / sizeof(float);
  return cml::model::shared_pattern(64, 4, [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
           return (len - 1 - (w * 32 + l)) * 4;
         })
      .wavefronts_per_request();
}

void dynamic_smem_over_48k(Context& ctx) {
  const DeviceInfo& dev = ctx.device();
  const cudaFuncAttributes before = reverse_chunks_attributes();
  if (dev.shared_per_block_optin < kBigSmemBytes + before.sharedSizeBytes)
    throw Waived(fmt::format("this GPU allows at most {} of shared memory per block",
                             format_bytes(static_cast<double>(dev.shared_per_block_optin))));
  const auto chunk = static_cast<unsigned>(kBigSmemBytes / sizeof(float));
  const std::size_t n = ctx.size();
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = random_float(i);
  const std::vector<float> expected = reverse_chunks_reference(host, chunk);
  DeviceBuffer<float> in(n), out(n);
  in.upload(host);
  const cudaStream_t s = ctx.stream();
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(float);

  // 1. No opt-in: the launch itself is refused, nothing runs.
  out.poison(s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::string outcome = "ok";
  // Two failing calls: the launch, and the cudaGetLastError in the launcher's check that reads it back.
  announce_expected_api_error("launch with 100 KiB of dynamic shared memory and no opt-in attribute", 2);
  try {
    launch_reverse_chunks(in.data(), out.data(), n, chunk, 2u * dev.sm_count, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  } catch (const CudaError& e) {
    outcome = fmt::format("failed: {}", cudaGetErrorName(e.code()));
  }
  const bool refused = outcome != "ok";
  bool ok = ctx.check(compare_value(refused, true, "launch refused"), "attribute=default");
  std::vector<float> poisoned(n);
  std::memset(poisoned.data(), kPoisonByte, n * sizeof(float));
  ok = ctx.check(compare_exact(out.download(), poisoned), "output untouched by the refused launch") && ok;
  ctx.add_row("attribute=default", n, ok)
      .set("dynamic_smem_bytes", static_cast<double>(kBigSmemBytes))
      .set("max_dynamic_smem_attr", before.maxDynamicSharedSizeBytes)
      .set("carveout", "default")
      .set("launch", outcome);

  // [doc:carveout_opt_in]
  // 2. Opt in (a requirement: the attribute is what makes the launch legal), then 3. also ask for the
  //    largest L1 (a hint: the driver still grants the 100 KiB the kernel needs).
  allow_reverse_chunks_smem(kBigSmemBytes);
  for (const bool max_l1 : {false, true}) {
    if (max_l1)
      CUDA_CHECK(cudaFuncSetAttribute(reverse_chunks_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxL1));
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reverse_chunks_kernel, kReverseBlock,
                                                             kBigSmemBytes));
    // [/doc:carveout_opt_in]
    const unsigned max_blocks = static_cast<unsigned>(dev.sm_count * (per_sm > 0 ? per_sm : 1));
    Row& row = ctx.measure(
        max_l1 ? "attribute=set,carveout=0" : "attribute=set", n, bytes,
        [&](cudaStream_t st) { launch_reverse_chunks(in.data(), out.data(), n, chunk, max_blocks, st); },
        [&] { return compare_exact(out.download(), expected); }, [&](cudaStream_t st) { out.poison(st); });
    row.set("dynamic_smem_bytes", static_cast<double>(kBigSmemBytes))
        .set("max_dynamic_smem_attr", reverse_chunks_attributes().maxDynamicSharedSizeBytes)
        .set("carveout", max_l1 ? "0" : "default")
        .set("launch", "ok")
        .set("blocks_per_sm", per_sm)
        .set("model_ld_sectors_per_req", cml::model::vector_access(4).sectors_per_request())
        .set("model_wavefronts_per_req", reversed_read_wavefronts());
  }
}

// ---- L1 capacity under the carveout -----------------------------------------------------------------

struct L1Probe {
  std::vector<std::uint32_t> words;
  DeviceBuffer<std::uint32_t> buf;
  StreamLayout layout;
  DeviceBuffer<unsigned> sums;
  std::vector<std::uint32_t> expected;
  int blocks_per_sm = 0;
};

L1Probe make_probe() {
  L1Probe p;
  const std::size_t n4 = kL1WorkingSet / sizeof(uint4);
  p.words.resize(4 * n4);
  for (std::size_t i = 0; i < p.words.size(); ++i) p.words[i] = pattern_word(i, 0xCB);
  p.buf = DeviceBuffer<std::uint32_t>(p.words.size());
  p.buf.upload(p.words);
  return p;
}

// Sizes the grid after each setting, as the occupancy API sees it then: one wave of blocks on every SM. A grid
// sized once before any setting may not fit in one wave any more (at carveout 0 the smallest shared-memory
// configuration holds one block fewer, each block carrying 1 KiB reserved by the system), and its last,
// partial wave would be timed as if it were the L1.
template <int Tag>
void fit_probe(const Context& ctx, L1Probe& p) {
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&p.blocks_per_sm, stream_sum_kernel<Tag>, kStreamBlock, 0));
  const unsigned grid = static_cast<unsigned>(ctx.device().sm_count * (p.blocks_per_sm > 0 ? p.blocks_per_sm : 1));
  if (p.layout.grid == grid) return;
  p.layout = make_stream_layout(p.words.size() / 4, grid, true);
  p.expected = stream_sum_reference(p.words, p.layout, kL1Passes);
  p.sums = DeviceBuffer<unsigned>(p.layout.grid);
}

template <int Tag>
Row& measure_probe(Context& ctx, L1Probe& p, const std::string& params) {
  fit_probe<Tag>(ctx, p);
  const auto* buf4 = reinterpret_cast<const uint4*>(p.buf.data());
  Row& row = ctx.measure(
      params, kL1WorkingSet, stream_bytes(p.layout, kL1Passes),
      [&](cudaStream_t s) { launch_stream_sum<Tag>(buf4, p.layout, kL1Passes, p.sums.data(), s); },
      [&] { return compare_exact(p.sums.download(), p.expected); }, [&](cudaStream_t s) { p.sums.poison(s); });
  row.set("blocks_per_sm", p.blocks_per_sm).set("grid_blocks", static_cast<double>(p.layout.grid));
  return row;
}

// The default row comes first, before this copy of the kernel has ever had a carveout set.
void carveout_l1_capacity(Context& ctx) {
  L1Probe p = make_probe();
  std::vector<std::size_t> row_index;
  std::size_t max_l1_row = SIZE_MAX;
  for (const int carveout : {-1, 0, 25, 50, 75, 100}) {
    if (carveout >= 0)
      CUDA_CHECK(cudaFuncSetAttribute(stream_sum_kernel<1>, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, stream_sum_kernel<1>));
    const std::string text = carveout < 0 ? "default" : std::to_string(carveout);
    Row& row = measure_probe<1>(ctx, p, "carveout=" + text);
    row.set("carveout", text)
        .set("carveout_readback", attr.preferredShmemCarveout)
        .set("working_set_bytes", 65536.0)
        .set("model_ld_sectors_per_req", cml::model::vector_access(16).sectors_per_request());
    if (!row.verified) continue;
    row_index.push_back(ctx.rows().size() - 1);
    if (carveout == 0) max_l1_row = ctx.rows().size() - 1;
  }
  // Indices, not references: the row vector grows while the loop runs.
  if (max_l1_row == SIZE_MAX) return;
  const double max_l1 = ctx.rows()[max_l1_row].gb_per_s;
  for (const std::size_t i : row_index) ctx.rows()[i].set("vs_max_l1", ctx.rows()[i].gb_per_s / max_l1);
}

void cache_config_legacy(Context& ctx) {
  L1Probe p = make_probe();
  struct Config {
    cudaFuncCache value;
    const char* name;
  };
  double prefer_l1_gb_per_s = 0.0;
  for (const Config c : {Config{cudaFuncCachePreferL1, "prefer_l1"}, Config{cudaFuncCachePreferEqual, "prefer_equal"},
                         Config{cudaFuncCachePreferShared, "prefer_shared"}, Config{cudaFuncCachePreferNone, "prefer_none"}}) {
    CUDA_CHECK(cudaFuncSetCacheConfig(stream_sum_kernel<2>, c.value));
    Row& row = measure_probe<2>(ctx, p, std::string("cache_config=") + c.name);
    row.set("cache_config", c.name)
        .set("working_set_bytes", 65536.0)
        .set("model_ld_sectors_per_req", cml::model::vector_access(16).sectors_per_request());
    if (!row.verified) continue;
    if (c.value == cudaFuncCachePreferL1) prefer_l1_gb_per_s = row.gb_per_s;
    if (prefer_l1_gb_per_s > 0.0) row.set("vs_prefer_l1", row.gb_per_s / prefer_l1_gb_per_s);
  }
}

Demo make_demo() {
  Demo d;
  d.name = "shared_carveout";
  d.summary =
      "The SM's L1/shared split: a kernel needing 100 KiB of dynamic shared memory fails without\n"
      "cudaFuncAttributeMaxDynamicSharedMemorySize and runs with it (a requirement); the carveout and the\n"
      "legacy cache config are preferences, seen in the bandwidth of a 64 KiB L1-resident read.";
  d.size_meaning = "floats reversed by the >48 KiB kernel (default 8x L2 bytes / 4)";
  d.variants = {
      {"dynamic_smem_over_48k", "100 KiB of dynamic shared memory: without and with the opt-in attribute",
       dynamic_smem_over_48k},
      {"carveout_l1_capacity", "64 KiB L1-resident reads under carveout 0..100 %", carveout_l1_capacity},
      {"cache_config_legacy", "the same reads under cudaFuncSetCacheConfig", cache_config_legacy},
  };
  const At carveout0{"carveout_l1_capacity", "carveout=0"};
  d.claims = {
      Claim{"over_48k_refused_without_attribute",
            "A launch asking for more than 48 KiB of dynamic shared memory is refused until the kernel opts in, "
            "and nothing runs.",
            "dynamic_smem_over_48k[attribute=default]: 1 if the launch failed and the output stayed poisoned",
            Bound::at_least(1),
            "48 KiB is what every kernel gets without cudaFuncAttributeMaxDynamicSharedMemorySize; more is a "
            "requirement the launch checks",
            ClaimKind::device,
            [](const RunRows& r) {
              const Row& row = r.row("dynamic_smem_over_48k", "attribute=default");
              const std::string* launch = row.get("launch");
              if (launch == nullptr) throw ClaimError("dynamic_smem_over_48k[attribute=default] has no launch column");
              return launch->rfind("failed", 0) == 0 && row.verified ? 1.0 : 0.0;
            }},
      Claim{"attribute_makes_launch_run",
            "After cudaFuncSetAttribute(MaxDynamicSharedMemorySize) the same launch runs and produces the right "
            "result, even with the carveout preference set to max L1.",
            "rows dynamic_smem_over_48k[attribute=set] and [attribute=set,carveout=0] that did not verify",
            Bound::at_most(0),
            "the attribute is what makes the launch legal; the carveout is only a preference the driver "
            "overrides when the kernel needs more shared memory",
            ClaimKind::device,
            [](const RunRows& r) {
              double bad = 0;
              for (const char* p : {"attribute=set", "attribute=set,carveout=0"})
                bad += r.row("dynamic_smem_over_48k", p).verified ? 0.0 : 1.0;
              return bad;
            }},
      Claim{"max_l1_carveout_still_admits_a_block",
            "With the carveout preference at max L1, the driver still configures enough shared memory for at "
            "least one 100 KiB block per SM.",
            "blocks_per_sm dynamic_smem_over_48k[attribute=set,carveout=0]", Bound::at_least(1),
            "the carveout is rounded up to the shared memory a block needs; occupancy is what it may cost",
            ClaimKind::device,
            [](const RunRows& r) {
              return RunRows::value(r.row("dynamic_smem_over_48k", "attribute=set,carveout=0"), "blocks_per_sm");
            }},
      Claim{"max_l1_buys_nothing",
            "Asking for the largest L1, with the grid sized for the occupancy that leaves, reads the 64 KiB "
            "working set as fast as the default carveout, no faster and no slower.",
            "gb_per_s carveout_l1_capacity[carveout=0] / gb_per_s carveout_l1_capacity[carveout=default]",
            Bound::between(0.95, 1.05),
            "the default already leaves L1 far more than 64 KiB, so more L1 has nothing to hold; 5% allows for the "
            "noise between two warm runs of an L1-bound kernel. Below the bound means the carveout=0 row measured "
            "something else, such as a grid that no longer fits in one wave",
            ClaimKind::device,
            [carveout0](const RunRows& r) {
              if (r.row(carveout0.variant, carveout0.params).get("blocks_per_sm") == nullptr)
                throw NotApplicable(
                    "the run sized one grid for every carveout before setting any (no blocks_per_sm column): its "
                    "carveout=0 row timed a partial second wave, not the L1");
              return r.ratio(carveout0, {"carveout_l1_capacity", "carveout=default"});
            }},
      ratio_claim("full_carveout_leaves_l1_too_small",
                  "A carveout of 100 % is applied even to a kernel with almost no shared memory: its 64 KiB "
                  "L1-resident read runs at most 0.9x as fast as with the default carveout.",
                  {"carveout_l1_capacity", "carveout=100"}, {"carveout_l1_capacity", "carveout=default"},
                  Bound::at_most(0.9),
                  "the driver takes the largest shared-memory configuration, which leaves L1 only unified - "
                  "shared_per_sm (28 KiB on Hopper), less than the working set, so part of every pass comes from "
                  "L2; a GPU or driver that keeps 64 KiB of L1 here fails this, and that is worth knowing"),
      ratio_claim("prefer_l1_buys_nothing",
                  "The legacy cudaFuncCachePreferL1 is no faster than no preference at all.",
                  {"cache_config_legacy", "cache_config=prefer_l1"},
                  {"cache_config_legacy", "cache_config=prefer_none"}, Bound::at_most(1.05),
                  "the cache config maps onto the same carveout hint; 5% allows for the noise between two warm "
                  "runs of an L1-bound kernel"),
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  d.device_bytes = [](std::uint64_t n) { return 2.0 * static_cast<double>(n) * sizeof(float); };
  d.cold_by_default = false;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
