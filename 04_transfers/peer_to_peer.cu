// peer_to_peer: what does peer access buy a copy, and what does a kernel pay to read another GPU's memory?
//
// Without peer access cudaMemcpyPeer stages the data through host memory (two trips over PCIe); with it,
// the copy engine moves it straight over the GPUs' link (NVLink, or PCIe peer-to-peer). A kernel that
// dereferences the peer's memory moves its bytes over the same link, far slower than its own device memory.
// Peer access is enabled by an RAII owner that disables it again, so the devices are left as found; every
// result is verified bit for bit where it lives. Needs two GPUs (otherwise waived, exit 77).
//
// Run: build/bin/peer_to_peer [--size 256M] [--device 0]
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "04_transfers/kernels/transfer_kernels.cuh"
#include "common/copy_kernels.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch04;

constexpr std::uint32_t kSeed = 91;

// Makes `device` current for its lifetime and restores the previous current device.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    CUDA_CHECK(cudaGetDevice(&previous_));
    CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() { CUDA_CHECK_NOTHROW(cudaSetDevice(previous_)); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

// Lets kernels on `device` dereference `peer`'s memory for its lifetime (cudaDeviceEnablePeerAccess),
// and disables that again on destruction, unless it was already enabled by someone else.
class PeerAccess {
 public:
  PeerAccess(int device, int peer) : device_(device), peer_(peer) {
    DeviceScope scope(device);
    const cudaError_t err = cudaDeviceEnablePeerAccess(peer, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled) {
      (void)cudaGetLastError();
      return;
    }
    CUDA_CHECK(err);
    owned_ = true;
  }
  ~PeerAccess() {
    if (!owned_) return;
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess || cudaSetDevice(device_) != cudaSuccess) return;
    CUDA_CHECK_NOTHROW(cudaDeviceDisablePeerAccess(peer_));
    CUDA_CHECK_NOTHROW(cudaSetDevice(previous));
  }
  PeerAccess(const PeerAccess&) = delete;
  PeerAccess& operator=(const PeerAccess&) = delete;

 private:
  int device_, peer_;
  bool owned_ = false;
};

// A device buffer on a given device (allocated and freed with that device current).
struct BufferOn {
  int device;
  DeviceBuffer<std::uint32_t> buf;
  BufferOn(int d, std::size_t n) : device(d) {
    DeviceScope scope(d);
    buf = DeviceBuffer<std::uint32_t>(n);
  }
  ~BufferOn() {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess || cudaSetDevice(device) != cudaSuccess) return;
    buf = DeviceBuffer<std::uint32_t>();
    CUDA_CHECK_NOTHROW(cudaSetDevice(previous));
  }
  BufferOn(const BufferOn&) = delete;
  BufferOn& operator=(const BufferOn&) = delete;
  std::uint32_t* data() const { return buf.data(); }
};

void fill_on(const BufferOn& b, std::size_t n, std::uint32_t seed) {
  DeviceScope scope(b.device);
  launch_pattern_fill(b.data(), n, seed, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
}
void poison_on(const BufferOn& b, std::size_t n) {
  DeviceScope scope(b.device);
  CUDA_CHECK(cudaMemset(b.data(), kPoisonByte, n * sizeof(std::uint32_t)));
  CUDA_CHECK(cudaDeviceSynchronize());
}
VerifyResult check_on(const BufferOn& b, std::size_t n, std::uint32_t seed) {
  DeviceScope scope(b.device);  // checked by the device that owns it: needs no peer access
  return check_pattern_on_device(b.data(), n, seed, nullptr);
}

struct Pair {
  int local, peer;
};

Pair pair_of(const Context& ctx) {
  const int local = ctx.device().ordinal;
  if (local > 1) throw CliError("--device: peer_to_peer uses devices 0 and 1; pass --device 0 or 1");
  return {local, 1 - local};
}

bool can_access(int from, int to) {
  int v = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&v, from, to));
  return v != 0;
}

// ---- Variants -------------------------------------------------------------------------------------------

void peer_matrix(Context& ctx) {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < count; ++j) {
      if (i == j) continue;
      int rank = 0, access = 0, atomics = 0;
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j));
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, i, j));
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, i, j));
      const bool can = can_access(i, j);
      // The two queries describe the same capability and must agree.
      const bool ok = ctx.check(compare_value(can ? 1 : 0, access != 0 ? 1 : 0, "cudaDeviceCanAccessPeer"),
                                fmt::format("{}->{}", i, j));
      ctx.add_row(fmt::format("{}->{}", i, j), 0, ok)
          .set("can_access_peer", can ? 1.0 : 0.0)
          .set("performance_rank", rank)
          .set("native_atomics", atomics);
    }
}

void memcpy_peer(Context& ctx) {
  const Pair p = pair_of(ctx);
  const std::size_t n = ctx.size() / sizeof(std::uint32_t);
  const std::size_t bytes = n * sizeof(std::uint32_t);
  BufferOn a(p.local, n), b(p.peer, n);
  for (bool enabled : {false, true}) {
    if (enabled && !(can_access(p.local, p.peer) && can_access(p.peer, p.local))) {
      ctx.note("memcpy_peer: the pair cannot enable peer access: no 'enabled' rows");
      break;
    }
    std::unique_ptr<PeerAccess> there, back;
    if (enabled) {
      there = std::make_unique<PeerAccess>(p.local, p.peer);
      back = std::make_unique<PeerAccess>(p.peer, p.local);
    }
    for (const BufferOn* src : {&a, &b}) {
      const BufferOn* dst = src == &a ? &b : &a;
      const std::string params =
          fmt::format("{}->{} access={}", src->device, dst->device, enabled ? "enabled" : "disabled");
      fill_on(*src, n, kSeed);
      poison_on(*dst, n);
      // [doc:peer_copy]
      auto copy = [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyPeerAsync(dst->data(), dst->device, src->data(), src->device, bytes, s));
      };
      // [/doc:peer_copy]
      copy(ctx.stream());
      CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
      if (!ctx.check(check_on(*dst, n, kSeed), params)) {
        ctx.add_row(params, bytes, false);
        continue;
      }
      Row& r = ctx.add_timed_row(params, bytes, static_cast<double>(bytes), ctx.time(copy), true);
      r.pct_peak = kNaN;
    }
  }
}

void kernel_peer_access(Context& ctx) {
  const Pair p = pair_of(ctx);
  if (!can_access(p.local, p.peer))
    throw Waived(fmt::format("device {} cannot access device {}'s memory (no P2P path)", p.local, p.peer));
  const std::size_t n = ctx.size() / sizeof(std::uint32_t);
  const std::size_t bytes = n * sizeof(std::uint32_t);
  BufferOn local_in(p.local, n), local_out(p.local, n), peer_buf(p.peer, n);
  // [doc:peer_access]
  const PeerAccess access(p.local, p.peer);
  // [/doc:peer_access]

  struct Case {
    const char* params;
    const BufferOn* in;
    const BufferOn* out;
    bool crosses;
  };
  // [doc:peer_cases]
  const Case cases[] = {{"read=local write=local", &local_in, &local_out, false},
                        {"read=peer write=local", &peer_buf, &local_out, true},
                        {"read=local write=peer", &local_in, &peer_buf, true}};
  // [/doc:peer_cases]
  for (const Case& c : cases) {
    fill_on(*c.in, n, kSeed);
    poison_on(*c.out, n);
    // The suite's float4 copy kernel moves the words bit for bit; it runs on the local device either way.
    auto copy = [&](cudaStream_t s) {
      launch_copy_vec4_ilp<4>(reinterpret_cast<const float*>(c.in->data()), reinterpret_cast<float*>(c.out->data()), n,
                              s);
    };
    copy(ctx.stream());
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    if (!ctx.check(check_on(*c.out, n, kSeed), c.params)) {
      ctx.add_row(c.params, bytes, false);
      continue;
    }
    Row& r = ctx.add_timed_row(c.params, bytes, 2.0 * static_cast<double>(bytes), ctx.time(copy), true);
    if (c.crosses) {
      r.pct_peak = kNaN;
      r.set("link_gb_per_s", r.gb_per_s / 2.0);  // only one of the two streams of bytes crossed the link
    }
  }
}

// ---- Claims -------------------------------------------------------------------------------------------

double peer_copy(const RunRows& r, const char* direction, const char* access) {
  // A pair that cannot enable peer access writes no 'enabled' rows (memcpy_peer notes it).
  const auto rows = r.rows("memcpy_peer");
  const auto enabled = [](const Row* row) { return row->params.find("access=enabled") != std::string::npos; };
  if (std::none_of(rows.begin(), rows.end(), enabled))
    throw NotApplicable("devices 0 and 1 cannot enable peer access to each other");
  return r.value({"memcpy_peer", fmt::format("{} access={}", direction, access)});
}

// The mean cudaMemcpyPeer rate with peer access enabled over both directions: the link's copy rate.
double enabled_copy_rate(const RunRows& r) {
  return (peer_copy(r, "0->1", "enabled") + peer_copy(r, "1->0", "enabled")) / 2;
}

std::vector<Claim> claims() {
  return {
      Claim{"peer_queries_agree",
            "cudaDeviceCanAccessPeer and cudaDeviceGetP2PAttribute(AccessSupported) give the same answer for every "
            "pair of GPUs.",
            "peer_matrix rows where the two queries disagree", Bound::at_most(0),
            "both describe one capability; a disagreement is a finding",
            ClaimKind::device, [](const RunRows& r) { return r.unverified_rows("peer_matrix"); }},
      Claim{"peer_access_beats_staging",
            "Enabling peer access makes cudaMemcpyPeer at least 2x faster in both directions than staging "
            "through host memory.",
            "lowest over both directions of GB/s memcpy_peer access=enabled / access=disabled",
            Bound::at_least(2.0),
            "disabled, every byte crosses PCIe twice through a host buffer; enabled, it crosses the GPUs' own "
            "link once",
            ClaimKind::host,
            [](const RunRows& r) {
              return min_of({peer_copy(r, "0->1", "enabled") / peer_copy(r, "0->1", "disabled"),
                             peer_copy(r, "1->0", "enabled") / peer_copy(r, "1->0", "disabled")});
            }},
      Claim{"kernel_peer_access_near_copy_rate",
            "A kernel reading or writing the peer's memory moves bytes across the link at no less than 80% of "
            "cudaMemcpyPeer's rate.",
            "lowest link_gb_per_s of kernel_peer_access (read=peer, write=peer) / mean GB/s memcpy_peer "
            "access=enabled",
            Bound::at_least(0.8),
            "loads and stores to peer memory travel the same link as the copy engine; enough of them in flight "
            "fill it",
            ClaimKind::device,
            [](const RunRows& r) {
              return min_of({r.value({"kernel_peer_access", "read=peer write=local", "link_gb_per_s"}),
                             r.value({"kernel_peer_access", "read=local write=peer", "link_gb_per_s"})}) /
                     enabled_copy_rate(r);
            }},
      Claim{"peer_memory_far_slower_than_local",
            "The same copy kernel is at least 2x slower when it reads the peer's memory than when it reads its "
            "own.",
            "GB/s kernel_peer_access[read=peer write=local] / GB/s kernel_peer_access[read=local write=local]",
            Bound::at_most(0.5),
            "a GPU-to-GPU link carries a fraction of a GPU's own DRAM bandwidth",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.ratio({"kernel_peer_access", "read=peer write=local"},
                             {"kernel_peer_access", "read=local write=local"});
            }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "peer_to_peer";
  d.summary =
      "Devices 0 and 1: peer-access matrix, cudaMemcpyPeerAsync bandwidth with peer access disabled and enabled,\n"
      "and a kernel reading / writing the peer's memory directly. Waived (exit 77) with fewer than two GPUs.";
  d.size_meaning = "bytes per buffer (a multiple of 4)";
  d.variants = {
      {"peer_matrix", "cudaDeviceCanAccessPeer and P2P attributes for every device pair", peer_matrix},
      {"memcpy_peer", "cudaMemcpyPeerAsync both ways, peer access disabled then enabled", memcpy_peer},
      {"kernel_peer_access", "copy kernel on this device reading / writing the peer's memory", kernel_peer_access},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{256} << 20; };
  d.quick_size = std::uint64_t{4} << 20;
  d.cold_by_default = false;
  d.warmup_ms = 20.0;
  d.waive_reason = [](const DeviceInfo&) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      (void)cudaGetLastError();
      return std::string("cudaGetDeviceCount failed");
    }
    return count < 2 ? fmt::format("needs two GPUs, found {}", count) : std::string();
  };
  d.device_bytes = [](std::uint64_t bytes) {
    if (bytes < 4096 || bytes % sizeof(std::uint32_t) != 0)
      throw CliError("--size: at least 4k and a multiple of 4 bytes, got " + std::to_string(bytes));
    return 3.0 * static_cast<double>(bytes);
  };
  d.check_options = [](Context& ctx) { (void)pair_of(ctx); };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
