// What every copy demo measures the same way: random floats in, a destination, and one row per copy,
// compared bit-exactly with the input before it is timed and set against the copy ceiling of the run.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common/harness.hpp"
#include "common/pattern.hpp"
#include "common/resources.hpp"
#include "common/verify.hpp"

namespace cml {

// A copy of n floats from `in` to `out` on stream `s`.
using CopyFn = std::function<void(const float* in, float* out, std::size_t n, cudaStream_t s)>;

// The demo's buffers: --size floats each, made and filled on the run's first copy and shared by its variants.
struct CopyBuffers {
  std::size_t n = 0;
  DeviceBuffer<float> in, out;
  std::vector<float> host;  // what `in` holds, for the check

  explicit CopyBuffers(std::size_t elements) : n(elements), in(n), out(n), host(n) {
    // Distinct, finite, random-looking values: a copy that drops or shifts elements cannot match, nothing in
    // the data could be compressed on the way, and no NaN hides a wrong bit from an exact comparison.
    for (std::size_t i = 0; i < n; ++i) host[i] = random_float(i);
    in.upload(host);
  }
};

// Times `copy` over the demo's buffers (bytes = read + written), checks its output against the input, and
// adds vs_memcpy: the row's bandwidth over cudaMemcpy D2D of the same buffer size, measured in this run.
inline Row& measure_copy(Context& ctx, const std::string& params, const CopyFn& copy) {
  CopyBuffers& b = ctx.state<CopyBuffers>(ctx.size());
  const double bytes = 2.0 * static_cast<double>(b.n) * sizeof(float);
  Row& row = ctx.measure(
      params, b.n, bytes, [&](cudaStream_t s) { copy(b.in.data(), b.out.data(), b.n, s); },
      [&] { return compare_exact(b.out.download(), b.host); }, [&](cudaStream_t s) { b.out.poison(s); });
  const CopyCeiling& c = ctx.copy_ceiling(b.n * sizeof(float));
  if (row.verified) row.set("vs_memcpy", row.gb_per_s / c.memcpy_gb_per_s);
  return row;
}

// The baseline of every copy demo.
inline void launch_memcpy_d2d(const float* in, float* out, std::size_t n, cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice, s));
}

}  // namespace cml
