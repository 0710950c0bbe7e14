#include "common/cuda_check.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace cml {

std::string format_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  return fmt::format("{}:{}: CUDA error {} ({}) in `{}`", file, line, cudaGetErrorName(code),
                     cudaGetErrorString(code), expr);
}

void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  // Clear a non-sticky error so the next unrelated check does not report it again.
  (void)cudaGetLastError();
  throw CudaError(code, format_cuda_error(code, expr, file, line));
}

void report_cuda_error(cudaError_t code, const char* expr, const char* file, int line) noexcept {
  (void)cudaGetLastError();
  std::fprintf(stderr, "warning: %s:%d: CUDA error %s (%s) in `%s`\n", file, line, cudaGetErrorName(code),
               cudaGetErrorString(code), expr);
}

}  // namespace cml
