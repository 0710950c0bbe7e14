// l2_facts: what does this GPU offer for L2 persistence, and may this process use it?
//
// The limits (L2 size, largest set-aside, largest window) are read through two APIs and compared; the
// current set-aside need not be 0 before anyone set it. Setting it, asking for more than the maximum
// (refused on purpose where the driver refuses it, announced for compute-sanitizer) and attaching a window
// must all read back as set and be put back as found once the guard is gone. Under MIG the set-aside is
// disabled and an MPS client cannot set it: both are reported as a refusal and waive the variant.
//
// Run: build/bin/l2_facts
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "05_l2_persistence/l2_bench.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch05;

void waive_if_unsupported(const Context& ctx) {
  const std::string why = persistence_waive_reason(ctx.device());
  if (!why.empty()) throw Waived(why);
}

void properties(Context& ctx) {
  const DeviceInfo& d = ctx.device();
  const auto fact = [&](const char* name, std::size_t prop, cudaDeviceAttr attr) {
    int via_attr = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&via_attr, attr, d.ordinal));
    const bool ok = ctx.check(compare_value(static_cast<std::size_t>(via_attr), prop, name), "cudaDeviceGetAttribute");
    ctx.add_row(name, prop, ok)
        .set("value_bytes", static_cast<double>(prop))
        .set("value_mib", to_mib(prop))
        .set("attribute_bytes", static_cast<double>(via_attr));
  };
  fact("l2CacheSize", d.l2_bytes, cudaDevAttrL2CacheSize);
  fact("persistingL2CacheMaxSize", d.persisting_l2_max, cudaDevAttrMaxPersistingL2CacheSize);
  fact("accessPolicyMaxWindowSize", d.access_policy_max_window, cudaDevAttrMaxAccessPolicyWindowSize);
  if (d.l2_bytes > 0)
    ctx.note(fmt::format("the set-aside can take {:.1f} % of the L2",
                         100.0 * static_cast<double>(d.persisting_l2_max) / static_cast<double>(d.l2_bytes)));
}

Row& limit_row(Context& ctx, const std::string& what, std::size_t bytes, bool ok) {
  return ctx.add_row(what, bytes, ok).set("value_bytes", static_cast<double>(bytes)).set("value_mib", to_mib(bytes));
}

void set_aside_limit(Context& ctx) {
  waive_if_unsupported(ctx);
  if (const char* v = std::getenv("CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_LIMIT"))
    ctx.note(fmt::format("CUDA_DEVICE_DEFAULT_PERSISTING_L2_CACHE_PERCENTAGE_LIMIT={} (an MPS server setting)", v));
  if (std::getenv("CUDA_MPS_PIPE_DIRECTORY") != nullptr)
    ctx.note("CUDA_MPS_PIPE_DIRECTORY is set: this may be an MPS client, which cannot change the set-aside");

  const std::size_t at_start = persisting_limit();
  limit_row(ctx, "limit_at_start", at_start, true);
  const std::size_t max = ctx.device().persisting_l2_max;
  {
    const auto guard = set_aside_or_waive(max);
    Row& set = limit_row(ctx, "limit_after_set_max", guard->limit(), true);
    set.set("requested_bytes", static_cast<double>(max)).set("clamped_by_driver", guard->limit() != max ? 1.0 : 0.0);

    // Above the maximum, straight to the driver (the guard would clamp): refused or clamped? The guard's
    // destructor restores the limit either way.
    // Two failing calls: cudaDeviceSetLimit, and the cudaGetLastError below that clears the error.
    announce_expected_api_error("cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize) at 2x the maximum", 2);
    const cudaError_t err = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 2 * max);
    (void)cudaGetLastError();
    const std::size_t after_over = persisting_limit();
    limit_row(ctx, "limit_after_request_2x_max", after_over, true)
        .set("requested_bytes", static_cast<double>(2 * max))
        .set("result", err == cudaSuccess ? std::string("accepted") : std::string(cudaGetErrorName(err)));
  }
  const std::size_t restored = persisting_limit();
  const bool ok = ctx.check(compare_value(restored, at_start, "persisting limit"), "limit restored by the guard");
  limit_row(ctx, "limit_after_guard", restored, ok);
}

Row& window_row(Context& ctx, const std::string& what, const cudaAccessPolicyWindow& w, bool ok) {
  return ctx.add_row(what, w.num_bytes, ok)
      .set("num_bytes", static_cast<double>(w.num_bytes))
      .set("hit_ratio", w.hitRatio)
      .set("hit_prop", property_name(w.hitProp))
      .set("miss_prop", property_name(w.missProp));
}

void stream_window_facts(Context& ctx) {
  waive_if_unsupported(ctx);
  const std::size_t max_window = ctx.device().access_policy_max_window;
  Stream stream;
  const cudaAccessPolicyWindow fresh = stream_window(stream);
  const bool no_window = ctx.check(compare_value(fresh.num_bytes, std::size_t{0}, "num_bytes"), "fresh stream window");
  window_row(ctx, "fresh_stream", fresh, no_window);
  {
    // A buffer as large as the largest window, so even the clamped window covers allocated memory only.
    DeviceBuffer<unsigned char> buffer(max_window);
    const auto guard = set_aside_or_waive(ctx.device().persisting_l2_max);

    // The Programming Guide's example: 60 % of the accesses to a 16 MiB region persisting, the rest streaming.
    // [doc:guide_window]
    const cudaAccessPolicyWindow w = make_window(buffer.data(), 16 * kMiB, 0.6, max_window);
    // [/doc:guide_window]
    guard->set_stream_window(stream, w);
    const cudaAccessPolicyWindow back = stream_window(stream);
    window_row(ctx, "set_16mib_hit_ratio_0.6", back, check_window(ctx, back, w, "window read back"));

    const cudaAccessPolicyWindow big = make_window(buffer.data(), 2 * max_window, 1.0, max_window);
    guard->set_stream_window(stream, big);
    const cudaAccessPolicyWindow big_back = stream_window(stream);
    window_row(ctx, "request_2x_max_window_clamped", big_back,
               check_window(ctx, big_back, big, "clamped window read back"))
        .set("requested_bytes", static_cast<double>(2 * max_window));
  }
  const cudaAccessPolicyWindow after = stream_window(stream);
  window_row(ctx, "after_guard", after, check_window(ctx, after, fresh, "window put back by the guard"));
}

std::vector<Claim> claims() {
  return {
      Claim{"properties_agree",
            "cudaGetDeviceProperties and cudaDeviceGetAttribute report the same L2 size, set-aside maximum and "
            "maximum window.",
            "properties rows where the two queries differ", Bound::at_most(0),
            "two views of one fact: any difference is a finding",
            ClaimKind::device, [](const RunRows& r) { return r.unverified_rows("properties"); }},
      Claim{"set_aside_limit_restored",
            "The persisting set-aside reads back as it was once PersistingL2Guard is gone.",
            "set_aside_limit rows that fail their check", Bound::at_most(0),
            "the guard's destructor restores the limit; anything else leaks a smaller L2 into later kernels",
            ClaimKind::device, [](const RunRows& r) { return r.unverified_rows("set_aside_limit"); }},
      Claim{"limit_never_exceeds_maximum",
            "A request for twice the maximum set-aside leaves the limit at or below persistingL2CacheMaxSize.",
            "value_bytes of limit_after_request_2x_max / value_bytes of persistingL2CacheMaxSize",
            Bound::at_most(1.0),
            "the driver refuses or clamps such a request; the set-aside can never outgrow its maximum",
            ClaimKind::device,
            [](const RunRows& r) {
              return r.value({"set_aside_limit", "limit_after_request_2x_max", "value_bytes"}) /
                     r.value({"properties", "persistingL2CacheMaxSize", "value_bytes"});
            }},
      Claim{"stream_windows_read_back",
            "A stream's access-policy window reads back as set (clamped to accessPolicyMaxWindowSize), and as it "
            "was once the guard is gone.",
            "stream_window rows that fail their check", Bound::at_most(0),
            "the stream attribute is plain state the runtime stores; any difference is a finding",
            ClaimKind::device, [](const RunRows& r) { return r.unverified_rows("stream_window"); }},
  };
}

Demo make_demo() {
  Demo d;
  d.name = "l2_facts";
  d.summary =
      "L2 size, persisting set-aside maximum, maximum window; the current persisting limit, setting it and\n"
      "restoring it; stream windows set, clamped and cleared.";
  d.size_meaning = "unused (facts only)";
  d.variants = {
      {"properties", "l2CacheSize, persistingL2CacheMaxSize, accessPolicyMaxWindowSize", properties},
      {"set_aside_limit", "cudaLimitPersistingL2CacheSize: at start, set to max, over max, restored", set_aside_limit},
      {"stream_window", "a fresh stream's window; set, clamped and cleared windows", stream_window_facts},
  };
  d.claims = claims();
  d.quick_size = 1;
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{1}; };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
