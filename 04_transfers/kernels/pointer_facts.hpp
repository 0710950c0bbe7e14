// What cudaPointerGetAttributes says about each kind of pointer under unified virtual addressing (UVA),
// and what the CUDA documentation promises it says. Shared by uva_pointers and the tests.
//
//   kind               type          devicePointer                 hostPointer
//   device             Device        the pointer itself            null
//   malloc_host        Host          the pointer itself (UVA)      the pointer itself
//   host_alloc_mapped  Host          the pointer itself (UVA)      the pointer itself
//   host_register      Host          the pointer itself if cudaDevAttrCanUseHostPointerForRegisteredMem,
//                                    another address otherwise     the pointer itself
//   managed            Managed       the pointer itself            the pointer itself
//   pageable           Unregistered  not specified (CUDA >= 11 returns cudaSuccess for such pointers)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/cuda_check.hpp"

namespace cml::ch04 {

enum class PointerKind { device, malloc_host, host_alloc_mapped, host_register, managed, managed_variable, pageable };

inline const char* to_string(PointerKind k) {
  switch (k) {
    case PointerKind::device: return "device";
    case PointerKind::malloc_host: return "malloc_host";
    case PointerKind::host_alloc_mapped: return "host_alloc_mapped";
    case PointerKind::host_register: return "host_register";
    case PointerKind::managed: return "managed";
    case PointerKind::managed_variable: return "managed_variable";
    case PointerKind::pageable: return "pageable";
  }
  return "?";
}

inline const char* to_string(cudaMemoryType t) {
  switch (t) {
    case cudaMemoryTypeUnregistered: return "unregistered";
    case cudaMemoryTypeHost: return "host";
    case cudaMemoryTypeDevice: return "device";
    case cudaMemoryTypeManaged: return "managed";
  }
  return "?";
}

// How an address reported by the runtime relates to the pointer that was asked about.
enum class Relation { same, null, other, any };

inline const char* to_string(Relation r) {
  switch (r) {
    case Relation::same: return "same";
    case Relation::null: return "null";
    case Relation::other: return "other";
    case Relation::any: return "any";
  }
  return "?";
}

inline Relation relation_of(const void* reported, const void* ptr) {
  if (reported == nullptr) return Relation::null;
  return reported == ptr ? Relation::same : Relation::other;
}

inline std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return buf;
}

struct PointerFacts {
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = -1;
  Relation device_ptr = Relation::null;
  Relation host_ptr = Relation::null;
  const void* device_address = nullptr;
};

inline PointerFacts query_pointer(const void* ptr) {
  cudaPointerAttributes a{};
  CUDA_CHECK(cudaPointerGetAttributes(&a, ptr));
  PointerFacts f;
  f.type = a.type;
  f.device = a.device;
  f.device_ptr = relation_of(a.devicePointer, ptr);
  f.host_ptr = relation_of(a.hostPointer, ptr);
  f.device_address = a.devicePointer;
  return f;
}

struct Expectation {
  cudaMemoryType type;
  Relation device_ptr;
  Relation host_ptr;
  bool has_device;  // `device` names the device that allocated or registered it
};

// `registered_same_address`: cudaDevAttrCanUseHostPointerForRegisteredMem of the current device.
inline Expectation expected_attributes(PointerKind kind, bool registered_same_address) {
  switch (kind) {
    case PointerKind::device: return {cudaMemoryTypeDevice, Relation::same, Relation::null, true};
    case PointerKind::malloc_host:
    case PointerKind::host_alloc_mapped: return {cudaMemoryTypeHost, Relation::same, Relation::same, true};
    case PointerKind::host_register:
      return {cudaMemoryTypeHost, registered_same_address ? Relation::same : Relation::other, Relation::same, true};
    case PointerKind::managed: return {cudaMemoryTypeManaged, Relation::same, Relation::same, true};
    // A __managed__ variable is allocated when the module loads, not by a call on a chosen device.
    case PointerKind::managed_variable: return {cudaMemoryTypeManaged, Relation::same, Relation::same, false};
    case PointerKind::pageable: return {cudaMemoryTypeUnregistered, Relation::any, Relation::any, false};
  }
  return {cudaMemoryTypeUnregistered, Relation::any, Relation::any, false};
}

// "" when the facts meet the expectation, otherwise what differs.
inline std::string mismatch(const PointerFacts& f, const Expectation& e, int device) {
  std::string why;
  if (f.type != e.type) why += std::string("type ") + to_string(f.type) + " (expected " + to_string(e.type) + "); ";
  if (e.device_ptr != Relation::any && f.device_ptr != e.device_ptr)
    why += std::string("devicePointer ") + to_string(f.device_ptr) + " (expected " + to_string(e.device_ptr) + "); ";
  if (e.host_ptr != Relation::any && f.host_ptr != e.host_ptr)
    why += std::string("hostPointer ") + to_string(f.host_ptr) + " (expected " + to_string(e.host_ptr) + "); ";
  if (e.has_device && f.device != device)
    why += "device " + std::to_string(f.device) + " (expected " + std::to_string(device) + "); ";
  return why;
}

inline bool registered_memory_uses_host_pointer(int device) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrCanUseHostPointerForRegisteredMem, device));
  return v != 0;
}

}  // namespace cml::ch04
