// zero_copy: when does a kernel reading mapped host memory beat copying the data to the device first?
//
// A kernel reading mapped (zero-copy) memory sends every load across the link: small arrays cost about one
// launch either way and zero-copy saves the separate copies; large arrays are read at the link's rate, no
// faster than copying them first, while device memory is read at DRAM speed. A misaligned start makes each
// warp touch one more sector, and over the link those sectors cost time. The time column is what matters,
// as in the blog post's table; at the smallest sizes it is one launch's cost, not the kernel's work.
//
// Run: build/bin/zero_copy [--size 64M] [--offset 1] [--csv zero_copy.csv]
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "04_transfers/kernels/host_buffers.hpp"
#include "04_transfers/kernels/pointer_facts.hpp"
#include "04_transfers/kernels/vector_add.cuh"
#include "04_transfers/kernels/vector_add_reference.hpp"
#include "common/access_model.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch04;

constexpr std::uint64_t kMinBytes = 1024;
constexpr std::uint64_t kMaxOffset = 1024;

enum class Mode { device, copy_then_compute, mapped };

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::device: return "device";
    case Mode::copy_then_compute: return "copy_then_compute";
    case Mode::mapped: return "mapped";
  }
  return "?";
}

// --offset: 0 ... kMaxOffset elements (0 is the aligned case).
std::size_t offset_option(const Context& ctx) {
  const std::uint64_t offset = ctx.extra_size("offset");
  if (offset > kMaxOffset)
    throw CliError("--offset: at most " + std::to_string(kMaxOffset) + ", got " + ctx.extra_text("offset"));
  return static_cast<std::size_t>(offset);
}

std::vector<std::uint64_t> sweep_sizes(std::uint64_t largest) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = kMinBytes; s < largest; s *= 4) sizes.push_back(s);
  sizes.push_back(largest);
  return sizes;
}

// Inputs a and b live in mapped pinned memory (what `mapped` reads) and are copied once to device memory
// (what `device` reads). Allocated on first use, for the largest size and offset of the run.
struct Arrays {
  std::size_t n = 0;  // elements per array, including the room for the offset
  HostBuffer ha, hb;
  float* map_a = nullptr;  // cudaHostGetDevicePointer of ha / hb
  float* map_b = nullptr;
  DeviceBuffer<float> da, db, dc;
  std::map<std::tuple<Mode, std::size_t, std::size_t>, double> ns;  // measured medians, for the ratio columns

  explicit Arrays(const Context& ctx) : n(ctx.size() / sizeof(float) + offset_option(ctx)) {
    ha = HostBuffer(HostKind::host_alloc_mapped, n * sizeof(float));
    hb = HostBuffer(HostKind::host_alloc_mapped, n * sizeof(float));
    fill_vector_add_inputs(static_cast<float*>(ha.data()), static_cast<float*>(hb.data()), n);
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&map_a), ha.data(), 0));
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&map_b), hb.data(), 0));
    da = DeviceBuffer<float>(n);
    db = DeviceBuffer<float>(n);
    dc = DeviceBuffer<float>(n);
    da.upload(static_cast<const float*>(ha.data()), n);
    db.upload(static_cast<const float*>(hb.data()), n);
  }
};

void launch(Arrays& a, Mode mode, std::size_t n, std::size_t offset, cudaStream_t s) {
  switch (mode) {
    // [doc:zero_copy_modes]
    case Mode::device: launch_vector_add(a.da.data(), a.db.data(), a.dc.data(), n, offset, s); break;
    case Mode::copy_then_compute: {
      const std::size_t bytes = (n + offset) * sizeof(float);
      CUDA_CHECK(cudaMemcpyAsync(a.da.data(), a.ha.data(), bytes, cudaMemcpyHostToDevice, s));
      CUDA_CHECK(cudaMemcpyAsync(a.db.data(), a.hb.data(), bytes, cudaMemcpyHostToDevice, s));
      launch_vector_add(a.da.data(), a.db.data(), a.dc.data(), n, offset, s);
      break;
    }
    case Mode::mapped: launch_vector_add(a.map_a, a.map_b, a.dc.data(), n, offset, s); break;
    // [/doc:zero_copy_modes]
  }
}

struct Point {
  bool ok = false;
  double ns = 0.0;
  std::optional<std::size_t> row;  // index into ctx.rows() when a timed row was added
};

// Poison c, launch once, verify bit-exactly, then time. With add_row = false the point is a baseline for
// another variant's ratio column: measured (and verified) only if this run has not measured it already.
Point run_point(Context& ctx, Mode mode, std::uint64_t array_bytes, std::size_t offset, bool add_row) {
  Arrays& a = ctx.state<Arrays>(ctx);
  const auto key = std::make_tuple(mode, static_cast<std::size_t>(array_bytes), offset);
  if (!add_row && a.ns.count(key)) return {true, a.ns[key], std::nullopt};

  const std::size_t n = array_bytes / sizeof(float);
  const std::string params = offset != 0 ? fmt::format("offset={}", offset) : "";
  cudaStream_t s = ctx.stream();
  a.dc.poison(s);
  launch(a, mode, n, offset, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> got(n);
  a.dc.download(got.data(), n);
  const auto want =
      vector_add_reference(static_cast<const float*>(a.ha.data()), static_cast<const float*>(a.hb.data()), n, offset);
  if (!ctx.check(compare_exact(got, want), fmt::format("{} bytes per array {}", array_bytes, params))) {
    if (add_row) ctx.add_row(params, array_bytes, false);
    return {false, 0.0, std::nullopt};
  }
  // Under --profile, a baseline's launch is named for what it is, not taken for the variant's own row.
  if (!add_row) ctx.set_profile_label(fmt::format("baseline {} size={}", mode_name(mode), array_bytes));
  const Timing t = ctx.time([&](cudaStream_t st) { launch(a, mode, n, offset, st); });
  a.ns[key] = t.stats.median * 1e6;
  Point p{true, a.ns[key], std::nullopt};
  if (!add_row) return p;
  Row& r = ctx.add_timed_row(params, array_bytes, 3.0 * static_cast<double>(array_bytes), t, true);
  if (mode != Mode::device) r.pct_peak = kNaN;  // not a DRAM-bound kernel
  const model::GlobalAccess m = model::offset_access(offset, sizeof(float));
  r.set("ns", p.ns).set("model_ld_sectors_per_req", m.sectors_per_request()).set("model_efficiency", m.efficiency());
  p.row = ctx.rows().size() - 1;
  return p;
}

void plain(Context& ctx, Mode mode) {
  for (std::uint64_t bytes : sweep_sizes(ctx.size())) run_point(ctx, mode, bytes, 0, true);
}

void mapped(Context& ctx) {
  std::optional<std::uint64_t> last_win, first_loss;
  for (std::uint64_t bytes : sweep_sizes(ctx.size())) {
    const Point p = run_point(ctx, Mode::mapped, bytes, 0, true);
    const Point dev = run_point(ctx, Mode::device, bytes, 0, false);
    const Point copy = run_point(ctx, Mode::copy_then_compute, bytes, 0, false);
    if (!p.ok || !dev.ok || !copy.ok || !p.row) continue;
    Row& r = ctx.rows()[*p.row];
    r.set("device_ns", dev.ns).set("slowdown", p.ns / dev.ns);
    r.set("copy_then_compute_ns", copy.ns).set("vs_copy_then_compute", p.ns / copy.ns);
    if (p.ns < copy.ns) last_win = bytes;
    else if (!first_loss) first_loss = bytes;
  }
  if (!first_loss) ctx.note("crossover: zero-copy is faster than copy-then-compute at every size of this run");
  else if (!last_win) ctx.note("crossover: zero-copy is slower than copy-then-compute at every size of this run");
  else
    ctx.note(fmt::format("crossover: zero-copy beats copy-then-compute up to {} per array, loses from {} on",
                         format_bytes(static_cast<double>(*last_win)), format_bytes(static_cast<double>(*first_loss))));
}

void mapped_offset(Context& ctx) {
  const std::size_t offset = offset_option(ctx);
  for (std::uint64_t bytes : sweep_sizes(ctx.size())) {
    const Point p = run_point(ctx, Mode::mapped, bytes, offset, true);
    const Point aligned = run_point(ctx, Mode::mapped, bytes, 0, false);
    if (p.ok && aligned.ok && p.row)
      ctx.rows()[*p.row].set("aligned_ns", aligned.ns).set("vs_aligned", p.ns / aligned.ns);
  }
}

// What a current runtime does about mapping, printed and checked.
void mapping_facts(Context& ctx) {
  const int dev = ctx.device().ordinal;
  unsigned flags = 0;
  CUDA_CHECK(cudaGetDeviceFlags(&flags));
  const bool map_host_flag = (flags & cudaDeviceMapHost) != 0;
  ctx.note(fmt::format("canMapHostMemory {}, unifiedAddressing {}; this program never calls "
                       "cudaSetDeviceFlags(cudaDeviceMapHost); cudaGetDeviceFlags reports cudaDeviceMapHost {}",
                       ctx.device().can_map_host, ctx.device().unified_addressing, map_host_flag ? "set" : "not set"));
  ctx.add_row("cudaDeviceMapHost", 0, true).set("flag_set", map_host_flag ? 1.0 : 0.0);

  const bool reg_same = registered_memory_uses_host_pointer(dev);
  struct Case {
    HostKind kind;
    Relation expected;  // of cudaHostGetDevicePointer's result to the host pointer
  };
  const Case cases[] = {{HostKind::host_alloc_mapped, Relation::same},
                        {HostKind::host_alloc, Relation::same},
                        {HostKind::host_register, reg_same ? Relation::same : Relation::other}};
  for (const Case& c : cases) {
    HostBuffer h(c.kind, 4096);
    void* dptr = nullptr;
    // Succeeds without cudaSetDeviceFlags: the runtime sets cudaDeviceMapHost on the contexts it creates.
    const cudaError_t err = cudaHostGetDevicePointer(&dptr, h.data(), 0);
    bool ok = ctx.check(compare_value(static_cast<int>(err), static_cast<int>(cudaSuccess), "cudaHostGetDevicePointer"),
                        to_string(c.kind));
    (void)cudaGetLastError();
    const Relation rel = relation_of(dptr, h.data());
    if (ctx.device().unified_addressing)
      ok = ctx.check(compare_value(static_cast<int>(rel), static_cast<int>(c.expected), "device pointer relation"),
                     std::string(to_string(c.kind)) + ": device pointer " + to_string(rel) + ", expected " +
                         to_string(c.expected)) &&
           ok;
    ctx.note(fmt::format("{}: host {} -> cudaHostGetDevicePointer {} ({})", to_string(c.kind), hex(h.data()), hex(dptr),
                         to_string(rel)));
    ctx.add_row(to_string(c.kind), 4096, ok)
        .set("host_ptr", hex(h.data()))
        .set("device_ptr", hex(dptr))
        .set("same_address", rel == Relation::same ? 1.0 : 0.0);
  }
  ctx.note(fmt::format("cudaDevAttrCanUseHostPointerForRegisteredMem = {}: a cudaHostRegister'd pointer {} be passed "
                       "to a kernel as is",
                       reg_same ? 1 : 0, reg_same ? "may" : "may NOT"));
}

// ---- Claims -------------------------------------------------------------------------------------------

// The end of the sweep, which must be large enough for the transfer to dominate the launch.
constexpr std::uint64_t kLargeBytes = std::uint64_t{16} << 20;
const Row& large_row(const RunRows& r, const char* variant, const std::string& params = "") {
  const Row& row = largest(r.sweep(variant, params), "size");
  if (row.size < kLargeBytes)
    throw NotApplicable(
        fmt::format("the sweep ends at {} bytes per array; the claim needs >= {}", row.size, kLargeBytes));
  return row;
}

std::string offset_params(const RunRows& r) {
  // The misaligned rows carry the --offset of their run in their params.
  const auto rows = r.rows("mapped_offset");
  return rows.front()->params;
}

std::vector<Claim> claims() {
  return {
      Claim{"runtime_maps_host_memory",
            "The runtime sets cudaDeviceMapHost on its own: mapped memory works without cudaSetDeviceFlags.",
            "flag_set of mapping_facts (1 = cudaGetDeviceFlags reports cudaDeviceMapHost)", Bound::at_least(1.0),
            "a current runtime creates every context with cudaDeviceMapHost; 0 means an old runtime or a context "
            "made elsewhere",
            ClaimKind::device,
            [](const RunRows& r) { return r.value({"mapping_facts", "cudaDeviceMapHost", "flag_set"}); }},
      Claim{"mapped_far_slower_when_large",
            "At the largest size (16 MB or more) a kernel reading mapped host memory is at least 10x slower than "
            "one reading device memory.",
            "slowdown of mapped at the largest size (mapped time / device time)", Bound::at_least(10.0),
            "every mapped load crosses PCIe, whose bandwidth is a small fraction of DRAM's",
            ClaimKind::host, [](const RunRows& r) { return RunRows::value(large_row(r, "mapped"), "slowdown"); }},
      Claim{"mapped_wins_when_tiny",
            "For a 1 KB array zero-copy beats copying the inputs first: it saves two copies of a few microseconds "
            "each.",
            "vs_copy_then_compute of mapped at the smallest size (mapped time / copy-then-compute time)",
            Bound::at_most(0.8),
            "at 1 KB both run one launch; copy-then-compute adds two cudaMemcpyAsync of fixed cost",
            ClaimKind::host,
            [](const RunRows& r) {
              return RunRows::value(smallest(r.sweep("mapped"), "size"), "vs_copy_then_compute");
            }},
      Claim{"copy_catches_up_when_large",
            "At the largest size zero-copy is no faster than copying the inputs first and computing on device "
            "memory.",
            "vs_copy_then_compute of mapped at the largest size", Bound::at_least(0.95),
            "both move the inputs across the same link once; the copy's fixed cost no longer matters",
            ClaimKind::host,
            [](const RunRows& r) { return RunRows::value(large_row(r, "mapped"), "vs_copy_then_compute"); }},
      Claim{"misaligned_mapped_reads_cost_more",
            "Reading mapped memory from a misaligned start costs extra time at the largest size, but no more "
            "than the extra sectors it fetches.",
            "vs_aligned of mapped_offset at the largest size (misaligned time / aligned time)",
            Bound::between(1.03, 1.3),
            "a misaligned warp touches 5 sectors instead of 4 (model_efficiency 0.8): at most 1.25x the bytes over "
            "PCIe; 3% is above the noise of these long reads",
            ClaimKind::host,
            [](const RunRows& r) {
              // Named, not a temporary argument: GCC 13 would warn that the returned reference (into r) dangles.
              const std::string params = offset_params(r);
              const Row& row = large_row(r, "mapped_offset", params);
              if (RunRows::value(row, "model_efficiency") >= 1.0)
                throw NotApplicable("this --offset starts on a sector boundary: no extra sectors to pay for");
              return RunRows::value(row, "vs_aligned");
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "zero_copy";
  d.summary =
      "Vector add reading mapped (zero-copy) host memory vs device memory over 1 KB ... --size per array: the\n"
      "blog post's slowdown table, the crossover against copy-then-compute, a misaligned offset.";
  d.size_meaning = "largest bytes per array (the sweep runs 1 KB, 4 KB, ... up to it)";
  d.variants = {
      {"mapping_facts", "cudaDeviceMapHost without cudaSetDeviceFlags; cudaHostGetDevicePointer under UVA",
       mapping_facts},
      {"device", "a, b, c in device memory (kernel time)", [](Context& c) { plain(c, Mode::device); }},
      {"copy_then_compute", "pinned H2D of a and b, then the kernel on device memory",
       [](Context& c) { plain(c, Mode::copy_then_compute); }},
      {"mapped", "a, b in mapped pinned host memory read across PCIe; slowdown vs device", mapped},
      {"mapped_offset", "mapped, reading a[i + offset] (misaligned by --offset elements)", mapped_offset},
  };
  d.claims = claims();
  d.extras = {ExtraOption::size_or_zero("offset", "element offset of the misaligned case (0 ... 1024)", 1)};
  d.check_options = [](Context& ctx) { (void)offset_option(ctx); };
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{64} << 20; };
  d.quick_size = std::uint64_t{64} << 10;
  d.warmup_ms = 20.0;
  d.device_bytes = [](std::uint64_t bytes) {
    if (bytes < kMinBytes || bytes % sizeof(float) != 0)
      throw CliError("--size: at least 1k and a multiple of 4 bytes, got " + std::to_string(bytes));
    if (bytes > (std::uint64_t{1} << 30)) throw CliError("--size: at most 1G per array, got " + std::to_string(bytes));
    return 3.0 * static_cast<double>(bytes + kMaxOffset * sizeof(float));
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
