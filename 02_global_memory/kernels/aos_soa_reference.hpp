// The {x, y} structs of the AoS/SoA demo, their update (shared by the kernels and the CPU reference),
// and the reference data. Inputs are random operands (common/pattern.hpp): each update is one correctly
// rounded add, the same on the CPU and the GPU, so results compare bit for bit.
#pragma once

#include <cuda_runtime.h>  // __host__ __device__, float4

#include <cstddef>
#include <vector>

#include "common/pattern.hpp"

namespace cml::ch02 {

// The blog post's struct: 8 bytes but only 4-byte aligned, so the compiler must load x and y separately.
struct InnerStruct {
  float x;
  float y;
};

// The same fields; the alignment lets one 8-byte instruction move the whole struct.
struct __align__(8) InnerStructAligned {
  float x;
  float y;
};

static_assert(sizeof(InnerStruct) == 8 && alignof(InnerStruct) == 4, "the blog post's layout");
static_assert(sizeof(InnerStructAligned) == 8 && alignof(InnerStructAligned) == 8, "one 8-byte access");

__host__ __device__ inline InnerStruct updated(InnerStruct s) { return {s.x + 10.0f, s.y + 20.0f}; }
__host__ __device__ inline InnerStructAligned updated(InnerStructAligned s) { return {s.x + 10.0f, s.y + 20.0f}; }
// Two structs (x0, y0, x1, y1).
__host__ __device__ inline float4 updated(float4 p) {
  return make_float4(p.x + 10.0f, p.y + 20.0f, p.z + 10.0f, p.w + 20.0f);
}
// The x-only variants.
__host__ __device__ inline float updated(float x) { return x + 10.0f; }

inline InnerStruct layout_input(std::size_t i) {
  return {random_operand(i, 0xA), random_operand(i, 0xB)};
}

// Inputs and expected outputs for n structs, in both layouts.
struct LayoutHost {
  std::vector<InnerStruct> aos_in, aos_out, aos_x_only;  // aos_x_only: x + 10, y unchanged
  std::vector<float> x_in, y_in, x_out, y_out;           // x_out is also soa_x_only's result
};

inline LayoutHost make_layout_host(std::size_t n) {
  LayoutHost h;
  h.aos_in.resize(n);
  h.aos_out.resize(n);
  h.aos_x_only.resize(n);
  h.x_in.resize(n);
  h.y_in.resize(n);
  h.x_out.resize(n);
  h.y_out.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const InnerStruct s = layout_input(i);
    h.aos_in[i] = s;
    h.aos_out[i] = updated(s);
    h.aos_x_only[i] = {updated(s.x), s.y};
    h.x_in[i] = s.x;
    h.y_in[i] = s.y;
    h.x_out[i] = h.aos_out[i].x;
    h.y_out[i] = h.aos_out[i].y;
  }
  return h;
}

}  // namespace cml::ch02
