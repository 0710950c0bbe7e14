// weak_ordering: which orderings between blocks does the GPU keep, and which only when you ask?
//
// Message passing and store buffering litmus tests run as thousands of independent instances at once,
// under stress, with plain, volatile, fenced and atomic_ref accesses at three scopes; every outcome is
// counted on the device. The claims are only the PTX memory model's promises (no weak outcome where it
// forbids one). Where the model allows a weak outcome the demo claims nothing: it may appear or not on a
// given GPU, clock and load, and never seeing one proves nothing.
//
// Run: build/bin/weak_ordering [--size 1G] [--csv litmus.csv]
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/litmus.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

struct LitmusVariant {
  const char* name;
  Litmus test;
  Order order;
  Scope scope;
  const char* description;
  const char* why;  // the model's reason, for the claim of a variant whose weak outcome it forbids
};

const std::vector<LitmusVariant>& litmus_variants() {
  static const std::vector<LitmusVariant> v = {
      {"mp_plain", Litmus::mp, Order::plain, Scope::device, "MP, plain stores and loads", ""},
      {"mp_volatile", Litmus::mp, Order::volatile_access, Scope::device, "MP, volatile stores and loads", ""},
      {"mp_threadfence_block", Litmus::mp, Order::fence_block, Scope::block,
       "MP, volatile, __threadfence_block() between (a block fence, blocks apart)", ""},
      {"mp_threadfence", Litmus::mp, Order::fence_device, Scope::device,
       "MP, volatile, __threadfence() between on both sides",
       "__threadfence() is fence.sc.gpu: the writer's fence orders data before flag, the reader's orders its "
       "flag load before its data load; one weak outcome is a bug"},
      {"mp_release_acquire_block", Litmus::mp, Order::release_acquire, Scope::block,
       "MP, atomic_ref release flag / acquire flag, thread_scope_block (the wrong scope)", ""},
      {"mp_release_acquire_device", Litmus::mp, Order::release_acquire, Scope::device,
       "MP, atomic_ref release flag / acquire flag, thread_scope_device",
       "an acquire that reads a release's value synchronizes with it at device scope: every write before the "
       "release is visible after the acquire; one weak outcome is a bug"},
      {"mp_release_acquire_system", Litmus::mp, Order::release_acquire, Scope::system,
       "MP, atomic_ref release flag / acquire flag, thread_scope_system",
       "system scope contains device scope: the same synchronization; one weak outcome is a bug"},
      {"sb_plain", Litmus::sb, Order::plain, Scope::device, "SB, plain stores and loads", ""},
      {"sb_volatile", Litmus::sb, Order::volatile_access, Scope::device, "SB, volatile stores and loads", ""},
      {"sb_threadfence_block", Litmus::sb, Order::fence_block, Scope::block,
       "SB, volatile, __threadfence_block() between (a block fence, blocks apart)", ""},
      {"sb_threadfence", Litmus::sb, Order::fence_device, Scope::device,
       "SB, volatile, __threadfence() between on both sides",
       "__threadfence() is fence.sc.gpu: two SC fences are ordered one before the other, so the thread whose "
       "fence comes second sees the other's store; one weak outcome is a bug"},
      {"sb_release_acquire_device", Litmus::sb, Order::release_acquire, Scope::device,
       "SB, atomic_ref release store / acquire load, thread_scope_device (allowed to be weak)", ""},
      {"sb_seq_cst_block", Litmus::sb, Order::seq_cst, Scope::block,
       "SB, atomic_ref seq_cst, thread_scope_block (the wrong scope)", ""},
      {"sb_seq_cst_device", Litmus::sb, Order::seq_cst, Scope::device, "SB, atomic_ref seq_cst, thread_scope_device",
       "seq_cst accesses of one scope form a single total order every thread agrees on: one of the two stores "
       "comes first and the other thread's later load sees it; one weak outcome is a bug"},
      {"sb_seq_cst_system", Litmus::sb, Order::seq_cst, Scope::system, "SB, atomic_ref seq_cst, thread_scope_system",
       "system scope contains device scope: the same total order; one weak outcome is a bug"},
  };
  return v;
}

const char* test_name(Litmus t) { return t == Litmus::mp ? "mp" : "sb"; }

const char* order_name(Order o) {
  switch (o) {
    case Order::plain: return "plain";
    case Order::volatile_access: return "volatile";
    case Order::fence_block: return "__threadfence_block";
    case Order::fence_device: return "__threadfence";
    case Order::release_acquire: return "release/acquire";
    case Order::seq_cst: return "seq_cst";
  }
  return "?";
}

const char* scope_name(const LitmusVariant& v) {
  if (v.order == Order::plain || v.order == Order::volatile_access) return "";
  switch (v.scope) {
    case Scope::block: return "block";
    case Scope::device: return "device";
    case Scope::system: return "system";
  }
  return "?";
}

constexpr std::uint64_t kPlacementSeed = 20250601;

void run_litmus(Context& ctx, const LitmusVariant& v) {
  const unsigned grid = litmus_grid_for_device(v.test, v.order, v.scope);
  if (grid < 2)
    throw Waived("needs cooperative launch and two resident blocks: every thread waits for a partner in another block");
  const LitmusPlan plan = plan_litmus(grid, ctx.size());
  LitmusBuffers buffers(plan);
  buffers.place.upload(litmus_placement(plan.instances, kPlacementSeed));
  launch_litmus(v.test, v.order, v.scope, plan, buffers, ctx.stream());
  const LitmusResult r = read_litmus(plan, buffers, ctx.stream());

  bool ok = ctx.check(compare_value<std::uint64_t>(r.counts.total(), plan.trials, "outcomes counted"),
                      "the four outcome counts add up to instances x iterations");
  ok = ctx.check(compare_value(r.stuck, 0u, "threads that gave up waiting"), "every pair met every iteration") && ok;
  ok = ctx.check(compare_value<std::size_t>(r.stale_lines, 0, "locations not holding the last iteration"),
                 "every location ends holding its last store") && ok;

  const std::uint64_t weak = r.counts.weak(v.test);
  const bool forbidden = model_forbids_weak(v.test, v.order, v.scope);
  Row& row = ctx.add_row("", plan.trials, ok);
  row.set("test", test_name(v.test))
      .set("order", order_name(v.order))
      .set("scope", scope_name(v))
      .set("model_forbids_weak", forbidden ? "yes" : "no")
      .set("trials", static_cast<double>(plan.trials))
      .set("weak", static_cast<double>(weak))
      .set("weak_per_million", per_million(weak, plan.trials))
      .set("o00", static_cast<double>(r.counts.outcome[0]))
      .set("o01", static_cast<double>(r.counts.outcome[1]))
      .set("o10", static_cast<double>(r.counts.outcome[2]))
      .set("o11", static_cast<double>(r.counts.outcome[3]))
      .set("pairs", static_cast<double>(plan.pairs))
      .set("pairs_same_sm", static_cast<double>(r.pairs_same_sm))
      .set("iterations", static_cast<double>(plan.iterations));
  if (!ok) return;
  if (forbidden && weak > 0)
    ctx.note(fmt::format("{}: {} weak outcome(s) where the memory model forbids them: a bug in the test or a "
                         "violation of the model",
                         v.name, weak));
  else if (!forbidden && weak == 0)
    ctx.note(fmt::format("{}: no weak outcome in {} trials. That proves nothing: the model allows it, the compiler "
                         "may reorder, and another GPU, clock or load may show it.",
                         v.name, plan.trials));
  if (r.pairs_same_sm > 0)
    ctx.note(fmt::format("{}: {} of {} block pairs ran on one SM (their threads still ran in different blocks)",
                         v.name, r.pairs_same_sm, plan.pairs));
}

std::vector<Claim> claims() {
  std::vector<Claim> out;
  for (const LitmusVariant& v : litmus_variants()) {
    if (!model_forbids_weak(v.test, v.order, v.scope)) continue;
    const std::string name = v.name;
    const std::string what = v.test == Litmus::mp ? "flag new with data old" : "both loads missing the other store";
    out.push_back(Claim{
        name + "_never_weak",
        fmt::format("{}: not one trial ends {} ({}).", name, what, v.description),
        fmt::format("weak outcomes of {} (trials of an unverified run count as not measured)", name),
        Bound::at_most(0.0), v.why, ClaimKind::device, [name](const RunRows& rows) {
          const Row& r = rows.row(name);
          return r.verified ? RunRows::value(r, "weak") : kNaN;
        }});
  }
  return out;
}

Demo make_demo() {
  Demo d;
  d.name = "weak_ordering";
  d.summary =
      "Litmus tests between threads of different blocks: message passing and store buffering with plain,\n"
      "volatile, fenced and atomic_ref accesses at block, device and system scope, every outcome counted on the\n"
      "GPU. Claims: no weak outcome where the PTX memory model forbids one; elsewhere no claim either way:\n"
      "never seeing a weak outcome the model allows proves nothing (another GPU, clock or load may show it).";
  d.size_meaning = "trials per variant (at least: rounded up to whole iterations of every instance)";
  for (const LitmusVariant& v : litmus_variants())
    d.variants.push_back({v.name, v.description, [&v](Context& c) { run_litmus(c, v); }});
  d.claims = claims();
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{100'000'000}; };
  d.quick_size = std::uint64_t{1} << 20;
  d.max_size = [](const DeviceInfo&) { return std::uint64_t{10'000'000'000}; };
  d.max_size_reason = "10^10 trials: a handshake per trial, seconds per variant even on a large GPU";
  // The lines of every instance (and their handshakes) and the stress buffers; the trial count costs no memory.
  d.device_bytes = [](std::uint64_t) { return 64e6; };
  d.cold_by_default = false;
  d.warmup_ms = 0.0;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
