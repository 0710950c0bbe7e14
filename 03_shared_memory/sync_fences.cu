// sync_fences: what does __syncthreads guarantee, and what does "the last block finishes the job" need?
//
// A block that reuses one shared tile needs two barriers per tile, and a tail test must guard the accesses,
// never the barrier. The last-block pattern needs a fence (or an acq_rel atomic) between storing a partial
// and taking the ticket: without one the sum is wrong now and then, and no tool reports it, since racecheck
// sees only shared memory. Passing runs cannot prove the fence is there, so the broken kernels are explained
// in the chapter, not shipped; every kernel here is clean under memcheck, racecheck and synccheck.
//
// Run: build/bin/sync_fences [--size N] [--runs R] [--csv out.csv]
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/sync.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;

void barrier_segment_reverse(Context& ctx) {
  const std::size_t n = static_cast<std::size_t>(ctx.size());
  std::vector<std::uint32_t> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<std::uint32_t>(i * 2654435761u);
  const auto expected = segment_reverse_expected(host);
  DeviceBuffer<unsigned> in(n), out(n);
  in.upload(host);
  // Fewer blocks than segments, so every block goes around the loop and reuses its tile.
  const unsigned blocks = segment_reverse_grid(n);
  Row& row = ctx.measure(
      fmt::format("blocks={}", blocks), n, 2.0 * n * sizeof(unsigned),
      [&](cudaStream_t s) { launch_segment_reverse(in.data(), out.data(), n, blocks, s); },
      [&] { return compare_exact(out.download(), expected); }, [&](cudaStream_t s) { out.poison(s); });
  row.set("segments_per_block", static_cast<double>(ceil_div<std::size_t>(n, kSyncBlock)) / blocks);
  ctx.note("barrier rule: `if (t < len) tile[t] = in[...]; __syncthreads();` - never a barrier inside the if. "
           "A barrier that only some threads of a block reach is undefined behaviour (a hang, or threads released "
           "before the data they read is written); synccheck reports it.");
}

void barrier_vote(Context& ctx) {
  const std::size_t n = static_cast<std::size_t>(ctx.size());
  const auto host = vote_input(n);
  const auto expected = vote_expected(host);
  DeviceBuffer<unsigned> in(n), out(expected.size());
  in.upload(host);
  Row& row = ctx.measure(
      "", n, static_cast<double>(n + expected.size()) * sizeof(unsigned),  // the words read + 3 written per block
      [&](cudaStream_t s) { launch_barrier_vote(in.data(), n, kVoteThreshold, out.data(), s); },
      [&] { return compare_exact(out.download(), expected); }, [&](cudaStream_t s) { out.poison(s); });
  std::size_t all = 0, any = 0;
  for (std::size_t b = 0; b < expected.size() / 3; ++b) {
    all += expected[3 * b + 1];
    any += expected[3 * b + 2];
  }
  row.set("blocks", static_cast<double>(expected.size() / 3))
      .set("blocks_all_pass", static_cast<double>(all))
      .set("blocks_any_pass", static_cast<double>(any));
}

// --runs (20 with --quick).
std::size_t runs_option(const Context& ctx) {
  const std::uint64_t runs = ctx.extra_size("runs", 20);
  if (runs > 100000) throw CliError("--runs must be at most 100000");
  return static_cast<std::size_t>(runs);
}

template <bool AtomicRef>
void last_block(Context& ctx) {
  const std::size_t n = static_cast<std::size_t>(ctx.size());
  const std::size_t runs = runs_option(ctx);
  const auto host = reduce_input(n);
  const Sum expected = reduce_cpu(host);
  const unsigned blocks = last_block_grid(n);
  DeviceBuffer<unsigned> in(n);
  in.upload(host);
  DeviceBuffer<Sum> partials(blocks), results(runs);
  DeviceBuffer<unsigned> ticket(1);
  ticket.fill_bytes(0, ctx.stream());
  results.poison(ctx.stream());

  // Back to back, no synchronization in between: each launch must leave the counter at zero for the next.
  // The partials are poisoned before every run: with the same input each time, a partial read before its
  // block stored it would otherwise hold the previous run's (identical) value and the sum would be right
  // by accident.
  for (std::size_t r = 0; r < runs; ++r) {
    partials.poison(ctx.stream());
    launch_reduce_last_block<AtomicRef>(in.data(), n, partials.data(), ticket.data(), results.data() + r, blocks,
                                        ctx.stream());
  }
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  const auto got = results.download();
  unsigned ticket_after = 1;
  ticket.download(&ticket_after, 1);
  const VerifyResult every = compare_exact(got, std::vector<Sum>(runs, expected));
  bool ok = ctx.check(every, fmt::format("{} runs", runs));
  ok = ctx.check(compare_value(ticket_after, 0u, "ticket after the runs"), "counter reset") && ok;
  const std::string params = fmt::format("runs={} blocks={}", runs, blocks);
  if (!ok) {
    ctx.add_row(params, n, false).set("runs", static_cast<double>(runs)).set("wrong_runs", static_cast<double>(every.mismatches));
    return;
  }
  const Timing t = ctx.time([&](cudaStream_t s) {
    launch_reduce_last_block<AtomicRef>(in.data(), n, partials.data(), ticket.data(), results.data(), blocks, s);
  });
  ctx.add_timed_row(params, n, static_cast<double>(n) * sizeof(unsigned), t, true)
      .set("runs", static_cast<double>(runs))
      .set("wrong_runs", 0.0);
  if (!AtomicRef)
    ctx.note("without the __threadfence() the ticket can become visible before the partial it vouches for; the "
             "last block then adds a stale partial and the sum is wrong now and then (not shipped: a racy kernel).");
}

constexpr std::uint64_t kDefaultSize = (std::uint64_t{1} << 20) + 7;

Demo make_demo() {
  Demo d;
  d.name = "sync_fences";
  d.summary =
      "__syncthreads semantics (two barriers per reused tile, barrier votes, never a barrier in divergent code)\n"
      "and the last-block-finishes pattern with __threadfence() / acq_rel atomics, launched --runs times back\n"
      "to back, every result checked.";
  d.size_meaning = "elements (default 1M + 7: not a multiple of the block)";
  d.variants = {
      {"barrier_segment_reverse", "shared tile reused in a grid-stride loop: two barriers per tile",
       barrier_segment_reverse},
      {"barrier_vote", "__syncthreads_count / _and / _or", barrier_vote},
      {"last_block_threadfence", "partial, __threadfence(), atomicAdd ticket; last block sums", last_block<false>},
      {"last_block_atomic_ref", "the same with cuda::atomic_ref fetch_add(acq_rel)", last_block<true>},
  };
  d.claims = {
      Claim{"threadfence_sum_always_exact",
            "With __threadfence() before the ticket, every back-to-back launch of the last-block sum is exact.",
            "wrong_runs of last_block_threadfence", Bound::at_most(0.0),
            "the fence makes each partial visible before the ticket that vouches for it; one wrong run is a bug",
            ClaimKind::device, [](const RunRows& r) { return r.only_value("last_block_threadfence", "wrong_runs"); }},
      Claim{"acq_rel_ticket_sum_always_exact",
            "With an acq_rel atomic_ref ticket, every back-to-back launch of the last-block sum is exact.",
            "wrong_runs of last_block_atomic_ref", Bound::at_most(0.0),
            "release orders the partial before the ticket, acquire orders the last block's reads after it; one "
            "wrong run is a bug",
            ClaimKind::device, [](const RunRows& r) { return r.only_value("last_block_atomic_ref", "wrong_runs"); }},
      Claim{"acq_rel_costs_no_more_than_fence",
            "The acq_rel ticket costs no more time than __threadfence() followed by a relaxed atomicAdd.",
            "median_ms last_block_atomic_ref / last_block_threadfence", Bound::at_most(1.15),
            "acq_rel orders only what the ticket needs, the fence is a full one; both kernels last a few "
            "microseconds, so 15% is left for noise",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.only_value("last_block_atomic_ref", "median_ms") /
                     r.only_value("last_block_threadfence", "median_ms");
            }},
  };
  d.extras = {ExtraOption::size("runs", "back-to-back launches of each last-block variant (20 with --quick)", 1000)};
  d.check_options = [](Context& ctx) { (void)runs_option(ctx); };
  d.default_size = [](const DeviceInfo&) { return kDefaultSize; };
  d.quick_size = 100003;
  d.max_size = [](const DeviceInfo&) { return std::uint64_t{64} * kDefaultSize; };
  d.max_size_reason = "64x the default: the CPU references and the --runs back-to-back launches grow with it";
  d.device_bytes = [](std::uint64_t n) { return 3.0 * static_cast<double>(n) * sizeof(unsigned) + 16e6; };
  d.warmup_ms = 20.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
