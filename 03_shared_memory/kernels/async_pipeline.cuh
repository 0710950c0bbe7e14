// Streaming an array through shared memory, tile by tile: the classic synchronous copy against
// cuda::memcpy_async into a multi-stage cuda::pipeline.
//
// Every kernel runs the same loop: block b takes tiles b, b + grid, b + 2 grid ... of kPipeTileWords words,
// copies each into shared memory, filters it there (a 5-point stencil that reads every word five times,
// async_pipeline_reference.hpp) and writes the result. Only the copy differs:
//   sync          each thread loads its 16-byte pieces into registers and stores them to shared memory;
//                 __syncthreads; compute; __syncthreads (before the next copy overwrites the tile). While a
//                 block computes it has no load in flight, and while it waits for its loads it computes
//                 nothing: one tile per block in flight at most.
//   async<S>      cuda::memcpy_async into S tile buffers through a thread-scoped cuda::pipeline: each thread
//                 issues its own pieces of a tile as one batch. With 16-byte pieces (cuda::aligned_size_t<16>)
//                 and 16-byte aligned addresses it becomes cp.async (LDGSTS) on sm_80+: global to shared
//                 without passing through registers, and the thread is free at once. The block keeps S tiles
//                 requested: the copies of tiles k + 1 .. k + S - 1 are in flight while tile k is computed.
//                 S = 1 overlaps nothing.
// On a GPU older than sm_80 cuda::memcpy_async still compiles, as an ordinary load and store that the thread
// waits for: the async kernels are correct there, but nothing is asynchronous.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cuda/pipeline>
#include <stdexcept>

#include "03_shared_memory/kernels/async_pipeline_reference.hpp"
#include "common/cuda_check.hpp"
#include "common/resources.hpp"

namespace cml::ch03 {
namespace {

// Output word j of a tile of `len` words held in shared memory. The index is clamped only near the tile's
// edges; the test is the same for whole warps except the first and the last, so it costs no divergence.
__device__ __forceinline__ std::uint32_t stencil_word(const std::uint32_t* tile, unsigned j, unsigned len) {
  std::uint32_t acc = 0;
  if (j >= kStencilRadius && j + kStencilRadius < len) {
#pragma unroll
    for (int k = -kStencilRadius; k <= kStencilRadius; ++k) acc += stencil_weight(k) * tile[j + k];
  } else {
#pragma unroll
    for (int k = -kStencilRadius; k <= kStencilRadius; ++k) {
      const int at = min(max(static_cast<int>(j) + k, 0), static_cast<int>(len) - 1);
      acc += stencil_weight(k) * tile[at];
    }
  }
  return acc;
}

// The per-tile work: consecutive threads read consecutive words (no bank conflicts) and store consecutive
// words (whole 128-byte lines per warp).
__device__ __forceinline__ void filter_tile(const std::uint32_t* tile, unsigned len, std::uint32_t* __restrict__ out) {
#pragma unroll 4
  for (unsigned j = threadIdx.x; j < len; j += kPipeBlock) out[j] = stencil_word(tile, j, len);
}

// The classic copy: every 16-byte load goes to a register first; the thread stalls at the first store until
// its loads return. Tiles start at multiples of 8 KiB, so 16-byte vectors stay aligned; the last len % 4
// words of a short tile are copied one word each.
__device__ __forceinline__ void copy_tile_sync(const std::uint32_t* __restrict__ src, unsigned len,
                                               std::uint32_t* tile) {
  const unsigned vecs = len / 4;
  uint4 r[kPipeVecsPerThread];
#pragma unroll
  for (unsigned c = 0; c < kPipeVecsPerThread; ++c) {
    const unsigned v = threadIdx.x + c * kPipeBlock;
    r[c] = v < vecs ? reinterpret_cast<const uint4*>(src)[v] : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (unsigned c = 0; c < kPipeVecsPerThread; ++c) {
    const unsigned v = threadIdx.x + c * kPipeBlock;
    if (v < vecs) reinterpret_cast<uint4*>(tile)[v] = r[c];
  }
  const unsigned w = vecs * 4 + threadIdx.x;
  if (w < len) tile[w] = src[w];
}

// The same copy issued asynchronously into the pipeline's current batch: nothing lands in a register and
// the thread goes on at once. aligned_size_t<16> promises 16-byte size and alignment, which is what lets
// memcpy_async use cp.async with 16 bytes; the tail words go as 4-byte asynchronous copies, so every word
// of the stage arrives through the pipeline and the wait for the batch covers all of them.
__device__ __forceinline__ void copy_tile_async(const std::uint32_t* __restrict__ src, unsigned len,
                                                std::uint32_t* tile, cuda::pipeline<cuda::thread_scope_thread>& pipe) {
  const unsigned vecs = len / 4;
#pragma unroll
  for (unsigned c = 0; c < kPipeVecsPerThread; ++c) {
    const unsigned v = threadIdx.x + c * kPipeBlock;
    // [doc:tile_copies]
    if (v < vecs) cuda::memcpy_async(tile + 4 * v, src + 4 * v, cuda::aligned_size_t<16>(16), pipe);
  }
  const unsigned w = vecs * 4 + threadIdx.x;
  if (w < len) cuda::memcpy_async(tile + w, src + w, cuda::aligned_size_t<4>(4), pipe);
  // [/doc:tile_copies]
}

// Two barriers per tile: the first makes the whole tile visible before anyone filters it (read after
// write), the second keeps the next copy from overwriting words a slower thread has not read (write after
// read).
__global__ void __launch_bounds__(kPipeBlock)
    async_pipeline_sync_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out, std::size_t n) {
  extern __shared__ uint4 pipeline_smem[];  // one tile; uint4: 16-byte aligned for the vector copies
  std::uint32_t* tile = reinterpret_cast<std::uint32_t*>(pipeline_smem);
  const std::size_t tiles = pipeline_tiles(n);
  for (std::size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::size_t base = t * kPipeTileWords;
    const unsigned len = pipeline_tile_length(n, t);
    copy_tile_sync(in + base, len, tile);
    __syncthreads();
    filter_tile(tile, len, out + base);
    __syncthreads();
  }
}

// Stages tile buffers, refilled in turn. The pipeline is thread-scoped: its batches are the hardware's
// cp.async groups (commit_group, wait_group), so producer_commit and the wait cost an instruction each and
// need no shared state. A thread knows only its own copies have landed, so two __syncthreads per tile do
// what a block-scoped pipeline's barrier objects would, more cheaply: the first keeps the refill of tile
// k - 1's stage from overwriting words a slower thread has not read (write after read), the second makes
// every thread's copies of tile k visible before anyone filters it (read after write).
template <int Stages>
__global__ void __launch_bounds__(kPipeBlock)
    async_pipeline_staged_kernel(const std::uint32_t* __restrict__ in, std::uint32_t* __restrict__ out,
                                 std::size_t n) {
  static_assert(Stages >= 1 && Stages <= kPipeMaxStages, "1 to kPipeMaxStages stages");
  extern __shared__ uint4 pipeline_smem[];  // Stages tiles, 16-byte aligned
  std::uint32_t* stages = reinterpret_cast<std::uint32_t*>(pipeline_smem);
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const std::size_t mine = pipeline_tiles_of_block(pipeline_tiles(n), blockIdx.x, gridDim.x);
  // One batch per tile index, even past this block's last tile (an empty batch): "all but the newest
  // Stages - 1 batches" then always means "up to tile k".
  // [doc:pipelined_tiles]
  auto fetch = [&](std::size_t f) {
    pipe.producer_acquire();
    if (f < mine) {
      const std::size_t t = blockIdx.x + f * gridDim.x;
      copy_tile_async(in + t * kPipeTileWords, pipeline_tile_length(n, t), stages + (f % Stages) * kPipeTileWords,
                      pipe);
    }
    pipe.producer_commit();
  };
  for (std::size_t f = 0; f + 1 < Stages; ++f) fetch(f);
  for (std::size_t k = 0; k < mine; ++k) {
    __syncthreads();          // every thread is done with tile k - 1, whose stage tile k + Stages - 1 refills
    fetch(k + Stages - 1);    // Stages tiles requested: k (perhaps landed) to k + Stages - 1
    cuda::pipeline_consumer_wait_prior<Stages - 1>(pipe);  // this thread's copies of tile k have landed
    __syncthreads();          // and so have every thread's
    const std::size_t t = blockIdx.x + k * gridDim.x;
    filter_tile(stages + (k % Stages) * kPipeTileWords, pipeline_tile_length(n, t), out + t * kPipeTileWords);
    pipe.consumer_release();
  }
  // [/doc:pipelined_tiles]
}

// The kernel of a variant: stages 0 is sync, 1 .. kPipeMaxStages the pipelined ones.
using PipelineKernel = void (*)(const std::uint32_t*, std::uint32_t*, std::size_t);
inline PipelineKernel async_pipeline_kernel(int stages) {
  switch (stages) {
    case 0: return async_pipeline_sync_kernel;
    case 1: return async_pipeline_staged_kernel<1>;
    case 2: return async_pipeline_staged_kernel<2>;
    case 3: return async_pipeline_staged_kernel<3>;
    case 4: return async_pipeline_staged_kernel<4>;
    default: throw std::invalid_argument("stages must be 0 (sync) to 4");
  }
}

// Asks for the largest shared-memory carveout for every pipeline kernel (once per process): six blocks of
// 32 KiB of stages need more than a smaller default split between L1 and shared memory leaves. The kernels
// get nothing from L1: every word they load is used once, from shared memory. Also allows each kernel its
// stages' dynamic shared memory beyond the default 48 KiB, for larger tiles.
inline void async_pipeline_prefer_shared() {
  // A property of the kernels on the process's one device, not of a run: it holds for every later launch.
  static const bool done = [] {
    for (int stages = 0; stages <= kPipeMaxStages; ++stages) {
      const PipelineKernel kernel = async_pipeline_kernel(stages);
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxShared));
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(pipeline_smem_bytes(stages))));
    }
    return true;
  }();
  (void)done;
}

// How many blocks of the hungriest variant (the most stages, the most shared memory) fit on one SM of the
// current device: the "high" occupancy of every variant, so all compare at the same number of blocks.
inline int async_pipeline_fit_per_sm() {
  async_pipeline_prefer_shared();
  int fit = 1 << 30;
  for (int stages = 0; stages <= kPipeMaxStages; ++stages) {
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, async_pipeline_kernel(stages), kPipeBlock,
                                                             pipeline_smem_bytes(stages)));
    fit = std::min(fit, per_sm);
  }
  return fit;
}

struct PipelineGrid {
  unsigned blocks_per_sm = 0;
  unsigned blocks = 0;
};

// The grid of an occupancy on the current device: blocks_per_sm blocks for every SM. The block scheduler
// hands blocks to the least loaded SMs, so a grid of one block per SM puts one on each.
inline PipelineGrid async_pipeline_grid(Occupancy o) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  PipelineGrid g;
  g.blocks_per_sm = pipeline_blocks_per_sm(o, async_pipeline_fit_per_sm());
  g.blocks = g.blocks_per_sm * static_cast<unsigned>(sms);
  return g;
}

// Filters n words of `in` into `out` with `blocks` blocks. Both must be 16-byte aligned (cudaMalloc gives
// 256 bytes) and must not overlap.
inline void launch_async_pipeline(int stages, const std::uint32_t* in, std::uint32_t* out, std::size_t n,
                                  unsigned blocks, cudaStream_t s) {
  if (reinterpret_cast<std::uintptr_t>(in) % 16 != 0 || reinterpret_cast<std::uintptr_t>(out) % 16 != 0)
    throw std::invalid_argument("async_pipeline: in and out must be 16-byte aligned");
  if (blocks == 0) throw std::invalid_argument("async_pipeline: at least one block");
  const PipelineKernel kernel = async_pipeline_kernel(stages);
  if (n == 0) return;
  async_pipeline_prefer_shared();
  kernel<<<blocks, kPipeBlock, pipeline_smem_bytes(stages), s>>>(in, out, n);
  CUDA_CHECK_LAUNCH();
}

inline void launch_async_pipeline_sync(const std::uint32_t* in, std::uint32_t* out, std::size_t n, unsigned blocks,
                                       cudaStream_t s) {
  launch_async_pipeline(0, in, out, n, blocks, s);
}

template <int Stages>
void launch_async_pipeline_staged(const std::uint32_t* in, std::uint32_t* out, std::size_t n, unsigned blocks,
                                  cudaStream_t s) {
  static_assert(Stages >= 1 && Stages <= kPipeMaxStages, "1 to kPipeMaxStages stages");
  launch_async_pipeline(Stages, in, out, n, blocks, s);
}

}  // namespace
}  // namespace cml::ch03
