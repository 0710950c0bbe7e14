// Kernels over pitched 2-D and 3-D allocations. Rows are reached through the pitch (bytes from one row
// to the next), never through the width: with cudaMallocPitch the two differ by the padding the
// driver added so that every row starts aligned.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {

// CPU reference of vertical_sum_2d_kernel on a densely packed width x height array.
inline std::vector<float> vertical_sum_reference(const std::vector<float>& in, std::size_t width, std::size_t height) {
  std::vector<float> out(width * height);
  for (std::size_t y = 0; y < height; ++y)
    for (std::size_t x = 0; x < width; ++x) {
      float s = in[y * width + x];
      if (y > 0) s += in[(y - 1) * width + x];
      if (y + 1 < height) s += in[(y + 1) * width + x];
      out[y * width + x] = s;
    }
  return out;
}

// CPU reference of scale_3d_kernel on a densely packed volume.
inline std::vector<float> scale_3d_reference(const std::vector<float>& in, std::size_t width, std::size_t height,
                                             std::size_t depth) {
  std::vector<float> out(in.size());
  for (std::size_t z = 0; z < depth; ++z)
    for (std::size_t i = 0; i < width * height; ++i)
      out[z * width * height + i] = 2.0f * in[z * width * height + i] + static_cast<float>(z);
  return out;
}

namespace {

inline constexpr unsigned kPitchBlockX = 32, kPitchBlockY = 8;

template <class T>
__device__ __forceinline__ T* row_ptr(T* base, std::size_t pitch_bytes, std::size_t y) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return reinterpret_cast<T*>(reinterpret_cast<Byte*>(base) + y * pitch_bytes);
}

// out(x, y) = in(x, y-1) + in(x, y) + in(x, y+1), rows outside the array read as 0.
// Each warp reads 32 consecutive elements of one row: aligned to the sector grid only if the row start is.
__global__ void vertical_sum_2d_kernel(const float* __restrict__ in, std::size_t in_pitch, float* __restrict__ out,
                                       std::size_t out_pitch, unsigned width, unsigned height) {
  // [doc:pitched_rows]
  const unsigned x = blockIdx.x * kPitchBlockX + threadIdx.x;
  if (x >= width) return;
  for (unsigned y = blockIdx.y * kPitchBlockY + threadIdx.y; y < height; y += gridDim.y * kPitchBlockY) {
    float s = row_ptr(in, in_pitch, y)[x];
    if (y > 0) s += row_ptr(in, in_pitch, y - 1)[x];
    if (y + 1 < height) s += row_ptr(in, in_pitch, y + 1)[x];
    row_ptr(out, out_pitch, y)[x] = s;
  }
  // [/doc:pitched_rows]
}

// The same kernel serves pitched (pitch from cudaMallocPitch) and unpadded (pitch = width * 4) arrays.
inline void launch_vertical_sum_2d(const float* in, std::size_t in_pitch, float* out, std::size_t out_pitch,
                                   unsigned width, unsigned height, cudaStream_t s) {
  if (width == 0 || height == 0) return;
  const unsigned gy = ceil_div(height, kPitchBlockY);
  const dim3 grid(ceil_div(width, kPitchBlockX), gy < 65535u ? gy : 65535u);
  vertical_sum_2d_kernel<<<grid, dim3(kPitchBlockX, kPitchBlockY), 0, s>>>(in, in_pitch, out, out_pitch, width,
                                                                          height);
  CUDA_CHECK_LAUNCH();
}

// out(x, y, z) = 2 in(x, y, z) + z over two cudaMalloc3D volumes of the same extent.
// Element (x, y, z) lives at ptr + z * slice_pitch + y * pitch + x * 4, with slice_pitch = pitch * ysize.
__global__ void scale_3d_kernel(cudaPitchedPtr in, cudaPitchedPtr out, unsigned width, unsigned height,
                                unsigned depth) {
  const unsigned x = blockIdx.x * kPitchBlockX + threadIdx.x;
  if (x >= width) return;
  for (unsigned z = blockIdx.z; z < depth; z += gridDim.z) {
    const auto* in_slice = static_cast<const char*>(in.ptr) + std::size_t{z} * in.pitch * in.ysize;
    auto* out_slice = static_cast<char*>(out.ptr) + std::size_t{z} * out.pitch * out.ysize;
    for (unsigned y = blockIdx.y * kPitchBlockY + threadIdx.y; y < height; y += gridDim.y * kPitchBlockY) {
      const float v = reinterpret_cast<const float*>(in_slice + std::size_t{y} * in.pitch)[x];
      reinterpret_cast<float*>(out_slice + std::size_t{y} * out.pitch)[x] = 2.0f * v + static_cast<float>(z);
    }
  }
}

inline void launch_scale_3d(const cudaPitchedPtr& in, const cudaPitchedPtr& out, unsigned width, unsigned height,
                            unsigned depth, cudaStream_t s) {
  if (width == 0 || height == 0 || depth == 0) return;
  const unsigned gy = ceil_div(height, kPitchBlockY);
  const dim3 grid(ceil_div(width, kPitchBlockX), gy < 65535u ? gy : 65535u, depth < 65535u ? depth : 65535u);
  scale_3d_kernel<<<grid, dim3(kPitchBlockX, kPitchBlockY, 1), 0, s>>>(in, out, width, height, depth);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch01
