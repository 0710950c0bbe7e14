#include "common/resources.hpp"

#include <fmt/format.h>

namespace cml {

std::string format_bytes(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.2f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.2f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

void throw_alloc_error(cudaError_t code, const char* what, std::size_t bytes, const char* file, int line) {
  (void)cudaGetLastError();
  throw CudaError(code, fmt::format("{}:{}: {} of {} ({} bytes) failed: {} ({})", file, line, what,
                                    format_bytes(static_cast<double>(bytes)), bytes, cudaGetErrorName(code),
                                    cudaGetErrorString(code)));
}

HostRegistration::HostRegistration(void* ptr, std::size_t bytes, unsigned flags) {
  const cudaError_t err = cudaHostRegister(ptr, bytes, flags);
  if (err != cudaSuccess) throw_alloc_error(err, "cudaHostRegister", bytes, __FILE__, __LINE__);
  ptr_ = ptr;
}

}  // namespace cml
