// What each transpose of transpose_shared does with memory over a whole launch, for the access model:
// every warp instruction of every tile, edge tiles included, from the kernels' own index maps. Host only.
//
// Why whole launches: Nsight Compute divides a launch's sectors (or wavefronts) by its requests, so where a
// side is no multiple of the tile the last row and column of tiles, with idle lanes and idle warps, pull
// the average down (at 1000 x 1000 the float4 tiles measure 12 sectors per request, against 16 inside the
// matrix: their edge tiles fall back to 4-byte accesses, four times as many instructions per tile). A warp
// with no active lane issues nothing that ncu's request and SASS instruction counts see, and the model
// counts no request for it either; the predicated-off instructions that ncu's plain instruction counter
// does include are why scripts/profile_table.py divides by the SASS counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "03_shared_memory/kernels/transpose_shared.cuh"
#include "common/access_model.hpp"
#include "common/transpose.hpp"

namespace cml::ch03 {

using LaneAt = std::optional<std::uint64_t>;  // a lane's byte address, or nothing to do
inline constexpr model::SharedOp kSmemLoad = model::SharedOp::kLoad, kSmemStore = model::SharedOp::kStore;

// The two-phase 4-byte tile kernels (tiled_*, the padded and fast tiles, tile_move): a kSide x kBlockRows
// block, lane = x. In pass k thread (x, y) reads input element (r0 + y', c0 + x), y' = y + k kBlockRows, into
// tile element (y', x); then writes output row c0 + y' at column r0 + x from tile element (x, y') (`moved`:
// from (y', x), tile_move's untransposed copy). word(r, c): the shared-memory word of tile element (r, c).
// Elements outside the matrix are skipped lane by lane (the fast kernels' unchecked interior path makes
// the same accesses).
template <int kSide, int kBlockRows, class Word>
transpose::LaunchAccesses two_phase_launch(const transpose::Shape& s, Word word, bool moved = false) {
  constexpr unsigned kThreads = kSide * kBlockRows;
  return transpose::launch_accesses(s, kSide, kSide, [&](std::size_t r0, std::size_t c0) {
    transpose::LaunchAccesses a;
    for (int k = 0; k < kSide / kBlockRows; ++k) {
      const auto x_of = [](unsigned t) { return int(t % kSide); };
      const auto y_of = [k](unsigned t) { return int(t / kSide) + k * kBlockRows; };
      const auto in_matrix = [&](unsigned t) { return r0 + y_of(t) < s.rows && c0 + x_of(t) < s.cols; };
      const auto out_matrix = [&](unsigned t) { return c0 + y_of(t) < s.cols && r0 + x_of(t) < s.rows; };
      a.ld += transpose::block_global(kThreads, sizeof(float), [&](unsigned t) -> LaneAt {
        if (!in_matrix(t)) return std::nullopt;
        return ((r0 + y_of(t)) * s.cols + c0 + x_of(t)) * sizeof(float);
      });
      a.smem_st += transpose::block_shared(kThreads, sizeof(float), kSmemStore, [&](unsigned t) -> LaneAt {
        if (!in_matrix(t)) return std::nullopt;
        return std::uint64_t(word(y_of(t), x_of(t))) * sizeof(float);
      });
      a.smem_ld += transpose::block_shared(kThreads, sizeof(float), kSmemLoad, [&](unsigned t) -> LaneAt {
        if (!out_matrix(t)) return std::nullopt;
        return std::uint64_t(moved ? word(y_of(t), x_of(t)) : word(x_of(t), y_of(t))) * sizeof(float);
      });
      a.st += transpose::block_global(kThreads, sizeof(float), [&](unsigned t) -> LaneAt {
        if (!out_matrix(t)) return std::nullopt;
        return ((c0 + y_of(t)) * s.rows + r0 + x_of(t)) * sizeof(float);
      });
    }
    return a;
  });
}

// The 64 x 64 float4 kernels (tile64_vec4 and its variants; `async`: tile64_async). A tile wholly inside a
// matrix whose sides are multiples of 4 takes the 16-byte path (load_tile_vec4 / load_tile_async,
// store_tile_vec4); every other tile the 4-byte path (load_tile_scalar, store_tile_scalar), which walks
// tile columns in phase 2: 4 wavefronts per request through the chunk swizzle, like the 16-byte path. With
// `async` the 16-byte path copies global memory to shared memory with cp.async (LDGSTS): ncu counts those
// as global load requests (16 sectors each) but as no shared store instruction, so they add nothing to
// smem_st; the 4-byte path of the edge tiles still stores to shared memory with STS. `moved`: the
// tile_move_vec4_* kernels, whose phase 2 reads whole tiles untransposed (tile row 4 bc + k, chunk br / 4;
// on the 4-byte path tile element (c, r)) and writes the same global addresses as the transpose.
inline transpose::LaunchAccesses wide_launch(const transpose::Shape& s, bool async, bool moved = false) {
  const bool aligned = s.rows % 4 == 0 && s.cols % 4 == 0;  // the buffers are cudaMalloc's: 256-byte aligned
  return transpose::launch_accesses(s, kWide, kWide, [&](std::size_t r0, std::size_t c0) {
    transpose::LaunchAccesses a;
    if (aligned && r0 + kWide <= s.rows && c0 + kWide <= s.cols) {
      constexpr unsigned f4 = 16;
      // Pass k of phase 1; in phase 2, row k of each thread's 4 x 4 block and the store of its column k.
      for (int k = 0; k < kWidePasses; ++k) {
        a.ld += transpose::block_global(kWideThreads, f4, [&](unsigned t) -> LaneAt {
          return ((r0 + load_row(int(t), k)) * s.cols + c0 + 4 * load_chunk(int(t))) * sizeof(float);
        });
        if (!async)
          a.smem_st += transpose::block_shared(kWideThreads, f4, kSmemStore, [&](unsigned t) -> LaneAt {
            return std::uint64_t(wide_offset(load_row(int(t), k), 4 * load_chunk(int(t)))) * sizeof(float);
          });
        a.smem_ld += transpose::block_shared(kWideThreads, f4, kSmemLoad, [&](unsigned t) -> LaneAt {
          const int word = moved ? wide_offset(4 * block_chunk(int(t)) + k, block_row(int(t)))
                                 : wide_offset(block_row(int(t)) + k, 4 * block_chunk(int(t)));
          return std::uint64_t(word) * sizeof(float);
        });
        a.st += transpose::block_global(kWideThreads, f4, [&](unsigned t) -> LaneAt {
          return ((c0 + 4 * block_chunk(int(t)) + k) * s.rows + r0 + block_row(int(t))) * sizeof(float);
        });
      }
      return a;
    }
    const bool whole = moved && r0 + kWide <= s.rows && c0 + kWide <= s.cols;  // moved on the 4-byte path too
    for (int i = 0; i < kWide / (kWideThreads / kWide); ++i) {
      // Phase 1: thread t reads column t % 64 of tile row t / 64 + 4 i; phase 2 writes tile row t % 64
      // (input row) to output row c0 + t / 64 + 4 i.
      const auto along = [](unsigned t) { return int(t % kWide); };
      const auto step = [i](unsigned t) { return int(t / kWide) + i * (kWideThreads / kWide); };
      a.ld += transpose::block_global(kWideThreads, sizeof(float), [&](unsigned t) -> LaneAt {
        if (r0 + step(t) >= s.rows || c0 + along(t) >= s.cols) return std::nullopt;
        return ((r0 + step(t)) * s.cols + c0 + along(t)) * sizeof(float);
      });
      a.smem_st += transpose::block_shared(kWideThreads, sizeof(float), kSmemStore, [&](unsigned t) -> LaneAt {
        if (r0 + step(t) >= s.rows || c0 + along(t) >= s.cols) return std::nullopt;
        return std::uint64_t(wide_offset(step(t), along(t))) * sizeof(float);
      });
      a.smem_ld += transpose::block_shared(kWideThreads, sizeof(float), kSmemLoad, [&](unsigned t) -> LaneAt {
        if (c0 + step(t) >= s.cols || r0 + along(t) >= s.rows) return std::nullopt;
        return std::uint64_t(whole ? wide_offset(step(t), along(t)) : wide_offset(along(t), step(t))) * sizeof(float);
      });
      a.st += transpose::block_global(kWideThreads, sizeof(float), [&](unsigned t) -> LaneAt {
        if (c0 + step(t) >= s.cols || r0 + along(t) >= s.rows) return std::nullopt;
        return ((c0 + step(t)) * s.rows + r0 + along(t)) * sizeof(float);
      });
    }
    return a;
  });
}

}  // namespace cml::ch03
