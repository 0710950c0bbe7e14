// Driver API functions (cuMemCreate, cuTensorMapEncodeTiled, ...) reached through the runtime's
// entry-point query, so the project links only the runtime: no -lcuda, and a binary still starts on a
// machine whose driver lacks a function (the demo that needs it is waived instead).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "common/cuda_check.hpp"

namespace cml {

// The driver function `symbol` as it was at CUDA `version` (e.g. 12000), or nullptr when this driver
// does not have it.
template <class Fn>
Fn driver_function(const char* symbol, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found));
#else
  (void)version;
  CUDA_CHECK(cudaGetDriverEntryPoint(symbol, &fn, cudaEnableDefault, &found));
#endif
  return found == cudaDriverEntryPointSuccess ? reinterpret_cast<Fn>(fn) : nullptr;
}

// "CUDA_ERROR_OUT_OF_MEMORY (2)" for a driver result, through the driver's own cuGetErrorName.
inline std::string driver_error_name(CUresult r) {
  using GetName = CUresult (*)(CUresult, const char**);
  static const GetName get_name = driver_function<GetName>("cuGetErrorName", 6000);
  const char* name = nullptr;
  if (get_name == nullptr || get_name(r, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown driver error";
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

inline std::string format_driver_error(CUresult r, const char* expr, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": CUDA driver error " + driver_error_name(r) + " in `" +
         expr + "`";
}

[[noreturn]] inline void throw_driver_error(CUresult r, const char* expr, const char* file, int line) {
  // The runtime's code for the same failure where there is one, so callers can tell out-of-memory apart.
  const cudaError_t code = r == CUDA_ERROR_OUT_OF_MEMORY ? cudaErrorMemoryAllocation : cudaErrorUnknown;
  throw CudaError(code, format_driver_error(r, expr, file, line));
}

inline void report_driver_error(CUresult r, const char* expr, const char* file, int line) noexcept {
  try {
    std::fprintf(stderr, "%s\n", format_driver_error(r, expr, file, line).c_str());
  } catch (...) {
  }
}

}  // namespace cml

// Checks a driver API call made through a pointer from cml::driver_function.
#define CU_CHECK(expr)                                                       \
  do {                                                                       \
    const CUresult cml_cu_err_ = (expr);                                     \
    if (cml_cu_err_ != CUDA_SUCCESS) ::cml::throw_driver_error(cml_cu_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// The same for destructors: reports and carries on.
#define CU_CHECK_NOTHROW(expr)                                               \
  do {                                                                       \
    const CUresult cml_cu_err_ = (expr);                                     \
    if (cml_cu_err_ != CUDA_SUCCESS) ::cml::report_driver_error(cml_cu_err_, #expr, __FILE__, __LINE__); \
  } while (0)
