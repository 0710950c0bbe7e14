// The one timing loop of the suite.
//
// GpuTimer::time(launch, options):
//   1. warm-up by *time* (the idle GPU clocks down to a few hundred MHz and ramps slowly: a copy timed
//      after two warm-up launches can read a third of what it reads after a hundred milliseconds of work);
//   2. warm: picks a batch size so that one timed sample lasts at least `min_sample_ms` (microsecond
//      kernels are timed as k back-to-back launches divided by k). Cold: one launch per sample, because
//      only then does the L2 flush precede every timed launch (the 2nd launch of a batch would find the
//      1st one's lines in L2);
//   3. takes `reps` samples, each between two CUDA events on the benchmark stream, flushing L2 before each
//      sample when `flush_l2` is set (cold) — the flush runs before the start event so it is not timed
//      (the write-backs it leaves behind are, on purpose: see L2Flusher);
//      `before_sample`, if set, runs before each sample's flush, also outside the timed region;
//   4. returns median, min, max and spread.
// Launch callables must not synchronize: the timer does.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"
#include "common/stats.hpp"

namespace cml {

struct TimingOptions {
  int reps = 20;
  double warmup_ms = 100.0;
  bool flush_l2 = true;
  double min_sample_ms = 0.5;  // batch launches until one sample lasts at least this long
  int max_batch = 1000;
  int min_warmup_launches = 2;
  // Host work before each timed sample, outside the events (e.g. resetting persisting L2 lines, which
  // the flush's ordinary writes cannot evict). It must leave no GPU work pending that should be timed.
  std::function<void()> before_sample;
};

struct Timing {
  Stats stats;
  int reps = 0;
  int batch = 1;
  bool cold = false;
  std::string profile_range;  // --profile: the NVTX range around the timed launch, which a row carries to ncu
};

// Single measurements, for work that cannot be repeated unchanged (the first run of a pass migrates the
// pages the next run finds in place): the caller takes one sample per pass and summarizes the samples
// with timing_of. Anything that can be repeated goes through GpuTimer::time or time_host instead.
template <class Fn>
double host_ms(Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The GPU time between two events on `s` around the work that `work` enqueues there.
template <class Work>
double event_ms(cudaStream_t s, Work&& work) {
  Event start, stop;
  start.record(s);
  work();
  stop.record(s);
  stop.synchronize();
  return stop.elapsed_ms_since(start);
}

inline Timing timing_of(std::vector<double> samples) {
  Timing t;
  t.reps = static_cast<int>(samples.size());
  t.stats = summarize(std::move(samples));
  return t;
}

// Evicts L2 by writing a buffer twice its size. That leaves L2 full of dirty lines, as a long stream of
// writes does: the timed launch pays for writing back the lines it displaces, about as many as it leaves
// dirty itself when it ends, so its written bytes cost what they cost in a steady stream. A read-only flush
// would leave clean lines and let up to one L2 of the launch's writes reach DRAM after the stop event.
// (Persisting lines survive ordinary writes; 05_l2_persistence resets them explicitly.)
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes) : buf_(buffer_bytes(l2_bytes)) {}
  // Twice the L2 (at least 1 MiB): the device memory a flusher holds.
  static std::size_t buffer_bytes(std::size_t l2_bytes) { return std::max<std::size_t>(2 * l2_bytes, 1 << 20); }
  void flush(cudaStream_t s) {
    // Alternate the value so the writes cannot be elided as redundant.
    value_ ^= 0x5a;
    CUDA_CHECK(cudaMemsetAsync(buf_.data(), value_, buf_.bytes(), s));
  }

 private:
  DeviceBuffer<unsigned char> buf_;
  int value_ = 0;
};

class GpuTimer {
 public:
  GpuTimer(cudaStream_t stream, L2Flusher* flusher) : stream_(stream), flusher_(flusher) {}

  template <class Launch>
  Timing time(Launch&& launch, const TimingOptions& o) {
    using clock = std::chrono::steady_clock;
    Event a, b;
    // Warm-up by time; the last warm-up launch also gives an estimate of one launch's duration.
    double estimate_ms = 0.0;
    int launches = 0;
    const auto t0 = clock::now();
    while (launches < o.min_warmup_launches ||
           std::chrono::duration<double, std::milli>(clock::now() - t0).count() < o.warmup_ms) {
      a.record(stream_);
      launch(stream_);
      CUDA_CHECK_LAUNCH();
      b.record(stream_);
      b.synchronize();
      estimate_ms = b.elapsed_ms_since(a);
      ++launches;
      if (o.warmup_ms <= 0.0 && launches >= o.min_warmup_launches) break;
    }
    const bool cold = o.flush_l2 && flusher_ != nullptr;
    int batch = 1;
    if (!cold && launches > 0 && estimate_ms > 0.0 && estimate_ms < o.min_sample_ms)
      batch = std::min(o.max_batch, static_cast<int>(std::ceil(o.min_sample_ms / estimate_ms)));

    std::vector<double> samples;
    samples.reserve(static_cast<std::size_t>(o.reps));
    for (int r = 0; r < o.reps; ++r) {
      if (o.before_sample) o.before_sample();
      if (cold) flusher_->flush(stream_);
      a.record(stream_);
      for (int k = 0; k < batch; ++k) launch(stream_);
      CUDA_CHECK_LAUNCH();
      b.record(stream_);
      b.synchronize();
      samples.push_back(static_cast<double>(b.elapsed_ms_since(a)) / batch);
    }
    Timing t = timing_of(std::move(samples));
    t.batch = batch;
    t.cold = cold;
    return t;
  }

 private:
  cudaStream_t stream_;
  L2Flusher* flusher_;
};

// Wall-clock timing for work that is synchronous on the host (pageable copies, allocation costs).
// `fn` must finish its GPU work before returning.
template <class Fn>
Timing time_host(Fn&& fn, const TimingOptions& o) {
  using clock = std::chrono::steady_clock;
  int launches = 0;
  const auto t0 = clock::now();
  while (launches < o.min_warmup_launches ||
         std::chrono::duration<double, std::milli>(clock::now() - t0).count() < o.warmup_ms) {
    fn();
    ++launches;
    if (o.warmup_ms <= 0.0 && launches >= o.min_warmup_launches) break;
  }
  std::vector<double> samples;
  for (int r = 0; r < o.reps; ++r) samples.push_back(host_ms(fn));
  return timing_of(std::move(samples));
}

}  // namespace cml
