// Device memory through the driver's virtual memory management API: reserve an address range, create
// physical memory (optionally compressible), map it into the range and grant this device access.
// cudaMalloc does all of this in one call; doing it by hand is what lets a buffer be compressible, or
// grow in place by mapping more physical memory behind the addresses it already has.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/driver_api.hpp"

namespace cml {

// The driver functions used here, looked up once. `missing` names the first one this driver lacks.
struct VmmApi {
  CUresult (*get_granularity)(size_t*, const CUmemAllocationProp*, CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*address_reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long) = nullptr;
  CUresult (*address_free)(CUdeviceptr, size_t) = nullptr;
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*, unsigned long long) = nullptr;
  CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) = nullptr;
  CUresult (*unmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
  CUresult (*properties)(CUmemAllocationProp*, CUmemGenericAllocationHandle) = nullptr;
  CUresult (*device_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  std::string missing;

  static const VmmApi& get() {
    static const VmmApi api = load();
    return api;
  }

 private:
  template <class Fn>
  static void find(Fn& fn, const char* symbol, unsigned version, std::string& missing) {
    fn = driver_function<Fn>(symbol, version);
    if (fn == nullptr && missing.empty()) missing = symbol;
  }
  static VmmApi load() {
    VmmApi a;
    find(a.get_granularity, "cuMemGetAllocationGranularity", 10020, a.missing);
    find(a.address_reserve, "cuMemAddressReserve", 10020, a.missing);
    find(a.address_free, "cuMemAddressFree", 10020, a.missing);
    find(a.create, "cuMemCreate", 10020, a.missing);
    find(a.release, "cuMemRelease", 10020, a.missing);
    find(a.map, "cuMemMap", 10020, a.missing);
    find(a.unmap, "cuMemUnmap", 10020, a.missing);
    find(a.set_access, "cuMemSetAccess", 10020, a.missing);
    find(a.properties, "cuMemGetAllocationPropertiesFromHandle", 10020, a.missing);
    find(a.device_attribute, "cuDeviceGetAttribute", 2000, a.missing);
    return a;
  }
};

// The allocation properties for pinned device memory on `device`, compressible when asked.
// [doc:vmm_properties]
inline CUmemAllocationProp vmm_properties(int device, bool compressible) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.allocFlags.compressionType = compressible ? CU_MEM_ALLOCATION_COMP_GENERIC : CU_MEM_ALLOCATION_COMP_NONE;
  return p;
}
// [/doc:vmm_properties]

// The size the driver maps in (2 MiB on current GPUs; compressible memory may need more).
inline std::size_t vmm_granularity(int device, bool compressible) {
  const VmmApi& api = VmmApi::get();
  const CUmemAllocationProp p = vmm_properties(device, compressible);
  std::size_t g = 0;
  CU_CHECK(api.get_granularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return g;
}

inline int vmm_device_attribute(int device, CUdevice_attribute a) {
  int v = 0;
  CU_CHECK(VmmApi::get().device_attribute(&v, a, static_cast<CUdevice>(device)));
  return v;
}

// Why this device cannot give VMM memory (compressible, when asked), or "" when it can.
inline std::string vmm_unavailable(int device, bool compressible) {
  const VmmApi& api = VmmApi::get();
  if (!api.missing.empty()) return "the driver has no " + api.missing + " (virtual memory management)";
  if (!vmm_device_attribute(device, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED))
    return "this GPU has no virtual memory management (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0)";
  if (compressible && !vmm_device_attribute(device, CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED))
    return "this GPU has no generic memory compression (CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 0)";
  return "";
}

// An address range with physical chunks mapped behind it, all owned: unmapped, released and the range
// freed on destruction. grow() maps one more chunk right after the last, so the buffer gets longer while
// every byte already in it stays where it is.
class VmmBuffer {
 public:
  VmmBuffer() = default;
  // `reserve` bytes of address space (rounded up to the granularity); nothing mapped yet.
  VmmBuffer(int device, std::size_t reserve, bool compressible)
      : device_(device), compressible_(compressible), granularity_(vmm_granularity(device, compressible)) {
    reserved_ = round_up(reserve);
    CU_CHECK(VmmApi::get().address_reserve(&base_, reserved_, granularity_, 0, 0));
  }
  ~VmmBuffer() { reset(); }
  VmmBuffer(const VmmBuffer&) = delete;
  VmmBuffer& operator=(const VmmBuffer&) = delete;
  VmmBuffer(VmmBuffer&& o) noexcept { swap(o); }
  VmmBuffer& operator=(VmmBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      swap(o);
    }
    return *this;
  }

  // Maps `bytes` more (rounded up to the granularity) at the end of what is mapped.
  void grow(std::size_t bytes) {
    const VmmApi& api = VmmApi::get();
    const std::size_t size = round_up(bytes);
    if (mapped_ + size > reserved_)
      throw CudaError(cudaErrorInvalidValue, "VmmBuffer::grow: " + std::to_string(mapped_ + size) +
                                                 " bytes would pass the " + std::to_string(reserved_) + " reserved");
    // [doc:map_chunk]
    const CUmemAllocationProp prop = vmm_properties(device_, compressible_);
    CUmemGenericAllocationHandle h = 0;
    CU_CHECK(api.create(&h, size, &prop, 0));
    chunks_.push_back({h, size});
    const CUdeviceptr chunk = base_ + mapped_;
    CU_CHECK(api.map(chunk, size, 0, h, 0));
    mapped_ += size;  // counted once mapped: if set_access throws, reset() still unmaps the chunk
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device_;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(api.set_access(chunk, size, &access, 1));
    // [/doc:map_chunk]
  }

  // True when every chunk got the compression it asked for (a driver may quietly hand out plain memory).
  bool compressed() const {
    if (chunks_.empty()) return false;
    for (const Chunk& c : chunks_) {
      CUmemAllocationProp p{};
      CU_CHECK(VmmApi::get().properties(&p, c.handle));
      if (p.allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_GENERIC) return false;
    }
    return true;
  }

  template <class T = void>
  T* data() const noexcept {
    return reinterpret_cast<T*>(static_cast<std::uintptr_t>(base_));
  }
  std::size_t mapped() const noexcept { return mapped_; }
  std::size_t reserved() const noexcept { return reserved_; }
  std::size_t granularity() const noexcept { return granularity_; }
  std::size_t round_up(std::size_t b) const { return (b + granularity_ - 1) / granularity_ * granularity_; }

 private:
  struct Chunk {
    CUmemGenericAllocationHandle handle;
    std::size_t size;
  };
  void reset() noexcept {
    if (base_ == 0) return;
    const VmmApi& api = VmmApi::get();
    // Unmapping waits for nothing: work still using the range must have finished.
    CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
    if (mapped_ != 0) CU_CHECK_NOTHROW(api.unmap(base_, mapped_));
    for (const Chunk& c : chunks_) CU_CHECK_NOTHROW(api.release(c.handle));
    CU_CHECK_NOTHROW(api.address_free(base_, reserved_));
    base_ = 0;
    chunks_.clear();
    mapped_ = reserved_ = 0;
  }
  void swap(VmmBuffer& o) noexcept {
    std::swap(device_, o.device_);
    std::swap(compressible_, o.compressible_);
    std::swap(granularity_, o.granularity_);
    std::swap(base_, o.base_);
    std::swap(reserved_, o.reserved_);
    std::swap(mapped_, o.mapped_);
    std::swap(chunks_, o.chunks_);
  }

  int device_ = 0;
  bool compressible_ = false;
  std::size_t granularity_ = 0;
  CUdeviceptr base_ = 0;
  std::size_t reserved_ = 0, mapped_ = 0;
  std::vector<Chunk> chunks_;
};

}  // namespace cml
