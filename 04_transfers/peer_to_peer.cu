// peer_to_peer: copies between two GPUs and a kernel reading the other GPU's memory (needs two GPUs).
//
// Shows: which device pairs can access each other (cudaDeviceCanAccessPeer, cudaDeviceGetP2PAttribute);
// cudaMemcpyPeerAsync bandwidth between devices 0 and 1, both ways, with peer access disabled and enabled;
// a kernel on one device that reads (and one that writes) the other device's memory directly through
// peer access, against the same copy kernel on local memory. Peer access is enabled by an RAII owner that
// disables it again, so the run leaves the devices as it found them.
// --device picks which of the pair (0 or 1) runs the kernels and owns the timing stream; the other is the
// peer. Bytes: copies count the payload once; kernels count read + written (column link_gb_per_s is the
// payload that crossed between the GPUs). Timing: events, warm, median. Every copy and kernel result is
// verified bit-exact on the device that holds it.
// With fewer than two GPUs the demo is waived (exit 77).
// EXPECTED OBSERVATION (measured on 2 x H200 linked by NVLink NV18): cudaMemcpyPeer moves ~390 GB/s per
// direction with peer access enabled and ~38 GB/s with it disabled; a kernel reading or writing the peer's
// memory moves ~370 GB/s across the link, far below the same kernel on local memory (4078 GB/s).
// (PCIe-only pairs should reach ~50 GB/s at most: not measured.)
// Run: build/bin/peer_to_peer [--size 256M] [--device 0]
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
      auto copy = [&](cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyPeerAsync(dst->data(), dst->device, src->data(), src->device, bytes, s));
      };
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
  const PeerAccess access(p.local, p.peer);

  struct Case {
    const char* params;
    const BufferOn* in;
    const BufferOn* out;
    bool crosses;
  };
  const Case cases[] = {{"read=local write=local", &local_in, &local_out, false},
                        {"read=peer write=local", &peer_buf, &local_out, true},
                        {"read=local write=peer", &local_in, &peer_buf, true}};
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

Demo make_demo() {
  Demo d;
  d.name = "peer_to_peer";
  d.summary =
      "Devices 0 and 1: peer-access matrix, cudaMemcpyPeerAsync bandwidth with peer access disabled and enabled,\n"
      "and a kernel reading / writing the peer's memory directly. Waived (exit 77) with fewer than two GPUs.\n"
      "Expected: NVLink pairs copy at hundreds of GB/s; direct peer access runs near the link rate.";
  d.size_meaning = "bytes per buffer (a multiple of 4)";
  d.variants = {
      {"peer_matrix", "cudaDeviceCanAccessPeer and P2P attributes for every device pair", peer_matrix},
      {"memcpy_peer", "cudaMemcpyPeerAsync both ways, peer access disabled then enabled", memcpy_peer},
      {"kernel_peer_access", "copy kernel on this device reading / writing the peer's memory", kernel_peer_access},
  };
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
    return 3.0 * static_cast<double>(bytes) + 256e6;
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
