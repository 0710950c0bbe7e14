// Host-side helpers shared by the access-pattern demos and their tests: fast bit-exact checks with
// element-level reports, the poison check, the sweep lists of the chapter, and the sizes of its copy demos.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/harness.hpp"
#include "common/resources.hpp"
#include "common/verify.hpp"

namespace cml::ch02 {

// got[0, count) must equal expected[0, count) bit for bit; mismatches are reported with absolute
// indices first_index + i. memcmp first: a 500 MB output is checked in tens of milliseconds.
template <class T>
void expect_equal(VerifyResult& r, const T* got, const T* expected, std::size_t count, std::size_t first_index) {
  r.checked += count;
  if (count == 0 || std::memcmp(got, expected, count * sizeof(T)) == 0) return;
  for (std::size_t i = 0; i < count; ++i)
    if (std::memcmp(&got[i], &expected[i], sizeof(T)) != 0)
      r.add(first_index + i, detail::to_text(got[i]), detail::to_text(expected[i]));
}

// got[0, count) must still hold the poison (every byte kPoisonByte, see DeviceBuffer::poison): the kernel
// must not have written there.
template <class T>
void expect_poison(VerifyResult& r, const T* got, std::size_t count, std::size_t first_index) {
  r.checked += count;
  const auto* bytes = reinterpret_cast<const unsigned char*>(got);
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t b = 0; b < sizeof(T); ++b)
      if (bytes[i * sizeof(T) + b] != kPoisonByte) {
        r.add(first_index + i, detail::to_text(got[i]), "the poison (all bytes 0xFF)");
        break;
      }
}

// A page-locked host copy of a device buffer, so that downloading 500 MB for verification takes
// milliseconds rather than the ~40 ms a pageable copy would.
template <class T>
class HostMirror {
 public:
  explicit HostMirror(std::size_t count) : buf_(count) {}
  // Synchronous copy of src[0, count()); the caller has synchronized the stream that wrote src.
  const T* fetch(const DeviceBuffer<T>& src) {
    if (buf_.size() != 0) CUDA_CHECK(cudaMemcpy(buf_.data(), src.data(), buf_.bytes(), cudaMemcpyDeviceToHost));
    return buf_.data();
  }
  std::size_t size() const { return buf_.size(); }

 private:
  PinnedBuffer<T> buf_;
};

// The chapter's sweeps, and the few points --quick keeps.
inline std::vector<unsigned> offset_sweep(bool quick) {
  if (quick) return {0, 1, 11, 32, 128};
  std::vector<unsigned> v;
  for (unsigned k = 0; k <= 32; ++k) v.push_back(k);
  v.push_back(64);
  v.push_back(128);
  return v;
}

inline std::vector<unsigned> stride_sweep(bool quick) {
  if (quick) return {1, 2, 8, 32, 64};
  std::vector<unsigned> v;
  for (unsigned s = 1; s <= 32; ++s) v.push_back(s);
  v.push_back(64);
  return v;
}

inline std::vector<unsigned> block_sweep(bool quick) {
  if (quick) return {128, 1024};
  return {128, 256, 512, 1024};
}

// The blog post's three offsets: aligned, misaligned, and aligned again one 512-byte step later.
inline std::vector<unsigned> seed_offsets(bool quick) {
  if (quick) return {0, 11};
  return {0, 11, 128};
}

// The sizes of the copy demos (strided_copy, vector_width): --size bytes per buffer, in and out (at least one
// 16-byte element each), `l2_multiple` x L2 by default so that every point streams from DRAM.
inline void set_copy_sizes(Demo& d, std::uint64_t l2_multiple) {
  d.default_size = [l2_multiple](const DeviceInfo& dev) { return l2_multiple * dev.l2_bytes; };
  d.quick_size = std::uint64_t{4} << 20;
  d.device_bytes = [](std::uint64_t bytes) {
    return DemoMemory::with_default_ceiling(2.0 * static_cast<double>(bytes) + 32);
  };
  d.warmup_ms = 20.0;
}

}  // namespace cml::ch02
