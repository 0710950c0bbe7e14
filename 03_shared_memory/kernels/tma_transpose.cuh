// The TMA transpose of transpose_shared: each tile arrives in shared memory by one tensor load, the block's
// threads transpose it as 4 x 4 blocks into an output buffer, and one tensor store sends it out. Its shapes
// and layouts, the kernel and its host launcher; the instructions, the tickets and the tensor maps are in
// tma_ptx.cuh.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "03_shared_memory/kernels/tma_ptx.cuh"
#include "common/cuda_check.hpp"
#include "common/transpose.cuh"

namespace cml::tma {

// ---- Shapes and layouts (host and device) ----------------------------------------------------------

// A kSide x kSide float tile as the TMA writes it into shared memory: kSide rows of 4 kSide bytes, one
// after another. Element (r, c) is word kSide r + c: with kSide a multiple of 32, bank c % 32, so a tile
// COLUMN is one bank. The TMA cannot pad rows (+1 word per row, the classic fix): it writes dense boxes.
template <int kSide>
__host__ __device__ constexpr int tile_word(int r, int c) {
  return r * kSide + c;
}

// The TMA transpose: each block streams kSide x kSide tiles (one tensor load and one tensor store each)
// through kStages input stages and kOut output buffers; 256 threads move each tile as 4 x 4 blocks.
inline constexpr int kTmaThreads = 256;
template <int kSide, int kStages, int kOut>
struct TmaTransposeShape {
  static_assert(kSide == 64 || kSide == 128, "a tile row is whole 256- or 512-byte pieces; a box side is <= 256");
  static constexpr unsigned tile_bytes = kSide * kSide * sizeof(float);
  static constexpr unsigned smem_bytes = (kStages + kOut) * tile_bytes + 128;  // + alignment
};

// Which 4 x 4 block of a kSide x kSide tile is block number b (0 .. (kSide / 4)^2 - 1; thread t moves
// blocks t, t + 256, ...): block row rb (tile rows 4 rb .. 4 rb + 3) and block column q (tile columns
// 4 q .. 4 q + 3). 16-byte accesses are served eight lanes (a quarter warp) at a time, and eight float4s
// are conflict-free when they sit in eight different 16-byte bank groups, i.e. eight different values of
// the 16-byte column modulo 8. Lane j of a quarter takes block row j (+ 8 n) and block column j ^ m (+ 8 n'),
// with m and the n's fixed across the quarter: its float4 reads (input rows 4 rb + i, column q) and its
// float4 writes (output rows 4 q + i, column rb) fall in eight different bank groups. The XOR swizzles
// which thread takes which block, where tiled_swizzled swizzles where an element is stored: with the TMA
// the layout is the TMA's, so the threads move instead.
struct Block4 {
  int rb = 0, q = 0;
};
template <int kSide>
__host__ __device__ constexpr Block4 block4_of(int b) {
  constexpr int kBands = kSide / 32;  // groups of 8 block rows
  const int j = b % 8, d = b / 8;
  return {j + 8 * (d % kBands), (j ^ (d / kBands % 8)) + 8 * (d / (8 * kBands))};
}

// The tensor map constraints the TMA transpose needs: every row of the input and of the output starts
// 16 bytes after a 16-byte boundary, i.e. both sides a multiple of 4 floats, and sides below 2^31.
inline std::string transpose_tma_shape_unsupported(std::size_t rows, std::size_t cols) {
  if (rows % 4 != 0 || cols % 4 != 0)
    return "tensor maps need rows of a multiple of 16 bytes: both sides must be multiples of 4 floats";
  if (rows >= (std::size_t{1} << 31) || cols >= (std::size_t{1} << 31)) return "a side is 2^31 or more";
  return "";
}

namespace {

// ---- TMA transpose ----------------------------------------------------------------------------------
// Per tile: one tensor load brings it into a stage; the block's threads read it as 4 x 4 blocks (four float4
// reads each), transpose each block in registers, and write it (four float4 writes) into an output buffer,
// which one tensor store sends to the output.
template <int kSide>
__device__ __forceinline__ void transpose_tile_blocks(const float* in_tile, float* out_tile) {
#pragma unroll
  for (int p = 0; p < kSide * kSide / 16 / kTmaThreads; ++p) {
    const Block4 b = block4_of<kSide>(int(threadIdx.x) + p * kTmaThreads);
    float4 a[4];  // a[i] = tile row 4 rb + i, columns 4 q .. 4 q + 3
#pragma unroll
    for (int i = 0; i < 4; ++i)
      a[i] = *reinterpret_cast<const float4*>(&in_tile[tile_word<kSide>(4 * b.rb + i, 4 * b.q)]);
    // Output row 4 q + m is input column 4 q + m: its columns 4 rb .. 4 rb + 3 are component m of a[0..3].
    float* o = &out_tile[tile_word<kSide>(4 * b.q, 4 * b.rb)];
    *reinterpret_cast<float4*>(o) = make_float4(a[0].x, a[1].x, a[2].x, a[3].x);
    *reinterpret_cast<float4*>(o + kSide) = make_float4(a[0].y, a[1].y, a[2].y, a[3].y);
    *reinterpret_cast<float4*>(o + 2 * kSide) = make_float4(a[0].z, a[1].z, a[2].z, a[3].z);
    *reinterpret_cast<float4*>(o + 3 * kSide) = make_float4(a[0].w, a[1].w, a[2].w, a[3].w);
  }
}

// Persistent blocks; item i is tile tile_of<kOrder>(i), and `kSchedule` says which items a block takes.
// Thread 0 keeps kStages tile loads in flight and issues the stores; the output buffer of a block's k-th
// tile is refilled only once the store of its tile k - kOut has read it. tile_in[s] tells every thread
// which tile stage s holds, or that there are none left.
template <int kSide, int kStages, int kOut, transpose::BlockOrder kOrder, Schedule kSchedule = Schedule::kTickets>
__global__ void __launch_bounds__(kTmaThreads)
    transpose_tma_kernel(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
                         transpose::TileGrid tiles, WorkCounter* q) {
#if CML_TMA_DEVICE
  using Shape = TmaTransposeShape<kSide, kStages, kOut>;
  constexpr int kTileFloats = kSide * kSide;
  constexpr unsigned kNone = ~0u;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages];
  __shared__ unsigned tile_in[kStages];
  float* const base = reinterpret_cast<float*>(align_up<128>(smem_raw));
  const auto stage = [&](unsigned k) { return base + (k % kStages) * kTileFloats; };
  const auto out_buffer = [&](unsigned k) { return base + (kStages + k % kOut) * kTileFloats; };
  ItemSource<kSchedule> source{q, tiles.blocks()};
  // Thread 0: the block's k-th tile, or kNone, into stage k % kStages.
  const auto load = [&](unsigned k) {
    unsigned item = kNone;
    if (source.take(item)) {
      const transpose::TileIndex t = transpose::tile_of<kOrder>(item, tiles.tiles_x, tiles.tiles_y);
      std::uint64_t* bar = &full[k % kStages];
      mbarrier_arrive_expect_tx(bar, Shape::tile_bytes);  // a box always lands whole (zeros past the edge)
      tensor_load_2d(stage(k), &in_map, int(t.x) * kSide, int(t.y) * kSide, bar);
    }
    tile_in[k % kStages] = item;
  };
  init_barriers(full, kStages);
  if (threadIdx.x == 0) {
    source.start(kStages);
    for (unsigned k = 0; k < unsigned(kStages); ++k) load(k);
  }
  // [doc:tma_transpose_loop]
  for (unsigned k = 0;; ++k) {
    // All stores but the newest kOut - 1 have read their buffers: out_buffer(k) is free again.
    if (threadIdx.x == 0) bulk_wait_read<kOut - 1>();
    __syncthreads();  // also publishes tile_in[k % kStages]
    const unsigned item = tile_in[k % kStages];
    if (item == kNone) break;
    mbarrier_wait(&full[k % kStages], (k / kStages) & 1u);
    transpose_tile_blocks<kSide>(stage(k), out_buffer(k));
    fence_proxy_async_shared();  // the tensor store below reads what these threads wrote
    __syncthreads();             // the whole tile written; every thread done with stage(k) and tile_in
    if (threadIdx.x == 0) {
      const transpose::TileIndex t = transpose::tile_of<kOrder>(item, tiles.tiles_x, tiles.tiles_y);
      // Input rows r0 .. and columns c0 .. become output rows c0 .. and columns r0 ..; the TMA drops
      // whatever falls outside the output matrix.
      tensor_store_2d(&out_map, int(t.y) * kSide, int(t.x) * kSide, out_buffer(k));
      bulk_commit();
      load(k + kStages);
    }
  }
  // [/doc:tma_transpose_loop]
  if (threadIdx.x == 0) {
    bulk_wait_all();
    source.finish();
  }
#else
  (void)in_map, (void)out_map, (void)tiles, (void)q;
  __trap();
#endif
}

// ---- Host side --------------------------------------------------------------------------------------

// out (cols x rows) = in^T (in: rows x cols), both sides multiples of 4 (transpose_tma_shape_unsupported).
// Persistent grid of as many blocks as fit at once, taking tiles by `kSchedule`; `max_blocks` > 0 caps it.
template <int kSide, int kStages, int kOut, transpose::BlockOrder kOrder = transpose::BlockOrder::kRowMajor,
          Schedule kSchedule = Schedule::kTickets>
void launch_transpose_tma(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                          unsigned max_blocks = 0) {
  using Shape = TmaTransposeShape<kSide, kStages, kOut>;
  if (rows == 0 || cols == 0) return;
  if (const std::string why = transpose_tma_shape_unsupported(rows, cols); !why.empty())
    throw std::invalid_argument("TMA transpose: " + why);
  static MapPair maps;
  if (!maps.matches(in, out, rows, cols)) {
    maps.in_map = float_matrix_map(in, rows, cols, kSide, kSide, CU_TENSOR_MAP_SWIZZLE_NONE);
    maps.out_map = float_matrix_map(out, cols, rows, kSide, kSide, CU_TENSOR_MAP_SWIZZLE_NONE);
    maps.in = in, maps.out = out, maps.rows = rows, maps.cols = cols;
  }
  const transpose::TileGrid tiles{unsigned((cols + kSide - 1) / kSide), unsigned((rows + kSide - 1) / kSide)};
  const auto kernel = transpose_tma_kernel<kSide, kStages, kOut, kOrder, kSchedule>;
  const Residency r = residency(kernel, kTmaThreads, Shape::smem_bytes);
  unsigned blocks = std::min(tiles.blocks(), r.sms * r.per_sm);
  if (max_blocks > 0) blocks = std::min(blocks, max_blocks);
  kernel<<<blocks, kTmaThreads, Shape::smem_bytes, s>>>(maps.in_map, maps.out_map, tiles,
                                                        work_counter(kTransposeQueue, s));
  CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace cml::tma
