// l2_set_aside_cost: what does a persisting set-aside cost the accesses that never persist?
//
// The set-aside is carved out of the L2; the Programming Guide says ordinary accesses may use the part
// persisting lines leave unused. Streaming workloads with no window anywhere (a write, a read, a copy,
// cudaMemcpy D2D, this chapter's sliding-window workload) run under a set-aside of 0/8 ... 8/8 of the
// largest, each verified, then timed with persisting lines reset and L2 flushed before every sample, so
// vs_no_set_aside says whether they do. The answer decides the baseline every window's gain is measured
// against in this chapter.
//
// Run: build/bin/l2_set_aside_cost [--size 1G] [--csv cost.csv]
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "05_l2_persistence/kernels/set_aside_cost.cuh"
#include "05_l2_persistence/l2_bench.hpp"
#include "common/copy_bench.hpp"
#include "common/copy_kernels.cuh"
#include "common/harness.hpp"
#include "common/pattern_kernels.cuh"

namespace {

using namespace cml;
using namespace cml::ch05;

constexpr std::uint32_t kSourceSeed = 0x5e7a51de, kWriteSeed = 0x0dd5eed5;
constexpr int kEighths = 8;

enum class Workload { write, read, copy, memcpy_d2d, sliding_no_window };

struct State {
  std::size_t words = 0;
  std::unique_ptr<DeviceBuffer<std::uint32_t>> src, dst;
  std::unique_ptr<DeviceBuffer<unsigned>> result;  // the read's fold
  unsigned read_blocks = 0;
  unsigned expected_xor = 0;
  bool have_xor = false;
  std::size_t table_bytes = 0;
  std::unique_ptr<SlidingWorkload> sliding;
};

// The set-asides of the sweep, in eighths of the largest (--quick: none, 1/8 and all of it).
std::vector<int> eighths(const Context& ctx) {
  if (ctx.quick()) return {0, 1, kEighths};
  std::vector<int> v;
  for (int k = 0; k <= kEighths; ++k) v.push_back(k);
  return v;
}

// The sliding-window workload's table: 3/4 of the largest set-aside, as in l2_window_api (1 MiB under --quick).
std::size_t sliding_table_bytes(const Context& ctx) {
  return ctx.quick() ? kMiB : std::max<std::size_t>(ctx.device().persisting_l2_max / 4 * 3 / 4096 * 4096, 4096);
}

void prepare_buffers(Context& ctx, State& st) {
  if (st.src) return;
  st.words = ctx.size() / sizeof(std::uint32_t);
  st.src = std::make_unique<DeviceBuffer<std::uint32_t>>(st.words);
  st.dst = std::make_unique<DeviceBuffer<std::uint32_t>>(st.words);
  st.result = std::make_unique<DeviceBuffer<unsigned>>(1);
  launch_pattern_fill(st.src->data(), st.words, kSourceSeed, ctx.stream());
  st.read_blocks = 4u * static_cast<unsigned>(ctx.device().sm_count) * (2048u / kStreamBlock);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  ctx.note(fmt::format("buffers of {:.2f} MiB ({:.1f}x L2); set-aside at start {:.2f} MiB (the driver's default), "
                       "largest {:.2f} MiB; no window anywhere",
                       to_mib(ctx.size()), static_cast<double>(ctx.size()) / static_cast<double>(ctx.device().l2_bytes),
                       to_mib(persisting_limit()), to_mib(ctx.device().persisting_l2_max)));
}

unsigned source_xor(State& st) {
  if (!st.have_xor) {
    unsigned v = 0;
    for (std::size_t i = 0; i < st.words; ++i) v ^= pattern_word(i, kSourceSeed);
    st.expected_xor = v;
    st.have_xor = true;
  }
  return st.expected_xor;
}

// Verifies and times one workload under the set-aside in force; adds its row.
Row& measure(Context& ctx, State& st, Workload w, const std::string& params) {
  const double bytes = static_cast<double>(st.words * sizeof(std::uint32_t));
  // Persisting lines reset before every sample: none should persist here, and none left by another program may.
  const TimingOptions o = isolated_timing(ctx);
  switch (w) {
    case Workload::write:
      return ctx.measure(
          params, ctx.size(), bytes,
          [&](cudaStream_t s) { launch_write_pattern(st.dst->data(), st.words, kWriteSeed, s); },
          [&] { return check_pattern_on_device(st.dst->data(), st.words, kWriteSeed, ctx.stream()); },
          [&](cudaStream_t s) { st.dst->poison(s); }, o);
    case Workload::read:
      return ctx.measure(
          params, ctx.size(), bytes,
          [&](cudaStream_t s) { launch_xor_read(st.src->data(), st.words, st.result->data(), st.read_blocks, s); },
          [&] {
            unsigned got = 0;
            CUDA_CHECK(cudaMemcpy(&got, st.result->data(), sizeof got, cudaMemcpyDeviceToHost));
            VerifyResult r;
            r.checked = 1;
            if (got != source_xor(st)) r.add(0, fmt::format("{:#010x}", got), fmt::format("{:#010x}", source_xor(st)));
            return r;
          },
          [&](cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(st.result->data(), 0, sizeof(unsigned), s)); }, o);
    case Workload::copy:
    case Workload::memcpy_d2d:
      return ctx.measure(
          params, ctx.size(), 2.0 * bytes,
          [&, w](cudaStream_t s) {
            (w == Workload::copy ? launch_copy_vec4 : launch_memcpy_d2d)(
                reinterpret_cast<const float*>(st.src->data()), reinterpret_cast<float*>(st.dst->data()), st.words, s);
          },
          [&] { return check_pattern_on_device(st.dst->data(), st.words, kSourceSeed, ctx.stream()); },
          [&](cudaStream_t s) { st.dst->poison(s); }, o);
    case Workload::sliding_no_window: {
      const auto launch = [&](cudaStream_t s) { st.sliding->launch(st.table_bytes, s); };
      if (!st.sliding->verify(ctx, st.table_bytes, launch, params)) return ctx.add_row(params, ctx.size(), false);
      return ctx.add_timed_row(params, ctx.size(), st.sliding->bytes_per_launch(st.table_bytes),
                               time_isolated(ctx, launch), true);
    }
  }
  throw std::logic_error("unknown workload");
}

// [doc:set_aside_sweep]
void sweep(Context& ctx, State& st, Workload w) {
  prepare_buffers(ctx, st);
  if (w == Workload::sliding_no_window && !st.sliding) {
    st.table_bytes = sliding_table_bytes(ctx);
    st.sliding = std::make_unique<SlidingWorkload>(ctx.quick() ? 4 * kMiB : ctx.device().l2_bytes, passes_option(ctx, 2),
                                                   st.table_bytes, sliding_window_resident_blocks(ctx.device().sm_count));
  }
  const std::size_t largest = ctx.device().persisting_l2_max;
  double no_set_aside_ms = kNaN;
  for (const int k : eighths(ctx)) {
    const auto guard = set_aside_or_waive(largest / kEighths * static_cast<std::size_t>(k));
    Row& row = measure(ctx, st, w, fmt::format("set_aside_eighths={}", k));
    if (k == 0) no_set_aside_ms = row.median_ms;
    row.set("set_aside_mib", to_mib(guard->limit()))
        .set("set_aside_per_max", static_cast<double>(guard->limit()) / static_cast<double>(largest))
        .set("vs_no_set_aside", row.verified ? no_set_aside_ms / row.median_ms : kNaN);
  }
}
// [/doc:set_aside_sweep]

// ---- Claims ---------------------------------------------------------------------------------------------

double at(const RunRows& r, std::string_view variant, int k) {
  return RunRows::value(r.row(variant, fmt::format("set_aside_eighths={}", k)), "vs_no_set_aside");
}

std::vector<Claim> claims() {
  return {
      Claim{"small_set_aside_costs_streaming_nothing",
            "A set-aside of 1/8 of the largest costs the write, the read, the copy and cudaMemcpy nothing.",
            "lowest vs_no_set_aside of write, read, copy and memcpy_d2d at 1/8", Bound::at_least(0.97),
            "a small set-aside leaves most of the L2 to streaming data, which uses it only in passing; 3% is the "
            "noise of two medians",
            ClaimKind::device,
            [](const RunRows& r) {
              return min_of({at(r, "write", 1), at(r, "read", 1), at(r, "copy", 1), at(r, "memcpy_d2d", 1)});
            }},
      Claim{"max_set_aside_slows_writes",
            "The largest set-aside, with nothing persisting in it, makes a streaming write at least 10% slower.",
            "vs_no_set_aside of write at 8/8", Bound::at_most(0.9),
            "written lines wait in the L2 until they are written back; with most of it set aside they have less "
            "room, although no line persists. A GPU that lends the unused set-aside to them fails this claim",
            ClaimKind::device, [](const RunRows& r) { return at(r, "write", kEighths); }},
      Claim{"writes_pay_more_than_reads",
            "At the largest set-aside, a streaming write loses at least 1.5x as much speed as a streaming read.",
            "vs_no_set_aside of read / vs_no_set_aside of write, at 8/8", Bound::at_least(1.5),
            "a read line is used once and dropped; a written line must stay until its write-back, so writes need "
            "the L2 room the set-aside takes",
            ClaimKind::device, [](const RunRows& r) { return at(r, "read", kEighths) / at(r, "write", kEighths); }},
      Claim{"no_window_run_pays_for_the_set_aside",
            "The sliding-window workload with no window runs at least 5% slower under the largest set-aside than "
            "under none.",
            "vs_no_set_aside of sliding_no_window at 8/8", Bound::at_most(0.95),
            "its table is written back every pass; a window's speed-up measured against this slower run would "
            "credit the window with winning back what the set-aside costs",
            ClaimKind::device, [](const RunRows& r) { return at(r, "sliding_no_window", kEighths); }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "l2_set_aside_cost";
  d.summary =
      "What a persisting set-aside costs accesses that never persist: a write, a read, a copy, cudaMemcpy D2D\n"
      "and the sliding-window workload with no window, each under a set-aside of 0/8 ... 8/8 of the largest.";
  d.size_meaning = "bytes per buffer (default: 8x the L2 size)";
  const auto variant = [](Workload w) { return [w](Context& c) { sweep(c, c.state<State>(), w); }; };
  d.variants = {
      {"write", "a streaming write of random words, one uint4 per thread", variant(Workload::write)},
      {"read", "a streaming read of random words, folded to one word", variant(Workload::read)},
      {"copy", "the suite's float4 copy kernel", variant(Workload::copy)},
      {"memcpy_d2d", "cudaMemcpyAsync device to device", variant(Workload::memcpy_d2d)},
      {"sliding_no_window", "this chapter's sliding-window workload, no window (table 3/4 of the largest set-aside)",
       variant(Workload::sliding_no_window)},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo& dev) { return static_cast<std::uint64_t>(dev.l2_bytes) * 8 / 16 * 16; };
  d.quick_size = 16 * kMiB;
  // Two buffers; check_options adds the sliding-window workload.
  d.device_bytes = [](std::uint64_t n) { return 2.0 * static_cast<double>(n); };
  d.extras = {passes_extra("passes per launch of the sliding-window workload", 8)};
  d.check_options = [](Context& ctx) {
    if (ctx.size() < 16) throw CliError("--size: at least 16 bytes");
    const double stream = static_cast<double>(ctx.quick() ? 4 * kMiB : ctx.device().l2_bytes);
    require_free_device_memory(2.0 * static_cast<double>(ctx.size()) + passes_option(ctx, 2) * stream +
                                   static_cast<double>(sliding_table_bytes(ctx)),
                               fmt::format("two --size {} buffers and the sliding-window workload", ctx.size()));
  };
  d.warmup_ms = 20.0;
  d.waive_reason = persistence_waive_reason;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
