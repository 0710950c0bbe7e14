// Matrix transposes that use global memory only: the copy bounds, the two naive transposes, their
// unrolled and diagonally ordered versions. 03_shared_memory/kernels/transpose_shared.cuh builds on the
// tile machinery here.
//
// Convention (see transpose_reference.hpp): `in` is rows x cols, row-major; `out` is cols x rows:
//   out[c * rows + r] = in[r * cols + c].
// Every kernel handles any shape (1 x N, N x 1, non-multiples of the block): each element is guarded.
//
// The grid is one-dimensional: block b works on tile tile_of(b), where a tile is the blockDim.x x
// blockDim.y patch of "thread space" the block covers. A 1-D grid has room for 2^31 - 1 blocks
// (gridDim.y stops at 65535, which would cap the rows), and it makes the block ORDER an explicit, swappable
// function — which is all the diagonal transposes change.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "02_global_memory/kernels/transpose_reference.hpp"
#include "common/access_model.hpp"
#include "common/cuda_check.hpp"
#include "common/harness.hpp"
#include "common/resources.hpp"

namespace cml::ch02 {

enum class BlockOrder {
  kRowMajor,     // consecutive blocks walk along a row of tiles
  kDiagonal,     // consecutive blocks walk down a (wrapped) diagonal of tiles
  kGrouped,      // consecutive blocks walk down a column of a band of kGroupBand tile rows
  kColumnMajor,  // consecutive blocks walk down a column of tiles
};

// Tile rows per band in the grouped order. The blocks resident at one time then cover a roughly square
// patch of the matrix instead of one long strip of tile rows: in row-major order a full GPU of blocks reads
// a few input rows end to end but writes short pieces of thousands of output rows at once; grouped, both
// sides touch a few hundred rows each. Whether that compromise helps is for the GPU's memory to say, and the
// demos measure it beside row-major and column-major order (chapter 03 discusses what they show).
inline constexpr unsigned kGroupBand = 16;

enum class LoadPath {
  kDefault,  // ordinary loads: cached in L1 and L2
  kL2Only,   // __ldcg: cached in L2 only, so no warp can reuse a sector another warp brought into L1
};

struct TileIndex {
  unsigned x = 0, y = 0;
};

// The tile block `block` works on, in a grid of tiles_x x tiles_y tiles.
// Diagonal order, defined for any grid: block b takes tile row y = b % tiles_y and tile column
// x = (b / tiles_y + y) % tiles_x, so consecutive blocks step one tile down and one to the right. Every tile
// is taken exactly once: b <-> (b / tiles_y, y) is one-to-one, and for each y, q -> (q + y) % tiles_x is a
// cyclic shift. On a square grid of T x T tiles, with b = by * T + bx, this is the blog posts' mapping
// (x = (bx + by) % T, y = bx), which they could only use for square grids.
// Grouped order: bands of `band` tile rows (the last band may be shorter), taken top to bottom; inside a
// band, blocks go down one column of tiles, then the next column. Every tile is taken exactly once.
// Column-major order: block b takes tile row b % tiles_y of tile column b / tiles_y. In a transpose, the
// blocks running at one time then write whole stretches of a few output rows (consecutive tiles of a
// column land side by side in the output) and read short pieces of many input rows: the opposite trade
// to row-major order.
template <BlockOrder kOrder>
__host__ __device__ inline TileIndex tile_of(unsigned block, unsigned tiles_x, unsigned tiles_y,
                                             unsigned band = kGroupBand) {
  if constexpr (kOrder == BlockOrder::kRowMajor) {
    (void)tiles_y, (void)band;
    return {block % tiles_x, block / tiles_x};
  } else if constexpr (kOrder == BlockOrder::kGrouped) {
    const unsigned per_band = band * tiles_x;
    const unsigned first_row = block / per_band * band;
    const unsigned height = tiles_y - first_row < band ? tiles_y - first_row : band;
    const unsigned within = block - first_row * tiles_x;
    return {within / height, first_row + within % height};
  } else if constexpr (kOrder == BlockOrder::kColumnMajor) {
    (void)band;
    return {block / tiles_y, block % tiles_y};
  } else {
    (void)band;
    const unsigned y = block % tiles_y;
    return {(block / tiles_y + y) % tiles_x, y};
  }
}

namespace {

// The tile grid of a launch: how many tiles along x (the fast, thread-x direction) and along y.
struct TileGrid {
  unsigned tiles_x = 0, tiles_y = 0;
  __host__ __device__ unsigned blocks() const { return tiles_x * tiles_y; }
};

// This thread's coordinates in thread space: x follows threadIdx.x (the coalescing direction), y
// follows threadIdx.y. `x_per_thread` > 1 widens a tile along x for the unrolled kernels.
template <BlockOrder kOrder>
__device__ __forceinline__ void thread_xy(TileGrid g, unsigned x_per_thread, std::size_t& x, std::size_t& y) {
  const TileIndex t = tile_of<kOrder>(blockIdx.x, g.tiles_x, g.tiles_y);
  x = static_cast<std::size_t>(t.x) * blockDim.x * x_per_thread + threadIdx.x;
  y = static_cast<std::size_t>(t.y) * blockDim.y + threadIdx.y;
}

template <LoadPath kPath>
__device__ __forceinline__ float load(const float* p) {
  if constexpr (kPath == LoadPath::kL2Only) return __ldcg(p);
  else return *p;
}

// ---- Bounds: the same bytes as a transpose, without transposing ---------------------------------

// Upper bound: consecutive threads read and write consecutive addresses of a row.
__global__ void copy_row_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                std::size_t cols, TileGrid g) {
  std::size_t c, r;
  thread_xy<BlockOrder::kRowMajor>(g, 1, c, r);
  if (r < rows && c < cols) out[r * cols + c] = in[r * cols + c];
}

// Lower bound: consecutive threads walk down a column, so both the read and the write are strided.
__global__ void copy_col_kernel(const float* __restrict__ in, float* __restrict__ out, std::size_t rows,
                                std::size_t cols, TileGrid g) {
  std::size_t r, c;
  thread_xy<BlockOrder::kRowMajor>(g, 1, r, c);
  if (r < rows && c < cols) out[r * cols + c] = in[r * cols + c];
}

// ---- Naive transposes -------------------------------------------------------------------------

// Read a row (coalesced), write a column of the output (strided by `rows`).
template <BlockOrder kOrder>
__global__ void transpose_naive_row_kernel(const float* __restrict__ in, float* __restrict__ out,
                                           std::size_t rows, std::size_t cols, TileGrid g) {
  std::size_t c, r;
  thread_xy<kOrder>(g, 1, c, r);
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

// [doc:transpose_naive_col_kernel]
// Read a column (strided by `cols`), write a row of the output (coalesced).
template <BlockOrder kOrder, LoadPath kPath = LoadPath::kDefault>
__global__ void transpose_naive_col_kernel(const float* __restrict__ in, float* __restrict__ out,
                                           std::size_t rows, std::size_t cols, TileGrid g) {
  std::size_t r, c;
  thread_xy<kOrder>(g, 1, r, c);
  if (r < rows && c < cols) out[c * rows + r] = load<kPath>(&in[r * cols + c]);
}
// [/doc:transpose_naive_col_kernel]

// ---- Unrolled naive transposes: four elements per thread, blockDim.x apart ------------------------
// The grid has a quarter of the blocks along x (the blog posts' version that forgot to shrink the grid wrote
// every element four times). All four loads are issued before the first store, so each thread has four
// requests in flight; each element has its own guard, so no tail is dropped.

inline constexpr unsigned kUnroll = 4;

template <BlockOrder kOrder>
__global__ void transpose_unroll4_row_kernel(const float* __restrict__ in, float* __restrict__ out,
                                             std::size_t rows, std::size_t cols, TileGrid g) {
  std::size_t c0, r;
  thread_xy<kOrder>(g, kUnroll, c0, r);
  float v[kUnroll];
#pragma unroll
  for (unsigned k = 0; k < kUnroll; ++k) {
    const std::size_t c = c0 + k * blockDim.x;
    if (r < rows && c < cols) v[k] = in[r * cols + c];
  }
#pragma unroll
  for (unsigned k = 0; k < kUnroll; ++k) {
    const std::size_t c = c0 + k * blockDim.x;
    if (r < rows && c < cols) out[c * rows + r] = v[k];
  }
}

template <BlockOrder kOrder>
__global__ void transpose_unroll4_col_kernel(const float* __restrict__ in, float* __restrict__ out,
                                             std::size_t rows, std::size_t cols, TileGrid g) {
  std::size_t r0, c;
  thread_xy<kOrder>(g, kUnroll, r0, c);
  float v[kUnroll];
#pragma unroll
  for (unsigned k = 0; k < kUnroll; ++k) {
    const std::size_t r = r0 + k * blockDim.x;
    if (r < rows && c < cols) v[k] = in[r * cols + c];
  }
#pragma unroll
  for (unsigned k = 0; k < kUnroll; ++k) {
    const std::size_t r = r0 + k * blockDim.x;
    if (r < rows && c < cols) out[c * rows + r] = v[k];
  }
}

// ---- Launchers ------------------------------------------------------------------------------------

inline const dim3 kDefaultBlock{32, 8};

// The tiles covering an x_extent x y_extent space with tile_x x tile_y tiles. Throws std::invalid_argument
// past the 2^31 - 1 block limit of a 1-D grid.
inline TileGrid tile_grid(std::size_t x_extent, std::size_t y_extent, std::size_t tile_x, std::size_t tile_y) {
  const std::size_t tx = ceil_div(x_extent, tile_x), ty = ceil_div(y_extent, tile_y);
  if (tx == 0 || ty == 0 || ty > 0x7fffffffu / tx)
    throw std::invalid_argument("transpose: " + std::to_string(x_extent) + " x " + std::to_string(y_extent) +
                                " needs no blocks or more than the 1-D grid limit of 2^31 - 1");
  return {static_cast<unsigned>(tx), static_cast<unsigned>(ty)};
}

// The tile grid of the kernels above: one tile per block, x_per_thread elements per thread along x.
inline TileGrid make_tile_grid(std::size_t x_extent, std::size_t y_extent, dim3 block, unsigned x_per_thread = 1) {
  if (block.x == 0 || block.y == 0 || block.z != 1 || block.x * block.y > 1024)
    throw std::invalid_argument("transpose: a block must be x * y threads, at most 1024");
  return tile_grid(x_extent, y_extent, std::size_t{block.x} * x_per_thread, block.y);
}

template <class Kernel>
void launch_tiles(Kernel kernel, const float* in, float* out, std::size_t rows, std::size_t cols, TileGrid g,
                  dim3 block, cudaStream_t s) {
  kernel<<<g.blocks(), block, 0, s>>>(in, out, rows, cols, g);
  CUDA_CHECK_LAUNCH();
}

// Every launcher: in is rows x cols, out has rows * cols elements; an empty matrix launches nothing.

inline void launch_copy_row(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                            dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(copy_row_kernel, in, out, rows, cols, make_tile_grid(cols, rows, block), block, s);
}

inline void launch_copy_col(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                            dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(copy_col_kernel, in, out, rows, cols, make_tile_grid(rows, cols, block), block, s);
}

template <BlockOrder kOrder = BlockOrder::kRowMajor>
void launch_transpose_naive_row(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                                dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(transpose_naive_row_kernel<kOrder>, in, out, rows, cols, make_tile_grid(cols, rows, block), block,
               s);
}

template <BlockOrder kOrder = BlockOrder::kRowMajor, LoadPath kPath = LoadPath::kDefault>
void launch_transpose_naive_col(const float* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t s,
                                dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(transpose_naive_col_kernel<kOrder, kPath>, in, out, rows, cols, make_tile_grid(rows, cols, block),
               block, s);
}

inline void launch_transpose_unroll4_row(const float* in, float* out, std::size_t rows, std::size_t cols,
                                         cudaStream_t s, dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(transpose_unroll4_row_kernel<BlockOrder::kRowMajor>, in, out, rows, cols,
               make_tile_grid(cols, rows, block, kUnroll), block, s);
}

inline void launch_transpose_unroll4_col(const float* in, float* out, std::size_t rows, std::size_t cols,
                                         cudaStream_t s, dim3 block = kDefaultBlock) {
  if (rows == 0 || cols == 0) return;
  launch_tiles(transpose_unroll4_col_kernel<BlockOrder::kRowMajor>, in, out, rows, cols,
               make_tile_grid(rows, cols, block, kUnroll), block, s);
}

inline void launch_transpose_diagonal_row(const float* in, float* out, std::size_t rows, std::size_t cols,
                                          cudaStream_t s, dim3 block = kDefaultBlock) {
  launch_transpose_naive_row<BlockOrder::kDiagonal>(in, out, rows, cols, s, block);
}

inline void launch_transpose_diagonal_col(const float* in, float* out, std::size_t rows, std::size_t cols,
                                          cudaStream_t s, dim3 block = kDefaultBlock) {
  launch_transpose_naive_col<BlockOrder::kDiagonal>(in, out, rows, cols, s, block);
}

inline void launch_transpose_naive_col_l2only(const float* in, float* out, std::size_t rows, std::size_t cols,
                                              cudaStream_t s, dim3 block = kDefaultBlock) {
  launch_transpose_naive_col<BlockOrder::kRowMajor, LoadPath::kL2Only>(in, out, rows, cols, s, block);
}

}  // namespace
}  // namespace cml::ch02

// ---- Host side shared by the two transpose demos (02 transpose_global, 03 transpose_shared) ----------

namespace cml::transpose {
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
  return {{"rows", "matrix rows M (rectangles: M x N)", "the --size value", true},
          {"cols", "matrix columns N (rectangles: M x N)", "the --size value", true}};
}

inline constexpr const char* kSizeMeaning =
    "N for an N x N fp32 matrix (--rows/--cols for M x N); the size column counts elements";

// Bytes of device memory a demo run needs for an N x N matrix: input, output and the two buffers of the
// in-run copy ceiling (the L2 flush buffer is already allocated when this is checked). In double
// throughout: --size 500G asks for 4.6e24 bytes, far past any integer type.
inline double device_bytes_square(std::uint64_t n) {
  const double side = static_cast<double>(n);
  return 4.0 * side * side * sizeof(float);
}

// The largest --size (N) whose four N x N matrices fit in this GPU's memory: a Demo::max_size, so a
// larger side is refused before anything is allocated, with this limit and kMaxSideReason.
inline std::uint64_t max_side_square(const DeviceInfo& dev) {
  const double per_element = 4.0 * sizeof(float);
  auto fits = [&](std::uint64_t n) { return device_bytes_square(n) <= static_cast<double>(dev.total_memory); };
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

// What a kernel must produce: the input, its transpose, or (03_shared_memory's tile_move_64x8) the
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

// The global-only kernels of chapter 02 with a bx x by block, one element per thread: thread (x, y) moves
// element (r0 + y, c0 + x) of a by x bx tile when lanes walk the input's rows (copy_row, naive_row), element
// (r0 + x, c0 + y) of a bx x by tile when they walk its columns (naive_col). `transposed`: the element is
// written to out[c * rows + r], else (the copy) to the same place as it was read.
inline LaunchAccesses element_launch(const Shape& s, unsigned bx, unsigned by, bool lanes_along_rows,
                                     bool transposed) {
  const std::size_t tile_rows = lanes_along_rows ? by : bx, tile_cols = lanes_along_rows ? bx : by;
  return launch_accesses(s, tile_rows, tile_cols, [&](std::size_t r0, std::size_t c0) {
    const auto rc = [&](unsigned t) {
      const std::size_t x = t % bx, y = t / bx;
      return lanes_along_rows ? std::pair{r0 + y, c0 + x} : std::pair{r0 + x, c0 + y};
    };
    LaunchAccesses a;
    a.ld = block_global(bx * by, sizeof(float), [&](unsigned t) -> std::optional<std::uint64_t> {
      const auto [r, c] = rc(t);
      if (r >= s.rows || c >= s.cols) return std::nullopt;
      return (r * s.cols + c) * sizeof(float);
    });
    a.st = block_global(bx * by, sizeof(float), [&](unsigned t) -> std::optional<std::uint64_t> {
      const auto [r, c] = rc(t);
      if (r >= s.rows || c >= s.cols) return std::nullopt;
      return (transposed ? c * s.rows + r : r * s.cols + c) * sizeof(float);
    });
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

  const Shape& shape() const { return shape_; }

  // The copy_row row (the upper bound every vs_copy_row divides by); measured once per run.
  double copy_row(Context& ctx) {
    if (copy_row_measured_) return copy_row_gb_per_s_;
    copy_row_measured_ = true;
    const std::string caller = ctx.variant();
    ctx.set_variant("copy_row");
    const dim3 b = ch02::kDefaultBlock;
    Row& row = measure(ctx, fmt::format("{} block={}x{}", shape_.label(), b.x, b.y), Expect::kCopy,
                       [](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t s) {
                         ch02::launch_copy_row(in, out, r, c, s);
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

// The process's Bench, created on first use (shape checked, matrices allocated and filled, reference
// computed) and measured against the copy ceiling at the same matrix size.
inline Bench& bench(Context& ctx) {
  static std::unique_ptr<Bench> b;
  if (!b) {
    const Shape s = demo_shape(ctx);
    b = std::make_unique<Bench>(s);
    ctx.copy_ceiling(s.matrix_bytes());
  }
  return *b;
}

}  // namespace
}  // namespace cml::transpose
