// The kinds of host memory a transfer can start from or land in, behind one RAII owner.
//
//   pageable                  malloc'd (page-aligned) memory: the driver stages every copy through its own
//                             pinned buffer, and cudaMemcpy is synchronous
//   malloc_host               cudaMallocHost: page-locked (pinned), DMA-able directly
//   host_alloc                cudaHostAlloc(cudaHostAllocDefault): the same as cudaMallocHost
//   host_alloc_portable       ... | cudaHostAllocPortable: pinned for every CUDA context, not just this one
//   host_alloc_write_combined ... | cudaHostAllocWriteCombined: not cached by the CPU; fast for the CPU to
//                             write and the GPU to read, very slow for the CPU to read
//   host_alloc_mapped         ... | cudaHostAllocMapped: mapped into the device address space (zero-copy)
//   host_register             malloc'd memory page-locked after the fact with cudaHostRegister
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch04 {

enum class HostKind {
  pageable,
  malloc_host,
  host_alloc,
  host_alloc_portable,
  host_alloc_write_combined,
  host_alloc_mapped,
  host_register,
};

inline const char* to_string(HostKind k) {
  switch (k) {
    case HostKind::pageable: return "pageable";
    case HostKind::malloc_host: return "malloc_host";
    case HostKind::host_alloc: return "host_alloc";
    case HostKind::host_alloc_portable: return "host_alloc_portable";
    case HostKind::host_alloc_write_combined: return "host_alloc_write_combined";
    case HostKind::host_alloc_mapped: return "host_alloc_mapped";
    case HostKind::host_register: return "host_register";
  }
  return "?";
}

inline constexpr std::size_t kPageBytes = 4096;

inline std::size_t round_up_to_page(std::size_t bytes) {
  return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
}

// Page-aligned malloc'd memory (aligned_alloc needs a size that is a multiple of the alignment).
// The pages are not touched here: the first write faults them in.
class HostPages {
 public:
  HostPages() = default;
  explicit HostPages(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    ptr_ = std::aligned_alloc(kPageBytes, round_up_to_page(bytes));
    if (ptr_ == nullptr) throw std::bad_alloc();
  }
  ~HostPages() { std::free(ptr_); }
  HostPages(const HostPages&) = delete;
  HostPages& operator=(const HostPages&) = delete;
  HostPages(HostPages&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  HostPages& operator=(HostPages&& o) noexcept {
    if (this != &o) {
      std::free(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  void* data() const noexcept { return ptr_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// One host buffer of any HostKind. Move-only; frees (and unregisters) in the destructor.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(HostKind kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
    if (bytes == 0) return;
    switch (kind) {
      case HostKind::pageable: pages_ = HostPages(bytes); break;
      case HostKind::host_register:
        pages_ = HostPages(bytes);
        // cudaHostRegisterDefault: on a system with unified addressing the range is also mapped and portable.
        registration_ = HostRegistration(pages_.data(), bytes, cudaHostRegisterDefault);
        break;
      case HostKind::malloc_host: {
        const cudaError_t err = cudaMallocHost(&pinned_, bytes);
        if (err != cudaSuccess) throw_alloc_error(err, "cudaMallocHost", bytes, __FILE__, __LINE__);
        break;
      }
      default: {
        const cudaError_t err = cudaHostAlloc(&pinned_, bytes, host_alloc_flags(kind));
        if (err != cudaSuccess) throw_alloc_error(err, "cudaHostAlloc", bytes, __FILE__, __LINE__);
      }
    }
  }
  ~HostBuffer() { release(); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&& o) noexcept { *this = std::move(o); }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      release();
      kind_ = o.kind_;
      bytes_ = std::exchange(o.bytes_, 0);
      pinned_ = std::exchange(o.pinned_, nullptr);
      pages_ = std::move(o.pages_);
      registration_ = std::move(o.registration_);
    }
    return *this;
  }

  HostKind kind() const noexcept { return kind_; }
  bool pinned() const noexcept { return kind_ != HostKind::pageable; }
  void* data() const noexcept { return pinned_ != nullptr ? pinned_ : pages_.data(); }
  std::uint32_t* words() const noexcept { return static_cast<std::uint32_t*>(data()); }
  std::size_t bytes() const noexcept { return bytes_; }

  static unsigned host_alloc_flags(HostKind kind) {
    switch (kind) {
      case HostKind::host_alloc_portable: return cudaHostAllocPortable;
      case HostKind::host_alloc_write_combined: return cudaHostAllocWriteCombined;
      case HostKind::host_alloc_mapped: return cudaHostAllocMapped;
      default: return cudaHostAllocDefault;
    }
  }

 private:
  void release() noexcept {
    registration_ = HostRegistration();  // unregister before the pages go back to malloc
    pages_ = HostPages();
    if (pinned_ != nullptr) CUDA_CHECK_NOTHROW(cudaFreeHost(pinned_));
    pinned_ = nullptr;
    bytes_ = 0;
  }

  HostKind kind_ = HostKind::pageable;
  std::size_t bytes_ = 0;
  void* pinned_ = nullptr;  // cudaMallocHost / cudaHostAlloc
  HostPages pages_;         // pageable and host_register
  HostRegistration registration_;
};

}  // namespace cml::ch04
