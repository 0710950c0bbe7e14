// memory_hierarchy: what does this GPU say about its memory spaces, and do its two APIs agree?
//
// The blog chapter's table of memory spaces (location, caching, access, scope, lifetime) is only useful
// filled in for the GPU at hand: each fact is read through cudaGetDeviceProperties and cudaDeviceGetAttribute
// where both exist and counts as verified when they agree. The unified L1/shared size per SM, which no API
// reports, comes from NVIDIA's documentation for this compute capability and says so. No timing: facts.
//
// Run: build/bin/memory_hierarchy [--csv memory.csv]
#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/unified_l1.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;

struct Fact {
  std::string name;
  double value = 0.0;
  double second = 0.0;  // the value by the second route (== value when there is one route)
  std::string unit;
  std::string source;
  bool ok = false;
};

int attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

class FactSheet {
 public:
  explicit FactSheet(const DeviceInfo& d) {
    const int dev = d.ordinal;
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    const auto num = [](std::size_t v) { return static_cast<double>(v); };
    // Registers and shared memory.
    both("registers_per_sm", p.regsPerMultiprocessor, attribute(cudaDevAttrMaxRegistersPerMultiprocessor, dev),
         "32-bit registers");
    both("registers_per_block", p.regsPerBlock, attribute(cudaDevAttrMaxRegistersPerBlock, dev), "32-bit registers");
    both("shared_per_block", num(p.sharedMemPerBlock), attribute(cudaDevAttrMaxSharedMemoryPerBlock, dev), "bytes");
    both("shared_per_block_optin", num(p.sharedMemPerBlockOptin),
         attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), "bytes");
    both("shared_per_sm", num(p.sharedMemPerMultiprocessor),
         attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev), "bytes");
    both("reserved_shared_per_block", num(p.reservedSharedMemPerBlock),
         attribute(cudaDevAttrReservedSharedMemoryPerBlock, dev), "bytes");
    // The L1/shared split: shared memory is carved out of the unified storage, 0..shared_per_sm.
    // [doc:unified_l1_rows]
    const std::size_t unified = ch01::documented_unified_l1_bytes(p.major, p.minor);
    if (unified > 0) {
      const bool fits = unified >= p.sharedMemPerMultiprocessor;
      one("unified_l1_shared_per_sm", num(unified), "bytes", ch01::unified_l1_source(p.major, p.minor), fits);
      // Unsigned: a documented size below shared_per_sm would wrap; the row fails instead.
      one("l1_at_max_shared_carveout", fits ? num(unified - p.sharedMemPerMultiprocessor) : kNaN, "bytes",
          "derived: unified - shared_per_sm", fits);
      one("l1_at_max_l1_carveout", num(unified), "bytes", "derived: carveout 0 leaves (almost) all of it to L1", true);
      // [/doc:unified_l1_rows]
    } else {
      // Not guessed from a neighbouring architecture: the row says the figure is unknown.
      one("unified_l1_shared_per_sm", kNaN, "bytes", ch01::unified_l1_source(p.major, p.minor), true);
    }
    both("global_l1_cache_supported", p.globalL1CacheSupported, attribute(cudaDevAttrGlobalL1CacheSupported, dev),
         "bool");
    both("local_l1_cache_supported", p.localL1CacheSupported, attribute(cudaDevAttrLocalL1CacheSupported, dev), "bool");
    // L2.
    both("l2_bytes", p.l2CacheSize, attribute(cudaDevAttrL2CacheSize, dev), "bytes");
    both("persisting_l2_max", p.persistingL2CacheMaxSize, attribute(cudaDevAttrMaxPersistingL2CacheSize, dev),
         "bytes");
    both("access_policy_window_max", p.accessPolicyMaxWindowSize,
         attribute(cudaDevAttrMaxAccessPolicyWindowSize, dev), "bytes");
    // Constant, local, texture.
    both("constant_memory", num(p.totalConstMem), attribute(cudaDevAttrTotalConstantMemory, dev), "bytes");
    std::size_t stack = 0;
    CUDA_CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    one("local_stack_per_thread", num(stack), "bytes", "cudaDeviceGetLimit(cudaLimitStackSize)", stack > 0);
    both("texture_pitch_alignment", num(p.texturePitchAlignment), attribute(cudaDevAttrTexturePitchAlignment, dev),
         "bytes");
    both("max_texture_2d_width", p.maxTexture2D[0], attribute(cudaDevAttrMaxTexture2DWidth, dev), "texels");
    both("max_texture_2d_height", p.maxTexture2D[1], attribute(cudaDevAttrMaxTexture2DHeight, dev), "texels");
    // Device memory.
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    one("global_memory", num(p.totalGlobalMem), "bytes", "cudaDeviceProp::totalGlobalMem", p.totalGlobalMem > 0);
    one("global_memory_free", num(free_b), "bytes", "cudaMemGetInfo (now)", free_b <= total_b);
    both("memory_bus_width", p.memoryBusWidth, attribute(cudaDevAttrGlobalMemoryBusWidth, dev), "bits");
    const int mem_khz = attribute(cudaDevAttrMemoryClockRate, dev);
    one("memory_clock", mem_khz, "kHz", "cudaDevAttrMemoryClockRate (peak)", mem_khz > 0);
    one("theoretical_bandwidth", d.peak_gb_per_s, "GB/s", "derived: 2 x memory clock x bus width / 8",
        d.peak_gb_per_s > 0.0);
    // Host access and copy engines.
    both("can_map_host_memory", p.canMapHostMemory, attribute(cudaDevAttrCanMapHostMemory, dev), "bool");
    both("unified_addressing", p.unifiedAddressing, attribute(cudaDevAttrUnifiedAddressing, dev), "bool");
    both("concurrent_managed_access", p.concurrentManagedAccess, attribute(cudaDevAttrConcurrentManagedAccess, dev),
         "bool");
    both("pageable_memory_access", p.pageableMemoryAccess, attribute(cudaDevAttrPageableMemoryAccess, dev), "bool");
    both("async_engine_count", p.asyncEngineCount, attribute(cudaDevAttrAsyncEngineCount, dev), "copy engines");
    both("sm_count", p.multiProcessorCount, attribute(cudaDevAttrMultiProcessorCount, dev), "SMs");
  }

  const std::vector<Fact>& all() const { return facts_; }
  const Fact* find(const std::string& name) const {
    for (const auto& f : facts_)
      if (f.name == name) return &f;
    return nullptr;
  }
  double value(const std::string& name) const {
    const Fact* f = find(name);
    return f != nullptr ? f->value : 0.0;
  }
  bool ok(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      if (const Fact* f = find(n); f != nullptr && !f->ok) return false;
    return true;
  }

 private:
  void both(const std::string& name, double prop, double attr, const std::string& unit,
            const std::string& source = "cudaDeviceProp + cudaDeviceGetAttribute") {
    facts_.push_back({name, prop, attr, unit, source, prop == attr});
  }
  void one(const std::string& name, double value, const std::string& unit, const std::string& source, bool plausible) {
    facts_.push_back({name, value, value, unit, source, plausible});
  }
  std::vector<Fact> facts_;
};

void device_facts(Context& ctx) {
  const FactSheet sheet(ctx.device());
  for (const Fact& f : sheet.all()) {
    bool ok = f.ok;
    const bool known = !std::isnan(f.value);  // an undocumented figure: an empty cell, not a failure
    if (known && f.value != f.second) ok = ctx.check(compare_value(f.value, f.second, "second route"), f.name);
    else if (!f.ok) ok = ctx.check(compare_value(false, true, "plausible"), f.name);
    Row& row = ctx.add_row(f.name, 1, ok);
    if (known) row.set("value", f.value);
    else row.set("value", "");
    row.set("unit", f.unit).set("source", f.source);
  }
}

std::string kib_text(double bytes) { return fmt::format("{:g} KiB", bytes / 1024.0); }

void memory_spaces(Context& ctx) {
  const FactSheet f(ctx.device());
  const double unified = f.value("unified_l1_shared_per_sm");
  struct Space {
    const char* name;
    const char* location;
    std::string cached;
    const char* access;
    const char* scope;
    const char* lifetime;
    const char* declared_as;
    std::string on_this_gpu;
    bool ok;
  };
  const std::vector<Space> spaces = {
      {"register", "on-chip", "n/a", "R/W", "one thread", "thread", "automatic scalars; arrays indexed at compile time",
       fmt::format("{:g} x 32-bit per SM, {:g} per block, at most 255 per thread", f.value("registers_per_sm"),
                   f.value("registers_per_block")),
       f.ok({"registers_per_sm", "registers_per_block"})},
      {"local", "off-chip (device memory)", f.value("local_l1_cache_supported") != 0.0 ? "L1 + L2" : "L2", "R/W",
       "one thread", "thread", "arrays indexed at run time; register spills",
       fmt::format("stack {:g} B per thread by default (cudaLimitStackSize), up to 512 KiB",
                   f.value("local_stack_per_thread")),
       f.ok({"local_stack_per_thread", "local_l1_cache_supported"})},
      {"shared", "on-chip", "n/a", "R/W", "all threads of a block", "block", "__shared__, extern __shared__",
       fmt::format("{} per block ({} opt-in), {} per SM{}", kib_text(f.value("shared_per_block")),
                   kib_text(f.value("shared_per_block_optin")), kib_text(f.value("shared_per_sm")),
                   unified > 0 ? fmt::format(", carved out of {} of unified L1/shared", kib_text(unified))
                               : std::string(", unified L1/shared size not documented for this architecture")),
       f.ok({"shared_per_block", "shared_per_block_optin", "shared_per_sm", "unified_l1_shared_per_sm"})},
      {"global", "off-chip (device memory)",
       f.value("global_l1_cache_supported") != 0.0 ? "L2, and L1 for loads" : "L2", "R/W", "all threads + host",
       "host: allocation to free (__device__: program)", "__device__, cudaMalloc*",
       fmt::format("{:.1f} GiB, behind {:.1f} MiB of L2", f.value("global_memory") / (1 << 30),
                   f.value("l2_bytes") / (1 << 20)),
       f.ok({"global_memory", "l2_bytes", "global_l1_cache_supported"})},
      {"constant", "off-chip (device memory)", "constant cache per SM (+ L2)", "R (device), W (host)",
       "all threads + host", "program (set by the host)", "__constant__",
       fmt::format("{}; one address per warp per cycle (broadcast)", kib_text(f.value("constant_memory"))),
       f.ok({"constant_memory"})},
      {"texture", "off-chip (device memory)", "L1/TEX (+ L2)", "R", "all threads + host",
       "host: texture object lifetime", "cudaTextureObject_t over linear memory or a CUDA array",
       fmt::format("2-D up to {:g} x {:g} texels; pitch alignment {:g} B", f.value("max_texture_2d_width"),
                   f.value("max_texture_2d_height"), f.value("texture_pitch_alignment")),
       f.ok({"max_texture_2d_width", "max_texture_2d_height", "texture_pitch_alignment"})},
  };
  for (const Space& s : spaces)
    ctx.add_row(s.name, 1, s.ok)
        .set("location", s.location)
        .set("cached", s.cached)
        .set("access", s.access)
        .set("scope", s.scope)
        .set("lifetime", s.lifetime)
        .set("declared_as", s.declared_as)
        .set("on_this_gpu", s.on_this_gpu);
}

Demo make_demo() {
  Demo d;
  d.name = "memory_hierarchy";
  d.summary =
      "Everything the device reports about its memory (each fact read through cudaDeviceProp and\n"
      "cudaDeviceGetAttribute where both exist; verified = they agree) and the blog chapter's table of\n"
      "memory spaces (location, cached, access, scope, lifetime) filled in for this GPU. No timing.";
  d.size_meaning = "unused";
  d.variants = {
      {"device_facts", "one row per memory-related device fact", device_facts},
      {"memory_spaces", "register / local / shared / global / constant / texture, for this GPU", memory_spaces},
  };
  // A device fact of this run, as the device_facts row recorded it.
  const auto fact = [](const RunRows& r, const char* name) { return r.value({"device_facts", name, "value"}); };
  d.claims = {
      all_verified_claim(
          "facts_agree_across_routes",
          "Every fact the runtime offers through both cudaDeviceProp and cudaDeviceGetAttribute reads the same "
          "both ways, and every single-route fact is plausible.",
          {"device_facts"}, "the two routes read the same driver state; any disagreement is a defect"),
      all_verified_claim("spaces_table_filled_in",
                         "Every memory space of the table is described from facts that verified.",
                         {"memory_spaces"}, "each space's row is built only from the facts checked above"),
      Claim{"shared_carved_from_unified",
            "Shared memory is carved out of the SM's unified L1/shared storage: the largest share it can get "
            "never exceeds the documented unified size.",
            "value device_facts[shared_per_sm] / value device_facts[unified_l1_shared_per_sm]", Bound::at_most(1),
            "shared memory and L1 are one storage; not applicable where the unified size is not documented",
            ClaimKind::device,
            [fact](const RunRows& r) {
              // An undocumented size is an empty cell (read back from a CSV: no cell at all).
              const std::string* unified = r.row("device_facts", "unified_l1_shared_per_sm").get("value");
              if (unified == nullptr || unified->empty())
                throw NotApplicable("the unified L1/shared size of this architecture is not documented");
              return fact(r, "shared_per_sm") / fact(r, "unified_l1_shared_per_sm");
            }},
      Claim{"block_optin_within_sm",
            "One block can opt in to at most the shared memory of one SM, less what the system reserves per block.",
            "(value device_facts[shared_per_block_optin] + value device_facts[reserved_shared_per_block]) / "
            "value device_facts[shared_per_sm]",
            Bound::at_most(1), "a block runs on one SM; the reserved bytes are part of the SM's share",
            ClaimKind::device,
            [fact](const RunRows& r) {
              return (fact(r, "shared_per_block_optin") + fact(r, "reserved_shared_per_block")) /
                     fact(r, "shared_per_sm");
            }},
  };
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{1}; };
  d.quick_size = 1;
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
