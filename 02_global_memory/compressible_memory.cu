// compressible_memory: can the GPU move data faster than DRAM bandwidth, and should a benchmark let it?
//
// Since Ampere, memory allocated as compressible (the driver's VMM API) crosses the DRAM bus in fewer
// bytes when a 16-byte group holds zeros or one repeated value, so such data streams faster than the bus
// allows while random words move at the plain speed. Both kinds of memory come from the same calls, so only
// the compression differs. The lesson for every benchmark: fill its buffers with random data, or a
// compressible allocation somewhere in the stack flatters the result.
//
// Run: build/bin/compressible_memory [--size 256M] [--csv compressible.csv]
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/compressible.cuh"
#include "02_global_memory/kernels/data_kinds.hpp"
#include "common/harness.hpp"
#include "common/pattern_kernels.cuh"
#include "common/vmm.hpp"

namespace {

using namespace cml;
using namespace cml::ch02;

struct Side {
  VmmBuffer src, dst;
};

Side make_side(int device, std::size_t bytes, bool compressible) {
  Side s{VmmBuffer(device, bytes, compressible), VmmBuffer(device, bytes, compressible)};
  s.src.grow(bytes);
  s.dst.grow(bytes);
  return s;
}

// The run's buffers, made by its first variant: plain memory, and compressible memory where the driver gives it.
struct Buffers {
  std::size_t n = 0;  // words per buffer
  Side plain, compressible;
  bool compressed = false;
  std::string why_not;  // why compressible memory is not available here
  DeviceBuffer<unsigned long long> scratch{1};  // the read kernel's sum
  std::map<DataKind, unsigned long long> sums;  // CPU reference sums, computed once per kind
  std::map<std::pair<int, DataKind>, double> plain_gb_per_s;  // (op, data) -> GB/s on plain memory

  explicit Buffers(const Context& ctx) : n(ctx.size()) {
    const int dev = ctx.device().ordinal;
    const std::size_t bytes = n * sizeof(std::uint32_t);
    plain = make_side(dev, bytes, false);
    why_not = vmm_unavailable(dev, true);
    if (why_not.empty()) {
      compressible = make_side(dev, bytes, true);
      compressed = compressible.src.compressed() && compressible.dst.compressed();
      if (!compressed) why_not = "the driver handed out plain memory when asked for compressible memory";
    }
  }
};

unsigned long long reference_sum(Buffers& b, DataKind kind) {
  auto it = b.sums.find(kind);
  if (it != b.sums.end()) return it->second;
  unsigned long long s = 0;
  for (std::size_t i = 0; i < b.n; ++i) s += data_word(kind, i);
  return b.sums[kind] = s;
}

enum class Op { write, read, copy };

void run(Context& ctx, bool compressible, Op op) {
  Buffers& b = ctx.state<Buffers>(ctx);
  if (compressible && !b.compressed) throw Waived(b.why_not);
  Side& side = compressible ? b.compressible : b.plain;
  auto* src = side.src.data<std::uint32_t>();
  auto* dst = side.dst.data<std::uint32_t>();
  const double words = static_cast<double>(b.n) * sizeof(std::uint32_t);
  for (DataKind kind : kDataKinds) {
    const std::string params = fmt::format("data={}", data_kind_name(kind));
    Row* row = nullptr;
    switch (op) {
      case Op::write:
        row = &ctx.measure(
            params, b.n, words, [&](cudaStream_t s) { launch_fill_kind(dst, b.n, kind, s); },
            [&] { return check_words_on_device(dst, b.n, KindWord{kind}, ctx.stream()); },
            [&](cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(dst, 0xFF, b.n * sizeof(std::uint32_t), s)); });
        break;
      case Op::read:
        row = &ctx.measure(
            params, b.n, words, [&](cudaStream_t s) { launch_sum_words(src, b.n, b.scratch.data(), s); },
            [&] {
              VerifyResult r;
              r.checked = 1;
              const unsigned long long got = b.scratch.download().front(), want = reference_sum(b, kind);
              if (got != want) r.add(0, std::to_string(got), std::to_string(want));
              return r;
            },
            [&](cudaStream_t s) {
              launch_fill_kind(src, b.n, kind, s);
              CUDA_CHECK(cudaMemsetAsync(b.scratch.data(), 0, sizeof(unsigned long long), s));
            });
        break;
      case Op::copy:
        row = &ctx.measure(
            params, b.n, 2.0 * words, [&](cudaStream_t s) { launch_copy_words(src, dst, b.n, s); },
            [&] { return check_words_on_device(dst, b.n, KindWord{kind}, ctx.stream()); },
            [&](cudaStream_t s) {
              launch_fill_kind(src, b.n, kind, s);
              CUDA_CHECK(cudaMemsetAsync(dst, 0xFF, b.n * sizeof(std::uint32_t), s));
            });
        break;
    }
    // The same kernel on the same data in plain memory (when that variant ran first) is the baseline.
    if (!row->verified) continue;
    const auto key = std::make_pair(static_cast<int>(op), kind);
    if (!compressible) b.plain_gb_per_s[key] = row->gb_per_s;
    else if (b.plain_gb_per_s.count(key)) row->set("vs_plain", row->gb_per_s / b.plain_gb_per_s[key]);
  }
}

std::vector<Claim> claims() {
  return {
      Claim{"zeros_read_beats_dram_peak",
            "Reading zeros from compressible memory runs faster than the DRAM's theoretical peak.",
            "gb_per_s compressible_read[data=zeros] / theoretical peak GB/s", Bound::at_least(1.05),
            "no uncompressed read can pass the peak (plain reads reach 80-90% of it); zeros cross the bus "
            "compressed, so bytes counted as read outrun the bytes the DRAM delivers",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.value({"compressible_read", "data=zeros", "gb_per_s"}) / r.fact("peak_gb_per_s");
            }},
      ratio_claim("zeros_flatter_a_copy",
                  "A copy of zeros in compressible memory looks at least 1.25x as fast as the same copy in plain "
                  "memory: a benchmark that copies zeros overstates the bandwidth by a quarter or more.",
                  {"compressible_copy", "data=zeros"}, {"plain_copy", "data=zeros"}, Bound::at_least(1.25),
                  "the read half of the copy compresses well; how much the write half gains differs between "
                  "GPUs (little on some), so a copy gains less than a read"),
      ratio_claim("random_does_not_compress",
                  "Random words copy at the same speed in compressible and in plain memory.",
                  {"compressible_copy", "data=random"}, {"plain_copy", "data=random"}, Bound::between(0.97, 1.03),
                  "random words leave nothing to compress; 3% is the noise between two copies"),
      ratio_claim("plain_memory_ignores_data", "In plain memory, zeros copy no faster than random words.",
                  {"plain_copy", "data=zeros"}, {"plain_copy", "data=random"}, Bound::between(0.97, 1.03),
                  "without compression every byte crosses the bus whatever its value; 3% is noise"),
  };
}

Demo make_demo() {
  Demo d;
  d.name = "compressible_memory";
  d.summary =
      "Write, read and copy kernels on plain and on compressible memory (driver VMM API, generic compression),\n"
      "with zeros, a constant, small integers and random words: data that compresses runs faster than DRAM.";
  d.size_meaning = "32-bit words per buffer (a multiple of 4)";
  for (bool c : {false, true})
    for (auto [op, name, what] : {std::tuple{Op::write, "write", "fill the destination (write-only)"},
                                  std::tuple{Op::read, "read", "sum the source (read-only)"},
                                  std::tuple{Op::copy, "copy", "copy source to destination"}})
      d.variants.push_back({fmt::format("{}_{}", c ? "compressible" : "plain", name),
                            fmt::format("{}, {} memory", what, c ? "compressible" : "plain"),
                            [c, op = op](Context& ctx) { run(ctx, c, op); }});
  d.claims = claims();
  d.default_size = [](const DeviceInfo& dev) {
    const std::uint64_t bytes = std::max<std::uint64_t>(8 * dev.l2_bytes, std::uint64_t{1} << 30);
    return bytes / sizeof(std::uint32_t) / 4 * 4;
  };
  d.quick_size = std::uint64_t{1} << 20;
  d.cold_by_default = false;  // every buffer is at least 8x L2: nothing stays in it between launches
  d.device_bytes = [](std::uint64_t n) {
    if (n % 4 != 0) throw CliError("--size: a multiple of 4 words (16-byte loads), got " + std::to_string(n));
    return 4.0 * static_cast<double>(n) * sizeof(std::uint32_t);
  };
  d.waive_reason = [](const DeviceInfo& dev) { return vmm_unavailable(dev.ordinal, false); };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
