// Host side of the two transpose demos (02_global_memory/transpose_global, 03_shared_memory/transpose_shared)
// and their tests: the one CPU reference for every transpose in the suite and the input values they all
// use, the matrix shape and its options, the access-model accounting of a launch, and the Bench every
// variant measures through. Bench times copy_row as every run's reference, so this header needs
// common/transpose.cuh and compiles only as CUDA.
//
// Convention everywhere: `in` is a rows x cols matrix stored row-major; its transpose `out` is
// cols x rows, also row-major:  out[c * rows + r] = in[r * cols + c].
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/access_model.hpp"
#include "common/cuda_check.hpp"
#include "common/harness.hpp"
#include "common/pattern.hpp"
#include "common/resources.hpp"
#include "common/transpose.cuh"


namespace cml::transpose {

// Input element i: common/pattern.hpp's random_float, random-looking benchmark data that is distinct and
// finite for every i < kDistinctFloats (1,065,353,216, just under a 32768 x 32768 matrix), so an element
// that lands in the wrong place can never match by accident. The poison value of DeviceBuffer::poison (all
// bits set, a NaN) is never an input value.
inline float element_value(std::uint64_t i) { return random_float(i); }

inline std::vector<float> make_input(std::size_t rows, std::size_t cols) {
  std::vector<float> v(rows * cols);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = element_value(i);
  return v;
}

// out[c * rows + r] = in[r * cols + c]. The loops walk 32 x 32 blocks only so that a 16384 x 16384
// reference takes about a second instead of many (the plain double loop misses the cache on every
// write); the result is the plain definition.
inline void transpose_reference(const float* in, float* out, std::size_t rows, std::size_t cols) {
  constexpr std::size_t kBlock = 32;
  for (std::size_t r0 = 0; r0 < rows; r0 += kBlock)
    for (std::size_t c0 = 0; c0 < cols; c0 += kBlock)
      for (std::size_t r = r0; r < std::min(r0 + kBlock, rows); ++r)
        for (std::size_t c = c0; c < std::min(c0 + kBlock, cols); ++c) out[c * rows + r] = in[r * cols + c];
}

inline std::vector<float> transpose_reference(const std::vector<float>& in, std::size_t rows, std::size_t cols) {
  std::vector<float> out(rows * cols);
  transpose_reference(in.data(), out.data(), rows, cols);
  return out;
}

// Not a transpose: each side x side tile of `in` moves, untransposed, to where the transpose puts it.
// Tile (tr, tc) of the rows x cols input becomes tile (tc, tr) of the cols x rows output, and its element
// (y, x) stays element (y, x). A partial tile (the last row or column of tiles where a side is no multiple
// of `side`) has no untransposed place inside the output: its elements are transposed. With side 1 this is
// the transpose.
inline std::vector<float> tile_move_reference(const std::vector<float>& in, std::size_t rows, std::size_t cols,
                                              std::size_t side) {
  std::vector<float> out(rows * cols);
  const std::size_t whole_rows = rows / side * side, whole_cols = cols / side * side;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      out[r < whole_rows && c < whole_cols ? (c / side * side + r % side) * rows + r / side * side + c % side
                                           : c * rows + r] = in[r * cols + c];
  return out;
}

namespace {

struct Shape {
  std::size_t rows = 0, cols = 0;
  std::size_t elements() const { return rows * cols; }
  std::size_t matrix_bytes() const { return elements() * sizeof(float); }
  double bytes_moved() const { return 2.0 * static_cast<double>(matrix_bytes()); }  // read + written
  std::string label() const { return fmt::format("{}x{}", rows, cols); }
};

// The shape a row was measured on: Bench::run starts every row's params with Shape::label().
inline std::optional<Shape> shape_of(const Row& row) {
  unsigned long long rows = 0, cols = 0;
  if (std::sscanf(row.params.c_str(), "%llux%llu", &rows, &cols) != 2) return std::nullopt;
  return Shape{rows, cols};
}

// --size N is an N x N matrix; --rows and --cols override one side each.
inline std::vector<ExtraOption> shape_options() {
  return {ExtraOption::size("rows", "matrix rows M (rectangles: M x N)", "the --size value"),
          ExtraOption::size("cols", "matrix columns N (rectangles: M x N)", "the --size value")};
}

inline constexpr const char* kSizeMeaning =
    "N for an N x N fp32 matrix (--rows/--cols for M x N); the size column counts elements";

// The device memory of a demo run for an N x N matrix (Demo::device_bytes): input and output, and the copy
// ceiling, measured at the matrix's size. In double throughout: --size 500G asks for 4.6e24 bytes, far past
// any integer type.
inline double matrix_bytes_square(std::uint64_t n) {
  const double side = static_cast<double>(n);
  return side * side * sizeof(float);
}
inline DemoMemory device_bytes_square(std::uint64_t n) {
  return DemoMemory::with_ceiling(2.0 * matrix_bytes_square(n), matrix_bytes_square(n));
}

// The largest --size (N) whose four N x N matrices fit in this GPU's memory: a Demo::max_size, so a
// larger side is refused before anything is allocated, with this limit and kMaxSideReason.
inline std::uint64_t max_side_square(const DeviceInfo& dev) {
  const double per_element = 4.0 * sizeof(float);
  auto fits = [&](std::uint64_t n) { return 4.0 * matrix_bytes_square(n) <= static_cast<double>(dev.total_memory); };
  auto n = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(dev.total_memory) / per_element));
  while (n > 0 && !fits(n)) --n;
  while (fits(n + 1)) ++n;
  return n;
}
inline constexpr const char* kMaxSideReason =
    "the four N x N fp32 matrices (input, output and the two of the copy ceiling) must fit in this GPU's memory";

// The demo's matrix shape; throws CliError (exit 2) for a zero side or a matrix that cannot fit.
inline Shape demo_shape(Context& ctx) {
  Shape s{ctx.size(), ctx.size()};
  if (ctx.extra_given("rows")) s.rows = ctx.extra_size("rows");
  if (ctx.extra_given("cols")) s.cols = ctx.extra_size("cols");
  if (s.rows == 0 || s.cols == 0) throw CliError("--rows and --cols must be at least 1");
  if (s.rows > (std::uint64_t{1} << 40) / s.cols) throw CliError("matrix " + s.label() + " is too large");
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const double need = 4.0 * static_cast<double>(s.matrix_bytes());
  if (need > static_cast<double>(free_b))
    throw CliError(fmt::format("a {} matrix needs {} of device memory but only {} is free", s.label(),
                               format_bytes(need), format_bytes(static_cast<double>(free_b))));
  return s;
}

// The sizes of a transpose demo: an 8192 x 8192 matrix by default, 1000 x 1000 with --quick (4 MB, and not a
// multiple of any block or tile), --rows and --cols for M x N, and no side larger than fits this GPU's memory.
inline void set_demo_sizes(Demo& d) {
  d.size_meaning = kSizeMeaning;
  d.default_size = [](const DeviceInfo&) { return std::uint64_t{8192}; };
  d.quick_size = 1000;
  d.device_bytes = device_bytes_square;
  d.max_size = max_side_square;
  d.max_size_reason = kMaxSideReason;
  d.extras = shape_options();
  d.check_options = [](Context& ctx) { (void)demo_shape(ctx); };
  d.warmup_ms = 30.0;
}

// What a kernel must produce: the input, its transpose, or (03_shared_memory's tile_move_* kernels) the
// 64 x 64 tiles of the input moved untransposed to the transposed tiles' places (tile_move_reference).
enum class Expect { kCopy, kTranspose, kTileMove64 };

using Launch = std::function<void(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t)>;

inline void set_global_model(Row& row, const model::GlobalAccess& ld, const model::GlobalAccess& st) {
  row.set("model_ld_sectors_per_req", ld.sectors_per_request());
  row.set("model_st_sectors_per_req", st.sectors_per_request());
}

// A launch's memory accesses, summed over its warps the way Nsight Compute sums them: global loads and
// stores, and the shared stores and loads of the kernels that go through a tile.
struct LaunchAccesses {
  model::GlobalAccess ld, st;
  model::SharedAccess smem_st, smem_ld;
  LaunchAccesses& operator+=(const LaunchAccesses& o) {
    ld += o.ld;
    st += o.st;
    smem_st += o.smem_st;
    smem_ld += o.smem_ld;
    return *this;
  }
  LaunchAccesses& operator*=(std::uint64_t n) {
    ld *= n;
    st *= n;
    smem_st *= n;
    smem_ld *= n;
    return *this;
  }
};

// One access by each thread of a block of `threads` threads, in warps of 32 consecutive threads: addr(t) is
// thread t's byte address, or nullopt where its element lies outside the matrix (the lane sits out; a warp
// with no lane left makes no request, and ncu counts none).
template <class Addr>
model::GlobalAccess block_global(unsigned threads, unsigned width, Addr addr) {
  return model::global_pattern((threads + model::kWarp - 1) / model::kWarp, width,
                               [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
                                 const std::uint64_t t = w * model::kWarp + l;
                                 if (t >= threads) return std::nullopt;
                                 return addr(unsigned(t));
                               });
}
template <class Addr>
model::SharedAccess block_shared(unsigned threads, unsigned width, model::SharedOp op, Addr addr) {
  return model::shared_pattern(
      (threads + model::kWarp - 1) / model::kWarp, width,
      [&](std::uint64_t w, unsigned l) -> std::optional<std::uint64_t> {
        const std::uint64_t t = w * model::kWarp + l;
        if (t >= threads) return std::nullopt;
        return addr(unsigned(t));
      },
      op);
}

// The accesses of a launch whose blocks each move one tile_rows x tile_cols tile: tile(r0, c0) gives those of
// the tile at row r0, column c0 of the input, and the launch is their sum over every tile. Why the sum and
// not one tile: where a side is no multiple of the tile, the last row and column of tiles leave lanes and
// whole warps idle, and ncu averages their requests in (copy_row at 1000 x 1000: 3.91 sectors per load
// request, not 4). Only four kinds of tile exist (inside, last column, last row, corner), and with both tile
// sides multiples of 8 floats the tiles of a kind lie whole 32-byte sectors apart in both matrices: they
// touch as many sectors as each other (not as many 128-byte lines), so one of each kind, weighted by how
// many there are, gives the launch's sums exactly.
template <class Tile>
LaunchAccesses launch_accesses(const Shape& s, std::size_t tile_rows, std::size_t tile_cols, Tile tile) {
  if (tile_rows % 8 != 0 || tile_cols % 8 != 0)
    throw std::invalid_argument("launch_accesses: tile sides must be multiples of 8 floats");
  const std::size_t tiles_y = (s.rows + tile_rows - 1) / tile_rows, tiles_x = (s.cols + tile_cols - 1) / tile_cols;
  // Tile 0 of a side stands for tiles 0 .. n - 2 (when there are any), tile n - 1 for itself.
  const auto kinds = [](std::size_t n) {
    std::vector<std::pair<std::size_t, std::size_t>> k;  // (tile index, tiles it stands for)
    if (n > 1) k.emplace_back(0, n - 1);
    k.emplace_back(n - 1, 1);
    return k;
  };
  LaunchAccesses total;
  for (const auto& [iy, n_y] : kinds(tiles_y))
    for (const auto& [ix, n_x] : kinds(tiles_x)) {
      LaunchAccesses one = tile(iy * tile_rows, ix * tile_cols);
      one *= n_y * n_x;
      total += one;
    }
  return total;
}

// The global-only kernels of chapter 02 with a bx x by block: thread (x, y) moves element (r0 + y, c0 + x)
// of a by x bx tile when lanes walk the input's rows (copy_row, naive_row), element (r0 + x, c0 + y) of a
// bx x by tile when they walk its columns (naive_col). With `unroll` elements per thread (unroll4_*), the
// tile is `unroll` times longer along the lanes and element k lies k * bx further along: one load and one
// store instruction per element. `transposed`: the element is written to out[c * rows + r], else (the
// copy) to the same place as it was read.
inline LaunchAccesses element_launch(const Shape& s, unsigned bx, unsigned by, bool lanes_along_rows,
                                     bool transposed, unsigned unroll = 1) {
  const std::size_t along = std::size_t{bx} * unroll;
  const std::size_t tile_rows = lanes_along_rows ? by : along, tile_cols = lanes_along_rows ? along : by;
  return launch_accesses(s, tile_rows, tile_cols, [&](std::size_t r0, std::size_t c0) {
    LaunchAccesses a;
    for (unsigned k = 0; k < unroll; ++k) {
      const auto rc = [&](unsigned t) {
        const std::size_t x = t % bx + std::size_t{k} * bx, y = t / bx;
        return lanes_along_rows ? std::pair{r0 + y, c0 + x} : std::pair{r0 + x, c0 + y};
      };
      a.ld += block_global(bx * by, sizeof(float), [&](unsigned t) -> std::optional<std::uint64_t> {
        const auto [r, c] = rc(t);
        if (r >= s.rows || c >= s.cols) return std::nullopt;
        return (r * s.cols + c) * sizeof(float);
      });
      a.st += block_global(bx * by, sizeof(float), [&](unsigned t) -> std::optional<std::uint64_t> {
        const auto [r, c] = rc(t);
        if (r >= s.rows || c >= s.cols) return std::nullopt;
        return (transposed ? c * s.rows + r : r * s.cols + c) * sizeof(float);
      });
    }
    return a;
  });
}

// The matrices of one run and the measuring step every variant shares: poison the output, launch once,
// compare bit-exactly with the CPU reference (the input itself for the two copies), then time. Each row
// gets its ratio to copy_row and to cudaMemcpy D2D, both measured in this run at this matrix size.
class Bench {
 public:
  explicit Bench(Shape s)
      : shape_(s), in_(s.elements()), out_(s.elements()), host_in_(make_input(s.rows, s.cols)), got_(s.elements()) {
    in_.upload(host_in_);
    transposed_ = transpose_reference(host_in_, s.rows, s.cols);
  }
  // At the run's shape (--size, --rows, --cols), checked against the device memory free now.
  explicit Bench(Context& ctx) : Bench(demo_shape(ctx)) {}

  const Shape& shape() const { return shape_; }

  // The copy_row row (the upper bound every vs_copy_row divides by); measured once per run.
  double copy_row(Context& ctx) {
    if (copy_row_measured_) return copy_row_gb_per_s_;
    copy_row_measured_ = true;
    const std::string caller = ctx.variant();
    ctx.set_variant("copy_row");
    const dim3 b = kDefaultBlock;
    Row& row = measure(ctx, fmt::format("{} block={}x{}", shape_.label(), b.x, b.y), Expect::kCopy,
                       [](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t s) {
                         launch_copy_row(in, out, r, c, s);
                       });
    const LaunchAccesses a = element_launch(shape_, b.x, b.y, true, false);
    set_global_model(row, a.ld, a.st);
    copy_row_gb_per_s_ = row.verified ? row.gb_per_s : kNaN;
    add_ratios(ctx, row);
    ctx.set_variant(caller);
    return copy_row_gb_per_s_;
  }

  // Measures one variant; the returned row is valid until the next row is added.
  Row& run(Context& ctx, const std::string& params, Expect expect, const Launch& launch) {
    copy_row(ctx);  // first, so the reference row exists before this one
    Row& row = measure(ctx, shape_.label() + (params.empty() ? "" : " " + params), expect, launch);
    add_ratios(ctx, row);
    return row;
  }

 private:
  Row& measure(Context& ctx, const std::string& params, Expect expect, const Launch& launch) {
    // Computed only for the variant that needs it: a third matrix-sized host array.
    if (expect == Expect::kTileMove64 && tile_moved_.empty())
      tile_moved_ = tile_move_reference(host_in_, shape_.rows, shape_.cols, 64);
    const std::vector<float>& expected = expect == Expect::kCopy        ? host_in_
                                         : expect == Expect::kTranspose ? transposed_
                                                                        : tile_moved_;
    return ctx.measure(
        params, shape_.elements(), shape_.bytes_moved(),
        [&](cudaStream_t s) { launch(in_.data(), out_.data(), shape_.rows, shape_.cols, s); },
        [&] {
          out_.download(got_.data(), got_.size());
          return compare_exact(got_.data(), expected.data(), got_.size());
        },
        [&](cudaStream_t s) { out_.poison(s); });
  }

  void add_ratios(Context& ctx, Row& row) {
    if (!row.verified) return;
    const CopyCeiling& ceiling = ctx.copy_ceiling(shape_.matrix_bytes());
    row.set("vs_copy_row", row.gb_per_s / copy_row_gb_per_s_);
    row.set("vs_memcpy", row.gb_per_s / ceiling.memcpy_gb_per_s);
  }

  Shape shape_;
  DeviceBuffer<float> in_, out_;
  std::vector<float> host_in_, transposed_, got_, tile_moved_;
  bool copy_row_measured_ = false;
  double copy_row_gb_per_s_ = kNaN;
};

// The run's Bench, made on first use (shape checked, matrices allocated and filled, reference computed) and
// measured against the copy ceiling at the same matrix size (once per run: later calls return it).
inline Bench& bench(Context& ctx) {
  Bench& b = ctx.state<Bench>(ctx);
  ctx.copy_ceiling(b.shape().matrix_bytes());
  return b;
}

}  // namespace
}  // namespace cml::transpose
