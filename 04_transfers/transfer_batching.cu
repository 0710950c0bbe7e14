// transfer_batching: why is one large transfer faster than many small ones of the same bytes (Best Practices
// 9.1)?
//
// Every cudaMemcpyAsync pays a fixed cost (the API call, a command to the copy engine, a DMA set-up) of a few
// microseconds: with small chunks that cost, not the link, sets the time. One 2-D copy hands a whole
// scattered pattern to the copy engine in one command; packing on the CPU and unpacking with a kernel moves
// the scatter off the link. The cost is partly on the host, which events on the device would not see, so
// every operation is timed on the wall clock up to a stream synchronize; the untouched gaps are checked too.
//
// Run: build/bin/transfer_batching [--size 16M] [--csv batching.csv]
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "04_transfers/kernels/batching.cuh"
#include "04_transfers/kernels/host_buffers.hpp"
#include "04_transfers/kernels/transfer_kernels.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch04;

constexpr std::uint32_t kSeed = 41;
constexpr std::uint64_t kMinChunk = 1024;
constexpr std::uint64_t kMaxChunk = std::uint64_t{1} << 20;
constexpr std::size_t kMaxChunks = std::size_t{1} << 16;  // more calls than this take seconds per sample

struct Buffers {
  std::size_t total_words = 0;
  HostBuffer scattered;   // 2 x payload: chunks and gaps, filled with pattern_word(index)
  HostBuffer contiguous;  // the payload already packed (one_contiguous)
  HostBuffer staging;     // where pack_copy_unpack packs
  DeviceBuffer<std::uint32_t> dst;     // 2 x payload, scattered like the source
  DeviceBuffer<std::uint32_t> packed;  // the payload as it arrives before unpacking
  std::optional<double> contiguous_ms;
  std::map<std::uint64_t, double> many_small_ms;  // by chunk size, for pack_copy_unpack's comparison

  // Made by the run's first variant, for all of them.
  explicit Buffers(const Context& ctx) : total_words(ctx.size() / sizeof(std::uint32_t)) {
    const std::size_t bytes = ctx.size();
    // [doc:scattered_source]
    scattered = HostBuffer(HostKind::malloc_host, 2 * bytes);
    // [/doc:scattered_source]
    contiguous = HostBuffer(HostKind::malloc_host, bytes);
    staging = HostBuffer(HostKind::malloc_host, bytes);
    dst = DeviceBuffer<std::uint32_t>(2 * total_words);
    packed = DeviceBuffer<std::uint32_t>(total_words);
    fill_pattern_host(scattered.words(), 2 * total_words, kSeed);
    fill_pattern_host(contiguous.words(), total_words, kSeed);
  }
};

// 1 KB, 4 KB, ... 1 MB chunks that divide the payload.
std::vector<std::uint64_t> chunk_sizes(std::uint64_t total_bytes) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t c = kMinChunk; c <= std::min(kMaxChunk, total_bytes); c *= 4)
    if (total_bytes % c == 0) sizes.push_back(c);
  return sizes;
}

// Poison every buffer the operation writes, run it once, verify, then time it on the host clock.
std::optional<Timing> verified_host_time(Context& ctx, const std::string& what, const std::function<void()>& op,
                                         const std::function<VerifyResult()>& verify) {
  Buffers& b = ctx.state<Buffers>(ctx);
  b.dst.poison(ctx.stream());
  b.packed.poison(ctx.stream());
  poison_host(b.staging.data(), b.staging.bytes());
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  op();
  if (!ctx.check(verify(), what)) return std::nullopt;
  return time_host(op, ctx.timing_options());
}

double contiguous_ms(Context& ctx, bool add_row) {
  Buffers& b = ctx.state<Buffers>(ctx);
  if (b.contiguous_ms && !add_row) return *b.contiguous_ms;
  const std::size_t bytes = b.total_words * sizeof(std::uint32_t);
  cudaStream_t s = ctx.stream();
  const auto t = verified_host_time(
      ctx, "one_contiguous",
      [&] {
        CUDA_CHECK(cudaMemcpyAsync(b.dst.data(), b.contiguous.data(), bytes, cudaMemcpyHostToDevice, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
      },
      [&] { return check_pattern_on_device(b.dst.data(), b.total_words, kSeed, s); });
  if (!t) {
    if (add_row) ctx.add_row("", bytes, false);
    return kNaN;
  }
  b.contiguous_ms = t->stats.median;
  if (add_row) {
    Row& r = ctx.add_timed_row("", bytes, static_cast<double>(bytes), *t, true);
    r.pct_peak = kNaN;
    r.set("transfers", 1.0);
  }
  return *b.contiguous_ms;
}

void one_contiguous(Context& ctx) { contiguous_ms(ctx, true); }

enum class Method { many_small, memcpy_2d, pack_copy_unpack };

void run_method(Context& ctx, Method m) {
  Buffers& b = ctx.state<Buffers>(ctx);
  cudaStream_t s = ctx.stream();
  const std::size_t total_bytes = b.total_words * sizeof(std::uint32_t);
  const double baseline = contiguous_ms(ctx, false);
  std::optional<std::uint64_t> last_win;  // pack_copy_unpack: the largest chunk size at which packing wins
  bool compared = false;
  for (std::uint64_t chunk_bytes : chunk_sizes(total_bytes)) {
    const ChunkLayout l{b.total_words, chunk_bytes / sizeof(std::uint32_t)};
    if (l.chunks() > kMaxChunks) {
      ctx.note(fmt::format("chunk={}: skipped ({} chunks; at most {} per run)", chunk_bytes, l.chunks(), kMaxChunks));
      continue;
    }
    const std::size_t pitch = l.stride_words() * sizeof(std::uint32_t);
    std::function<void()> op;
    double calls = 1;
    switch (m) {
      // [doc:many_small]
      case Method::many_small:
        calls = static_cast<double>(l.chunks());
        op = [&, l] {
          for (std::size_t j = 0; j < l.chunks(); ++j)
            CUDA_CHECK(cudaMemcpyAsync(b.dst.data() + l.scattered_offset(j), b.scattered.words() + l.scattered_offset(j),
                                       l.length(j) * sizeof(std::uint32_t), cudaMemcpyHostToDevice, s));
          CUDA_CHECK(cudaStreamSynchronize(s));
        };
      // [/doc:many_small]
        break;
      // [doc:memcpy_2d]
      case Method::memcpy_2d:
        op = [&, l, pitch, chunk_bytes] {
          CUDA_CHECK(cudaMemcpy2DAsync(b.dst.data(), pitch, b.scattered.data(), pitch, chunk_bytes, l.chunks(),
                                       cudaMemcpyHostToDevice, s));
          CUDA_CHECK(cudaStreamSynchronize(s));
        };
      // [/doc:memcpy_2d]
        break;
      // [doc:pack_copy_unpack]
      case Method::pack_copy_unpack:
        op = [&, l] {
          pack_host(b.scattered.words(), b.staging.words(), l);
          CUDA_CHECK(cudaMemcpyAsync(b.packed.data(), b.staging.data(), total_bytes, cudaMemcpyHostToDevice, s));
          launch_unpack_chunks(b.packed.data(), b.dst.data(), l, s);
          CUDA_CHECK(cudaStreamSynchronize(s));
        };
      // [/doc:pack_copy_unpack]
        break;
    }
    const std::string params = fmt::format("chunk={}", chunk_bytes);
    const auto t = verified_host_time(ctx, params, op, [&] {
      const std::vector<std::uint32_t> got = b.dst.download();
      return check_scattered(got.data(), l, kSeed);
    });
    if (!t) {
      ctx.add_row(params, total_bytes, false);
      continue;
    }
    Row& r = ctx.add_timed_row(params, total_bytes, static_cast<double>(total_bytes), *t, true);
    r.pct_peak = kNaN;
    r.set("chunk_bytes", static_cast<double>(chunk_bytes)).set("transfers", calls);
    r.set("us_per_chunk", t->stats.median * 1e3 / static_cast<double>(l.chunks()));
    r.set("vs_one_contiguous", t->stats.median / baseline);
    if (m == Method::many_small) b.many_small_ms[chunk_bytes] = t->stats.median;
    const auto many = b.many_small_ms.find(chunk_bytes);
    if (m == Method::pack_copy_unpack && many != b.many_small_ms.end()) {
      r.set("vs_many_small", t->stats.median / many->second);
      compared = true;
      if (t->stats.median < many->second) last_win = chunk_bytes;
    }
  }
  if (m == Method::pack_copy_unpack && compared) {
    if (last_win)
      ctx.note(fmt::format("packing beats one copy per chunk for chunks up to {}",
                           format_bytes(static_cast<double>(*last_win))));
    else
      ctx.note("packing beats one copy per chunk at no chunk size of this run");
  }
}

// ---- Claims -------------------------------------------------------------------------------------------

// A column of `variant` at one chunk size. A chunk size this run's --size leaves out (it does not divide the
// payload, or exceeds it) is not applicable.
double at_chunk(const RunRows& r, const char* variant, std::uint64_t chunk, const char* column) {
  const std::string params = fmt::format("chunk={}", chunk);
  const auto rows = r.rows(variant);
  if (std::none_of(rows.begin(), rows.end(), [&params](const Row* row) { return row->params == params; })) {
    const std::uint64_t payload = r.row("one_contiguous").size;
    if (payload % chunk != 0 || payload < chunk || payload / chunk > kMaxChunks)
      throw NotApplicable(fmt::format("a payload of {} bytes has no {}-byte chunk row", payload, chunk));
  }
  return r.value({variant, params, column});
}

std::vector<Claim> claims() {
  return {
      Claim{"small_chunks_cost_per_call",
            "One cudaMemcpyAsync per 1 KB chunk takes at least 20x as long as one copy of the same bytes.",
            "vs_one_contiguous of many_small at chunk=1024 (time / one_contiguous time)", Bound::at_least(20.0),
            "a 1 KB copy moves in a fraction of a microsecond but each call costs microseconds",
            ClaimKind::host, [](const RunRows& r) { return at_chunk(r, "many_small", 1024, "vs_one_contiguous"); }},
      Claim{"large_chunks_amortize",
            "With 1 MB chunks the per-call cost is mostly hidden: one copy per chunk takes at most 1.5x one copy.",
            "vs_one_contiguous of many_small at chunk=1048576", Bound::at_most(1.5),
            "a 1 MB copy takes tens of microseconds, several times the per-call cost",
            ClaimKind::host, [](const RunRows& r) { return at_chunk(r, "many_small", 1 << 20, "vs_one_contiguous"); }},
      Claim{"memcpy_2d_matches_contiguous",
            "One cudaMemcpy2DAsync over 4 KB rows moves the scattered payload as fast as one contiguous copy.",
            "vs_one_contiguous of memcpy_2d at chunk=4096", Bound::at_most(1.1),
            "the copy engine walks the pitch itself, in one command; 10% allows for a noisy sample",
            ClaimKind::host, [](const RunRows& r) { return at_chunk(r, "memcpy_2d", 4096, "vs_one_contiguous"); }},
      Claim{"packing_beats_small_copies",
            "Packing 4 KB chunks on the CPU, one copy and an unpack kernel take at most half the time of one "
            "copy per chunk.",
            "vs_many_small of pack_copy_unpack at chunk=4096 (time / many_small time)", Bound::at_most(0.5),
            "a CPU memcpy of 4 KB costs far less than a cudaMemcpyAsync call",
            ClaimKind::host,
            [](const RunRows& r) {
              // vs_many_small compares with the many_small rows of the same process.
              if (!r.ran("many_small")) throw NotApplicable("needs the many_small variant in the same run");
              return at_chunk(r, "pack_copy_unpack", 4096, "vs_many_small");
            }},
      Claim{"packing_cost_is_flat",
            "The cost of packing hardly depends on the chunk size: its slowest chunk size takes at most 2x its "
            "fastest.",
            "max / min of median_ms of pack_copy_unpack over the chunk sizes", Bound::at_most(2.0),
            "one CPU pass over the payload, one copy, one kernel whatever the chunks; only the memcpy calls per "
            "chunk grow",
            ClaimKind::host,
            [](const RunRows& r) {
              const auto ms = r.values("pack_copy_unpack", "median_ms");
              return max_of(ms) / min_of(ms);
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "transfer_batching";
  d.summary =
      "--size bytes scattered as 1 KB ... 1 MB chunks, moved H2D as one cudaMemcpyAsync per chunk, as one\n"
      "cudaMemcpy2DAsync, or packed on the CPU + one copy + an unpack kernel, vs one contiguous copy.";
  d.size_meaning = "payload bytes (a multiple of 1k)";
  d.variants = {
      {"one_contiguous", "the payload already contiguous: one cudaMemcpyAsync", one_contiguous},
      {"many_small", "one cudaMemcpyAsync per chunk", [](Context& c) { run_method(c, Method::many_small); }},
      {"memcpy_2d", "one cudaMemcpy2DAsync over all chunks (pitch = 2 x chunk)",
       [](Context& c) { run_method(c, Method::memcpy_2d); }},
      {"pack_copy_unpack", "CPU pack into pinned staging, one copy, unpack kernel",
       [](Context& c) { run_method(c, Method::pack_copy_unpack); }},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{16} << 20; };
  d.quick_size = std::uint64_t{1} << 20;
  d.cold_by_default = false;
  d.warmup_ms = 20.0;
  d.device_bytes = [](std::uint64_t bytes) {
    if (bytes < kMinChunk || bytes % kMinChunk != 0)
      throw CliError("--size: a multiple of 1k, got " + std::to_string(bytes));
    if (bytes > (std::uint64_t{1} << 30)) throw CliError("--size: at most 1G, got " + std::to_string(bytes));
    return 3.0 * static_cast<double>(bytes);
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
