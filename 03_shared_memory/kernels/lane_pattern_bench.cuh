// Verifying and timing one lane pattern of lane_pattern.cuh: shared by the demos bank_conflicts,
// bank_width and smem_vs_global so they measure the same kernel the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "03_shared_memory/kernels/lane_pattern.cuh"
#include "common/harness.hpp"

namespace cml::ch03 {
namespace {

// Shared loads per thread -> rounds; the bank demos take the loads from --size, so errors are CLI errors.
inline int pattern_rounds(std::uint64_t loads) {
  if (loads % kPatternUnroll != 0)
    throw CliError("--size (shared loads per thread) must be a multiple of " + std::to_string(kPatternUnroll));
  if (loads > (std::uint64_t{1} << 20)) throw CliError("--size (shared loads per thread) must be at most 1M");
  return static_cast<int>(loads / kPatternUnroll);
}

// Buffers for one access width (4, 8 or 16 bytes); measure() verifies, times and describes one pattern.
class PatternBench {
 public:
  PatternBench(Context& ctx, unsigned width, std::uint64_t loads_per_thread)
      : ctx_(ctx),
        width_(width),
        loads_(loads_per_thread),
        rounds_(pattern_rounds(loads_per_thread)),
        // A full GPU of kPatternBlocksPerSm blocks per SM; --quick runs two blocks so sanitizers stay fast.
        blocks_(ctx.quick() ? 2 : ctx.device().sm_count * kPatternBlocksPerSm),
        words_(pattern_init_words(width)),
        init_(words_.size()),
        offsets_(32),
        out_(threads() * (width / 4)) {
    init_.upload(words_);
  }

  std::size_t threads() const { return static_cast<std::size_t>(blocks_) * kPatternBlock; }
  int rounds() const { return rounds_; }
  int blocks() const { return blocks_; }
  // Bytes the lanes ask for in one launch (what a conflict-free pattern delivers at 128 B per wavefront).
  double requested_bytes() const {
    return static_cast<double>(threads()) * rounds_ * kPatternUnroll * width_;
  }

  void launch(cudaStream_t s) {
    switch (width_) {
      case 4:
        launch_lane_pattern_read(init_.data(), offsets_.data(), rounds_, out_.data(), blocks_, s);
        break;
      case 8:
        launch_lane_pattern_read(reinterpret_cast<const uint2*>(init_.data()), offsets_.data(), rounds_,
                                 reinterpret_cast<uint2*>(out_.data()), blocks_, s);
        break;
      default:
        launch_lane_pattern_read(reinterpret_cast<const uint4*>(init_.data()), offsets_.data(), rounds_,
                                 reinterpret_cast<uint4*>(out_.data()), blocks_, s);
        break;
    }
  }

  // The returned row carries the model's columns; it is only valid until the next row is added.
  Row& measure(const LanePattern& p, const std::string& params) {
    offsets_.upload(p.offsets.data(), p.offsets.size());
    const auto expected = pattern_expected(p, width_, rounds_, threads(), words_);
    Row& row = ctx_.measure(
        params, loads_, 0.0, [&](cudaStream_t s) { launch(s); },
        [&] { return compare_exact(out_.download(), expected); }, [&](cudaStream_t s) { out_.poison(s); });
    const model::SharedAccess m = pattern_model(p, width_);
    row.set("width_bytes", width_)
        .set("pattern", p.name)
        .set("model_wavefronts_per_req", m.wavefronts_per_request())
        .set("model_ideal_wavefronts", static_cast<double>(m.ideal_wavefronts))
        .set("model_conflict_degree", static_cast<double>(m.wavefronts) / static_cast<double>(m.ideal_wavefronts));
    if (row.verified) row.set("smem_gb_per_s", requested_bytes() / (row.median_ms * 1e6));
    return row;
  }

 private:
  Context& ctx_;
  unsigned width_;
  std::uint64_t loads_;
  int rounds_;
  int blocks_;
  std::vector<std::uint32_t> words_;
  DeviceBuffer<std::uint32_t> init_;
  DeviceBuffer<int> offsets_;
  DeviceBuffer<std::uint32_t> out_;
};

}  // namespace
}  // namespace cml::ch03
