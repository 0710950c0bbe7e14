// Host-only logic of 04_transfers: the transfer pattern, the CPU references, the overlap models and
// chunking, the timeline (engine inference, Chrome trace), and the PCIe link reader.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>
#include <vector>

#include "04_transfers/kernels/batching_reference.hpp"
#include "04_transfers/kernels/lcg_reference.hpp"
#include "04_transfers/kernels/overlap_model.hpp"
#include "04_transfers/kernels/pcie_link.hpp"
#include "04_transfers/kernels/timeline.hpp"
#include "04_transfers/kernels/transfer_pattern.hpp"
#include "04_transfers/kernels/vector_add_reference.hpp"

namespace {

using namespace cml;
using namespace cml::ch04;

// ---- Pattern ----------------------------------------------------------------------------------------------

TEST(TransfersPattern, WordsAreDistinctAndNeverPoison) {
  std::set<std::uint32_t> seen;
  for (std::uint64_t i = 0; i < (1u << 20); ++i) {
    const std::uint32_t w = pattern_word(i, 11);
    EXPECT_NE(w, kPoisonWord);
    EXPECT_EQ(w & 0x80000000u, 0u);
    seen.insert(w);
  }
  EXPECT_EQ(seen.size(), 1u << 20);
  // Distinct across the whole 2^31-word range: index 0 and 2^31 are the first pair that may repeat.
  EXPECT_NE(pattern_word(0, 11), pattern_word((1ull << 31) - 1, 11));
  EXPECT_EQ(pattern_word(0, 11), pattern_word(1ull << 31, 11));
}

TEST(TransfersPattern, SeedsDiffer) {
  for (std::uint64_t i = 0; i < 1000; ++i) EXPECT_NE(pattern_word(i, 1), pattern_word(i, 2));
}

TEST(TransfersPattern, CheckCatchesOneWordAndAShift) {
  std::vector<std::uint32_t> v(1001);
  fill_pattern_host(v.data(), v.size(), 7);
  EXPECT_TRUE(check_pattern_host(v.data(), v.size(), 7).ok());
  v[500] ^= 1u;
  auto r = check_pattern_host(v.data(), v.size(), 7);
  EXPECT_EQ(r.mismatches, 1u);
  ASSERT_FALSE(r.first.empty());
  EXPECT_EQ(r.first[0].rfind("index 500:", 0), 0u) << r.first[0];
  // A copy shifted by one word matches nowhere.
  std::vector<std::uint32_t> src(1001), shifted(1001);
  fill_pattern_host(src.data(), src.size(), 7);
  for (std::size_t i = 1; i < shifted.size(); ++i) shifted[i] = src[i - 1];
  shifted[0] = src[0];
  EXPECT_EQ(check_pattern_host(shifted.data(), shifted.size(), 7).mismatches, 1000u);
}

TEST(TransfersPattern, PoisonedBufferFailsEverywhere) {
  std::vector<std::uint32_t> v(33);
  poison_host(v.data(), v.size() * sizeof(std::uint32_t));
  EXPECT_EQ(check_pattern_host(v.data(), v.size(), 3).mismatches, 33u);
}

TEST(TransfersPattern, DeltaCountsIncrements) {
  std::vector<std::uint32_t> v(17);
  fill_pattern_host(v.data(), v.size(), 9);
  for (auto& w : v) w += 4;
  EXPECT_TRUE(check_pattern_host(v.data(), v.size(), 9, 4).ok());
  EXPECT_FALSE(check_pattern_host(v.data(), v.size(), 9, 3).ok());
}

// ---- LCG reference ----------------------------------------------------------------------------------------

TEST(TransfersLcg, ClosedFormEqualsTheLoop) {
  for (std::uint32_t steps : {0u, 1u, 2u, 7u, 100u, 2345u}) {
    const Affine f = lcg_power(steps);
    for (std::uint32_t x : {0u, 1u, 12345u, 0x7FFFFFFFu, 0xFFFFFFFFu})
      EXPECT_EQ(f.a * x + f.c, lcg_steps(x, steps)) << "steps " << steps << " x " << x;
  }
}

TEST(TransfersLcg, ReferenceAtOddSize) {
  const std::size_t n = 1003;
  std::vector<std::uint32_t> in(n), out(n);
  fill_pattern_host(in.data(), n, 3);
  lcg_reference(in.data(), out.data(), n, 77);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], lcg_steps(in[i], 77)) << i;
}

// ---- Vector add reference ---------------------------------------------------------------------------------

// Random operands in [1, 2): a sum is one correctly rounded add, in [2, 4), and the two inputs differ.
TEST(TransfersVectorAdd, InputsAreRandomOperands) {
  std::size_t equal = 0;
  for (std::size_t i = 0; i < 100000; i += 7) {
    const float a = vector_add_input_a(i), b = vector_add_input_b(i);
    ASSERT_GE(a, 1.0f);
    ASSERT_LT(a, 2.0f);
    ASSERT_GE(b, 1.0f);
    ASSERT_LT(b, 2.0f);
    EXPECT_EQ(a + b, static_cast<float>(static_cast<double>(a) + static_cast<double>(b)));
    equal += a == b;
  }
  EXPECT_LE(equal, 2u);
}

TEST(TransfersVectorAdd, OffsetShiftsTheInputs) {
  const std::size_t n = 31, off = 5;
  std::vector<float> a(n + off), b(n + off);
  fill_vector_add_inputs(a.data(), b.data(), n + off);
  const auto c = vector_add_reference(a.data(), b.data(), n, off);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(c[i], a[i + off] + b[i + off]);
}

// ---- Timeline -----------------------------------------------------------------------------------------

// Two chunks in two streams, both H2D copies ready at the fork: the second copy waits for the copy
// engine, its kernel for the first kernel; the D2H of chunk 0 starts when its own kernel ends.
std::vector<StepTimes> two_chunk_steps() {
  return {
      {0, 0, Step::h2d, 0.0, 1.0, 100}, {0, 0, Step::kernel, 1.0, 3.0, 200}, {0, 0, Step::d2h, 3.0, 4.0, 100},
      {1, 1, Step::h2d, 0.0, 2.0, 100}, {1, 1, Step::kernel, 2.0, 5.0, 200}, {1, 1, Step::d2h, 5.0, 6.0, 100},
  };
}

TEST(TransfersTimeline, EachEngineTakesItsStepsInIssueOrder) {
  const std::vector<Span> spans = engine_spans(two_chunk_steps());
  ASSERT_EQ(spans.size(), 6u);
  EXPECT_DOUBLE_EQ(spans[0].start_ms, 0.0);  // H2D chunk 0
  EXPECT_DOUBLE_EQ(spans[3].start_ms, 1.0);  // H2D chunk 1: ready at 0, copy engine free at 1
  EXPECT_DOUBLE_EQ(spans[1].start_ms, 1.0);  // kernel chunk 0
  EXPECT_DOUBLE_EQ(spans[4].start_ms, 3.0);  // kernel chunk 1: ready at 2, SMs free at 3
  EXPECT_DOUBLE_EQ(spans[5].start_ms, 5.0);  // D2H chunk 1: ready at 5, engine free since 4
  for (const Span& s : spans) {
    EXPECT_LE(s.t.ready_ms, s.start_ms);
    EXPECT_LE(s.start_ms, s.t.end_ms);
  }
}

TEST(TransfersTimeline, AStepNeverStartsAfterItEnds) {
  // Events on different streams may report a step finishing before the previous step of its kind (the
  // copy engines are not strictly in order): the span is then empty, never negative.
  const std::vector<Span> spans = engine_spans({{0, 0, Step::h2d, 0.0, 2.0, 1}, {1, 1, Step::h2d, 0.0, 1.5, 1}});
  EXPECT_DOUBLE_EQ(spans[1].start_ms, 1.5);
  EXPECT_DOUBLE_EQ(spans[1].t.end_ms, 1.5);
}

TEST(TransfersTimeline, ChromeTraceHasOneRowPerStreamAndEngine) {
  TimelineRun run{"staged, 2 streams", 2, 6.0, engine_spans(two_chunk_steps())};
  const std::string json = chrome_trace_json({run}, {{"device", "a \"quoted\" GPU"}});
  // Two stream rows and three engine rows, named; every step twice (its stream's row and its engine's).
  for (const char* name : {"\"stream 0\"", "\"stream 1\"", "\"H2D copies (host to device)\"",
                           "\"kernels (SMs)\"", "\"D2H copies (device to host)\""})
    EXPECT_NE(json.find(name), std::string::npos) << name;
  std::size_t complete = 0;
  for (std::size_t at = json.find("\"ph\":\"X\""); at != std::string::npos; at = json.find("\"ph\":\"X\"", at + 1))
    ++complete;
  EXPECT_EQ(complete, 12u);
  // Microseconds: chunk 1's kernel starts at 3 ms and lasts 2 ms.
  EXPECT_NE(json.find(R"("name":"kernel chunk 1","cat":"kernel","ts":3000.000,"dur":2000.000)"), std::string::npos);
  EXPECT_NE(json.find(R"("device":"a \"quoted\" GPU")"), std::string::npos);
  EXPECT_EQ(json.rfind("]}\n"), json.size() - 3);
}

// ---- Overlap models and chunking --------------------------------------------------------------------------

TEST(TransfersOverlapModel, BestPracticesFormula) {
  EXPECT_DOUBLE_EQ(bpg_overlap_model_ms(10.0, 4.0, 4), 10.0 + 4.0 / 4);  // tE > tT: tE + tT/n
  EXPECT_DOUBLE_EQ(bpg_overlap_model_ms(4.0, 10.0, 4), 10.0 + 4.0 / 4);  // tT > tE: tT + tE/n
  EXPECT_DOUBLE_EQ(bpg_overlap_model_ms(3.0, 5.0, 1), 8.0);              // one stream: no overlap
}

TEST(TransfersOverlapModel, PipelineAgreesWhenTheKernelDominates) {
  // tE >= H2D + D2H: both models give tE + (H2D + D2H) / n.
  for (int n = 1; n <= 8; ++n)
    EXPECT_DOUBLE_EQ(pipeline_model_ms(2.0, 4.2, 2.0, n, 2), bpg_overlap_model_ms(4.2, 4.0, n));
  // Two copy engines let H2D and D2H overlap each other: better than the two-stage model here.
  EXPECT_LT(pipeline_model_ms(2.0, 3.0, 2.0, 8, 2), bpg_overlap_model_ms(3.0, 4.0, 8));
  // One copy engine: the two-stage model exactly.
  EXPECT_DOUBLE_EQ(pipeline_model_ms(2.0, 3.0, 2.0, 8, 1), bpg_overlap_model_ms(3.0, 4.0, 8));
}

TEST(TransfersOverlapModel, ChunksCoverEveryWordOnceAligned) {
  for (std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{1000003},
                        std::size_t{64} << 20}) {
    for (int chunks = 1; chunks <= 8; ++chunks) {
      std::size_t next = 0;
      for (int k = 0; k < chunks; ++k) {
        const Chunk c = chunk_of(n, chunks, k, 256);
        if (c.count == 0) {
          EXPECT_EQ(c.first, n);
          continue;
        }
        EXPECT_EQ(c.first, next) << "n " << n << " chunks " << chunks << " k " << k;
        EXPECT_EQ(c.first % 256, 0u);
        next = c.first + c.count;
      }
      EXPECT_EQ(next, n) << "n " << n << " chunks " << chunks;
    }
  }
}

// stream_overlap's smallest --size, 8 x 8 x 256 words: from there up no split into 1 ... 8 chunks has an empty
// one, so its row streams=n runs the n chunks of its model.
TEST(TransfersOverlapModel, NoEmptyChunkFromTheSmallestOverlapSize) {
  constexpr std::size_t kMinWords = 8 * 8 * 256;
  for (std::size_t n = kMinWords; n < 4 * kMinWords; ++n)
    for (int chunks = 1; chunks <= 8; ++chunks)
      ASSERT_NE(chunk_of(n, chunks, chunks - 1, 256).count, 0u) << "n " << n << " chunks " << chunks;
  EXPECT_EQ(chunk_of(12544, 8, 7, 256).count, 0u);  // below it, the last of 8 chunks can be empty
}

// ---- Batching layout --------------------------------------------------------------------------------------

TEST(TransfersBatching, LayoutWithAShortLastChunk) {
  const ChunkLayout l{10, 3};
  EXPECT_EQ(l.chunks(), 4u);
  EXPECT_EQ(l.length(3), 1u);
  EXPECT_EQ(l.scattered_offset(2), 12u);
  EXPECT_EQ(l.scattered_words(), 24u);
}

TEST(TransfersBatching, PackUnpackRoundTripAndScatterCheck) {
  for (const ChunkLayout l : {ChunkLayout{1000003, 1}, ChunkLayout{1000003, 3}, ChunkLayout{1000003, 1024},
                              ChunkLayout{7, 7}, ChunkLayout{7, 100}}) {
    std::vector<std::uint32_t> src(l.scattered_words()), packed(l.total_words), dst(l.scattered_words());
    fill_pattern_host(src.data(), src.size(), 41);
    pack_host(src.data(), packed.data(), l);
    poison_host(dst.data(), dst.size() * sizeof(std::uint32_t));
    unpack_reference(packed.data(), dst.data(), l);
    EXPECT_TRUE(check_scattered(dst.data(), l, 41).ok()) << l.total_words << "/" << l.chunk_words;
    // A copy that also moved a gap word is caught...
    if (l.scattered_words() > l.chunk_words) {
      std::vector<std::uint32_t> bad = dst;
      bad[l.chunk_words] = src[l.chunk_words];
      EXPECT_FALSE(check_scattered(bad.data(), l, 41).ok());
    }
    // ...and so is a missing chunk word.
    std::vector<std::uint32_t> missing = dst;
    missing[0] = kPoisonWord;
    EXPECT_FALSE(check_scattered(missing.data(), l, 41).ok());
  }
}

// ---- PCIe link --------------------------------------------------------------------------------------------

TEST(TransfersPcie, BusIdToSysfsName) {
  EXPECT_EQ(sysfs_bus_id("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(sysfs_bus_id("00000000:C1:00.1"), "0000:c1:00.1");
  EXPECT_EQ(sysfs_bus_id("not a bus id"), "");
}

TEST(TransfersPcie, SpeedsAndLaneRates) {
  EXPECT_DOUBLE_EQ(parse_link_speed_gt("32.0 GT/s PCIe"), 32.0);
  EXPECT_DOUBLE_EQ(parse_link_speed_gt("2.5 GT/s"), 2.5);
  EXPECT_DOUBLE_EQ(parse_link_speed_gt("Unknown"), 0.0);
  EXPECT_NEAR(pcie_lane_gb_per_s(32.0) * 16, 63.015, 0.01);  // Gen5 x16
  EXPECT_NEAR(pcie_lane_gb_per_s(8.0) * 16, 15.754, 0.01);   // Gen3 x16
  EXPECT_NEAR(pcie_lane_gb_per_s(2.5), 0.25, 1e-12);         // Gen1, 8b/10b
  EXPECT_EQ(pcie_generation(32.0), 5);
  EXPECT_EQ(pcie_generation(16.0), 4);
  EXPECT_EQ(pcie_generation(0.0), 0);
}

TEST(TransfersPcie, ReadsAFakeSysfsTree) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("cml_pcie_" + std::to_string(::getpid()));
  fs::create_directories(root / "0000:3b:00.0");
  auto write = [&](const char* name, const char* text) { std::ofstream(root / "0000:3b:00.0" / name) << text << "\n"; };
  write("current_link_speed", "32.0 GT/s PCIe");
  write("current_link_width", "16");
  write("max_link_speed", "32.0 GT/s PCIe");
  write("max_link_width", "16");
  const PcieLink l = read_pcie_link("0000:3b:00.0", root.string());
  EXPECT_TRUE(l.readable) << l.why;
  EXPECT_EQ(l.current_width, 16);
  EXPECT_NEAR(l.gb_per_s(), 63.015, 0.01);
  const PcieLink missing = read_pcie_link("0000:99:00.0", root.string());
  EXPECT_FALSE(missing.readable);
  EXPECT_FALSE(missing.why.empty());
  fs::remove_all(root);
}

}  // namespace
