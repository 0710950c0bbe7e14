// Array of structs vs struct of arrays: the blog post's {x, y} update (x += 10, y += 20) in several layouts.
//
// One kernel body, update_kernel<Layout>, walks 4 elements per thread blockDim.x apart (loads first,
// then stores); the Layout decides how element i is loaded and stored, and so which instructions the
// compiler emits (sm_90, nvcc 13.0):
//   AosLayout<InnerStruct>         two LDG.E / STG.E of 4 bytes (the struct is only 4-byte aligned)
//   AosLayout<InnerStructAligned>  one LDG.E.64 / STG.E.64 (__align__(8) allows the 8-byte access)
//   AosPairLayout                  one LDG.E.128: two consecutive structs read as a float4
//   SoaLayout                      one LDG.E per array, x and y from separate arrays
//   AosXOnlyLayout, SoaXOnlyLayout x += 10 in place, y never touched
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "02_global_memory/kernels/aos_soa_reference.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch02 {

inline constexpr int kLayoutUnroll = 4;
inline constexpr unsigned kLayoutBlock = 256;

template <class S>
struct AosLayout {
  using Item = S;
  const S* in;
  S* out;
  __device__ S load(std::size_t i) const { return in[i]; }
  __device__ void store(std::size_t i, const S& v) const { out[i] = v; }
};

// Item i is structs 2i and 2i + 1 of an InnerStruct array, as one 16-byte access.
struct AosPairLayout {
  using Item = float4;
  const float4* in;
  float4* out;
  __device__ float4 load(std::size_t i) const { return in[i]; }
  __device__ void store(std::size_t i, const float4& v) const { out[i] = v; }
};

struct SoaLayout {
  using Item = InnerStruct;
  const float* x_in;
  const float* y_in;
  float* x_out;
  float* y_out;
  __device__ InnerStruct load(std::size_t i) const { return {x_in[i], y_in[i]}; }
  __device__ void store(std::size_t i, const InnerStruct& v) const {
    x_out[i] = v.x;
    y_out[i] = v.y;
  }
};

// [doc:aos_x_only_layout]
// x += 10 in place on an array of structs: y shares every sector with x but is never used.
struct AosXOnlyLayout {
  using Item = float;
  InnerStruct* data;
  __device__ float load(std::size_t i) const { return data[i].x; }
  __device__ void store(std::size_t i, float v) const { data[i].x = v; }
};
// [/doc:aos_x_only_layout]

struct SoaXOnlyLayout {
  using Item = float;
  float* x;
  __device__ float load(std::size_t i) const { return x[i]; }
  __device__ void store(std::size_t i, float v) const { x[i] = v; }
};

namespace {

template <class Layout>
__global__ void update_kernel(Layout data, std::size_t n) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kLayoutUnroll + threadIdx.x;
  typename Layout::Item v[kLayoutUnroll] = {};
#pragma unroll
  for (int k = 0; k < kLayoutUnroll; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) v[k] = data.load(i);
  }
#pragma unroll
  for (int k = 0; k < kLayoutUnroll; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < n) data.store(i, updated(v[k]));
  }
}

// `n` items of the layout (for AosPairLayout: pairs of structs).
template <class Layout>
inline void launch_update(const Layout& data, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  const std::size_t blocks = ceil_div<std::size_t>(n, std::size_t{kLayoutBlock} * kLayoutUnroll);
  update_kernel<Layout><<<static_cast<unsigned>(blocks), kLayoutBlock, 0, s>>>(data, n);
  CUDA_CHECK_LAUNCH();
}

// The float4 view of `n` structs: n / 2 pairs, and the last struct on its own when n is odd.
// (cudaMalloc returns 256-byte aligned memory, so the float4 view is aligned.)
inline void launch_update_pairs(const InnerStruct* in, InnerStruct* out, std::size_t n, cudaStream_t s) {
  launch_update(AosPairLayout{reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out)}, n / 2, s);
  if (n % 2 != 0) launch_update(AosLayout<InnerStruct>{in + n - 1, out + n - 1}, 1, s);
}

inline void launch_update_aligned8(const InnerStruct* in, InnerStruct* out, std::size_t n, cudaStream_t s) {
  launch_update(AosLayout<InnerStructAligned>{reinterpret_cast<const InnerStructAligned*>(in),
                                              reinterpret_cast<InnerStructAligned*>(out)},
                n, s);
}

}  // namespace
}  // namespace cml::ch02
