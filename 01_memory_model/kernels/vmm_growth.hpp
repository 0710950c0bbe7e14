// A device buffer that grows and keeps its contents, in the two ways vmm_growth.cu compares.
//
// copying: what realloc does. Allocate the new size, copy the old contents into it, free the old
//   allocation. Every step copies everything the buffer holds, needs old + new bytes at once, and moves
//   the buffer to a new address, so every pointer into it must be refreshed.
// mapping: reserve address space for the largest size once (common/vmm.hpp), then map one more piece of
//   physical memory after the last at each step. Nothing is copied, nothing moves: a pointer taken into
//   the buffer before it grew still points at the same byte.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "01_memory_model/kernels/vmm_growth_plan.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"
#include "common/vmm.hpp"

namespace cml::ch01 {

class GrowingBuffer {
 public:
  // Empty. `reserve`: the most it will ever hold (the address space a mapping buffer sets aside).
  GrowingBuffer(GrowBy how, int device, std::size_t reserve) : how_(how) {
    if (how == GrowBy::mapping) vmm_ = VmmBuffer(device, reserve, false);
  }

  // Makes the buffer `new_bytes` long with its first bytes() unchanged. GPU work still in flight may
  // finish after it returns (the copying kind leaves none: cudaFree waits for the device).
  // [doc:grow_to]
  void grow_to(std::size_t new_bytes, cudaStream_t s) {
    if (new_bytes <= bytes_)
      throw std::invalid_argument("GrowingBuffer::grow_to: " + std::to_string(new_bytes) + " bytes does not grow " +
                                  std::to_string(bytes_));
    if (how_ == GrowBy::mapping) {
      // A size between granules was already mapped by the step that rounded up to it.
      if (new_bytes > vmm_.mapped()) vmm_.grow(new_bytes - vmm_.mapped());
    } else {
      DeviceBuffer<unsigned char> bigger(new_bytes);
      if (bytes_ != 0)
        CUDA_CHECK(cudaMemcpyAsync(bigger.data(), copy_.data(), bytes_, cudaMemcpyDeviceToDevice, s));
      copy_ = std::move(bigger);  // frees the old allocation; cudaFree waits for the copy first
    }
    bytes_ = new_bytes;
  }
  // [/doc:grow_to]

  template <class T = void>
  T* data() const noexcept {
    return how_ == GrowBy::mapping ? vmm_.data<T>() : reinterpret_cast<T*>(copy_.data());
  }
  std::size_t bytes() const noexcept { return bytes_; }
  GrowBy how() const noexcept { return how_; }
  // Physical memory behind the buffer: bytes() rounded up to the granule for the mapping kind.
  std::size_t held() const noexcept { return how_ == GrowBy::mapping ? vmm_.mapped() : copy_.bytes(); }

 private:
  GrowBy how_;
  VmmBuffer vmm_;
  DeviceBuffer<unsigned char> copy_;
  std::size_t bytes_ = 0;
};

}  // namespace cml::ch01
