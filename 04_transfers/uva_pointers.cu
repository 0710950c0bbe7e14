// uva_pointers: what does one address space for host and device memory (UVA) let a program do?
//
// Under UVA every allocation has one address, valid on the host and on the device, so the runtime can tell
// from a pointer alone what kind of memory it is and where it lives: cudaPointerGetAttributes answers for
// every kind, cudaMemcpyDefault infers every copy's direction, and mapped host pointers go straight to a
// kernel. Each fact is checked against what the CUDA documentation promises (kernels/pointer_facts.hpp);
// pageable malloc memory is read by a kernel only where pageableMemoryAccess = 1. No timing: facts.
//
// Run: build/bin/uva_pointers [--size 1000003]
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "04_transfers/kernels/host_buffers.hpp"
#include "04_transfers/kernels/managed.cuh"
#include "04_transfers/kernels/pointer_facts.hpp"
#include "04_transfers/kernels/transfer_kernels.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch04;

constexpr std::uint32_t kSeed = 77;

// ---- cudaPointerGetAttributes ---------------------------------------------------------------------------

void pointer_attributes(Context& ctx) {
  const int dev = ctx.device().ordinal;
  const bool reg_same = registered_memory_uses_host_pointer(dev);
  const std::size_t bytes = 4096;
  DeviceBuffer<char> d(bytes);
  HostBuffer pinned(HostKind::malloc_host, bytes), mapped(HostKind::host_alloc_mapped, bytes),
      registered(HostKind::host_register, bytes), pageable(HostKind::pageable, bytes);
  ManagedBuffer<char> managed(bytes);

  // [doc:pointer_kinds]
  const std::vector<std::pair<PointerKind, const void*>> pointers = {
      {PointerKind::device, d.data()},
      {PointerKind::malloc_host, pinned.data()},
      {PointerKind::host_alloc_mapped, mapped.data()},
      {PointerKind::host_register, registered.data()},
      {PointerKind::managed, managed.data()},
      {PointerKind::managed_variable, static_cast<const void*>(m_values)},
      {PointerKind::pageable, pageable.data()},
  };
  // [/doc:pointer_kinds]
  for (const auto& [kind, ptr] : pointers) {
    const PointerFacts f = query_pointer(ptr);
    const Expectation e = expected_attributes(kind, reg_same);
    const std::string why = mismatch(f, e, dev);
    VerifyResult r;
    r.checked = 1;
    if (!why.empty()) r.add(0, why, "the documented attributes");
    const bool ok = ctx.check(r, to_string(kind));
    ctx.add_row(to_string(kind), bytes, ok)
        .set("type", to_string(f.type))
        .set("device", f.device)
        .set("device_pointer", to_string(f.device_ptr))
        .set("host_pointer", to_string(f.host_ptr))
        .set("expected_type", to_string(e.type));
  }
  ctx.note(fmt::format("cudaDevAttrCanUseHostPointerForRegisteredMem = {}; pageableMemoryAccess = {}", reg_same ? 1 : 0,
                       ctx.device().pageable_access ? 1 : 0));
}

// ---- cudaMemcpyDefault ----------------------------------------------------------------------------------

enum class Where { pageable, pinned, registered, managed, device };
constexpr Where kAllWhere[] = {Where::pageable, Where::pinned, Where::registered, Where::managed, Where::device};

const char* where_name(Where w) {
  switch (w) {
    case Where::pageable: return "pageable";
    case Where::pinned: return "pinned";
    case Where::registered: return "registered";
    case Where::managed: return "managed";
    case Where::device: return "device";
  }
  return "?";
}

// One end of a copy: owns its memory; the host reads and writes it directly unless it is device memory.
struct Endpoint {
  Where where;
  std::size_t n;
  HostBuffer host;
  ManagedBuffer<std::uint32_t> managed;
  DeviceBuffer<std::uint32_t> device;

  Endpoint(Where w, std::size_t words) : where(w), n(words) {
    const std::size_t bytes = words * sizeof(std::uint32_t);
    switch (w) {
      case Where::pageable: host = HostBuffer(HostKind::pageable, bytes); break;
      case Where::pinned: host = HostBuffer(HostKind::malloc_host, bytes); break;
      case Where::registered: host = HostBuffer(HostKind::host_register, bytes); break;
      case Where::managed: managed = ManagedBuffer<std::uint32_t>(words); break;
      case Where::device: device = DeviceBuffer<std::uint32_t>(words); break;
    }
  }
  std::uint32_t* ptr() const {
    if (where == Where::managed) return managed.data();
    if (where == Where::device) return device.data();
    return host.words();
  }
  void fill(std::uint32_t seed, cudaStream_t s) {
    if (where == Where::device) {
      launch_pattern_fill(ptr(), n, seed, s);
      CUDA_CHECK(cudaStreamSynchronize(s));
    } else {
      fill_pattern_host(ptr(), n, seed);
    }
  }
  void poison(cudaStream_t s) {
    if (where == Where::device) {
      CUDA_CHECK(cudaMemsetAsync(ptr(), kPoisonByte, n * sizeof(std::uint32_t), s));
      CUDA_CHECK(cudaStreamSynchronize(s));
    } else {
      poison_host(ptr(), n * sizeof(std::uint32_t));
    }
  }
  VerifyResult check(std::uint32_t seed, cudaStream_t s) const {
    return where == Where::device ? check_pattern_on_device(ptr(), n, seed, s) : check_pattern_host(ptr(), n, seed);
  }
};

void memcpy_default(Context& ctx) {
  const std::size_t n = ctx.size();
  cudaStream_t s = ctx.stream();
  std::vector<Endpoint> src, dst;
  src.reserve(std::size(kAllWhere));
  dst.reserve(std::size(kAllWhere));
  for (Where w : kAllWhere) {
    src.emplace_back(w, n);
    dst.emplace_back(w, n);
  }
  std::uint32_t seed = kSeed;
  for (Endpoint& from : src)
    for (Endpoint& to : dst) {
      ++seed;  // a fresh pattern per pair: a stale result of an earlier pair cannot pass
      from.fill(seed, s);
      to.poison(s);
      // No direction given: the runtime looks both addresses up in the unified address space.
      CUDA_CHECK(cudaMemcpy(to.ptr(), from.ptr(), n * sizeof(std::uint32_t), cudaMemcpyDefault));
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::string params = std::string(where_name(from.where)) + "->" + where_name(to.where);
      ctx.add_row(params, n, ctx.check(to.check(seed, s), params));
    }
}

// ---- Host pointers straight into a kernel ---------------------------------------------------------------

void kernel_on_host_pointer(Context& ctx) {
  const int dev = ctx.device().ordinal;
  const std::size_t n = ctx.size();
  const std::size_t bytes = n * sizeof(std::uint32_t);
  cudaStream_t s = ctx.stream();
  const bool reg_same = registered_memory_uses_host_pointer(dev);

  auto run = [&](const std::string& name, std::uint32_t* in, std::uint32_t* out, std::uint32_t* in_dev,
                 std::uint32_t* out_dev, const char* how) {
    fill_pattern_host(in, n, kSeed);
    poison_host(out, bytes);
    // The kernel reads one host buffer and writes the other, across PCIe (or wherever the pages are).
    launch_copy_words(in_dev, out_dev, n, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    const bool ok = ctx.check(check_pattern_host(out, n, kSeed), name);
    ctx.add_row(name, n, ok).set("pointer_passed", how);
  };

  // [doc:host_pointers_as_is]
  for (HostKind kind : {HostKind::host_alloc, HostKind::malloc_host, HostKind::host_alloc_mapped}) {
    HostBuffer in(kind, bytes), out(kind, bytes);
    run(to_string(kind), in.words(), out.words(), in.words(), out.words(), "host pointer as is");
  }
  // [/doc:host_pointers_as_is]
  {
    HostBuffer in(HostKind::host_register, bytes), out(HostKind::host_register, bytes);
    std::uint32_t *in_dev = in.words(), *out_dev = out.words();
    // [doc:registered_device_pointers]
    if (!reg_same) {
      // Registered memory may be mapped at a different device address on such systems.
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&in_dev), in.data(), 0));
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&out_dev), out.data(), 0));
    }
    // [/doc:registered_device_pointers]
    run("host_register", in.words(), out.words(), in_dev, out_dev,
        reg_same ? "host pointer as is" : "cudaHostGetDevicePointer");
  }
  {
    ManagedBuffer<std::uint32_t> in(n), out(n);
    run("managed", in.data(), out.data(), in.data(), out.data(), "host pointer as is");
  }
  if (ctx.device().pageable_access) {
    HostBuffer in(HostKind::pageable, bytes), out(HostKind::pageable, bytes);
    run("pageable", in.words(), out.words(), in.words(), out.words(), "malloc pointer as is (HMM/ATS)");
  } else {
    ctx.note("pageable: not run: pageableMemoryAccess = 0, so a kernel must not dereference malloc'd memory here");
  }
}

// ---- Claims -------------------------------------------------------------------------------------------

std::vector<Claim> claims() {
  return {
      Claim{"attributes_as_documented",
            "cudaPointerGetAttributes reports every kind of pointer (device, pinned, mapped, registered, managed, "
            "pageable) as the CUDA documentation says.",
            "pointer_attributes rows whose attributes differ from the documented table", Bound::at_most(0),
            "these are promises of the runtime, not measurements: any mismatch is a finding",
            ClaimKind::device, [](const RunRows& r) { return r.unverified_rows("pointer_attributes"); }},
      Claim{"memcpy_default_infers_direction",
            "cudaMemcpy with cudaMemcpyDefault copies correctly between every pair of the five memory kinds: the "
            "addresses alone tell the runtime the direction.",
            "pairs of memory kinds (of 5 x 5) whose cudaMemcpyDefault copy is missing or not bit-exact",
            Bound::at_most(0),
            "UVA gives every allocation one address the runtime can look up; any wrong copy is a finding",
            ClaimKind::device,
            [](const RunRows& r) {
              const auto rows = r.rows("memcpy_default");
              double good = 0;
              for (const Row* row : rows) good += row->verified ? 1.0 : 0.0;
              return std::size(kAllWhere) * std::size(kAllWhere) - good;
            }},
      Claim{"kernel_uses_host_pointers",
            "A kernel reads and writes pinned, mapped, registered and managed memory through the host pointer "
            "itself (registered memory through cudaHostGetDevicePointer's pointer where "
            "cudaDevAttrCanUseHostPointerForRegisteredMem is 0).",
            "kernel_on_host_pointer rows whose output is not bit-exact", Bound::at_most(0),
            "under UVA a host allocation the GPU may access has the same address on both sides, except registered "
            "memory on devices that map it elsewhere",
            ClaimKind::device, [](const RunRows& r) { return r.unverified_rows("kernel_on_host_pointer"); }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "uva_pointers";
  d.summary =
      "Unified virtual addressing: cudaPointerGetAttributes on every kind of pointer, cudaMemcpyDefault between\n"
      "every pair of memory kinds, host pointers passed straight to a kernel.";
  d.size_meaning = "32-bit words per buffer (odd by default, so no copy is a round size)";
  d.variants = {
      {"pointer_attributes", "cudaPointerGetAttributes on device/pinned/mapped/registered/managed/pageable pointers",
       pointer_attributes},
      {"memcpy_default", "cudaMemcpy(cudaMemcpyDefault) between every pair of memory kinds, bit-exact", memcpy_default},
      {"kernel_on_host_pointer", "a kernel reading and writing host memory through the host pointer itself",
       kernel_on_host_pointer},
  };
  d.claims = claims();
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{1000003}; };
  d.quick_size = 1001;
  d.waive_reason = [](const DeviceInfo& dev) {
    return dev.unified_addressing ? std::string() : std::string("the device does not use unified addressing");
  };
  d.device_bytes = [](std::uint64_t n) {
    if (n > (std::uint64_t{256} << 20)) throw CliError("--size: at most 256M words, got " + std::to_string(n));
    return 12.0 * static_cast<double>(n) * sizeof(std::uint32_t);
  };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
