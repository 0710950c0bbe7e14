// RAII owners for CUDA resources. All are move-only; destructors never throw.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/verify.hpp"

namespace cml {

// Human-readable byte count ("1.50 GB", GB = 1e9) for messages.
std::string format_bytes(double bytes);

// Throws CudaError naming the failed allocation and its size (used by every owner below).
[[noreturn]] void throw_alloc_error(cudaError_t code, const char* what, std::size_t bytes, const char* file,
                                    int line);

// Owns `count` elements obtained from Allocator (allocate(bytes, flags) / release(ptr)). Move-only.
template <class T, class Allocator>
class OwnedBuffer {
 public:
  OwnedBuffer() = default;
  explicit OwnedBuffer(std::size_t count, unsigned flags = Allocator::kDefaultFlags) : count_(count) {
    if (count != 0) ptr_ = static_cast<T*>(Allocator::allocate(bytes(), flags));
  }
  ~OwnedBuffer() { reset(); }
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;
  OwnedBuffer(OwnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  OwnedBuffer& operator=(OwnedBuffer&& o) noexcept {
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

 private:
  void reset() noexcept {
    if (ptr_ != nullptr) Allocator::release(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

struct DeviceAllocator {
  static constexpr unsigned kDefaultFlags = 0;
  static void* allocate(std::size_t bytes, unsigned) {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) throw_alloc_error(err, "cudaMalloc", bytes, __FILE__, __LINE__);
    return p;
  }
  static void release(void* p) noexcept { CUDA_CHECK_NOTHROW(cudaFree(p)); }
};

// Flags: cudaHostAllocDefault, Portable, Mapped, WriteCombined.
struct PinnedAllocator {
  static constexpr unsigned kDefaultFlags = cudaHostAllocDefault;
  static void* allocate(std::size_t bytes, unsigned flags) {
    void* p = nullptr;
    const cudaError_t err = cudaHostAlloc(&p, bytes, flags);
    if (err != cudaSuccess) throw_alloc_error(err, "cudaHostAlloc", bytes, __FILE__, __LINE__);
    return p;
  }
  static void release(void* p) noexcept { CUDA_CHECK_NOTHROW(cudaFreeHost(p)); }
};

// Callers must size managed allocations within the free device memory.
struct ManagedAllocator {
  static constexpr unsigned kDefaultFlags = cudaMemAttachGlobal;
  static void* allocate(std::size_t bytes, unsigned flags) {
    void* p = nullptr;
    const cudaError_t err = cudaMallocManaged(&p, bytes, flags);
    if (err != cudaSuccess) throw_alloc_error(err, "cudaMallocManaged", bytes, __FILE__, __LINE__);
    return p;
  }
  static void release(void* p) noexcept { CUDA_CHECK_NOTHROW(cudaFree(p)); }
};

template <class T>
class DeviceBuffer : public OwnedBuffer<T, DeviceAllocator> {
 public:
  using OwnedBuffer<T, DeviceAllocator>::OwnedBuffer;
  using OwnedBuffer<T, DeviceAllocator>::data;
  using OwnedBuffer<T, DeviceAllocator>::size;
  using OwnedBuffer<T, DeviceAllocator>::bytes;

  void upload(const T* host, std::size_t count) {
    CUDA_CHECK(cudaMemcpy(data(), host, count * sizeof(T), cudaMemcpyHostToDevice));
    // From pageable memory cudaMemcpy may return once the data is staged, before the DMA lands; wait
    // so that work on any stream (non-blocking ones included) sees the uploaded bytes.
    CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  void upload(const std::vector<T>& host) { upload(host.data(), host.size()); }
  void download(T* host, std::size_t count) const {
    CUDA_CHECK(cudaMemcpy(host, data(), count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> download() const {
    std::vector<T> host(size());
    download(host.data(), size());
    return host;
  }
  // Fills every byte with kPoisonByte (common/verify.hpp).
  void poison(cudaStream_t stream = nullptr) { fill_bytes(kPoisonByte, stream); }
  void fill_bytes(int value, cudaStream_t stream = nullptr) {
    if (size() != 0) CUDA_CHECK(cudaMemsetAsync(data(), value, bytes(), stream));
  }
};

// Page-locked host memory from cudaHostAlloc.
template <class T>
class PinnedBuffer : public OwnedBuffer<T, PinnedAllocator> {
 public:
  using OwnedBuffer<T, PinnedAllocator>::OwnedBuffer;
  T& operator[](std::size_t i) const noexcept { return this->data()[i]; }
};

// Managed (unified) memory from cudaMallocManaged.
template <class T>
class ManagedBuffer : public OwnedBuffer<T, ManagedAllocator> {
 public:
  using OwnedBuffer<T, ManagedAllocator>::OwnedBuffer;
  T& operator[](std::size_t i) const noexcept { return this->data()[i]; }
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

// Waits for the stream's work before destroying it. cudaStreamDestroy alone returns at once and lets queued
// work finish later, and the driver may then hand the same handle to the next stream created: anything keyed
// by the handle (the TMA copies' ticket counters, tma_ptx.cuh) would be shared by two streams' work.
class Stream {
 public:
  explicit Stream(unsigned flags = cudaStreamNonBlocking) { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, flags)); }
  ~Stream() { release(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      release();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  cudaStream_t get() const noexcept { return s_; }
  operator cudaStream_t() const noexcept { return s_; }  // NOLINT: implicit by design, for launches
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  void release() noexcept {
    if (s_ == nullptr) return;
    CUDA_CHECK_NOTHROW(cudaStreamSynchronize(s_));
    CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
    s_ = nullptr;
  }
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

// A CUDA graph (cudaGraphCreate / cudaGraphDestroy).
class Graph {
 public:
  Graph() { CUDA_CHECK(cudaGraphCreate(&g_, 0)); }
  ~Graph() {
    if (g_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphDestroy(g_));
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
  Graph& operator=(Graph&& o) noexcept {
    if (this != &o) {
      if (g_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphDestroy(g_));
      g_ = std::exchange(o.g_, nullptr);
    }
    return *this;
  }
  cudaGraph_t get() const noexcept { return g_; }

 private:
  cudaGraph_t g_ = nullptr;
};

// An instantiated graph (cudaGraphInstantiate / cudaGraphExecDestroy). Node attributes are copied at
// instantiation: set them on the graph's nodes first.
class GraphExec {
 public:
  explicit GraphExec(const Graph& g) { CUDA_CHECK(cudaGraphInstantiate(&e_, g.get(), 0)); }
  ~GraphExec() {
    if (e_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(e_));
  }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  GraphExec(GraphExec&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    if (this != &o) {
      if (e_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(e_));
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  void launch(cudaStream_t s) const { CUDA_CHECK(cudaGraphLaunch(e_, s)); }

 private:
  cudaGraphExec_t e_ = nullptr;
};

}  // namespace cml
