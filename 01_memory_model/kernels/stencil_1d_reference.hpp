// CPU side of the 1-D 9-point stencil (stencil_1d.cuh): the coefficient table and the reference.
//
// out[i] = sum_{k=0..8} coeff(row(i), k) * in[i + k - 4], with in[] read as 0 outside [0, n).
// Inputs and coefficients are small integers, so every product and partial sum is an integer below
// 2^24: exact in float in any order (with or without FMA), and the GPU result must match bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/access_model.hpp"

namespace cml::ch01 {

inline constexpr int kStencilRadius = 4;
inline constexpr int kStencilTaps = 2 * kStencilRadius + 1;
inline constexpr int kCoeffRows = 32;  // one coefficient set per lane of a warp

// Which coefficient set output i uses.
enum class RowPick {
  fixed,         // always set 0 (the book's stencil: one set of coefficients)
  warp_uniform,  // set = (i / 32) % 32: the same for all 32 lanes of a warp -> one address per warp load
  per_lane,      // set = (i / 32 + i % 32) % 32: a different set in every lane -> 32 addresses per warp load
};
// per_lane adds the warp's number so that a lane's set changes from one grid-stride iteration to the
// next: with plain i % 32 the set would be loop-invariant and the compiler could load the coefficients
// once, outside the loop, hiding exactly the cost the variant is there to show.

// [doc:stencil_row]
inline int stencil_row(RowPick pick, std::size_t i) {
  switch (pick) {
    case RowPick::fixed: return 0;
    case RowPick::warp_uniform: return static_cast<int>((i / 32) % kCoeffRows);
    case RowPick::per_lane: return static_cast<int>((i / 32 + i % 32) % kCoeffRows);
  }
  return 0;
}
// [/doc:stencil_row]

// kCoeffRows x kStencilTaps integers in [-4, 4], row-major.
inline std::vector<float> make_stencil_table() {
  std::vector<float> t(kCoeffRows * kStencilTaps);
  for (int r = 0; r < kCoeffRows; ++r)
    for (int k = 0; k < kStencilTaps; ++k) t[r * kStencilTaps + k] = static_cast<float>((r * 7 + k * 3) % 9 - 4);
  return t;
}

// Integers in [-8, 8].
inline std::vector<float> make_stencil_input(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u;  // a cheap scramble
    v[i] = static_cast<float>(static_cast<int>((h >> 7) % 17u) - 8);
  }
  return v;
}

inline std::vector<float> stencil_1d_reference(const std::vector<float>& in, const std::vector<float>& table,
                                               RowPick pick) {
  const std::size_t n = in.size();
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float* c = &table[static_cast<std::size_t>(stencil_row(pick, i)) * kStencilTaps];
    float sum = 0.0f;
    for (int k = 0; k < kStencilTaps; ++k) {
      const long long j = static_cast<long long>(i) + k - kStencilRadius;
      if (j >= 0 && j < static_cast<long long>(n)) sum += c[k] * in[static_cast<std::size_t>(j)];
    }
    out[i] = sum;
  }
  return out;
}

// The kernel's global loads over one interior tile of `block` outputs, as Nsight Compute counts them (every
// tile but the array's first and last looks the same): each warp's load of its 32 inputs, the two halo loads
// of kStencilRadius lanes each in the first warp (one sector apiece), and, when the coefficients come from a
// global table, one load per tap and warp. The halo and coefficient loads are why a profile of this kernel
// does not show the 4 sectors per request of its input loads alone.
inline model::GlobalAccess stencil_tile_loads(int block, bool coeffs_in_global, RowPick pick) {
  using Lane = std::optional<std::uint64_t>;
  const std::uint64_t base = static_cast<std::uint64_t>(block);  // the second tile, whose left halo is in the array
  const std::uint64_t warps = static_cast<std::uint64_t>(block) / 32;
  model::GlobalAccess a = model::global_pattern(warps, 4, [&](std::uint64_t w, unsigned l) -> Lane {
    return (base + w * 32 + l) * 4;
  });
  for (const std::uint64_t first : {base - kStencilRadius, base + static_cast<std::uint64_t>(block)}) {
    a += model::global_pattern(1, 4, [&](std::uint64_t, unsigned l) -> Lane {
      if (l >= static_cast<unsigned>(kStencilRadius)) return std::nullopt;
      return (first + l) * 4;
    });
  }
  if (coeffs_in_global)
    for (int k = 0; k < kStencilTaps; ++k)
      a += model::global_pattern(warps, 4, [&](std::uint64_t w, unsigned l) -> Lane {
        const auto row = static_cast<std::uint64_t>(stencil_row(pick, base + w * 32 + l));
        return (row * kStencilTaps + static_cast<std::uint64_t>(k)) * 4;
      });
  return a;
}

}  // namespace cml::ch01
