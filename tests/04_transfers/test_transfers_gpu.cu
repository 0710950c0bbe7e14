// 04_transfers on a device: every kernel against its CPU reference at odd sizes (outputs poisoned first),
// every transfer path bit-exact, pointer attributes as documented, managed memory with prefetch and advice.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "04_transfers/kernels/batching.cuh"
#include "04_transfers/kernels/host_buffers.hpp"
#include "04_transfers/kernels/lcg.cuh"
#include "04_transfers/kernels/managed.cuh"
#include "04_transfers/kernels/pipeline.cuh"
#include "04_transfers/kernels/pointer_facts.hpp"
#include "04_transfers/kernels/transfer_kernels.cuh"
#include "04_transfers/kernels/vector_add.cuh"
#include "04_transfers/kernels/vector_add_reference.hpp"
#include "tests/testing.hpp"

namespace cml::ch04 {
// Test names and failure messages show the kind by name.
inline void PrintTo(HostKind k, std::ostream* os) { *os << to_string(k); }
}  // namespace cml::ch04

namespace {

using namespace cml;
using namespace cml::ch04;

const std::size_t kOddWords[] = {1, 3, 255, 257, 1025, 1000003};

std::string first_of(const VerifyResult& r) { return r.first.empty() ? "" : r.first[0]; }

// ---- Pattern kernels and the copy kernel --------------------------------------------------------------

class TransfersPatternKernels : public testing::TestWithParam<std::size_t> {};

TEST_P(TransfersPatternKernels, FillCheckAndCopy) {
  CML_REQUIRE_GPU();
  const std::size_t n = GetParam();
  DeviceBuffer<std::uint32_t> a(n), b(n);
  a.poison();
  launch_pattern_fill(a.data(), n, 5, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  // The device fill equals the host pattern word for word.
  std::vector<std::uint32_t> want(n);
  fill_pattern_host(want.data(), n, 5);
  EXPECT_TRUE(compare_exact(a.download(), want).ok());
  EXPECT_TRUE(check_pattern_on_device(a.data(), n, 5, nullptr).ok());

  b.poison();
  launch_copy_words(a.data(), b.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(compare_exact(b.download(), want).ok());
}

TEST_P(TransfersPatternKernels, CheckCountsAndLocatesMismatches) {
  CML_REQUIRE_GPU();
  const std::size_t n = GetParam();
  DeviceBuffer<std::uint32_t> a(n);
  launch_pattern_fill(a.data(), n, 5, nullptr);
  const std::size_t bad = n / 2;
  const std::uint32_t poison = kPoisonWord;
  CUDA_CHECK(cudaMemcpy(a.data() + bad, &poison, sizeof poison, cudaMemcpyHostToDevice));
  VerifyResult r = check_pattern_on_device(a.data(), n, 5, nullptr);
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_EQ(first_of(r).rfind("index " + std::to_string(bad) + ":", 0), 0u) << first_of(r);
  a.poison();
  EXPECT_EQ(check_pattern_on_device(a.data(), n, 5, nullptr).mismatches, n);
  // Wrong seed or delta: everything differs.
  launch_pattern_fill(a.data(), n, 5, nullptr);
  EXPECT_EQ(check_pattern_on_device(a.data(), n, 6, nullptr).mismatches, n);
  EXPECT_EQ(check_pattern_on_device(a.data(), n, 5, nullptr, 1).mismatches, n);
}

INSTANTIATE_TEST_SUITE_P(OddSizes, TransfersPatternKernels, testing::ValuesIn(kOddWords));

// ---- Every kind of host memory, both directions, sync and async ----------------------------------------

const HostKind kAllKinds[] = {HostKind::pageable,           HostKind::malloc_host,
                              HostKind::host_alloc,         HostKind::host_alloc_portable,
                              HostKind::host_alloc_write_combined, HostKind::host_alloc_mapped,
                              HostKind::host_register};

class TransfersHostKinds : public testing::TestWithParam<HostKind> {};

TEST_P(TransfersHostKinds, BitExactBothWaysAtOddSizes) {
  CML_REQUIRE_GPU();
  const HostKind kind = GetParam();
  Stream s;
  for (std::size_t n : kOddWords) {
    const std::size_t bytes = n * sizeof(std::uint32_t);
    HostBuffer h(kind, bytes);
    DeviceBuffer<std::uint32_t> d(n);
    for (bool async : {false, true}) {
      // H2D
      fill_pattern_host(h.words(), n, 21);
      d.poison();
      CUDA_CHECK(cudaDeviceSynchronize());
      if (async) CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), bytes, cudaMemcpyHostToDevice, s));
      else CUDA_CHECK(cudaMemcpy(d.data(), h.data(), bytes, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaDeviceSynchronize());
      auto r = check_pattern_on_device(d.data(), n, 21, s);
      EXPECT_TRUE(r.ok()) << to_string(kind) << " H2D n=" << n << " async=" << async << ": " << first_of(r);
      // D2H
      launch_pattern_fill(d.data(), n, 22, s);
      CUDA_CHECK(cudaStreamSynchronize(s));
      poison_host(h.data(), bytes);
      if (async) CUDA_CHECK(cudaMemcpyAsync(h.data(), d.data(), bytes, cudaMemcpyDeviceToHost, s));
      else CUDA_CHECK(cudaMemcpy(h.data(), d.data(), bytes, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaDeviceSynchronize());
      r = check_pattern_host(h.words(), n, 22);
      EXPECT_TRUE(r.ok()) << to_string(kind) << " D2H n=" << n << " async=" << async << ": " << first_of(r);
    }
  }
}

TEST_P(TransfersHostKinds, PinnedKindsAreHostMemoryToCuda) {
  CML_REQUIRE_GPU();
  const HostKind kind = GetParam();
  HostBuffer h(kind, 4096);
  const PointerFacts f = query_pointer(h.data());
  EXPECT_EQ(f.type, kind == HostKind::pageable ? cudaMemoryTypeUnregistered : cudaMemoryTypeHost) << to_string(kind);
  EXPECT_EQ(h.pinned(), kind != HostKind::pageable);
  // Moving the owner moves the allocation.
  void* p = h.data();
  HostBuffer moved(std::move(h));
  EXPECT_EQ(moved.data(), p);
  EXPECT_EQ(h.data(), nullptr);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, TransfersHostKinds, testing::ValuesIn(kAllKinds),
                         [](const testing::TestParamInfo<HostKind>& i) { return std::string(to_string(i.param)); });

// ---- Zero-copy vector add -----------------------------------------------------------------------------

TEST(TransfersVectorAdd, DeviceAndMappedInputsAtOddSizesAndOffsets) {
  CML_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{257}, std::size_t{1000003}}) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
      const std::size_t total = n + offset;
      HostBuffer ha(HostKind::host_alloc_mapped, total * sizeof(float)), hb(HostKind::host_alloc_mapped, total * sizeof(float));
      float* a = static_cast<float*>(ha.data());
      float* b = static_cast<float*>(hb.data());
      fill_vector_add_inputs(a, b, total);
      const auto want = vector_add_reference(a, b, n, offset);
      DeviceBuffer<float> da(total), db(total), dc(n);
      da.upload(a, total);
      db.upload(b, total);
      float *ma = nullptr, *mb = nullptr;
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&ma), a, 0));
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mb), b, 0));
      for (bool mapped : {false, true}) {
        dc.poison();
        launch_vector_add(mapped ? ma : da.data(), mapped ? mb : db.data(), dc.data(), n, offset, nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto r = compare_exact(dc.download(), want);
        EXPECT_TRUE(r.ok()) << "n=" << n << " offset=" << offset << " mapped=" << mapped << ": " << first_of(r);
      }
    }
  }
}

// ---- The overlap kernel and the staged pipeline --------------------------------------------------------

TEST(TransfersLcgKernel, MatchesTheClosedFormAtOddSizes) {
  CML_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{1}, std::size_t{255}, std::size_t{1000003}}) {
    std::vector<std::uint32_t> in(n), want(n);
    fill_pattern_host(in.data(), n, 3);
    DeviceBuffer<std::uint32_t> din(n), dout(n);
    din.upload(in);
    for (std::uint32_t steps : {0u, 1u, 13u, 1000u}) {
      lcg_reference(in.data(), want.data(), n, steps);
      dout.poison();
      launch_lcg_chain(din.data(), dout.data(), n, steps, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_TRUE(compare_exact(dout.download(), want).ok()) << "n=" << n << " steps=" << steps;
    }
  }
}

// The streams, join events and fork event the staged pipeline takes.
struct ChunkStreams {
  explicit ChunkStreams(int k) : streams(static_cast<std::size_t>(k)) {
    for (int i = 0; i < k; ++i) {
      joins.emplace_back(cudaEventDisableTiming);
      handles.push_back(streams[i]);
      join_handles.push_back(joins.back());
    }
  }
  std::vector<Stream> streams;
  std::vector<Event> joins;
  std::vector<cudaStream_t> handles;
  std::vector<cudaEvent_t> join_handles;
  Event fork{cudaEventDisableTiming};
};

TEST(TransfersPipeline, SequentialAndStagedOverOneToEightStreamsAreExact) {
  CML_REQUIRE_GPU();
  const std::size_t n = 1000003;
  const std::uint32_t steps = 37;
  const std::size_t bytes = n * sizeof(std::uint32_t);
  HostBuffer h_in(HostKind::malloc_host, bytes), h_out(HostKind::malloc_host, bytes);
  DeviceBuffer<std::uint32_t> d_in(n), d_out(n);
  fill_pattern_host(h_in.words(), n, 3);
  std::vector<std::uint32_t> want(n);
  lcg_reference(h_in.words(), want.data(), n, steps);
  ChunkStreams cs(8);
  const auto& sh = cs.handles;
  const auto& jh = cs.join_handles;
  Event& fork = cs.fork;
  Stream main;
  const Pipeline p{h_in.words(), d_in.data(), d_out.data(), h_out.words(), n, steps};
  for (int chunks = 0; chunks <= 8; ++chunks) {
    d_in.poison(main);
    d_out.poison(main);
    CUDA_CHECK(cudaStreamSynchronize(main));
    poison_host(h_out.data(), bytes);
    if (chunks == 0) launch_pipeline_sequential(p, main);
    else launch_pipeline_staged(p, chunks, sh.data(), fork, jh.data(), main);
    // Synchronizing `main` alone must be enough: the joins make it wait for every chunk.
    CUDA_CHECK(cudaStreamSynchronize(main));
    const auto r = compare_exact(h_out.words(), want.data(), n);
    EXPECT_TRUE(r.ok()) << "chunks=" << chunks << ": " << first_of(r);
  }
}

TEST(TransfersPipeline, TracedRunIsExactAndItsEventsAreInOrder) {
  CML_REQUIRE_GPU();
  const std::size_t n = 1000003;  // 4 chunks of 250112 words (the last one shorter)
  const std::uint32_t steps = 37;
  const std::size_t bytes = n * sizeof(std::uint32_t);
  EXPECT_EQ(chunks_used(n, 4), 4);
  EXPECT_EQ(chunks_used(1300, 4), 3);  // 256-word alignment: 512 + 512 + 276 words, the fourth empty
  EXPECT_EQ(chunks_used(100, 8), 1);
  HostBuffer h_in(HostKind::malloc_host, bytes), h_out(HostKind::malloc_host, bytes);
  DeviceBuffer<std::uint32_t> d_in(n), d_out(n);
  fill_pattern_host(h_in.words(), n, 5);
  std::vector<std::uint32_t> want(n);
  lcg_reference(h_in.words(), want.data(), n, steps);
  ChunkStreams cs(4);
  std::vector<Event> marks(16);
  std::vector<ChunkEvents> ev;
  for (int k = 0; k < 4; ++k) ev.push_back({marks[4 * k], marks[4 * k + 1], marks[4 * k + 2], marks[4 * k + 3]});
  Event origin;
  Stream main;
  const Pipeline p{h_in.words(), d_in.data(), d_out.data(), h_out.words(), n, steps};
  d_out.poison(main);
  CUDA_CHECK(cudaStreamSynchronize(main));
  poison_host(h_out.data(), bytes);
  origin.record(main);
  launch_pipeline_staged(p, 4, cs.handles.data(), cs.fork, cs.join_handles.data(), main, ev.data());
  CUDA_CHECK(cudaStreamSynchronize(main));
  const auto r = compare_exact(h_out.words(), want.data(), n);
  EXPECT_TRUE(r.ok()) << first_of(r);
  // Within a chunk the four events complete in order; every one after the origin.
  for (int k = 0; k < 4; ++k) {
    double prev = 0.0;
    for (int i = 0; i < 4; ++i) {
      const double t = marks[4 * k + i].elapsed_ms_since(origin);
      EXPECT_GE(t, prev) << "chunk " << k << " event " << i;
      prev = t;
    }
  }
}

// ---- Batching: unpack kernel, per-chunk copies, 2-D copy ------------------------------------------------

TEST(TransfersBatching, EveryPathLandsChunksInPlaceAndLeavesGaps) {
  CML_REQUIRE_GPU();
  for (const ChunkLayout l : {ChunkLayout{1000003, 1}, ChunkLayout{1000003, 3}, ChunkLayout{1000003, 4096},
                              ChunkLayout{1024, 256}, ChunkLayout{7, 100}}) {
    HostBuffer src(HostKind::malloc_host, l.scattered_words() * sizeof(std::uint32_t));
    HostBuffer staging(HostKind::malloc_host, l.total_words * sizeof(std::uint32_t));
    fill_pattern_host(src.words(), l.scattered_words(), 41);
    DeviceBuffer<std::uint32_t> dst(l.scattered_words()), packed(l.total_words);
    const std::string what = std::to_string(l.total_words) + "/" + std::to_string(l.chunk_words);

    dst.poison();
    for (std::size_t j = 0; j < l.chunks(); ++j)
      CUDA_CHECK(cudaMemcpyAsync(dst.data() + l.scattered_offset(j), src.words() + l.scattered_offset(j),
                                 l.length(j) * sizeof(std::uint32_t), cudaMemcpyHostToDevice, nullptr));
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(check_scattered(dst.download().data(), l, 41).ok()) << "many_small " << what;

    dst.poison();
    pack_host(src.words(), staging.words(), l);
    CUDA_CHECK(cudaMemcpy(packed.data(), staging.data(), l.total_words * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
    launch_unpack_chunks(packed.data(), dst.data(), l, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(check_scattered(dst.download().data(), l, 41).ok()) << "pack_copy_unpack " << what;

    if (l.total_words % l.chunk_words == 0) {  // the demo's 2-D copy needs equal chunks
      dst.poison();
      const std::size_t pitch = l.stride_words() * sizeof(std::uint32_t);
      CUDA_CHECK(cudaMemcpy2D(dst.data(), pitch, src.data(), pitch, l.chunk_words * sizeof(std::uint32_t), l.chunks(),
                              cudaMemcpyHostToDevice));
      EXPECT_TRUE(check_scattered(dst.download().data(), l, 41).ok()) << "memcpy_2d " << what;
    }
  }
}

// ---- UVA ----------------------------------------------------------------------------------------------

TEST(TransfersUva, PointerAttributesAsDocumented) {
  CML_REQUIRE_GPU();
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  const bool reg_same = registered_memory_uses_host_pointer(dev);
  DeviceBuffer<char> d(4096);
  HostBuffer pinned(HostKind::malloc_host, 4096), mapped(HostKind::host_alloc_mapped, 4096),
      registered(HostKind::host_register, 4096), pageable(HostKind::pageable, 4096);
  ManagedBuffer<char> managed(4096);
  const std::pair<PointerKind, const void*> cases[] = {
      {PointerKind::device, d.data()},           {PointerKind::malloc_host, pinned.data()},
      {PointerKind::host_alloc_mapped, mapped.data()}, {PointerKind::host_register, registered.data()},
      {PointerKind::managed, managed.data()},     {PointerKind::managed_variable, m_values},
      {PointerKind::pageable, pageable.data()}};
  for (const auto& [kind, ptr] : cases)
    EXPECT_EQ(mismatch(query_pointer(ptr), expected_attributes(kind, reg_same), dev), "") << to_string(kind);
  // An address inside an allocation has the allocation's type and device.
  const PointerFacts inside = query_pointer(d.data() + 100);
  EXPECT_EQ(inside.type, cudaMemoryTypeDevice);
  EXPECT_EQ(inside.device, dev);
}

TEST(TransfersUva, HostGetDevicePointerUnderUva) {
  CML_REQUIRE_GPU();
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  const bool reg_same = registered_memory_uses_host_pointer(dev);
  for (HostKind kind : {HostKind::host_alloc_mapped, HostKind::host_alloc, HostKind::host_register}) {
    HostBuffer h(kind, 4096);
    void* dptr = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&dptr, h.data(), 0));
    const bool same = kind != HostKind::host_register || reg_same;
    EXPECT_EQ(dptr == h.data(), same) << to_string(kind);
  }
}

// cudaMemcpyDefault between every pair of memory kinds, odd size.
TEST(TransfersUva, MemcpyDefaultEveryPair) {
  CML_REQUIRE_GPU();
  const std::size_t n = 1025, bytes = n * sizeof(std::uint32_t);
  struct End {
    const char* name;
    HostBuffer host;
    ManagedBuffer<std::uint32_t> managed;
    DeviceBuffer<std::uint32_t> dev;
    std::uint32_t* p;
  };
  auto make = [&](int k) {
    End e{};
    switch (k) {
      case 0: e.name = "pageable"; e.host = HostBuffer(HostKind::pageable, bytes); e.p = e.host.words(); break;
      case 1: e.name = "pinned"; e.host = HostBuffer(HostKind::malloc_host, bytes); e.p = e.host.words(); break;
      case 2: e.name = "registered"; e.host = HostBuffer(HostKind::host_register, bytes); e.p = e.host.words(); break;
      case 3: e.name = "managed"; e.managed = ManagedBuffer<std::uint32_t>(n); e.p = e.managed.data(); break;
      default: e.name = "device"; e.dev = DeviceBuffer<std::uint32_t>(n); e.p = e.dev.data(); break;
    }
    return e;
  };
  std::uint32_t seed = 100;
  for (int from = 0; from < 5; ++from)
    for (int to = 0; to < 5; ++to) {
      End src = make(from), dst = make(to);
      ++seed;
      if (from == 4) launch_pattern_fill(src.p, n, seed, nullptr);
      else fill_pattern_host(src.p, n, seed);
      if (to == 4) CUDA_CHECK(cudaMemset(dst.p, kPoisonByte, bytes));
      else poison_host(dst.p, bytes);
      CUDA_CHECK(cudaDeviceSynchronize());
      CUDA_CHECK(cudaMemcpy(dst.p, src.p, bytes, cudaMemcpyDefault));
      CUDA_CHECK(cudaDeviceSynchronize());
      const auto r = to == 4 ? check_pattern_on_device(dst.p, n, seed, nullptr) : check_pattern_host(dst.p, n, seed);
      EXPECT_TRUE(r.ok()) << src.name << "->" << dst.name << ": " << first_of(r);
    }
}

TEST(TransfersUva, KernelReadsAndWritesHostMemoryThroughTheHostPointer) {
  CML_REQUIRE_GPU();
  const std::size_t n = 1000003, bytes = n * sizeof(std::uint32_t);
  for (HostKind kind : {HostKind::host_alloc, HostKind::malloc_host, HostKind::host_alloc_mapped}) {
    HostBuffer in(kind, bytes), out(kind, bytes);
    fill_pattern_host(in.words(), n, 8);
    poison_host(out.data(), bytes);
    launch_copy_words(in.words(), out.words(), n, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(check_pattern_host(out.words(), n, 8).ok()) << to_string(kind);
  }
}

// ---- Managed memory -----------------------------------------------------------------------------------

TEST(TransfersManaged, ManagedVariableNeedsNoCopies) {
  CML_REQUIRE_GPU();
  for (int i = 0; i < kManagedCount; ++i) m_values[i] = -i;
  m_bias = 3;
  launch_managed_variable(nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < kManagedCount; ++i) ASSERT_EQ(m_values[i], -2 * i + 3) << i;
}

TEST(TransfersManaged, IncrementOnDemandPrefetchedAndAdvised) {
  CML_REQUIRE_GPU();
  int dev = 0, concurrent = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev));
  const std::size_t n = 1000003, bytes = n * sizeof(std::uint32_t);
  ManagedBuffer<std::uint32_t> m(n);
  fill_pattern_host(m.data(), n, 5);
  // On demand: the kernel faults the CPU-written pages over; the CPU reads them back.
  launch_increment_words(m.data(), n, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(check_pattern_host(m.data(), n, 5, 1).ok());
  if (!concurrent) GTEST_SKIP() << "no concurrentManagedAccess: prefetch and advice to a GPU are not available";
  Stream s;
  prefetch_to(m.data(), bytes, dev, s);
  launch_increment_words(m.data(), n, s);
  prefetch_to(m.data(), bytes, cudaCpuDeviceId, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT_TRUE(check_pattern_host(m.data(), n, 5, 2).ok());
  advise(m.data(), bytes, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId);
  advise(m.data(), bytes, cudaMemAdviseSetAccessedBy, dev);
  launch_increment_words(m.data(), n, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT_TRUE(check_pattern_on_device(m.data(), n, 5, s, 3).ok());
  EXPECT_TRUE(check_pattern_host(m.data(), n, 5, 3).ok());
  // Read-mostly: both sides read their own copy; a write still lands everywhere.
  advise(m.data(), bytes, cudaMemAdviseSetReadMostly, dev);
  DeviceBuffer<std::uint32_t> out(n);
  out.poison(s);
  launch_copy_words(m.data(), out.data(), n, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  EXPECT_TRUE(check_pattern_on_device(out.data(), n, 5, s, 3).ok());
  EXPECT_TRUE(check_pattern_host(m.data(), n, 5, 3).ok());
  m[0] += 1;  // invalidates the other copies of that page
  launch_copy_words(m.data(), out.data(), n, s);
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::uint32_t first = 0;
  CUDA_CHECK(cudaMemcpy(&first, out.data(), sizeof first, cudaMemcpyDeviceToHost));
  EXPECT_EQ(first, pattern_word(0, 5) + 4);
}

// ---- Peer to peer -------------------------------------------------------------------------------------

TEST(TransfersPeer, MemcpyPeerBitExactBothWays) {
  CML_REQUIRE_GPU();
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) GTEST_SKIP() << "needs two GPUs";
  const std::size_t n = 1000003, bytes = n * sizeof(std::uint32_t);
  CUDA_CHECK(cudaSetDevice(1));
  DeviceBuffer<std::uint32_t> b(n);
  CUDA_CHECK(cudaSetDevice(0));
  DeviceBuffer<std::uint32_t> a(n);
  launch_pattern_fill(a.data(), n, 61, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpyPeer(b.data(), 1, a.data(), 0, bytes));
  CUDA_CHECK(cudaSetDevice(1));
  EXPECT_TRUE(check_pattern_on_device(b.data(), n, 61, nullptr).ok());
  launch_pattern_fill(b.data(), n, 62, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpyPeer(a.data(), 0, b.data(), 1, bytes));
  CUDA_CHECK(cudaSetDevice(0));
  EXPECT_TRUE(check_pattern_on_device(a.data(), n, 62, nullptr).ok());
  CUDA_CHECK(cudaSetDevice(1));
  b = DeviceBuffer<std::uint32_t>();
  CUDA_CHECK(cudaSetDevice(0));
}

}  // namespace
