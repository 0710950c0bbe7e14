// constant_memory: when is __constant__ memory fast, and when is it the slowest place to keep coefficients?
//
// The book's 9-point stencil reads its coefficients from __constant__, from the read-only path (__ldg) or
// from plain global loads, with one coefficient address per warp or one per lane. The constant cache
// delivers one address per warp per cycle: a warp whose lanes ask for k addresses waits k times as long,
// while L1 serves whole lines and shrugs off the same divergence. With one address per warp every path
// broadcasts, and the stencil itself sets the speed. Inputs are small integers: outputs compare bit for bit.
//
// Run: build/bin/constant_memory [--size 64M] [--csv constant_memory.csv]
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/stencil_1d.cuh"
#include "common/access_model.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

// The run's buffers, made by its first variant.
struct Buffers {
  std::size_t n = 0;
  std::vector<float> host_in, table;
  DeviceBuffer<float> in, out, table_dev;
  std::map<RowPick, std::vector<float>> expected;  // computed on first use
  double uniform_ms = 0.0;  // the constant_uniform row, for the vs_constant_uniform column

  explicit Buffers(std::size_t elements)
      : n(elements),
        host_in(make_stencil_input(n)),
        table(make_stencil_table()),
        in(n),
        out(n),
        table_dev(table.size()) {
    in.upload(host_in);
    table_dev.upload(table);
    upload_stencil_coefficients(table);
  }
};

const std::vector<float>& expected(Buffers& b, RowPick pick) {
  auto it = b.expected.find(pick);
  if (it == b.expected.end()) it = b.expected.emplace(pick, stencil_1d_reference(b.host_in, b.table, pick)).first;
  return it->second;
}

// Distinct coefficient addresses one warp asks for in one load (the same for every tap and warp).
double coeff_addresses_per_warp(RowPick pick) {
  std::set<int> rows;
  for (std::size_t lane = 0; lane < 32; ++lane) rows.insert(stencil_row(pick, lane));
  return static_cast<double>(rows.size());
}

// Sectors per warp request for a coefficient load from the global table (the __ldg and plain paths).
cml::model::GlobalAccess coeff_sectors(RowPick pick) {
  return cml::model::global_pattern(64, 4, [&](std::uint64_t warp, unsigned lane) -> std::optional<std::uint64_t> {
    return static_cast<std::uint64_t>(stencil_row(pick, warp * 32 + lane)) * kStencilTaps * sizeof(float);
  });
}

template <CoeffSource S, RowPick P>
void run(Context& ctx) {
  Buffers& b = ctx.state<Buffers>(ctx.size());
  const std::vector<float>& want = expected(b, P);
  // One wave of blocks: every block runs many iterations of the grid-stride loop.
  const unsigned max_blocks = static_cast<unsigned>(ctx.device().sm_count) * 8u;
  Row& row = ctx.measure(
      "", b.n, 2.0 * static_cast<double>(b.n) * sizeof(float),
      [&](cudaStream_t s) { launch_stencil_1d<S, P>(b.in.data(), b.out.data(), b.n, b.table_dev.data(), max_blocks, s); },
      [&] { return compare_exact(b.out.download(), want); }, [&](cudaStream_t s) { b.out.poison(s); });
  // What ncu's load sectors per request measure: the whole kernel's loads, halo and coefficients included.
  const cml::model::GlobalAccess loads = stencil_tile_loads(kStencilBlock, S != CoeffSource::constant_memory, P);
  row.set("coeff_addresses_per_warp", coeff_addresses_per_warp(P))
      .set("model_ld_sectors_per_req", loads.sectors_per_request());
  if (S != CoeffSource::constant_memory) row.set("model_coeff_sectors_per_req", coeff_sectors(P).sectors_per_request());
  if (!row.verified) return;
  if (ctx.variant() == "constant_uniform") b.uniform_ms = row.median_ms;
  if (b.uniform_ms > 0.0) row.set("vs_constant_uniform", row.median_ms / b.uniform_ms);
}

Demo make_demo() {
  Demo d;
  d.name = "constant_memory";
  d.summary =
      "A 1-D 9-point stencil whose coefficients come from __constant__ memory (read uniformly or divergently\n"
      "across a warp), from the read-only path (__ldg) or from plain global loads.";
  d.size_meaning = "floats per buffer (default 8x L2 bytes / 4)";
  using CS = CoeffSource;
  using RP = RowPick;
  d.variants = {
      {"constant_fixed", "9 __constant__ coefficients, compile-time offsets (the book)", run<CS::constant_memory, RP::fixed>},
      {"constant_uniform", "__constant__ table, one coefficient set per warp (broadcast)",
       run<CS::constant_memory, RP::warp_uniform>},
      {"constant_divergent", "__constant__ table, a different set in every lane (32 addresses)",
       run<CS::constant_memory, RP::per_lane>},
      {"ldg_uniform", "global table via __ldg, one set per warp", run<CS::ldg, RP::warp_uniform>},
      {"ldg_divergent", "global table via __ldg, a set per lane", run<CS::ldg, RP::per_lane>},
      {"global_uniform", "global table, plain loads, one set per warp", run<CS::global, RP::warp_uniform>},
      {"global_divergent", "global table, plain loads, a set per lane", run<CS::global, RP::per_lane>},
  };
  d.claims = {
      ratio_claim("divergent_constant_serializes",
                  "A __constant__ read with a different address in every lane is several times slower than one "
                  "address per warp.",
                  {"constant_divergent", "", "median_ms"}, {"constant_uniform", "", "median_ms"}, Bound::at_least(4.0),
                  "32 distinct addresses are served one at a time; even with the stencil's own cost in between, "
                  "a 32-fold replay of 9 loads per output leaves far more than 4x"),
      Claim{"uniform_reads_cost_the_same",
            "When every warp reads one coefficient address, it makes no measurable difference whether the "
            "coefficients are __constant__ (fixed or from a table), read with __ldg or with plain loads.",
            "largest |median_ms X / median_ms constant_uniform - 1| over constant_fixed, ldg_uniform, "
            "global_uniform",
            Bound::at_most(0.1),
            "one address per warp is a broadcast on every path, so the stencil's own cost decides; 10% allows "
            "for noise and for compilers that schedule the paths a little differently",
            ClaimKind::device,
            [](const RunRows& r) {
              const double base = r.value({"constant_uniform", "", "median_ms"});
              return max_rel_deviation({r.value({"constant_fixed", "", "median_ms"}),
                                        r.value({"ldg_uniform", "", "median_ms"}),
                                        r.value({"global_uniform", "", "median_ms"})},
                                       base);
            }},
      Claim{"divergence_costs_less_through_l1",
            "Divergent coefficient reads through __ldg or plain loads are several times faster than the same "
            "reads from __constant__ memory.",
            "median_ms constant_divergent / slower of median_ms ldg_divergent, global_divergent",
            Bound::at_least(4.0),
            "the L1 path serves a warp's scattered addresses as 32-byte sectors in one request, with no replay "
            "per address; 4x is far below the gap",
            ClaimKind::device,
            [](const RunRows& r) {
              const double slower_l1 = std::max(r.value({"ldg_divergent", "", "median_ms"}),
                                                r.value({"global_divergent", "", "median_ms"}));
              return r.value({"constant_divergent", "", "median_ms"}) / slower_l1;
            }},
  };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  d.device_bytes = [](std::uint64_t n) { return 2.0 * static_cast<double>(n) * sizeof(float); };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
