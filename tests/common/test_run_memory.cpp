// The device memory of a run, counted once (cml::run_memory): the demo's own buffers as its device_bytes
// gives them, the copy ceiling's two buffers for a demo that measures it, and the L2 flush buffer the harness
// holds for every run. --plan-sizes and the size check before a run both count this way.
#include <gtest/gtest.h>

#include "common/harness.hpp"

namespace {

cml::DeviceInfo card(std::size_t l2_bytes) {
  cml::DeviceInfo d;
  d.l2_bytes = l2_bytes;
  d.total_memory = std::size_t{80} << 30;
  return d;
}

constexpr double kMiB = 1024.0 * 1024.0;

TEST(RunMemory, APlainNumberIsTheDemosOwnAndTheHarnessAddsItsFlushBuffer) {
  cml::Demo demo;
  demo.device_bytes = [](std::uint64_t n) { return 8.0 * static_cast<double>(n); };
  const cml::RunMemory m = cml::run_memory(demo, 1000, card(50 * cml::kMiB), false);
  EXPECT_DOUBLE_EQ(m.own, 8000.0);
  EXPECT_DOUBLE_EQ(m.ceiling, 0.0);
  EXPECT_DOUBLE_EQ(m.flush, 100.0 * kMiB);  // twice the L2, as L2Flusher allocates it
  EXPECT_DOUBLE_EQ(m.total(), 8000.0 + 100.0 * kMiB);
}

TEST(RunMemory, TheFlushBufferIsAtLeastOneMiB) {
  EXPECT_DOUBLE_EQ(cml::run_memory(cml::Demo{}, 1, card(1024), false).flush, kMiB);
  EXPECT_EQ(cml::L2Flusher::buffer_bytes(1024), std::size_t{1} << 20);
  EXPECT_EQ(cml::L2Flusher::buffer_bytes(60 * cml::kMiB), 120 * cml::kMiB);
}

TEST(RunMemory, ADemoWithoutDeviceBytesStillCountsTheFlushBuffer) {
  const cml::RunMemory m = cml::run_memory(cml::Demo{}, 1 << 20, card(40 * cml::kMiB), false);
  EXPECT_DOUBLE_EQ(m.own, 0.0);
  EXPECT_DOUBLE_EQ(m.total(), 80.0 * kMiB);
}

TEST(RunMemory, TheDefaultCeilingIsTwoBuffersOfEightL2OrSixteenMiBQuick) {
  cml::Demo demo;
  demo.device_bytes = [](std::uint64_t n) { return cml::DemoMemory::with_default_ceiling(static_cast<double>(n)); };
  const cml::DeviceInfo dev = card(50 * cml::kMiB);
  EXPECT_DOUBLE_EQ(cml::run_memory(demo, 10, dev, false).ceiling, 2.0 * 8.0 * 50.0 * kMiB);
  EXPECT_DOUBLE_EQ(cml::run_memory(demo, 10, dev, true).ceiling, 2.0 * 16.0 * kMiB);
  // The same default Context::copy_ceiling measures at when asked for none in particular.
  EXPECT_EQ(cml::default_copy_ceiling_bytes(dev, false), 8 * 50 * cml::kMiB);
  EXPECT_EQ(cml::default_copy_ceiling_bytes(dev, true), 16 * cml::kMiB);
}

TEST(RunMemory, ACeilingAtTheDemosOwnSize) {
  cml::Demo demo;
  demo.device_bytes = [](std::uint64_t n) {
    const double buffer = 4.0 * static_cast<double>(n);
    return cml::DemoMemory::with_ceiling(2.0 * buffer, buffer);
  };
  const cml::RunMemory m = cml::run_memory(demo, 1000, card(50 * cml::kMiB), true);
  EXPECT_DOUBLE_EQ(m.own, 8000.0);
  EXPECT_DOUBLE_EQ(m.ceiling, 8000.0);
}

TEST(RunMemory, APlainNumberMeasuresNoCeiling) {
  const cml::DemoMemory m = 5.0;
  EXPECT_DOUBLE_EQ(m.own, 5.0);
  EXPECT_FALSE(m.measures_ceiling);
  EXPECT_TRUE(cml::DemoMemory::with_default_ceiling(5.0).measures_ceiling);
}

}  // namespace
