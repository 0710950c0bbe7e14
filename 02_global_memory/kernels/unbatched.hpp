// Context::measure() with one launch per timed sample.
//
// The harness batches launches shorter than 0.5 ms into one sample and flushes L2 only before the
// batch. That is harmless for kernels that stream 8x L2, but a strided kernel touches far less than it
// allocates (stride 64 over 16-byte elements touches 1/32 of each buffer, less than L2 holds), and the
// second launch of a batch would read it from L2. Here every launch gets its own flush.
#pragma once

#include <functional>
#include <string>

#include "common/harness.hpp"

namespace cml::ch02 {

inline Row& measure_unbatched(Context& ctx, const std::string& params, std::uint64_t size, double bytes,
                              const std::function<void(cudaStream_t)>& launch,
                              const std::function<VerifyResult()>& verify,
                              const std::function<void(cudaStream_t)>& prepare) {
  prepare(ctx.stream());
  launch(ctx.stream());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  if (!ctx.check(verify(), params.empty() ? ctx.variant() : params)) return ctx.add_row(params, size, false);
  TimingOptions o = ctx.timing_options();
  o.max_batch = 1;
  ctx.set_profile_label(params);
  return ctx.add_timed_row(params, size, bytes, ctx.time(launch, o), true);
}

}  // namespace cml::ch02
