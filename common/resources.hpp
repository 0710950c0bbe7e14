// RAII owners for CUDA resources. All are move-only; destructors never throw.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"

namespace cml {

// Human-readable byte count ("1.50 GB", GB = 1e9) for messages.
std::string format_bytes(double bytes);

// Throws CudaError naming the failed allocation and its size (used by every owner below).
[[noreturn]] void throw_alloc_error(cudaError_t code, const char* what, std::size_t bytes, const char* file,
                                    int line);

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count == 0) return;
    const cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes());
    if (err != cudaSuccess) throw_alloc_error(err, "cudaMalloc", bytes(), __FILE__, __LINE__);
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

  void upload(const T* host, std::size_t count) {
    CUDA_CHECK(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return once the data is staged, before the DMA lands; wait
    // so that work on any stream (non-blocking ones included) sees the uploaded bytes.
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void download(T* host, std::size_t count) const {
    CUDA_CHECK(cudaMemcpy(host, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    download(host.data(), count_);
    return host;
  }
  // Fills every byte with 0xFF: NaN for floats, -1 for signed integers. Outputs are poisoned before
  // each variant so a kernel that skips elements cannot pass on a previous variant's result.
  void poison(cudaStream_t stream = nullptr) { fill_bytes(0xFF, stream); }
  void fill_bytes(int value, cudaStream_t stream = nullptr) {
    if (count_ != 0) CUDA_CHECK(cudaMemsetAsync(ptr_, value, bytes(), stream));
  }

 private:
  void reset() noexcept {
    if (ptr_ != nullptr) CUDA_CHECK_NOTHROW(cudaFree(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locked host memory from cudaHostAlloc (flags: cudaHostAllocDefault, Portable, Mapped, WriteCombined).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count, unsigned flags = cudaHostAllocDefault) : count_(count) {
    if (count == 0) return;
    const cudaError_t err = cudaHostAlloc(reinterpret_cast<void**>(&ptr_), bytes(), flags);
    if (err != cudaSuccess) throw_alloc_error(err, "cudaHostAlloc", bytes(), __FILE__, __LINE__);
  }
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  T* data() const noexcept { return ptr_; }
  T& operator[](std::size_t i) const noexcept { return ptr_[i]; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  void reset() noexcept {
    if (ptr_ != nullptr) CUDA_CHECK_NOTHROW(cudaFreeHost(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Managed (unified) memory from cudaMallocManaged. Callers must size it within the free device memory.
template <class T>
class ManagedBuffer {
 public:
  ManagedBuffer() = default;
  explicit ManagedBuffer(std::size_t count, unsigned flags = cudaMemAttachGlobal) : count_(count) {
    if (count == 0) return;
    const cudaError_t err = cudaMallocManaged(reinterpret_cast<void**>(&ptr_), bytes(), flags);
    if (err != cudaSuccess) throw_alloc_error(err, "cudaMallocManaged", bytes(), __FILE__, __LINE__);
  }
  ~ManagedBuffer() { reset(); }
  ManagedBuffer(const ManagedBuffer&) = delete;
  ManagedBuffer& operator=(const ManagedBuffer&) = delete;
  ManagedBuffer(ManagedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  ManagedBuffer& operator=(ManagedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  T* data() const noexcept { return ptr_; }
  T& operator[](std::size_t i) const noexcept { return ptr_[i]; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  void reset() noexcept {
    if (ptr_ != nullptr) CUDA_CHECK_NOTHROW(cudaFree(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Page-locks an existing host allocation for its lifetime (cudaHostRegister / cudaHostUnregister).
class HostRegistration {
 public:
  HostRegistration() = default;
  HostRegistration(void* ptr, std::size_t bytes, unsigned flags = cudaHostRegisterDefault);
  ~HostRegistration() { reset(); }
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  HostRegistration(HostRegistration&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}
  HostRegistration& operator=(HostRegistration&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
    }
    return *this;
  }

 private:
  void reset() noexcept {
    if (ptr_ != nullptr) CUDA_CHECK_NOTHROW(cudaHostUnregister(ptr_));
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
};

class Stream {
 public:
  explicit Stream(unsigned flags = cudaStreamNonBlocking) { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, flags)); }
  ~Stream() {
    if (s_ != nullptr) CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      if (s_ != nullptr) CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  cudaStream_t get() const noexcept { return s_; }
  operator cudaStream_t() const noexcept { return s_; }  // NOLINT: implicit by design, for launches
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault) { CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  ~Event() {
    if (e_ != nullptr) CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      if (e_ != nullptr) CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  cudaEvent_t get() const noexcept { return e_; }
  operator cudaEvent_t() const noexcept { return e_; }  // NOLINT: implicit by design
  void record(cudaStream_t stream) { CUDA_CHECK(cudaEventRecord(e_, stream)); }
  void synchronize() const { CUDA_CHECK(cudaEventSynchronize(e_)); }
  // Milliseconds from `start` to this event (both must have completed).
  float elapsed_ms_since(const Event& start) const {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

// Integer ceiling division for grid sizes.
template <class T>
constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

}  // namespace cml
