// A 3x3 box sum with clamp-to-edge borders, read two ways: ordinary global loads with the clamping done
// in code, and tex2D() through a texture object whose sampler clamps in hardware (point sampling, so
// every fetch returns one texel exactly). Inputs are small integers: the sums are exact.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {

inline std::vector<float> box3x3_reference(const std::vector<float>& in, std::size_t width, std::size_t height) {
  std::vector<float> out(width * height);
  const auto clamp = [](long long v, std::size_t n) {
    return static_cast<std::size_t>(v < 0 ? 0 : (v >= static_cast<long long>(n) ? static_cast<long long>(n) - 1 : v));
  };
  for (std::size_t y = 0; y < height; ++y)
    for (std::size_t x = 0; x < width; ++x) {
      float s = 0.0f;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          s += in[clamp(static_cast<long long>(y) + dy, height) * width + clamp(static_cast<long long>(x) + dx, width)];
      out[y * width + x] = s;
    }
  return out;
}

namespace {

inline constexpr unsigned kBoxBlockX = 32, kBoxBlockY = 8;

__global__ void box3x3_global_kernel(const float* __restrict__ in, std::size_t in_pitch, float* __restrict__ out,
                                     std::size_t out_pitch, int width, int height) {
  const int x = static_cast<int>(blockIdx.x * kBoxBlockX + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * kBoxBlockY + threadIdx.y);
  if (x >= width || y >= height) return;
  float s = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy) {
    const int yy = min(max(y + dy, 0), height - 1);
    const auto* row = reinterpret_cast<const float*>(reinterpret_cast<const char*>(in) + yy * in_pitch);
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx) s += row[min(max(x + dx, 0), width - 1)];
  }
  reinterpret_cast<float*>(reinterpret_cast<char*>(out) + y * out_pitch)[x] = s;
}

// Unnormalized coordinates with point sampling: texel (i, j) is returned for any coordinate in
// [i, i+1) x [j, j+1); +0.5 aims at the texel centre. Out-of-range coordinates clamp to the edge texel.
__global__ void box3x3_texture_kernel(cudaTextureObject_t tex, float* __restrict__ out, std::size_t out_pitch,
                                      int width, int height) {
  const int x = static_cast<int>(blockIdx.x * kBoxBlockX + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * kBoxBlockY + threadIdx.y);
  if (x >= width || y >= height) return;
  // [doc:box_filter_taps]
  float s = 0.0f;
#pragma unroll
  for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
    for (int dx = -1; dx <= 1; ++dx)
      s += tex2D<float>(tex, static_cast<float>(x + dx) + 0.5f, static_cast<float>(y + dy) + 0.5f);
  reinterpret_cast<float*>(reinterpret_cast<char*>(out) + y * out_pitch)[x] = s;
  // [/doc:box_filter_taps]
}

inline dim3 box_grid(int width, int height) {
  return dim3(ceil_div<unsigned>(static_cast<unsigned>(width), kBoxBlockX),
              ceil_div<unsigned>(static_cast<unsigned>(height), kBoxBlockY));
}

// Heights up to 65535 * 8 rows (grid.y limit); the demo checks the texture limits, which are tighter.
inline void launch_box3x3_global(const float* in, std::size_t in_pitch, float* out, std::size_t out_pitch, int width,
                                 int height, cudaStream_t s) {
  if (width <= 0 || height <= 0) return;
  box3x3_global_kernel<<<box_grid(width, height), dim3(kBoxBlockX, kBoxBlockY), 0, s>>>(in, in_pitch, out, out_pitch,
                                                                                      width, height);
  CUDA_CHECK_LAUNCH();
}

inline void launch_box3x3_texture(cudaTextureObject_t tex, float* out, std::size_t out_pitch, int width, int height,
                                  cudaStream_t s) {
  if (width <= 0 || height <= 0) return;
  box3x3_texture_kernel<<<box_grid(width, height), dim3(kBoxBlockX, kBoxBlockY), 0, s>>>(tex, out, out_pitch, width,
                                                                                       height);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch01
