// global_variable: how does host code reach a __device__ or __constant__ variable it cannot take the
// address of directly?
//
// Such a variable is global memory with program lifetime, named by a symbol: the host reaches it through
// the symbol API (cudaMemcpyToSymbol / FromSymbol) or through the address cudaGetSymbolAddress returns, and
// can point a __device__ pointer at its own cudaMalloc buffer. Every value read back is predicted by the
// host, so each route is checked, not timed.
//
// Run: build/bin/global_variable
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/kernels/symbols.cuh"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

void memcpy_to_symbol(Context& ctx) {
  const float initial = 3.14f;
  CUDA_CHECK(cudaMemcpyToSymbol(g_value, &initial, sizeof initial));
  // From pageable memory the copy may return before it lands, and the non-blocking ctx.stream() does not wait.
  CUDA_CHECK(cudaStreamSynchronize(nullptr));
  launch_add_two(ctx.stream());
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  float back = 0.0f;
  CUDA_CHECK(cudaMemcpyFromSymbol(&back, g_value, sizeof back));
  const float expected = initial + 2.0f;
  const bool ok = ctx.check(compare_value(back, expected, "g_value"), "g_value");
  ctx.add_row("g_value", 1, ok).set("value", back).set("expected", expected);
}

void symbol_address(Context& ctx) {
  float* address = nullptr;
  std::size_t size = 0;
  // [doc:symbol_address_copy]
  CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&address), g_value));
  CUDA_CHECK(cudaGetSymbolSize(&size, g_value));
  const float initial = 3.14f;
  // With the address in hand the symbol is plain device memory: cudaMemcpy works on it.
  CUDA_CHECK(cudaMemcpy(address, &initial, sizeof initial, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the copy may not have landed, and ctx.stream() would not wait
  launch_add_two(ctx.stream());
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  float back = 0.0f;
  CUDA_CHECK(cudaMemcpy(&back, address, sizeof back, cudaMemcpyDeviceToHost));
  // [/doc:symbol_address_copy]
  bool ok = ctx.check(compare_value(back, initial + 2.0f, "g_value"), "g_value via address");
  ok = ctx.check(compare_value(size, sizeof(float), "cudaGetSymbolSize"), "symbol size") && ok;
  ctx.add_row("g_value", 1, ok).set("value", back).set("symbol_size_bytes", static_cast<double>(size));
}

void constant_array(Context& ctx) {
  std::vector<float> coeffs(kCoeffCount);
  for (int i = 0; i < kCoeffCount; ++i) coeffs[i] = 0.25f * static_cast<float>(i + 1);
  CUDA_CHECK(cudaMemcpyToSymbol(c_coeffs, coeffs.data(), coeffs.size() * sizeof(float)));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the copy lands before the kernel on ctx.stream() reads it
  std::size_t size = 0;
  CUDA_CHECK(cudaGetSymbolSize(&size, c_coeffs));

  const int n = ctx.quick() ? 1000 : 100003;  // not a multiple of the block
  DeviceBuffer<float> out(n);
  out.poison(ctx.stream());
  launch_scale_by_coeffs(out.data(), n, ctx.stream());
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  std::vector<float> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = coeffs[i % kCoeffCount] * static_cast<float>(i);
  bool ok = ctx.check(compare_exact(out.download(), expected), "c_coeffs[i % 16] * i");

  std::vector<float> back(kCoeffCount);
  CUDA_CHECK(cudaMemcpyFromSymbol(back.data(), c_coeffs, back.size() * sizeof(float)));
  ok = ctx.check(compare_exact(back, coeffs), "c_coeffs read back") && ok;
  ok = ctx.check(compare_value(size, sizeof(float) * kCoeffCount, "cudaGetSymbolSize"), "constant size") && ok;
  ctx.add_row("c_coeffs", static_cast<std::uint64_t>(n), ok).set("symbol_size_bytes", static_cast<double>(size));
}

void device_pointer_symbol(Context& ctx) {
  const int n = ctx.quick() ? 1000 : 100003;
  DeviceBuffer<float> target(n);
  target.poison(ctx.stream());
  float* p = target.data();
  // The symbol holds a device address; copying the pointer value in is all it takes.
  CUDA_CHECK(cudaMemcpyToSymbol(g_target, &p, sizeof p));
  CUDA_CHECK(cudaStreamSynchronize(nullptr));  // the pointer lands before the kernel on ctx.stream() reads it
  launch_write_through_symbol_pointer(n, ctx.stream());
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  std::vector<float> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = 3.0f * static_cast<float>(i);
  const bool ok = ctx.check(compare_exact(target.download(), expected), "g_target[i] = 3i");
  ctx.add_row("g_target", static_cast<std::uint64_t>(n), ok);
}

Demo make_demo() {
  Demo d;
  d.name = "global_variable";
  d.summary =
      "Static __device__ and __constant__ symbols written and read from the host through the symbol API and\n"
      "through cudaGetSymbolAddress, a __constant__ array filled from the host and a __device__ pointer\n"
      "aimed at a cudaMalloc buffer.";
  d.size_meaning = "unused (fixed small sizes)";
  d.variants = {
      {"memcpy_to_symbol", "cudaMemcpyToSymbol 3.14, kernel adds 2, cudaMemcpyFromSymbol reads 5.14", memcpy_to_symbol},
      {"symbol_address", "cudaGetSymbolAddress + plain cudaMemcpy on the same variable; cudaGetSymbolSize",
       symbol_address},
      {"constant_array", "a __constant__ float[16] filled from the host and read by every thread", constant_array},
      {"device_pointer_symbol", "a __device__ float* set from the host to a cudaMalloc buffer", device_pointer_symbol},
  };
  d.claims = {
      all_verified_claim("symbol_api_round_trip",
                         "A value written with cudaMemcpyToSymbol and changed by a kernel reads back through "
                         "cudaMemcpyFromSymbol exactly as the host predicts.",
                         {"memcpy_to_symbol"}, "a __device__ variable is ordinary global memory; any "
                         "difference is a defect"),
      all_verified_claim("symbol_address_is_plain_memory",
                         "Through the address cudaGetSymbolAddress returns, a plain cudaMemcpy reaches the "
                         "same variable, and cudaGetSymbolSize is the size of its type.",
                         {"symbol_address"}, "the symbol API only looks the address up; any difference is a "
                         "defect"),
      all_verified_claim("constant_array_reaches_every_thread",
                         "A __constant__ array filled from the host is what every thread reads and what "
                         "the host reads back.",
                         {"constant_array"}, "constant memory is device memory the host writes; any "
                         "difference is a defect"),
      all_verified_claim("device_pointer_symbol_targets_buffer",
                         "A __device__ pointer set from the host to a cudaMalloc buffer makes the kernel "
                         "write exactly that buffer.",
                         {"device_pointer_symbol"}, "the symbol holds a plain device address; any "
                         "difference is a defect"),
  };
  d.quick_size = 1;
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{1}; };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
