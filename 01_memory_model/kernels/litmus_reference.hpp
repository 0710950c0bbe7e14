// Litmus tests of weak ordering: the outcomes of a trial, which of them the PTX memory model forbids, and
// how a run is planned. Host-only C++ (the CPU tests and the demo's claims use it); the kernels in
// litmus.cuh classify their trials with the same constexpr functions (--expt-relaxed-constexpr).
//
// Two tests, each between a thread of one block and a thread of another block:
//   MP (message passing)  A: data = i; flag = i        B: r0 = flag; r1 = data
//                         weak outcome: B sees the new flag but the old data.
//   SB (store buffering)  A: x = i; r0 = y             B: y = i; r1 = x
//                         weak outcome: neither load sees the other thread's store.
// Every location holds the number of the last iteration that wrote it, so a location needs no reset between
// trials: in iteration i a value of at least i is this iteration's store (or a later one), less is older.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace cml::ch01 {

enum class Litmus : std::uint8_t { mp, sb };

// How each thread makes its two accesses, and what stands between them.
enum class Order : std::uint8_t {
  plain,            // ordinary loads and stores
  volatile_access,  // through a volatile pointer
  fence_block,      // volatile accesses, __threadfence_block() between them
  fence_device,     // volatile accesses, __threadfence() between them
  release_acquire,  // cuda::atomic_ref: MP publishes with a release store and observes with an acquire load;
                    // SB stores with release and loads with acquire
  seq_cst,          // cuda::atomic_ref, every access memory_order_seq_cst
};

// The scope of the atomic_ref accesses (the orders without atomics have none).
enum class Scope : std::uint8_t { block, device, system };

// A trial ends in one of four outcomes, two bits: bit 1 = the first observation saw the new value, bit 0 =
// the second did.
//   MP: first = B's load of flag, second = B's load of data.           weak: 0b10 (flag new, data old)
//   SB: first = A's load of y (B's store), second = B's load of x.    weak: 0b00 (both old)
inline constexpr unsigned kOutcomes = 4;

constexpr unsigned outcome_of(bool first_new, bool second_new) {
  return (first_new ? 2u : 0u) | (second_new ? 1u : 0u);
}
constexpr bool is_new(unsigned value, unsigned iteration) { return value >= iteration; }
constexpr unsigned classify(unsigned iteration, unsigned first, unsigned second) {
  return outcome_of(is_new(first, iteration), is_new(second, iteration));
}
constexpr unsigned weak_outcome(Litmus t) { return t == Litmus::mp ? 2u : 0u; }

// The handshake before trial i: each thread announces word(i, payload) and waits until the partner's word
// names i or later. In SB the payload of thread A is its last two results (bit 0: whether its load in
// iteration i - 1 saw B's store, bit 1: the same for i - 2), because B needs A's result to classify a trial.
// A is never more than one iteration ahead of B (it waits for B at every iteration), so the word B finds
// while waiting at iteration i names i or i + 1, and one of its two bits is iteration i - 1's.
constexpr unsigned handshake_word(unsigned iteration, unsigned payload) { return (iteration << 2) | (payload & 3u); }
constexpr unsigned handshake_iteration(unsigned word) { return word >> 2; }
constexpr unsigned push_result(unsigned recent, bool saw) { return ((recent << 1) | (saw ? 1u : 0u)) & 3u; }
constexpr bool a_saw_previous(unsigned a_word, unsigned iteration) {
  return (((handshake_iteration(a_word) == iteration) ? a_word : a_word >> 1) & 1u) != 0;
}

// Does the PTX memory model forbid the weak outcome when the two threads (in different blocks of one grid)
// both use order `o` at scope `s`? Only then may a run promise to see none.
//   fence_device: __threadfence() is fence.sc.gpu (membar.gl); with it between the accesses on both sides
//     neither MP nor SB can be weak (the volatile accesses are strong, relaxed at system scope).
//   release_acquire: forbids MP's weak outcome; SB's is still allowed (release/acquire orders a store before
//     later stores and a load before later accesses, never a store before a later load).
//   seq_cst: forbids both.
//   At block scope, or with __threadfence_block(), the order reaches only threads of the same block: between
//   blocks it promises nothing. plain and volatile promise nothing either.
constexpr bool model_forbids_weak(Litmus t, Order o, Scope s) {
  switch (o) {
    case Order::fence_device: return true;
    case Order::release_acquire: return t == Litmus::mp && s != Scope::block;
    case Order::seq_cst: return s != Scope::block;
    default: return false;
  }
}

// The four outcome counts of a run.
struct LitmusCounts {
  std::uint64_t outcome[kOutcomes] = {};
  std::uint64_t total() const { return outcome[0] + outcome[1] + outcome[2] + outcome[3]; }
  std::uint64_t weak(Litmus t) const { return outcome[weak_outcome(t)]; }
};

inline double per_million(std::uint64_t count, std::uint64_t trials) {
  return trials == 0 ? 0.0 : 1e6 * static_cast<double>(count) / static_cast<double>(trials);
}

// ---- the run's shape -------------------------------------------------------------------------------------

inline constexpr unsigned kLitmusBlock = 256;
inline constexpr unsigned kLitmusWarps = 6;                    // warps running litmus instances
inline constexpr unsigned kLitmusThreads = kLitmusWarps * 32;  // instances per pair of blocks
inline constexpr unsigned kStressWarps = kLitmusBlock / 32 - kLitmusWarps;
inline constexpr unsigned kLineWords = 32;  // one location per 128-byte line
// The largest iteration count: a handshake word holds the iteration shifted left by two bits.
inline constexpr unsigned kMaxIterations = (1u << 29) - 2;

// Blocks for a run: one per SM (so partner blocks sit on different SMs when the GPU is otherwise idle), an
// even number (block b pairs with block b + grid/2), and never more than can be resident at once: every
// thread waits for its partner, so a partner that is not running yet would never arrive. 0 when the GPU
// cannot hold two blocks at once.
constexpr unsigned litmus_grid(int sms, int blocks_per_sm) {
  if (sms <= 0 || blocks_per_sm <= 0) return 0;
  const unsigned resident = static_cast<unsigned>(sms) * static_cast<unsigned>(blocks_per_sm);
  const unsigned wanted = sms < 2 ? 2u : static_cast<unsigned>(sms);
  return (wanted < resident ? wanted : resident) & ~1u;
}

struct LitmusPlan {
  unsigned grid = 0;
  unsigned pairs = 0;       // pairs of blocks
  unsigned instances = 0;   // independent litmus instances (thread pairs), each on its own lines
  unsigned iterations = 0;  // trials per instance
  std::uint64_t trials = 0; // instances * iterations: what the four outcome counts must add up to
};

// At least `trials_wanted` trials, in whole iterations of every instance (at least one).
inline LitmusPlan plan_litmus(unsigned grid, std::uint64_t trials_wanted) {
  LitmusPlan p;
  p.grid = grid & ~1u;
  p.pairs = p.grid / 2;
  p.instances = p.pairs * kLitmusThreads;
  if (p.instances == 0) return p;
  const std::uint64_t it = (trials_wanted + p.instances - 1) / p.instances;
  p.iterations = static_cast<unsigned>(std::min<std::uint64_t>(std::max<std::uint64_t>(it, 1), kMaxIterations));
  p.trials = static_cast<std::uint64_t>(p.instances) * p.iterations;
  return p;
}

// Where each instance's two locations live: entries 2k and 2k + 1 are the line indices of instance k's
// first (MP data, SB x) and second (MP flag, SB y) location in one array of 2 * instances lines. A random
// permutation: an instance's two lines, and neighbouring instances' lines, fall in unrelated L2 slices.
inline std::vector<std::uint32_t> litmus_placement(unsigned instances, std::uint64_t seed) {
  std::vector<std::uint32_t> lines(2 * static_cast<std::size_t>(instances));
  std::iota(lines.begin(), lines.end(), 0u);
  std::mt19937_64 rng(seed);
  std::shuffle(lines.begin(), lines.end(), rng);
  return lines;
}

}  // namespace cml::ch01
