// RAII owners this chapter needs and common/resources.hpp does not have: pitched 2-D and 3-D
// allocations, CUDA arrays and texture objects. Move-only; destructors never throw.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch01 {

// cudaMallocPitch: `height` rows of `width` elements, each row starting `pitch` bytes after the previous.
template <class T>
class PitchedBuffer {
 public:
  PitchedBuffer() = default;
  PitchedBuffer(std::size_t width, std::size_t height) : width_(width), height_(height) {
    if (width == 0 || height == 0) return;
    const cudaError_t err = cudaMallocPitch(&ptr_, &pitch_, width * sizeof(T), height);
    if (err != cudaSuccess) throw_alloc_error(err, "cudaMallocPitch", width * sizeof(T) * height, __FILE__, __LINE__);
  }
  ~PitchedBuffer() { reset(); }
  PitchedBuffer(const PitchedBuffer&) = delete;
  PitchedBuffer& operator=(const PitchedBuffer&) = delete;
  PitchedBuffer(PitchedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)),
        pitch_(std::exchange(o.pitch_, 0)),
        width_(std::exchange(o.width_, 0)),
        height_(std::exchange(o.height_, 0)) {}
  PitchedBuffer& operator=(PitchedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      pitch_ = std::exchange(o.pitch_, 0);
      width_ = std::exchange(o.width_, 0);
      height_ = std::exchange(o.height_, 0);
    }
    return *this;
  }

  T* data() const noexcept { return static_cast<T*>(ptr_); }
  std::size_t pitch() const noexcept { return pitch_; }  // bytes
  std::size_t width() const noexcept { return width_; }  // elements
  std::size_t height() const noexcept { return height_; }
  std::size_t bytes() const noexcept { return pitch_ * height_; }  // allocated, padding included

  // Densely packed host rows <-> pitched device rows.
  void upload(const T* host, cudaStream_t s = nullptr) {
    CUDA_CHECK(cudaMemcpy2DAsync(ptr_, pitch_, host, width_ * sizeof(T), width_ * sizeof(T), height_,
                                 cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
  }
  void download(T* host, cudaStream_t s = nullptr) const {
    CUDA_CHECK(cudaMemcpy2DAsync(host, width_ * sizeof(T), ptr_, pitch_, width_ * sizeof(T), height_,
                                 cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
  }
  // kPoisonByte in every byte, padding included.
  void poison(cudaStream_t s = nullptr) {
    if (ptr_ != nullptr) CUDA_CHECK(cudaMemsetAsync(ptr_, kPoisonByte, bytes(), s));
  }

 private:
  void reset() noexcept {
    if (ptr_ != nullptr) CUDA_CHECK_NOTHROW(cudaFree(ptr_));
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
  std::size_t pitch_ = 0, width_ = 0, height_ = 0;
};

// cudaMalloc3D: a width x height x depth volume of T; rows pitched, slices pitch * height bytes apart.
template <class T>
class Pitched3DBuffer {
 public:
  Pitched3DBuffer() = default;
  Pitched3DBuffer(std::size_t width, std::size_t height, std::size_t depth)
      : extent_(make_cudaExtent(width * sizeof(T), height, depth)) {
    if (width == 0 || height == 0 || depth == 0) return;
    const cudaError_t err = cudaMalloc3D(&p_, extent_);
    if (err != cudaSuccess)
      throw_alloc_error(err, "cudaMalloc3D", width * sizeof(T) * height * depth, __FILE__, __LINE__);
  }
  ~Pitched3DBuffer() { reset(); }
  Pitched3DBuffer(const Pitched3DBuffer&) = delete;
  Pitched3DBuffer& operator=(const Pitched3DBuffer&) = delete;
  Pitched3DBuffer(Pitched3DBuffer&& o) noexcept : p_(std::exchange(o.p_, cudaPitchedPtr{})), extent_(o.extent_) {}
  Pitched3DBuffer& operator=(Pitched3DBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, cudaPitchedPtr{});
      extent_ = o.extent_;
    }
    return *this;
  }

  const cudaPitchedPtr& ptr() const noexcept { return p_; }
  cudaExtent extent() const noexcept { return extent_; }  // width in BYTES, as the 3-D API wants
  std::size_t pitch() const noexcept { return p_.pitch; }
  std::size_t slice_pitch() const noexcept { return p_.pitch * extent_.height; }

  // cudaPitchedPtr has no const flavour, hence the cast on the source side.
  void upload(const T* host) { copy(const_cast<T*>(host), true); }
  void download(T* host) const { copy(host, false); }
  void poison(cudaStream_t s = nullptr) {
    if (p_.ptr != nullptr) CUDA_CHECK(cudaMemset3DAsync(p_, kPoisonByte, extent_, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

 private:
  // Densely packed host volume <-> pitched device volume, through cudaMemcpy3D.
  void copy(T* host, bool to_device) const {
    cudaPitchedPtr h = make_cudaPitchedPtr(host, extent_.width, extent_.width / sizeof(T), extent_.height);
    cudaMemcpy3DParms parms{};
    parms.extent = extent_;
    if (to_device) {
      parms.srcPtr = h;
      parms.dstPtr = p_;
      parms.kind = cudaMemcpyHostToDevice;
    } else {
      parms.srcPtr = p_;
      parms.dstPtr = h;
      parms.kind = cudaMemcpyDeviceToHost;
    }
    CUDA_CHECK(cudaMemcpy3D(&parms));
  }
  void reset() noexcept {
    if (p_.ptr != nullptr) CUDA_CHECK_NOTHROW(cudaFree(p_.ptr));
    p_ = cudaPitchedPtr{};
  }
  cudaPitchedPtr p_{};
  cudaExtent extent_{};
};

// A 2-D CUDA array of float (opaque, block-linear layout chosen by the driver for 2-D locality).
class CudaArray2D {
 public:
  CudaArray2D() = default;
  CudaArray2D(std::size_t width, std::size_t height) : width_(width), height_(height) {
    if (width == 0 || height == 0) return;
    const cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    const cudaError_t err = cudaMallocArray(&a_, &desc, width, height);
    if (err != cudaSuccess) throw_alloc_error(err, "cudaMallocArray", width * height * sizeof(float), __FILE__, __LINE__);
  }
  ~CudaArray2D() { reset(); }
  CudaArray2D(const CudaArray2D&) = delete;
  CudaArray2D& operator=(const CudaArray2D&) = delete;
  CudaArray2D(CudaArray2D&& o) noexcept
      : a_(std::exchange(o.a_, nullptr)), width_(std::exchange(o.width_, 0)), height_(std::exchange(o.height_, 0)) {}
  CudaArray2D& operator=(CudaArray2D&& o) noexcept {
    if (this != &o) {
      reset();
      a_ = std::exchange(o.a_, nullptr);
      width_ = std::exchange(o.width_, 0);
      height_ = std::exchange(o.height_, 0);
    }
    return *this;
  }
  cudaArray_t get() const noexcept { return a_; }
  void upload(const float* host) {
    CUDA_CHECK(cudaMemcpy2DToArray(a_, 0, 0, host, width_ * sizeof(float), width_ * sizeof(float), height_,
                                   cudaMemcpyHostToDevice));
  }

 private:
  void reset() noexcept {
    if (a_ != nullptr) CUDA_CHECK_NOTHROW(cudaFreeArray(a_));
    a_ = nullptr;
  }
  cudaArray_t a_ = nullptr;
  std::size_t width_ = 0, height_ = 0;
};

// A texture object: point sampling, clamp-to-edge addressing, unnormalized coordinates, element reads.
// It does not own the memory it reads; keep the buffer or array alive while the object is used.
class TextureObject {
 public:
  TextureObject() = default;
  // Over pitched linear memory (the pitch must satisfy cudaDevAttrTexturePitchAlignment, which
  // cudaMallocPitch guarantees).
  TextureObject(const float* data, std::size_t width, std::size_t height, std::size_t pitch_bytes) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = const_cast<float*>(data);
    res.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    res.res.pitch2D.width = width;
    res.res.pitch2D.height = height;
    res.res.pitch2D.pitchInBytes = pitch_bytes;
    create(res);
  }
  explicit TextureObject(cudaArray_t array) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    create(res);
  }
  ~TextureObject() { reset(); }
  TextureObject(const TextureObject&) = delete;
  TextureObject& operator=(const TextureObject&) = delete;
  TextureObject(TextureObject&& o) noexcept : t_(std::exchange(o.t_, 0)) {}
  TextureObject& operator=(TextureObject&& o) noexcept {
    if (this != &o) {
      reset();
      t_ = std::exchange(o.t_, 0);
    }
    return *this;
  }
  cudaTextureObject_t get() const noexcept { return t_; }

 private:
  void create(const cudaResourceDesc& res) {
    cudaTextureDesc tex{};
    tex.addressMode[0] = cudaAddressModeClamp;
    tex.addressMode[1] = cudaAddressModeClamp;
    // [doc:texture_filter_mode]
    tex.filterMode = cudaFilterModePoint;
    // [/doc:texture_filter_mode]
    tex.readMode = cudaReadModeElementType;
    tex.normalizedCoords = 0;
    CUDA_CHECK(cudaCreateTextureObject(&t_, &res, &tex, nullptr));
  }
  void reset() noexcept {
    if (t_ != 0) CUDA_CHECK_NOTHROW(cudaDestroyTextureObject(t_));
    t_ = 0;
  }
  cudaTextureObject_t t_ = 0;
};

}  // namespace cml::ch01
