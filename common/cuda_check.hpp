// Error checking for every CUDA runtime call and kernel launch.
//
// CUDA_CHECK(expr) throws cml::CudaError carrying the expression, file, line and the error's name and
// description. CUDA_CHECK_LAUNCH() goes after every kernel launch: it catches bad launch configurations
// at once (asynchronous faults surface at the next synchronizing call, which is checked too).
// CUDA_CHECK_NOTHROW(expr) is for destructors: it reports and carries on.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace cml {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

// Formats "<file>:<line>: CUDA error cudaErrorX (description) in `expr`".
std::string format_cuda_error(cudaError_t code, const char* expr, const char* file, int line);
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line);
void report_cuda_error(cudaError_t code, const char* expr, const char* file, int line) noexcept;

}  // namespace cml

#define CUDA_CHECK(expr)                                                       \
  do {                                                                         \
    const cudaError_t cml_check_err_ = (expr);                                 \
    if (cml_check_err_ != cudaSuccess)                                         \
      ::cml::throw_cuda_error(cml_check_err_, #expr, __FILE__, __LINE__);      \
  } while (0)

#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUDA_CHECK_NOTHROW(expr)                                               \
  do {                                                                         \
    const cudaError_t cml_check_err_ = (expr);                                 \
    if (cml_check_err_ != cudaSuccess)                                         \
      ::cml::report_cuda_error(cml_check_err_, #expr, __FILE__, __LINE__);     \
  } while (0)
