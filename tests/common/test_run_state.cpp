// A demo's state for one run (cml::RunState, behind Context::state): made on first use, the same object
// afterwards, one per type, destroyed with the run, the last made first.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/harness.hpp"

namespace {

std::vector<std::string>* g_log = nullptr;  // where the test objects record their lives

struct Tracked {
  std::string name;
  explicit Tracked(std::string n) : name(std::move(n)) { g_log->push_back("make " + name); }
  ~Tracked() { g_log->push_back("drop " + name); }
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;
};
struct Buffers : Tracked {
  int uses = 0;
  explicit Buffers(std::string n = "buffers") : Tracked(std::move(n)) {}
};
struct Baseline : Tracked {
  Baseline() : Tracked("baseline") {}
};
// Makes other state in its constructor, as a demo's plan that needs the run's buffers does.
struct Plan {
  Buffers& buffers;
  Tracked self;
  explicit Plan(cml::RunState& s) : buffers(s.get<Buffers>()), self("plan") {}
};
struct Fails {
  explicit Fails(bool fail) {
    if (fail) throw std::runtime_error("no room");
  }
};

class RunStateTest : public ::testing::Test {
 protected:
  void SetUp() override { g_log = &log; }
  void TearDown() override { g_log = nullptr; }
  std::vector<std::string> log;
};

TEST_F(RunStateTest, MadeOnFirstUseThenTheSameObject) {
  cml::RunState s;
  EXPECT_TRUE(log.empty());
  Buffers& first = s.get<Buffers>("first");
  first.uses = 3;
  Buffers& again = s.get<Buffers>("ignored: already made");
  EXPECT_EQ(&first, &again);
  EXPECT_EQ(again.name, "first");
  EXPECT_EQ(again.uses, 3);
  EXPECT_EQ(log, (std::vector<std::string>{"make first"}));
}

TEST_F(RunStateTest, OneObjectPerType) {
  cml::RunState s;
  Buffers& b = s.get<Buffers>();
  Baseline& base = s.get<Baseline>();
  EXPECT_NE(static_cast<void*>(&b), static_cast<void*>(&base));
  EXPECT_EQ(&s.get<Buffers>(), &b);
  EXPECT_EQ(&s.get<Baseline>(), &base);
}

TEST_F(RunStateTest, DestroyedWithTheRunLastMadeFirst) {
  {
    cml::RunState s;
    s.get<Baseline>();
    s.get<Plan>(s);  // makes Buffers inside its constructor, so Buffers is made before Plan
    log.push_back("run ends");
  }
  EXPECT_EQ(log, (std::vector<std::string>{"make baseline", "make buffers", "make plan", "run ends", "drop plan",
                                           "drop buffers", "drop baseline"}));
}

TEST_F(RunStateTest, EachRunStartsFresh) {
  {
    cml::RunState s;
    s.get<Buffers>("run 1").uses = 7;
  }
  cml::RunState s;
  Buffers& b = s.get<Buffers>("run 2");
  EXPECT_EQ(b.name, "run 2");
  EXPECT_EQ(b.uses, 0);
}

TEST_F(RunStateTest, AConstructorThatThrowsLeavesNothing) {
  cml::RunState s;
  EXPECT_THROW(s.get<Fails>(true), std::runtime_error);
  EXPECT_NO_THROW(s.get<Fails>(false));  // made now, on the next call
  EXPECT_NO_THROW(s.get<Fails>(true));   // and kept: the argument is not used again
}

TEST_F(RunStateTest, ClearDropsEverything) {
  cml::RunState s;
  s.get<Buffers>("a");
  s.clear();
  EXPECT_EQ(log, (std::vector<std::string>{"make a", "drop a"}));
  EXPECT_EQ(s.get<Buffers>("b").name, "b");
}

}  // namespace
