// Matrix transposes through a shared-memory tile: a block reads a tile of the input along its rows
// (coalesced), and writes it to the output along the output's rows (coalesced) by reading the tile down
// its columns. Only the shared-memory side has to cope with the column walk, and banks decide its cost.
//
// Convention (common/transpose.hpp): `in` is rows x cols, row-major; `out` is
// cols x rows: out[c * rows + r] = in[r * cols + c]. Every kernel handles any shape (edge tiles are
// bounds-checked; the 64 x 64 float4 kernels fall back to 4-byte accesses where 16-byte ones cannot be used).
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "common/device_info.hpp"
#include "common/occupancy.cuh"
#include "common/transpose.cuh"

namespace cml::ch03 {

// ---- 32 x 32 tiles: the three layouts of the tile in shared memory ------------------------------

inline constexpr int kTile = 32;

enum class TileLayout {
  kUnpadded,  // tile[r][c] at r * 32 + c: a tile column sits in ONE bank (32-way conflict)
  kPadded,    // tile[r][c] at r * 33 + c: one spare word per row moves each row one bank further
  kSwizzled,  // tile[r][c] at r * 32 + (c ^ r): no spare words; column c of row r goes to bank c ^ r
};

// Word offset of tile element (r, c). Reading a tile column (fixed c, lanes r = 0..31) hits banks
// c (unpadded: all the same), (r + c) % 32 (padded) and c ^ r (swizzled): 32 distinct banks in the last two.
// [doc:tile_offset]
template <TileLayout kLayout>
__host__ __device__ constexpr int tile_offset(int r, int c) {
  if constexpr (kLayout == TileLayout::kPadded) return r * (kTile + 1) + c;
  else if constexpr (kLayout == TileLayout::kSwizzled) return r * kTile + (c ^ r);
  else return r * kTile + c;
}
// [/doc:tile_offset]

template <TileLayout kLayout>
inline constexpr int kTileWords = kLayout == TileLayout::kPadded ? kTile * (kTile + 1) : kTile * kTile;

// ---- 64 x 64 tiles moved as float4 (16 bytes per access) ----------------------------------------

inline constexpr int kWide = 64;                          // tile side, in floats
inline constexpr int kWideThreads = 256;                  // threads per block
inline constexpr int kChunks = kWide / 4;                 // 16-byte chunks per tile row (16)
inline constexpr int kWidePasses = kWide * kChunks / kWideThreads;  // float4s each thread moves (4)

// Word offset of element (r, c) of a 64 x 64 tile. Chunk c / 4 of row r is stored at chunk position
// (c / 4) ^ ((r / 4) % 8). Why: phase 2 reads one chunk from each of 8 rows 4 apart in one shared-memory
// wavefront (16-byte accesses are served 8 lanes at a time). Unswizzled, a 256-byte row puts chunk j of
// every row in the same 4 banks (8-way conflict); swizzled, the 8 rows use 8 different chunk positions,
// i.e. all 32 banks. Padding cannot do this: 16-byte accesses need 16-byte-aligned rows, and the smallest
// such pad (4 words) moves rows 4 apart by 16 banks, so the 8 rows still share 2 groups of 4 banks.
__host__ __device__ constexpr int wide_offset(int r, int c) {
  return r * kWide + (((c >> 2) ^ ((r >> 2) & 7)) << 2) + (c & 3);
}

// Phase 1 (global -> shared), pass k: thread t moves chunk load_chunk(t) of tile row load_row(t, k).
// A warp reads two 256-byte row segments per pass.
__host__ __device__ constexpr int load_row(int t, int k) { return t / kChunks + (kWideThreads / kChunks) * k; }
__host__ __device__ constexpr int load_chunk(int t) { return t % kChunks; }

// Phase 2 (shared -> global): thread t owns the 4 x 4 block of tile rows block_row(t) .. + 3 and chunk
// block_chunk(t). Transposed in registers, it becomes 16 bytes of each of 4 output rows; lanes 0..15 write
// 256 contiguous bytes of one output row, lanes 16..31 of the next chunk's row.
__host__ __device__ constexpr int block_row(int t) { return 4 * (t % kChunks); }
__host__ __device__ constexpr int block_chunk(int t) { return t / kChunks; }

namespace {

using transpose::BlockOrder;
using transpose::TileGrid;
using transpose::TileIndex;
using transpose::tile_of;

// ---- 32 x 32 tiled transposes ---------------------------------------------------------------------
// A block of 32 x kBlockRows threads moves one 32 x 32 tile; each thread moves 32 / kBlockRows elements
// (1 with 32 x 32 threads, 4 with 32 x 8). All of a thread's loads are issued before the barrier.
template <TileLayout kLayout, int kBlockRows>
__global__ void __launch_bounds__(kTile* kBlockRows)
    transpose_tiled_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                           std::size_t cols, TileGrid g) {
  __shared__ float tile[kTileWords<kLayout>];
  const TileIndex t = tile_of<BlockOrder::kRowMajor>(blockIdx.x, g.tiles_x, g.tiles_y);
  const std::size_t r0 = std::size_t{t.y} * kTile, c0 = std::size_t{t.x} * kTile;
  const int x = threadIdx.x;

  // Lane x reads input (r0 + y, c0 + x): a row, coalesced; it writes tile row y: conflict-free in all layouts.
#pragma unroll
  for (int k = 0; k < kTile / kBlockRows; ++k) {
    const int y = threadIdx.y + k * kBlockRows;
    if (r0 + y < rows && c0 + x < cols) tile[tile_offset<kLayout>(y, x)] = in[(r0 + y) * cols + c0 + x];
  }
  // [doc:tile_column_store]
  // Every element of the tile is read by a different thread than the one that wrote it.
  __syncthreads();
  // Output row c0 + y is input column c0 + y; lane x writes its element r0 + x: coalesced. The element
  // comes from tile column y, walked by the lanes: this is where the layouts differ.
#pragma unroll
  for (int k = 0; k < kTile / kBlockRows; ++k) {
    const int y = threadIdx.y + k * kBlockRows;
    if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[tile_offset<kLayout>(x, y)];
  }
  // [/doc:tile_column_store]
}

// ---- Padded tiles with more elements per thread ---------------------------------------------------
// The same two-phase transpose on a kSide x kSide tile (+1 padding) with kSide x kBlockRows threads, so
// each thread keeps kSide / kBlockRows loads in flight before the barrier. Why: DRAM needs many bytes in
// flight per SM to reach its bandwidth (Little's law); with one 4-byte element per thread (tiled_padded)
// the kernel is latency-bound, and even four (tiled_multi) leave it short of the copy ceiling. Which shape
// wins is a measurement question.
// kMoved turns it into a kernel that is not a transpose (tile_move_64x8, at the end of this file): only
// the store changes.
enum class TileDest {
  kTransposed,  // the transpose: tile column y becomes output row c0 + y
  kMoved,       // each tile written untransposed where the transpose puts it (whole tiles only)
};

template <int kSide, int kBlockRows, TileDest kDest = TileDest::kTransposed>
__global__ void __launch_bounds__(kSide* kBlockRows)
    transpose_padded_tile_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                 std::size_t cols, TileGrid g) {
  __shared__ float tile[kSide][kSide + 1];
  const TileIndex t = tile_of<BlockOrder::kRowMajor>(blockIdx.x, g.tiles_x, g.tiles_y);
  const std::size_t r0 = std::size_t{t.y} * kSide, c0 = std::size_t{t.x} * kSide;
  const int x = threadIdx.x;
#pragma unroll
  for (int k = 0; k < kSide / kBlockRows; ++k) {
    const int y = threadIdx.y + k * kBlockRows;
    if (r0 + y < rows && c0 + x < cols) tile[y][x] = in[(r0 + y) * cols + c0 + x];
  }
  // kMoved reads back only what each thread wrote and needs no barrier; it stays so that the two kernels
  // differ in their stores alone.
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kSide / kBlockRows; ++k) {
    const int y = threadIdx.y + k * kBlockRows;
    if constexpr (kDest == TileDest::kTransposed) {
      // Lanes walk tile column y: word x * (kSide + 1) + y, i.e. banks (x + y) % 32 for 32 consecutive x.
      if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y];
    } else {
      out[(c0 + y) * rows + r0 + x] = tile[y][x];  // tile row y lands on output row c0 + y
    }
  }
}

// ---- The padded tile, with less integer work per element -------------------------------------------
// Same data movement as transpose_padded_tile_kernel, three changes, each its own variant: interior tiles
// (all but the right and bottom edges) skip the per-element bounds checks; matrices with fewer than 2^32
// elements index with 32-bit arithmetic (Index = unsigned); and kStreaming marks the loads and stores
// evict-first (__ldcs / __stcs), since every byte is touched exactly once.
template <int kSide, int kBlockRows, bool kStreaming, class Index, BlockOrder kOrder>
__global__ void __launch_bounds__(kSide* kBlockRows)
    transpose_fast_tile_kernel(const float* __restrict__ in, float* __restrict__ out, Index rows, Index cols,
                               TileGrid g) {
  __shared__ float tile[kSide][kSide + 1];
  const TileIndex t = tile_of<kOrder>(blockIdx.x, g.tiles_x, g.tiles_y);
  const Index r0 = Index(t.y) * kSide, c0 = Index(t.x) * kSide;
  const int x = threadIdx.x;
  const bool interior = r0 + kSide <= rows && c0 + kSide <= cols;  // uniform across the block
  if (interior) {
    const float* src = in + (r0 + threadIdx.y) * cols + c0 + x;
#pragma unroll
    for (int k = 0; k < kSide / kBlockRows; ++k) {
      const float* p = src + Index(k * kBlockRows) * cols;
      tile[threadIdx.y + k * kBlockRows][x] = kStreaming ? __ldcs(p) : *p;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kSide / kBlockRows; ++k) {
      const int y = threadIdx.y + k * kBlockRows;
      if (r0 + y < rows && c0 + x < cols) tile[y][x] = in[(r0 + y) * cols + c0 + x];
    }
  }
  __syncthreads();
  if (interior) {
    float* dst = out + (c0 + threadIdx.y) * rows + r0 + x;
#pragma unroll
    for (int k = 0; k < kSide / kBlockRows; ++k) {
      float* p = dst + Index(k * kBlockRows) * rows;
      const float v = tile[x][threadIdx.y + k * kBlockRows];
      if (kStreaming) __stcs(p, v);
      else *p = v;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kSide / kBlockRows; ++k) {
      const int y = threadIdx.y + k * kBlockRows;
      if (c0 + y < cols && r0 + x < rows) out[(c0 + y) * rows + r0 + x] = tile[x][y];
    }
  }
}

// ---- 64 x 64 float4 transposes ----------------------------------------------------------------------

// Where a 64 x 64 tile starts, and whether it can use 16-byte accesses: it must lie wholly inside the
// matrix, and float4 addresses must be 16-byte aligned (both sides a multiple of 4, aligned pointers).
struct WideTile {
  std::size_t r0 = 0, c0 = 0;
  bool vector = false;
};

template <BlockOrder kOrder = BlockOrder::kRowMajor>
__device__ __forceinline__ WideTile wide_tile(unsigned id, TileGrid g, std::size_t rows, std::size_t cols,
                                              bool aligned) {
  const TileIndex t = tile_of<kOrder>(id, g.tiles_x, g.tiles_y);
  WideTile w;
  w.r0 = std::size_t{t.y} * kWide;
  w.c0 = std::size_t{t.x} * kWide;
  w.vector = aligned && w.r0 + kWide <= rows && w.c0 + kWide <= cols;
  return w;
}

// Phase 1, vector path: four 16-byte loads per thread, all in flight before the first shared store.
// `while_loading` runs between the two, once the loads are issued and before their data is needed.
template <class WhileLoading>
__device__ __forceinline__ void load_tile_vec4(const float* __restrict__ in, std::size_t cols, const WideTile& w,
                                               float* tile, WhileLoading while_loading) {
  const int t = threadIdx.x;
  float4 v[kWidePasses];
#pragma unroll
  for (int k = 0; k < kWidePasses; ++k)
    v[k] = *reinterpret_cast<const float4*>(&in[(w.r0 + load_row(t, k)) * cols + w.c0 + 4 * load_chunk(t)]);
  while_loading();
#pragma unroll
  for (int k = 0; k < kWidePasses; ++k)
    *reinterpret_cast<float4*>(&tile[wide_offset(load_row(t, k), 4 * load_chunk(t))]) = v[k];
}

// Asks L2 to fetch the 128-byte line holding p, without waiting for it, and to keep it ahead of ordinary
// lines when it must evict one (evict_last). Compute capability 8.0 or newer; older builds compile nothing
// here, and the variant that uses it is waived on those GPUs.
__device__ __forceinline__ void prefetch_l2_evict_last(const void* p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  // The clobber keeps the prefetch after the loads issued before it in the source.
  asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p) : "memory");
#else
  (void)p;
#endif
}

// All of tile w into L2: 64 rows of 256 bytes are 128 lines; thread t < 128 asks for line t % 2 of row t / 2.
__device__ __forceinline__ void prefetch_tile_l2(const float* in, std::size_t cols, const WideTile& w) {
  const int t = threadIdx.x;
  if (t < 2 * kWide) prefetch_l2_evict_last(in + (w.r0 + t / 2) * cols + w.c0 + 32 * (t % 2));
}

// Phase 1 with cp.async (sm_80+): each 16-byte chunk goes from global memory to shared memory without
// passing through registers, so the thread issues all four and moves on. Completion is awaited with
// __pipeline_wait_prior and made visible to the block by the next __syncthreads. Compiled for an older
// architecture, __pipeline_memcpy_async quietly becomes an ordinary load and store: the kernel below is
// therefore only built for sm_80 and newer, and its launcher refuses older devices.
__device__ __forceinline__ void load_tile_async(const float* __restrict__ in, std::size_t cols, const WideTile& w,
                                                float* tile) {
  const int t = threadIdx.x;
#pragma unroll
  for (int k = 0; k < kWidePasses; ++k)
    __pipeline_memcpy_async(&tile[wide_offset(load_row(t, k), 4 * load_chunk(t))],
                            &in[(w.r0 + load_row(t, k)) * cols + w.c0 + 4 * load_chunk(t)], sizeof(float4));
}

// Phase 1, scalar path (edge tiles, unaligned matrices): lane = column, each element bounds-checked.
__device__ __forceinline__ void load_tile_scalar(const float* __restrict__ in, std::size_t rows, std::size_t cols,
                                                 const WideTile& w, float* tile) {
  const int c = threadIdx.x % kWide;
#pragma unroll 4
  for (int r = threadIdx.x / kWide; r < kWide; r += kWideThreads / kWide)
    if (w.r0 + r < rows && w.c0 + c < cols) tile[wide_offset(r, c)] = in[(w.r0 + r) * cols + w.c0 + c];
}

// One 16-byte global store. Written as `*reinterpret_cast<float4*>(p) = make_float4(...)`, the compiler may
// split the store into four 4-byte stores when it cannot prove p 16-byte aligned (CUDA 13.0 does so for all
// four stores below): each warp instruction then becomes four, each touching every 32-byte sector of the
// 512 bytes the warp writes, so L2 receives four times the store sectors. __stwb takes a float4 and is
// always one 16-byte store, with the default (write-back) caching policy.
__device__ __forceinline__ void store_float4(float* p, float4 v) { __stwb(reinterpret_cast<float4*>(p), v); }

// Phase 2, vector path: read a 4 x 4 block as four 16-byte tile rows, transpose it in registers, and
// write four 16-byte pieces of four consecutive output rows. kMoved writes the same addresses with the tile
// untransposed (tile row 4 bc + m, columns br .. br + 3): a copy with the transpose's access pattern.
template <TileDest kDest = TileDest::kTransposed>
__device__ __forceinline__ void store_tile_vec4(const float* tile, float* __restrict__ out, std::size_t rows,
                                                const WideTile& w) {
  const int t = threadIdx.x, br = block_row(t), bc = block_chunk(t);
  float* o = out + (w.c0 + 4 * bc) * rows + w.r0 + br;
  if constexpr (kDest == TileDest::kMoved) {
    // [doc:moved_store]
    // The transpose's four store addresses, each given 16 bytes of one tile row instead of a column.
#pragma unroll
    for (int m = 0; m < 4; ++m)
      store_float4(o + m * rows, *reinterpret_cast<const float4*>(&tile[wide_offset(4 * bc + m, br)]));
    // [/doc:moved_store]
  } else {
    float4 a[4];  // a[k] = input row r0 + br + k, input columns c0 + 4 bc .. + 3
#pragma unroll
    for (int k = 0; k < 4; ++k) a[k] = *reinterpret_cast<const float4*>(&tile[wide_offset(br + k, 4 * bc)]);
    // Output row c0 + 4 bc + m (input column) takes component m of each a[k], at output columns r0 + br + k.
    store_float4(o, make_float4(a[0].x, a[1].x, a[2].x, a[3].x));
    store_float4(o + rows, make_float4(a[0].y, a[1].y, a[2].y, a[3].y));
    store_float4(o + 2 * rows, make_float4(a[0].z, a[1].z, a[2].z, a[3].z));
    store_float4(o + 3 * rows, make_float4(a[0].w, a[1].w, a[2].w, a[3].w));
  }
}

// Phase 2, scalar path: lane = output column (input row), each element bounds-checked. kMoved moves a
// whole tile untransposed, like the vector path; a partial tile (the last row and column of tiles) has no
// untransposed place inside the output and is transposed.
template <TileDest kDest = TileDest::kTransposed>
__device__ __forceinline__ void store_tile_scalar(const float* tile, float* __restrict__ out, std::size_t rows,
                                                  std::size_t cols, const WideTile& w) {
  const int r = threadIdx.x % kWide;
  const bool moved = kDest == TileDest::kMoved && w.r0 + kWide <= rows && w.c0 + kWide <= cols;
#pragma unroll 4
  for (int c = threadIdx.x / kWide; c < kWide; c += kWideThreads / kWide)
    if (w.c0 + c < cols && w.r0 + r < rows)
      out[(w.c0 + c) * rows + w.r0 + r] = tile[moved ? wide_offset(c, r) : wide_offset(r, c)];
}

// The SM's unified on-chip memory is split between shared memory and L1, and the split is the kernel's
// carveout attribute (a percentage of the largest shared memory; the hardware rounds it up to the next size
// it supports). These kernels never read a global byte twice, yet the split can still matter to them: the
// data of every global load comes back through L1 (one array with shared memory) on its way to a register,
// so L1's size can limit what the loads in flight hold there. Two policies; which one is faster depends on
// the GPU and its memory, and the demo measures both:
enum class Carve {
  kMaxShared,  // the largest shared memory (the smallest L1), whatever the blocks use
  kFit,        // shared memory for the blocks wanted per SM and no more; the rest is L1
};

// One 64 x 64 tile per block: load, barrier, store. 16 KB of shared memory per block. kPerSm and kCarve say
// how the launcher fits the blocks on an SM (fit_blocks, below); each pair is a kernel of its own, so that
// each keeps its own carveout attribute. With kPrefetch, a block also asks L2 for the tile of block
// blockIdx.x + ahead while its own loads are on their way (tile64_vec4_3pb_col_pf, below).
template <BlockOrder kOrder, int kPerSm, Carve kCarve, bool kPrefetch = false,
          TileDest kDest = TileDest::kTransposed>
__global__ void __launch_bounds__(kWideThreads)
    transpose_tile64_vec4_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                 std::size_t cols, TileGrid g, bool aligned, unsigned ahead) {
  __shared__ __align__(16) float tile[kWide * kWide];
  const WideTile w = wide_tile<kOrder>(blockIdx.x, g, rows, cols, aligned);  // the same for the whole block
  if (w.vector) {
    // [doc:prefetch_next_tile]
    load_tile_vec4(in, cols, w, tile, [&] {
      if constexpr (kPrefetch) {
        // Edge tiles are left out: a line past the matrix is not the input's to ask for.
        if (ahead < g.blocks() - blockIdx.x) {
          const WideTile next = wide_tile<kOrder>(blockIdx.x + ahead, g, rows, cols, aligned);
          if (next.vector) prefetch_tile_l2(in, cols, next);
        }
      } else {
        (void)ahead;
      }
    });
    // [/doc:prefetch_next_tile]
  } else {
    load_tile_scalar(in, rows, cols, w, tile);
  }
  __syncthreads();
  if (w.vector) store_tile_vec4<kDest>(tile, out, rows, w);
  else store_tile_scalar<kDest>(tile, out, rows, cols, w);
}

// Persistent blocks with two tile buffers: while a block writes tile i from one buffer, cp.async is
// already filling the other with tile i + gridDim.x, so every block keeps loads in flight all the time
// instead of only between its barriers. 32 KB of shared memory per block.
__device__ __forceinline__ void fetch_tile(const float* __restrict__ in, std::size_t rows, std::size_t cols,
                                           const WideTile& w, float* tile) {
  if (w.vector) load_tile_async(in, cols, w, tile);
  else load_tile_scalar(in, rows, cols, w, tile);  // synchronous; visible after the next barrier
}

// Six 256-thread blocks per SM where cp.async exists; the sm_75 build (a trap, never launched) asks for
// one, since 1536 threads do not fit on an sm_75 SM.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define CML_TILE64_ASYNC_MIN_BLOCKS 1
#else
#define CML_TILE64_ASYNC_MIN_BLOCKS 6
#endif
__global__ void __launch_bounds__(kWideThreads, CML_TILE64_ASYNC_MIN_BLOCKS)
    transpose_tile64_async_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                  std::size_t cols, TileGrid g, bool aligned) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // No cp.async before sm_80: never launched there (launch_transpose_tile64_async checks the device).
  (void)in, (void)out, (void)rows, (void)cols, (void)g, (void)aligned;
  __trap();
#else
  __shared__ __align__(16) float tiles[2][kWide * kWide];
  const unsigned count = g.blocks();
  unsigned id = blockIdx.x;  // the launcher never starts more blocks than tiles
  int buf = 0;
  fetch_tile(in, rows, cols, wide_tile(id, g, rows, cols, aligned), tiles[0]);
  __pipeline_commit();
  for (; id < count; id += gridDim.x) {
    const unsigned next = id + gridDim.x;
    if (next < count) fetch_tile(in, rows, cols, wide_tile(next, g, rows, cols, aligned), tiles[buf ^ 1]);
    // Commit even when nothing was fetched, so "all groups but the newest" is always this tile's group.
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();  // every thread's copies of tile `id` have landed
    const WideTile w = wide_tile(id, g, rows, cols, aligned);
    if (w.vector) store_tile_vec4(tiles[buf], out, rows, w);
    else store_tile_scalar(tiles[buf], out, rows, cols, w);
    __syncthreads();  // tiles[buf] is refilled by the next iteration's fetch
    buf ^= 1;
  }
#endif
}

// ---- Launchers --------------------------------------------------------------------------------------

template <TileLayout kLayout, int kBlockRows>
void launch_transpose_tiled(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s) {
  static_assert(kTile % kBlockRows == 0, "the block's rows must divide the tile");
  if (rows == 0 || cols == 0) return;
  const TileGrid g = transpose::tile_grid(cols, rows, kTile, kTile);
  transpose_tiled_kernel<kLayout, kBlockRows><<<g.blocks(), dim3(kTile, kBlockRows), 0, s>>>(in, out, rows, cols, g);
  CUDA_CHECK_LAUNCH();
}

inline void launch_transpose_tiled_unpadded(const float* in, float* out, std::size_t rows, std::size_t cols,
                                            cudaStream_t s) {
  launch_transpose_tiled<TileLayout::kUnpadded, kTile>(in, out, rows, cols, s);
}
inline void launch_transpose_tiled_padded(const float* in, float* out, std::size_t rows, std::size_t cols,
                                          cudaStream_t s) {
  launch_transpose_tiled<TileLayout::kPadded, kTile>(in, out, rows, cols, s);
}
inline void launch_transpose_tiled_swizzled(const float* in, float* out, std::size_t rows, std::size_t cols,
                                            cudaStream_t s) {
  launch_transpose_tiled<TileLayout::kSwizzled, kTile>(in, out, rows, cols, s);
}
// 32 x 8 threads per 32 x 32 tile, four elements per thread, padded.
inline constexpr int kMultiRows = 8;
inline void launch_transpose_tiled_multi(const float* in, float* out, std::size_t rows, std::size_t cols,
                                         cudaStream_t s) {
  launch_transpose_tiled<TileLayout::kPadded, kMultiRows>(in, out, rows, cols, s);
}

template <int kSide, int kBlockRows>
void launch_transpose_padded_tile(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s) {
  static_assert(kSide % kBlockRows == 0 && kSide % 32 == 0, "whole warps along x; the rows divide the tile");
  if (rows == 0 || cols == 0) return;
  const TileGrid g = transpose::tile_grid(cols, rows, kSide, kSide);
  transpose_padded_tile_kernel<kSide, kBlockRows><<<g.blocks(), dim3(kSide, kBlockRows), 0, s>>>(in, out, rows, cols, g);
  CUDA_CHECK_LAUNCH();
}

template <int kSide, int kBlockRows, bool kStreaming, BlockOrder kOrder = BlockOrder::kRowMajor>
void launch_transpose_fast_tile(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s) {
  static_assert(kSide % kBlockRows == 0 && kSide % 32 == 0, "whole warps along x; the rows divide the tile");
  if (rows == 0 || cols == 0) return;
  const TileGrid g = transpose::tile_grid(cols, rows, kSide, kSide);
  const dim3 block(kSide, kBlockRows);
  // 32-bit offsets are exact while every offset (and r0 + kSide, c0 + kSide) stays below 2^32.
  if ((rows + kSide) * (cols + kSide) < (std::size_t{1} << 32)) {
    transpose_fast_tile_kernel<kSide, kBlockRows, kStreaming, unsigned, kOrder>
        <<<g.blocks(), block, 0, s>>>(in, out, unsigned(rows), unsigned(cols), g);
  } else {
    transpose_fast_tile_kernel<kSide, kBlockRows, kStreaming, std::size_t, kOrder>
        <<<g.blocks(), block, 0, s>>>(in, out, rows, cols, g);
  }
  CUDA_CHECK_LAUNCH();
}

// 16-byte accesses need both sides a multiple of 4 floats and 16-byte aligned pointers (cudaMalloc gives
// 256); otherwise every tile takes the scalar path, still exact.
inline bool vec4_aligned(const float* in, const float* out, std::size_t rows, std::size_t cols) {
  return rows % 4 == 0 && cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
}

// The carveout, in percent, that holds `per_sm` blocks each using `block_bytes` of shared memory plus the
// `reserved` bytes the system keeps per block; rounded up, at most 100.
inline int carveout_percent(std::size_t per_sm, std::size_t block_bytes, std::size_t reserved,
                            std::size_t max_per_sm) {
  if (max_per_sm == 0) return 100;
  const std::size_t need = per_sm * (block_bytes + reserved);
  return int(std::min<std::size_t>(100, (100 * need + max_per_sm - 1) / max_per_sm));
}

// carveout_percent for `per_sm` blocks of `kernel` (its static shared memory) on the current device, with
// no more blocks than `threads` per block let fit.
template <class Kernel>
int carveout_for(Kernel kernel, int threads, int per_sm) {
  int device = 0, max_per_sm = 0, reserved = 0, max_threads = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  per_sm = std::min(per_sm, max_threads / threads);
  return carveout_percent(std::size_t(per_sm), attr.sharedSizeBytes, std::size_t(reserved), std::size_t(max_per_sm));
}

// How a launch of kKernel fits kPerSm blocks per SM under kCarve, worked out once per device (the
// occupancy searches cost host time that would show in the timing of small matrices): the carveout becomes
// the kernel's attribute, and the result is the dynamic shared memory to reserve at launch. kMaxShared
// caps the blocks by reserving shared memory they never touch; kFit caps them by the carveout itself.
template <auto kKernel, int kPerSm, Carve kCarve>
std::size_t fit_blocks(int threads) {
  static int done_for = -1;
  static std::size_t reserve = 0;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (done_for == device) return reserve;
  CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  kCarve == Carve::kMaxShared ? int(cudaSharedmemCarveoutMaxShared)
                                                              : carveout_for(kKernel, threads, kPerSm)));
  reserve = kCarve == Carve::kMaxShared ? shared_reserve_for(kKernel, threads, kPerSm) : 0;
  done_for = device;
  return reserve;
}

// Eight 256-thread blocks fill an SM's 2048 threads.
inline constexpr int kVec4BlocksFull = 8;

// tile64_vec4_3pb: at most kVec4BlocksPerSm blocks resident per SM instead of eight. Each block still keeps
// four float4 loads per thread in flight; what shrinks is the number of tiles in flight at once, and with it
// the number of separate 256-byte pieces of output rows that DRAM is asked to write at the same time.
inline constexpr int kVec4BlocksPerSm = 3;

// Blocks of `kKernel` resident on the whole current device at once with `dynamic_bytes` of dynamic shared
// memory each (under the carveout already set), computed once per device: the occupancy query costs host
// time that would show in the timing of small matrices.
template <auto kKernel>
unsigned resident_blocks(int threads, std::size_t dynamic_bytes) {
  static int done_for = -1;
  static unsigned resident = 0;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (done_for == device) return resident;
  int sms = 0, per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, threads, dynamic_bytes));
  resident = unsigned(std::max(1, sms * per_sm));
  done_for = device;
  return resident;
}

// tile64_vec4_3pb_col_pf: how far ahead a block prefetches, in blocks: a sixth of the blocks resident at
// once. The prefetch must start early enough to hide much of a DRAM read, which a block's own loads wait
// out in full, and not so early that the lines sit in L2 for long beside the written lines that are
// waiting for DRAM: a block prefetching the tile of the block that replaces it would ask too early.
inline constexpr unsigned kPrefetchShare = 6;
inline constexpr unsigned prefetch_ahead(unsigned resident) {
  return resident / kPrefetchShare > 0 ? resident / kPrefetchShare : 1;
}

// The float4 tile with its tiles in kOrder, at most kPerSm blocks per SM, fitted by kCarve; with kPrefetch,
// each block prefetches the tile `ahead` blocks after its own; kDest picks what the store writes.
template <BlockOrder kOrder, int kPerSm, Carve kCarve, bool kPrefetch = false,
          TileDest kDest = TileDest::kTransposed>
void launch_tile64_vec4_for(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                            unsigned ahead = 0) {
  if (rows == 0 || cols == 0) return;
  constexpr auto kernel = transpose_tile64_vec4_kernel<kOrder, kPerSm, kCarve, kPrefetch, kDest>;
  const std::size_t reserve = fit_blocks<kernel, kPerSm, kCarve>(kWideThreads);
  const TileGrid g = transpose::tile_grid(cols, rows, kWide, kWide);
  kernel<<<g.blocks(), kWideThreads, reserve, s>>>(in, out, rows, cols, g, vec4_aligned(in, out, rows, cols), ahead);
  CUDA_CHECK_LAUNCH();
}

// tile64_vec4 (kFit: tile64_vec4_l1), and in column order tile64_vec4_col.
template <BlockOrder kOrder = BlockOrder::kRowMajor, Carve kCarve = Carve::kMaxShared>
void launch_transpose_tile64_vec4(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s) {
  launch_tile64_vec4_for<kOrder, kVec4BlocksFull, kCarve>(in, out, rows, cols, s);
}

// tile64_vec4_3pb (kFit: tile64_vec4_3pb_l1), and in column order tile64_vec4_3pb_col.
template <BlockOrder kOrder = BlockOrder::kRowMajor, Carve kCarve = Carve::kMaxShared>
void launch_transpose_tile64_vec4_capped(const float* in, float* out, std::size_t rows, std::size_t cols,
                                         cudaStream_t s) {
  launch_tile64_vec4_for<kOrder, kVec4BlocksPerSm, kCarve>(in, out, rows, cols, s);
}

// tile64_vec4_3pb_col_pf: tile64_vec4_3pb_col whose blocks also prefetch a later block's tile into L2. In
// column order a tile's reads are 64 pieces of 256 bytes, each from another input row, and the blocks
// resident at once read pieces of thousands of rows: reads that DRAM serves more slowly than a copy's, and
// three blocks per SM leave little in flight to cover them. More blocks per SM would keep more reads in
// flight, but also more tiles writing at once (tile64_vec4_3pb's reason for three). A prefetch keeps
// reads in flight without a block waiting for them: when the later block loads its tile, the lines are
// in L2 or on their way. evict_last asks L2 to keep them ahead of ordinary lines: L2 also holds the
// written lines until DRAM takes them, and a prefetched line pushed out before its block reads it is read
// from DRAM twice. The lines left behind are clean copies of the input, so whatever evicts them later
// writes nothing back. Needs compute capability 8.0 (l2_prefetch_unsupported, below); compiled for an older
// GPU, this is tile64_vec4_3pb_col.
template <BlockOrder kOrder = BlockOrder::kColumnMajor, TileDest kDest = TileDest::kTransposed>
inline constexpr auto kPrefetchKernel =
    transpose_tile64_vec4_kernel<kOrder, kVec4BlocksPerSm, Carve::kFit, true, kDest>;

// How many blocks ahead the prefetching kernel's blocks prefetch on the current device.
template <BlockOrder kOrder = BlockOrder::kColumnMajor, TileDest kDest = TileDest::kTransposed>
unsigned tile64_vec4_prefetch_ahead() {
  constexpr auto kernel = kPrefetchKernel<kOrder, kDest>;
  const std::size_t reserve = fit_blocks<kernel, kVec4BlocksPerSm, Carve::kFit>(kWideThreads);
  return prefetch_ahead(resident_blocks<kernel>(kWideThreads, reserve));
}

// The prefetching kernel with its tiles in kOrder (tile64_vec4_3pb_col_pf: column order, transposed).
template <BlockOrder kOrder = BlockOrder::kColumnMajor, TileDest kDest = TileDest::kTransposed>
void launch_tile64_vec4_prefetched(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s) {
  const unsigned ahead = tile64_vec4_prefetch_ahead<kOrder, kDest>();
  launch_tile64_vec4_for<kOrder, kVec4BlocksPerSm, Carve::kFit, true, kDest>(in, out, rows, cols, s, ahead);
}

inline void launch_transpose_tile64_vec4_prefetched(const float* in, float* out, std::size_t rows, std::size_t cols,
                                                    cudaStream_t s) {
  launch_tile64_vec4_prefetched<BlockOrder::kColumnMajor>(in, out, rows, cols, s);
}

// Not a transpose: tile64_vec4_3pb_col_pf's kernel with each tile written untransposed to the transposed
// tile's place (TileDest::kMoved). Every warp reads and writes the same addresses in the same order as the
// transpose, so DRAM sees the same access pattern: this is the fastest any transpose with that pattern can
// be, its own ceiling, which can lie below cudaMemcpy's. Partial tiles are transposed (tile_move_reference).
inline void launch_tile_move_vec4_prefetched(const float* in, float* out, std::size_t rows, std::size_t cols,
                                             cudaStream_t s) {
  launch_tile64_vec4_prefetched<BlockOrder::kColumnMajor, TileDest::kMoved>(in, out, rows, cols, s);
}

// `feature` needs compute capability 8.0 or newer: "" when a device of compute capability major.minor has
// it, else the reason, for Waived or a skipped test.
inline std::string sm80_unsupported(const std::string& feature, int major, int minor) {
  if (major >= 8) return "";
  return feature + " needs compute capability 8.0 or newer; this GPU is " + std::to_string(major) + "." +
         std::to_string(minor);
}
inline std::string l2_prefetch_unsupported(int major, int minor) {
  return sm80_unsupported("prefetch.global.L2::evict_last", major, minor);
}
// cp.async, and so tile64_async.
inline std::string tile64_async_unsupported(int major, int minor) { return sm80_unsupported("cp.async", major, minor); }
// The same for the current device.
inline std::string tile64_async_unsupported() {
  const ComputeCapability cc = current_compute_capability();
  return tile64_async_unsupported(cc.major, cc.minor);
}

// Persistent grid: as many blocks as fit on the GPU at once (never more than tiles). `max_blocks` > 0
// caps it further; the tests use it to make each block walk many tiles through both buffers. Throws
// std::runtime_error on a device without cp.async (the kernel is not built for it).
inline void launch_transpose_tile64_async(const float* in, float* out, std::size_t rows, std::size_t cols,
                                          cudaStream_t s, unsigned max_blocks = 0) {
  if (rows == 0 || cols == 0) return;
  // Blocks resident at once on the current device, and whether the device has cp.async, once per device.
  static int cached_device = -1;
  static unsigned resident = 0;
  static std::string unsupported;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (device != cached_device) {
    unsupported = tile64_async_unsupported();
    if (unsupported.empty()) {
      // Six blocks of 32 KB need the largest shared memory; the grid is sized to what then fits.
      CUDA_CHECK(cudaFuncSetAttribute(transpose_tile64_async_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      int(cudaSharedmemCarveoutMaxShared)));
      resident = resident_blocks<transpose_tile64_async_kernel>(kWideThreads, 0);
    }
    cached_device = device;
  }
  if (!unsupported.empty()) throw std::runtime_error("tile64_async: " + unsupported);
  const TileGrid g = transpose::tile_grid(cols, rows, kWide, kWide);
  unsigned blocks = std::min(g.blocks(), resident);
  if (max_blocks > 0) blocks = std::min(blocks, max_blocks);
  transpose_tile64_async_kernel<<<blocks, kWideThreads, 0, s>>>(in, out, rows, cols, g,
                                                                vec4_aligned(in, out, rows, cols));
  CUDA_CHECK_LAUNCH();
}

// ---- A kernel that is not a transpose: does the work inside the tile cost time? --------------------
// tiled_64x8's kernel with another store (TileDest::kMoved, above): each tile goes, untransposed, where
// the transpose puts it. Both kernels read the tile with one shared-memory wavefront per request (along a
// row here, down a padded column in the transpose), so the moved tile has the transpose's loads, barrier
// and global addresses and none of its work inside the tile. Timed beside tiled_64x8, it tells whether
// that work costs anything.
inline constexpr int kProbeSide = 64;
inline constexpr int kProbeRows = 8;

inline std::string tile_move_shape_unsupported(std::size_t rows, std::size_t cols) {
  if (rows % kProbeSide == 0 && cols % kProbeSide == 0) return "";
  return "moving whole 64 x 64 tiles to the transposed places needs both sides to be multiples of 64 (this "
         "matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ")";
}

inline void launch_tile_move(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s) {
  if (rows == 0 || cols == 0) return;
  if (const std::string why = tile_move_shape_unsupported(rows, cols); !why.empty()) throw std::invalid_argument(why);
  const TileGrid g = transpose::tile_grid(cols, rows, kProbeSide, kProbeSide);
  transpose_padded_tile_kernel<kProbeSide, kProbeRows, TileDest::kMoved>
      <<<g.blocks(), dim3(kProbeSide, kProbeRows), 0, s>>>(in, out, rows, cols, g);
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::ch03
