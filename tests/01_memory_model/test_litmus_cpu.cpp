// Host-side logic of weak_ordering: how a trial's loads become one of four outcomes, which outcome is weak,
// which variants the memory model promises never to be weak, the handshake's payload, and the run's shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "01_memory_model/kernels/litmus_reference.hpp"

namespace {

using namespace cml::ch01;

TEST(LitmusOutcome, BitOneIsTheFirstObservationBitZeroTheSecond) {
  EXPECT_EQ(outcome_of(false, false), 0u);
  EXPECT_EQ(outcome_of(false, true), 1u);
  EXPECT_EQ(outcome_of(true, false), 2u);
  EXPECT_EQ(outcome_of(true, true), 3u);
}

TEST(LitmusOutcome, AValueIsNewFromThisIterationOn) {
  EXPECT_FALSE(is_new(0, 1));   // the initial value
  EXPECT_FALSE(is_new(6, 7));   // the previous iteration's store
  EXPECT_TRUE(is_new(7, 7));    // this iteration's
  EXPECT_TRUE(is_new(8, 7));    // a later one (the load was performed after the next handshake)
}

TEST(LitmusOutcome, ClassifiesMessagePassing) {
  // B loads flag, then data; weak: the new flag with the old data.
  EXPECT_EQ(classify(5, 4, 4), 0u);
  EXPECT_EQ(classify(5, 4, 5), 1u);
  EXPECT_EQ(classify(5, 5, 4), weak_outcome(Litmus::mp));
  EXPECT_EQ(classify(5, 5, 5), 3u);
  EXPECT_EQ(classify(5, 6, 0), weak_outcome(Litmus::mp));  // a newer flag still vouches for this data
}

TEST(LitmusOutcome, ClassifiesStoreBuffering) {
  // first = A's load of y, second = B's load of x; weak: neither saw the other's store.
  EXPECT_EQ(classify(9, 8, 8), weak_outcome(Litmus::sb));
  EXPECT_EQ(classify(9, 9, 8), 2u);
  EXPECT_EQ(classify(9, 8, 9), 1u);
  EXPECT_EQ(classify(9, 9, 10), 3u);
}

TEST(LitmusOutcome, WeakOutcomesDiffer) {
  EXPECT_EQ(weak_outcome(Litmus::mp), outcome_of(true, false));
  EXPECT_EQ(weak_outcome(Litmus::sb), outcome_of(false, false));
}

TEST(LitmusCounts, TotalAndWeak) {
  LitmusCounts c;
  c.outcome[0] = 1;
  c.outcome[1] = 20;
  c.outcome[2] = 300;
  c.outcome[3] = 4000;
  EXPECT_EQ(c.total(), 4321u);
  EXPECT_EQ(c.weak(Litmus::mp), 300u);
  EXPECT_EQ(c.weak(Litmus::sb), 1u);
  EXPECT_DOUBLE_EQ(per_million(3, 1000000), 3.0);
  EXPECT_DOUBLE_EQ(per_million(1, 4000000), 0.25);
  EXPECT_DOUBLE_EQ(per_million(5, 0), 0.0);
}

// ---- the model's promises --------------------------------------------------------------------------------

TEST(LitmusModel, ForbidsExactlyTheFencedAndScopedVariants) {
  const Order orders[] = {Order::plain, Order::volatile_access, Order::fence_block, Order::fence_device,
                          Order::release_acquire, Order::seq_cst};
  const Scope scopes[] = {Scope::block, Scope::device, Scope::system};
  for (Litmus t : {Litmus::mp, Litmus::sb})
    for (Order o : orders)
      for (Scope s : scopes) {
        bool expected = false;
        if (o == Order::fence_device) expected = true;
        if (o == Order::seq_cst && s != Scope::block) expected = true;
        if (o == Order::release_acquire && s != Scope::block && t == Litmus::mp) expected = true;
        EXPECT_EQ(model_forbids_weak(t, o, s), expected)
            << "test " << int(t) << " order " << int(o) << " scope " << int(s);
      }
}

TEST(LitmusModel, ReleaseAcquireDoesNotOrderAStoreBeforeALaterLoad) {
  EXPECT_TRUE(model_forbids_weak(Litmus::mp, Order::release_acquire, Scope::device));
  EXPECT_FALSE(model_forbids_weak(Litmus::sb, Order::release_acquire, Scope::device));
  EXPECT_FALSE(model_forbids_weak(Litmus::sb, Order::release_acquire, Scope::system));
}

TEST(LitmusModel, BlockScopePromisesNothingBetweenBlocks) {
  for (Litmus t : {Litmus::mp, Litmus::sb}) {
    EXPECT_FALSE(model_forbids_weak(t, Order::release_acquire, Scope::block));
    EXPECT_FALSE(model_forbids_weak(t, Order::seq_cst, Scope::block));
    EXPECT_FALSE(model_forbids_weak(t, Order::fence_block, Scope::block));
    EXPECT_FALSE(model_forbids_weak(t, Order::plain, Scope::device));
    EXPECT_FALSE(model_forbids_weak(t, Order::volatile_access, Scope::system));
  }
}

// ---- the handshake ---------------------------------------------------------------------------------------

TEST(LitmusHandshake, WordCarriesTheIterationAndTwoBits) {
  EXPECT_EQ(handshake_iteration(handshake_word(1, 0)), 1u);
  EXPECT_EQ(handshake_iteration(handshake_word(kMaxIterations + 1, 3)), kMaxIterations + 1);
  EXPECT_EQ(handshake_word(5, 7) & 3u, 3u);  // only two bits of payload
  EXPECT_NE(handshake_word(1, 0), 0u);       // 0 stays "nothing announced yet"
}

// Thread A's results over a run, replayed: B, waiting at iteration i, finds A's word naming i (A has not
// run trial i yet) or i + 1 (it has); either way it must read back A's result of iteration i - 1.
TEST(LitmusHandshake, BReadsAsResultOfThePreviousIterationWhetherAIsLevelOrAhead) {
  const std::vector<bool> a_results = {true, false, false, true, true, false, true, false, false, true};
  unsigned recent = 0;
  std::vector<unsigned> word_at(a_results.size() + 2);  // A's word when it announces iteration i
  for (unsigned i = 1; i <= a_results.size() + 1; ++i) {
    word_at[i] = handshake_word(i, recent);
    if (i <= a_results.size()) recent = push_result(recent, a_results[i - 1]);
  }
  for (unsigned i = 2; i <= a_results.size() + 1; ++i) {
    EXPECT_EQ(a_saw_previous(word_at[i], i), a_results[i - 2]) << "A level with B at " << i;
    if (i + 1 < word_at.size()) {
      EXPECT_EQ(a_saw_previous(word_at[i + 1], i), a_results[i - 2]) << "A one ahead of B at " << i;
    }
  }
}

// ---- the run's shape -------------------------------------------------------------------------------------

TEST(LitmusGrid, OneBlockPerSmEvenAndResident) {
  EXPECT_EQ(litmus_grid(132, 1), 132u);
  EXPECT_EQ(litmus_grid(133, 4), 132u);   // even: blocks pair up
  EXPECT_EQ(litmus_grid(1, 2), 2u);       // one SM that holds two blocks: both on it
  EXPECT_EQ(litmus_grid(1, 1), 0u);       // a partner could never be resident
  EXPECT_EQ(litmus_grid(0, 8), 0u);
  EXPECT_EQ(litmus_grid(80, 0), 0u);
  for (int sms = 1; sms <= 300; ++sms)
    for (int per_sm = 0; per_sm <= 4; ++per_sm) {
      const unsigned g = litmus_grid(sms, per_sm);
      EXPECT_EQ(g % 2, 0u);
      EXPECT_LE(g, static_cast<unsigned>(sms * per_sm)) << "more blocks than can be resident";
    }
}

TEST(LitmusPlan, WholeIterationsAtLeastTheTrialsAsked) {
  for (unsigned grid : {2u, 3u, 16u, 132u, 264u})
    for (std::uint64_t wanted : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 20,
                                 std::uint64_t{10'000'000}, std::uint64_t{10'000'000'007}}) {
      const LitmusPlan p = plan_litmus(grid, wanted);
      EXPECT_EQ(p.grid, grid & ~1u);
      EXPECT_EQ(p.pairs, p.grid / 2);
      EXPECT_EQ(p.instances, p.pairs * kLitmusThreads);
      EXPECT_GE(p.iterations, 1u);
      EXPECT_EQ(p.trials, std::uint64_t{p.instances} * p.iterations);
      EXPECT_GE(p.trials, wanted);
      EXPECT_LT(p.trials - wanted, std::uint64_t{p.instances}) << "one iteration more than needed";
    }
}

TEST(LitmusPlan, IterationsStayBelowTheHandshakeLimit) {
  const LitmusPlan p = plan_litmus(2, std::uint64_t{1} << 60);
  EXPECT_EQ(p.iterations, kMaxIterations);
  EXPECT_EQ(handshake_iteration(handshake_word(p.iterations + 1, 3)), p.iterations + 1);
}

TEST(LitmusPlacement, EveryInstanceOwnsTwoDistinctLines) {
  const auto place = litmus_placement(1000, 7);
  ASSERT_EQ(place.size(), 2000u);
  std::vector<std::uint32_t> sorted = place;
  std::sort(sorted.begin(), sorted.end());
  for (std::uint32_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], i) << "line " << i << " missing or shared";
  EXPECT_EQ(place, litmus_placement(1000, 7));
  EXPECT_NE(place, litmus_placement(1000, 8));
}

}  // namespace
