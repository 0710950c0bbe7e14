// transpose_shared: does a shared-memory tile let a transpose move its bytes as fast as a copy?
// A tile makes both global sides coalesced and moves the column walk into shared memory, where banks set its
// cost (padding or a swizzle removes the conflicts); enough loads in flight per thread then bring it near
// cudaMemcpy. The faster variants study what is left: wider accesses, blocks per SM, tile order, an L2
// prefetch, cp.async and the TMA; tile_move_64x8 and tile_move_vec4_col_pf are not transposes but the same
// kernels writing each tile untransposed, to separate the cost of the work from that of the access pattern.
// Every output is compared bit-exactly with its CPU reference before it is timed; vs_memcpy divides by
// cudaMemcpy D2D of the same matrix in the same run.
//   build/bin/transpose_shared [--size N | --rows M --cols N]     (default 8192 x 8192)
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "03_shared_memory/kernels/tma_transpose.cuh"
#include "03_shared_memory/kernels/transpose_launch_model.hpp"
#include "03_shared_memory/kernels/transpose_shared.cuh"
#include "common/access_model.hpp"
#include "common/harness.hpp"
#include "common/transpose.hpp"

namespace {

using namespace cml;
using namespace cml::ch03;
using cml::transpose::Expect;

void set_shared_model(Row& row, const model::SharedAccess& st, const model::SharedAccess& ld) {
  row.set("model_smem_st_wf_per_req", st.wavefronts_per_request());
  row.set("model_smem_ld_wf_per_req", ld.wavefronts_per_request());
}

// Where a model column does not describe what Nsight Compute counts for the row, the reason, in the column
// scripts/profile_table.py reads (the model column's name + "_does_not_apply"): the table then shows the
// prediction as not applying instead of judging it.
void does_not_apply(Row& row, const std::string& model_column, const std::string& why) {
  row.set(model_column + "_does_not_apply", why);
}

// The model of a whole launch, edge tiles included (transpose_launch_model.hpp); a side with no request
// gets no prediction.
void set_launch_model(Row& row, const transpose::LaunchAccesses& a) {
  transpose::set_global_model(row, a.ld, a.st);
  if (a.smem_st.requests) row.set("model_smem_st_wf_per_req", a.smem_st.wavefronts_per_request());
  if (a.smem_ld.requests) row.set("model_smem_ld_wf_per_req", a.smem_ld.wavefronts_per_request());
}

// The 32 x 32 tiled kernels: both global sides are warps walking 32 floats of a row.
template <TileLayout kLayout, int kBlockRows>
void tiled(Context& ctx) {
  transpose::Bench& b = transpose::bench(ctx);
  const auto& s = b.shape();
  Row& row = b.run(ctx, fmt::format("tile=32x32 threads=32x{}", kBlockRows), Expect::kTranspose,
                   launch_transpose_tiled<kLayout, kBlockRows>);
  // Phase 1: warp y writes tile row y (lane = column); phase 2: warp y reads tile column y (lane = row).
  set_launch_model(row, two_phase_launch<kTile, kBlockRows>(s, tile_offset<kLayout>));
}

// How a row's params name the block order (row-major, the default, is not named).
constexpr const char* order_label(transpose::BlockOrder order) {
  return order == transpose::BlockOrder::kGrouped       ? " grouped-order"
         : order == transpose::BlockOrder::kColumnMajor ? " column-order"
                                                   : "";
}

// Which kernel a padded-tile variant runs: the plain padded tile, or the fast-path tile (unchecked interior
// tiles, 32-bit indexing) with evict-first hints or its tiles in another order.
enum class PaddedKind { kPlain, kFast, kFastEvictFirst, kFastGrouped, kFastColumn };

// Padded kSide x kSide tiles with kSide x kBlockRows threads (more loads in flight per thread).
template <int kSide, int kBlockRows, PaddedKind kKind = PaddedKind::kPlain>
void padded_tile(Context& ctx) {
  transpose::Bench& b = transpose::bench(ctx);
  const auto& s = b.shape();
  constexpr transpose::BlockOrder order = kKind == PaddedKind::kFastGrouped  ? transpose::BlockOrder::kGrouped
                                          : kKind == PaddedKind::kFastColumn ? transpose::BlockOrder::kColumnMajor
                                                                             : transpose::BlockOrder::kRowMajor;
  const transpose::Launch launch = [] {
    if constexpr (kKind == PaddedKind::kPlain)
      return transpose::Launch(launch_transpose_padded_tile<kSide, kBlockRows>);
    else if constexpr (kKind == PaddedKind::kFastEvictFirst)
      return transpose::Launch(launch_transpose_fast_tile<kSide, kBlockRows, true>);
    else return transpose::Launch(launch_transpose_fast_tile<kSide, kBlockRows, false, order>);
  }();
  const std::string kind = kKind == PaddedKind::kPlain            ? ""
                           : kKind == PaddedKind::kFastEvictFirst ? " fast-path evict-first"
                                                                  : std::string(" fast-path") + order_label(order);
  Row& row = b.run(ctx, fmt::format("tile={0}x{0} threads={0}x{1}{2}", kSide, kBlockRows, kind), Expect::kTranspose,
                   launch);
  // Warp w covers 32 consecutive x of one tile row y: it writes tile[y][x..] and reads tile[x..][y].
  set_launch_model(row, two_phase_launch<kSide, kBlockRows>(s, [](int r, int c) { return r * (kSide + 1) + c; }));
}

// The 64 x 64 kernels: the 16-byte path inside the matrix, the 4-byte path on edge tiles and wherever a side
// is no multiple of 4 (transpose_launch_model.hpp).
void wide_model(Row& row, const transpose::Shape& s, bool async = false, bool moved = false) {
  const transpose::LaunchAccesses a = wide_launch(s, async, moved);
  set_launch_model(row, a);
  // tile64_async on a matrix of whole tiles: its only shared stores are cp.async's.
  if (async && a.smem_st.requests == 0)
    does_not_apply(row, "model_smem_st_wf_per_req",
                   "cp.async (LDGSTS) writes every tile to shared memory, and ncu counts no shared store "
                   "instruction for it");
}

// The TMA transposes: kSide x kSide tiles in by tensor loads and out by tensor stores, 4 x 4 blocks
// transposed in registers by threads assigned with an XOR; persistent blocks.
template <int kSide, int kStages, int kOut, transpose::BlockOrder kOrder, tma::Schedule kSchedule = tma::Schedule::kTickets>
void tma_transpose(Context& ctx) {
  if (const std::string why = tma::tma_unsupported(ctx.device().cc_major, ctx.device().cc_minor); !why.empty())
    throw Waived(why);
  transpose::Bench& b = transpose::bench(ctx);
  const auto& s = b.shape();
  if (const std::string why = tma::transpose_tma_shape_unsupported(s.rows, s.cols); !why.empty()) throw Waived(why);
  Row& row = b.run(ctx,
                   fmt::format("tile={0}x{0} stages={1}+{2} tensor-map persistent {3}{4}", kSide, kStages, kOut,
                               kSchedule == tma::Schedule::kStatic ? "static-split" : "tickets", order_label(kOrder)),
                   Expect::kTranspose, [](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t st) {
                     tma::launch_transpose_tma<kSide, kStages, kOut, kOrder, kSchedule>(in, out, r, c, st);
                   });
  // The global side is the TMA's own (whole rows of each box); shared memory: the first pass of float4
  // reads of the input tile and float4 writes of the output tile (the other passes are alike).
  constexpr unsigned f4 = sizeof(float4);
  constexpr std::uint64_t kWarps = tma::kTmaThreads / model::kWarp;
  const auto word = [](int r, int c) { return std::uint64_t(tma::tile_word<kSide>(r, c)) * sizeof(float); };
  const auto block = [](std::uint64_t w, unsigned l) { return tma::block4_of<kSide>(int(w * model::kWarp + l)); };
  set_shared_model(row,
                   model::shared_pattern(
                       kWarps, f4,
                       [&](std::uint64_t w, unsigned l) {
                         const tma::Block4 k = block(w, l);
                         return std::optional<std::uint64_t>(word(4 * k.q, 4 * k.rb));
                       },
                       model::SharedOp::kStore),
                   model::shared_pattern(kWarps, f4, [&](std::uint64_t w, unsigned l) {
                     const tma::Block4 k = block(w, l);
                     return std::optional<std::uint64_t>(word(4 * k.rb, 4 * k.q));
                   }));
  // The kernel executes shared loads and stores besides the tiles' (cuobjdump -sass), and ncu averages over
  // all of them: 3.0 wavefronts per shared load and 3.6 per store against the tiles' 4, at 1000 x 1000 on the
  // H200. The model's per-tile numbers do not describe those averages.
  does_not_apply(row, "model_smem_ld_wf_per_req",
                 "every warp also loads the number of the tile its stage holds (tile_in: one LDS of 1 wavefront "
                 "per tile, and one more per block for the empty stage that ends its work), which the model, "
                 "counting the tile's LDS.128, leaves out");
  does_not_apply(row, "model_smem_st_wf_per_req",
                 "one thread also stores each stage's tile number (tile_in: one STS of 1 wavefront per tile, and "
                 "one per stage when the block starts), which the model, counting the tile's STS.128, leaves out");
}

// tiled_64x8's kernel with each tile moved untransposed to the transposed place.
void tile_move(Context& ctx) {
  transpose::Bench& b = transpose::bench(ctx);
  const auto& s = b.shape();
  if (const std::string why = tile_move_shape_unsupported(s.rows, s.cols); !why.empty()) throw Waived(why);
  Row& row = b.run(ctx, "tile=64x64 threads=64x8 moved-untransposed", Expect::kTileMove64, launch_tile_move);
  set_launch_model(row, two_phase_launch<kProbeSide, kProbeRows>(
                            s, [](int r, int c) { return r * (kProbeSide + 1) + c; }, true));
}

void wide(Context& ctx, const std::string& params, const transpose::Launch& launch, bool async = false,
          Expect expect = Expect::kTranspose) {
  transpose::Bench& b = transpose::bench(ctx);
  Row& row = b.run(ctx, params, expect, launch);
  wide_model(row, b.shape(), async, expect == Expect::kTileMove64);
}

// The float4 tile, at most kVec4BlocksPerSm blocks per SM, carveout fitted, each block prefetching into L2 a
// later block's tile, tiles in kOrder; kMoved: not a transpose, the same kernel moving each tile untransposed
// (its access pattern's own ceiling).
template <transpose::BlockOrder kOrder, TileDest kDest = TileDest::kTransposed>
void prefetched(Context& ctx) {
  if (const std::string why = l2_prefetch_unsupported(ctx.device().cc_major, ctx.device().cc_minor); !why.empty())
    throw Waived(why);
  wide(ctx,
       fmt::format("tile=64x64 threads=256 blocks/SM<={} carveout=fit{} L2-prefetch={}-ahead{}", kVec4BlocksPerSm,
                   order_label(kOrder), tile64_vec4_prefetch_ahead<kOrder, kDest>(),
                   kDest == TileDest::kMoved ? " moved-untransposed" : ""),
       launch_tile64_vec4_prefetched<kOrder, kDest>, false,
       kDest == TileDest::kMoved ? Expect::kTileMove64 : Expect::kTranspose);
}

// The float4 tile: all 8 blocks per SM or at most kVec4BlocksPerSm, fitted by kCarve, tiles in kOrder.
template <transpose::BlockOrder kOrder, bool kCapped, Carve kCarve>
void float4_tile(Context& ctx) {
  const std::string params = fmt::format("tile=64x64 threads=256{}{}{}",
                                         kCapped ? fmt::format(" blocks/SM<={}", kVec4BlocksPerSm) : "",
                                         kCarve == Carve::kFit ? " carveout=fit" : "", order_label(kOrder));
  wide(ctx, params,
       kCapped ? launch_transpose_tile64_vec4_capped<kOrder, kCarve> : launch_transpose_tile64_vec4<kOrder, kCarve>);
}

// The padded-tile variants with several elements per thread: the family that reaches the copy ceiling.
const std::vector<std::string> kTiledFamily = {"tiled_multi", "tiled_32x4", "tiled_32x2", "tiled_64x8", "tiled_64x4",
                                               "fast_32x4",   "fast_32x4_cs", "fast_64x8",  "fast_64x8_cs",
                                               "fast_64x8_grouped", "fast_64x8_col"};

// The best and the worst of the family, by a column; every member must have run (NotApplicable otherwise).
double best_tiled(const RunRows& r, const char* column) {
  std::vector<double> v;
  for (const auto& name : kTiledFamily) v.push_back(r.only_value(name, column));
  return max_of(v);
}
double worst_tiled(const RunRows& r, const char* column) {
  std::vector<double> v;
  for (const auto& name : kTiledFamily) v.push_back(r.only_value(name, column));
  return min_of(v);
}

// Whether a row's matrix lets the 64 x 64 float4 kernels take their 16-byte path: both sides multiples of
// 4 (the buffers are always 16-byte aligned).
bool float4_path(const Row& row) {
  const std::optional<transpose::Shape> s = transpose::shape_of(row);
  return s && s->rows % 4 == 0 && s->cols % 4 == 0;
}

Claim ratio_of_rows(std::string name, std::string text, std::string num, std::string den, Bound bound,
                    std::string why) {
  std::string measure = "GB/s " + num + " / GB/s " + den;
  return Claim{std::move(name), std::move(text), std::move(measure), bound, std::move(why), ClaimKind::device,
               [num, den](const RunRows& r) { return r.only_value(num, "gb_per_s") / r.only_value(den, "gb_per_s"); }};
}

Demo make_demo() {
  Demo d;
  d.name = "transpose_shared";
  d.summary =
      "Matrix transposes through a shared-memory tile (fp32, out = in^T): unpadded, padded and swizzled\n"
      "tiles, several elements per thread, float4 tiles and cp.async, against the naive global transpose\n"
      "and cudaMemcpy D2D of the same matrix measured in the same run.";
  d.variants = {
      {"copy_row", "reference: copy along rows, one float per thread (02_global_memory); cudaMemcpy is the ceiling",
       [](Context& ctx) { transpose::bench(ctx).copy_row(ctx); }},
      {"naive_row", "reference: the naive global transpose, rows read, columns written (02_global_memory)",
       [](Context& ctx) {
         transpose::Bench& b = transpose::bench(ctx);
         const auto& s = b.shape();
         const dim3 blk = transpose::kDefaultBlock;
         Row& row = b.run(ctx, fmt::format("block={}x{}", blk.x, blk.y), Expect::kTranspose,
                          [](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t st) {
                            transpose::launch_transpose_naive_row(in, out, r, c, st);
                          });
         const transpose::LaunchAccesses a = transpose::element_launch(s, blk.x, blk.y, true, true);
         transpose::set_global_model(row, a.ld, a.st);
       }},
      {"naive_col", "reference: the fastest naive global transpose of 02_global_memory, columns read, rows written, "
                    "blocks 32x8 and 8x32",
       [](Context& ctx) {
         transpose::Bench& b = transpose::bench(ctx);
         const auto& s = b.shape();
         // The tiles must beat the naive transpose a reader would tune, not the post's: 8x32 is the fastest
         // naive launch of chapter 02's block sweep on both reference GPUs.
         for (const dim3 blk : {transpose::kDefaultBlock, dim3(8, 32)}) {
           Row& row = b.run(ctx, fmt::format("block={}x{}", blk.x, blk.y), Expect::kTranspose,
                            [blk](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t st) {
                              transpose::launch_transpose_naive_col(in, out, r, c, st, blk);
                            });
           const transpose::LaunchAccesses a = transpose::element_launch(s, blk.x, blk.y, false, true);
           transpose::set_global_model(row, a.ld, a.st);
         }
       }},
      {"tiled_unpadded", "32x32 tile, 32x32 threads, no padding (32-way bank conflicts)",
       tiled<TileLayout::kUnpadded, kTile>},
      {"tiled_padded", "32x32 tile, 32x32 threads, +1 padding", tiled<TileLayout::kPadded, kTile>},
      {"tiled_swizzled", "32x32 tile, 32x32 threads, XOR swizzle (c ^ r) instead of padding",
       tiled<TileLayout::kSwizzled, kTile>},
      {"tiled_multi", "32x32 tile, 32x8 threads (4 elements each), +1 padding",
       tiled<TileLayout::kPadded, kMultiRows>},
      {"tiled_32x4", "32x32 tile, 32x4 threads (8 elements each), +1 padding", padded_tile<32, 4>},
      {"tiled_32x2", "32x32 tile, 32x2 threads (16 elements each), +1 padding", padded_tile<32, 2>},
      {"tiled_64x8", "64x64 tile, 64x8 threads (8 elements each), +1 padding", padded_tile<64, 8>},
      {"tiled_64x4", "64x64 tile, 64x4 threads (16 elements each), +1 padding", padded_tile<64, 4>},
      {"fast_32x4", "tiled_32x4 with unchecked interior tiles and 32-bit indexing",
       padded_tile<32, 4, PaddedKind::kFast>},
      {"fast_32x4_cs", "fast_32x4 with evict-first loads and stores (__ldcs/__stcs)",
       padded_tile<32, 4, PaddedKind::kFastEvictFirst>},
      {"fast_64x8", "tiled_64x8 with unchecked interior tiles and 32-bit indexing",
       padded_tile<64, 8, PaddedKind::kFast>},
      {"fast_64x8_cs", "fast_64x8 with evict-first loads and stores (__ldcs/__stcs)",
       padded_tile<64, 8, PaddedKind::kFastEvictFirst>},
      {"fast_64x8_grouped", "fast_64x8 with blocks in grouped order (bands of 16 tile rows)",
       padded_tile<64, 8, PaddedKind::kFastGrouped>},
      {"fast_64x8_col", "fast_64x8 with blocks in column-major order (down each column of tiles)",
       padded_tile<64, 8, PaddedKind::kFastColumn>},
      {"tile64_vec4", "64x64 tile, 256 threads, float4 loads/stores, chunk-swizzled tile",
       float4_tile<transpose::BlockOrder::kRowMajor, false, Carve::kMaxShared>},
      {"tile64_vec4_3pb", "tile64_vec4 with at most 3 blocks resident per SM (unused shared memory reserved)",
       float4_tile<transpose::BlockOrder::kRowMajor, true, Carve::kMaxShared>},
      {"tile64_vec4_l1", "tile64_vec4 with shared memory for its blocks only, the rest of the SM's memory L1",
       float4_tile<transpose::BlockOrder::kRowMajor, false, Carve::kFit>},
      {"tile64_vec4_3pb_l1", "tile64_vec4_3pb capped by the carveout: shared memory for 3 tiles, the rest L1",
       float4_tile<transpose::BlockOrder::kRowMajor, true, Carve::kFit>},
      {"tile64_vec4_col", "tile64_vec4 with blocks in column-major order",
       float4_tile<transpose::BlockOrder::kColumnMajor, false, Carve::kMaxShared>},
      {"tile64_vec4_3pb_col", "tile64_vec4_3pb_l1 with blocks in column-major order",
       float4_tile<transpose::BlockOrder::kColumnMajor, true, Carve::kFit>},
      {"tile64_vec4_3pb_col_pf",
       "tile64_vec4_3pb_col, each block prefetching into L2 (evict-last) a later block's tile (CC >= 8.0)",
       prefetched<transpose::BlockOrder::kColumnMajor>},
      {"tile_move_vec4_col_pf",
       "not a transpose: tile64_vec4_3pb_col_pf's kernel moving each tile untransposed to the transposed place, "
       "the same addresses in the same order: that access pattern's own ceiling",
       prefetched<transpose::BlockOrder::kColumnMajor, TileDest::kMoved>},
      {"tile64_async", "tile64_vec4 in persistent blocks, cp.async into two tile buffers (CC >= 8.0)",
       [](Context& ctx) {
         if (const std::string why = tile64_async_unsupported(ctx.device().cc_major, ctx.device().cc_minor);
             !why.empty())
           throw Waived(why);
         wide(
             ctx, "tile=64x64 threads=256 persistent",
             [](const float* in, float* out, std::size_t r, std::size_t c, cudaStream_t s) {
               launch_transpose_tile64_async(in, out, r, c, s);
             },
             true);
       }},
      {"tma_64x64", "TMA tensor loads and stores of 64x64 tiles, XOR-assigned 4x4 blocks in registers (CC >= 9.0)",
       tma_transpose<64, 4, 2, transpose::BlockOrder::kRowMajor>},
      {"tma_64x64_static", "tma_64x64 with the tiles split among the blocks in advance instead of taken by ticket",
       tma_transpose<64, 4, 2, transpose::BlockOrder::kRowMajor, tma::Schedule::kStatic>},
      {"tma_64x64_col", "tma_64x64 with the tickets handing out tiles in column-major order",
       tma_transpose<64, 4, 2, transpose::BlockOrder::kColumnMajor>},
      {"tma_128x128", "TMA transpose of 128x128 tiles: 512-byte pieces on both sides (CC >= 9.0)",
       tma_transpose<128, 2, 1, transpose::BlockOrder::kRowMajor>},
      {"tile_move_64x8",
       "not a transpose: tiled_64x8's kernel moving each tile untransposed to the transposed place (sides multiples "
       "of 64)",
       tile_move},
  };
  d.claims = {
      ratio_of_rows("padding_removes_bank_conflicts",
                    "One word of padding per tile row makes the 32 x 32 tiled transpose clearly faster than the "
                    "unpadded tile, whose column reads are 32-way bank conflicts.",
                    "tiled_padded", "tiled_unpadded", Bound::at_least(1.3),
                    "the unpadded tile needs 32 wavefronts per column read instead of 1; the global traffic is the "
                    "same, so part of that cost shows; 1.3 is well below what the conflicts cost"),
      ratio_of_rows("swizzle_matches_padding",
                    "An XOR-swizzled tile is as fast as a padded one: both spread a tile column over 32 banks.",
                    "tiled_swizzled", "tiled_padded", Bound::between(0.95, 1.05),
                    "same global accesses and 1 wavefront per shared request in both; 5% is the noise between "
                    "two identical-cost kernels"),
      ratio_of_rows("several_elements_per_thread",
                    "Four elements per thread (32 x 8 threads per 32 x 32 tile) are at least half again as fast as one.",
                    "tiled_multi", "tiled_padded", Bound::at_least(1.5),
                    "a 1024-thread block with one load per thread keeps few bytes in flight per SM between its "
                    "barriers; four loads per thread before the barrier hide far more DRAM latency"),
      Claim{"tiled_reaches_copy_ceiling",
            "A 64 x 64 padded tile with 8 elements per thread and unchecked interior tiles (fast_64x8) comes close "
            "to cudaMemcpy D2D of the same matrix.",
            "vs_memcpy of fast_64x8", Bound::at_least(0.85),
            "with the tile, both global sides are fully coalesced, so a transpose moves the bytes of a copy; "
            "15% covers the barrier between the two phases and run-to-run noise",
            ClaimKind::device, [](const RunRows& r) { return r.only_value("fast_64x8", "vs_memcpy"); }},
      Claim{"every_multi_element_tile_near_ceiling",
            "Every padded-tile transpose with several elements per thread reaches at least 0.75x cudaMemcpy D2D "
            "of the same matrix, whichever tile shape and thread count it uses.",
            "min vs_memcpy over tiled_multi, tiled_32x4/32x2/64x8/64x4, fast_32x4(_cs), fast_64x8(_cs/_grouped/_col)",
            Bound::at_least(0.75),
            "each of them keeps at least 4 loads in flight per thread with both global sides coalesced; what "
            "separates them (tile shape, integer work, cache hints, tile order) is worth a few tens of percent, "
            "not the several times that bank conflicts or a strided store cost",
            ClaimKind::device, [](const RunRows& r) { return worst_tiled(r, "vs_memcpy"); }},
      Claim{"tma_matches_threads",
            "A transpose whose tiles move by TMA tensor copies runs at the speed of the best tiled transpose whose "
            "threads move them: neither beats the other by more than 10%.",
            "GB/s tma_64x64 / max GB/s over the tiled family (as in every_multi_element_tile_near_ceiling)",
            Bound::between(0.9, 1.1),
            "both read and write whole 256-byte pieces of rows through a tile and both are limited by DRAM; the TMA "
            "saves the address arithmetic and registers of the loads and stores, which a memory-bound kernel has to "
            "spare",
            ClaimKind::device,
            [](const RunRows& r) { return r.only_value("tma_64x64", "gb_per_s") / best_tiled(r, "gb_per_s"); }},
      ratio_of_rows("tile_work_costs_nothing",
                    "Transposing inside the tile costs no time: tiled_64x8 runs within 3% of the same kernel moving "
                    "each tile untransposed to the same place (tile_move_64x8).",
                    "tiled_64x8", "tile_move_64x8", Bound::between(0.97, 1.03),
                    "the two kernels have the same loads, barrier and global addresses, and one shared-memory "
                    "wavefront per request each (padding); only which tile element a thread stores differs"),
      Claim{"float4_tile_keeps_up",
            "A 64 x 64 tile moved with 16-byte loads and stores (tile64_vec4) runs at least 0.97x as fast as the "
            "4-byte padded tile of the same size (tiled_64x8).",
            "GB/s tile64_vec4 / GB/s tiled_64x8", Bound::at_least(0.97),
            "both move whole 256-byte pieces of rows through a 64 x 64 tile and are limited by DRAM; the float4 "
            "tile needs a quarter of the load and store instructions, which a memory-bound kernel has to spare. "
            "Well below means its 16-byte accesses became 4-byte ones (Nsight Compute: store efficiency 25%)",
            ClaimKind::device,
            [](const RunRows& r) {
              if (!float4_path(r.only("tile64_vec4")))
                throw NotApplicable("the sides are not multiples of 4, so tile64_vec4 takes its 4-byte path");
              return r.only_value("tile64_vec4", "gb_per_s") / r.only_value("tiled_64x8", "gb_per_s");
            }},
      Claim{"tiled_beats_tuned_naive",
            "The tiled transpose (fast_64x8) runs at least 1.3x as fast as the fastest naive global transpose of "
            "the same run, columns read with a tuned block.",
            "GB/s fast_64x8 / max GB/s over the rows of naive_row and naive_col (blocks 32x8 and 8x32)",
            Bound::at_least(1.3),
            "a naive transpose strides one side whatever its block: the best of them reads columns, 8 sectors per "
            "request for 4 sectors of bytes, and leans on L1 and L2 to use the rest, while the tile makes every "
            "request on both sides whole sectors; the post's naive_row at 32x8 is 3x slower than its own tuned "
            "launch (chapter 02), so it is no baseline",
            ClaimKind::device,
            [](const RunRows& r) {
              std::vector<double> naive;
              for (const char* v : {"naive_row", "naive_col"})
                for (const Row* row : r.rows(v)) naive.push_back(RunRows::value(*row, "gb_per_s"));
              return r.only_value("fast_64x8", "gb_per_s") / max_of(naive);
            }},
      ratio_of_rows("best_transpose_at_its_pattern_ceiling",
                    "The fastest transpose (tile64_vec4_3pb_col_pf) runs within 2% of a copy that makes exactly its "
                    "accesses (tile_move_vec4_col_pf): whatever still separates it from cudaMemcpy belongs to its "
                    "access pattern, not to the work of transposing.",
                    "tile64_vec4_3pb_col_pf", "tile_move_vec4_col_pf", Bound::at_least(0.98),
                    "the two kernels issue the same loads, prefetches, barrier and 16-byte stores at the same "
                    "addresses in the same order; only which elements a store carries differs, and the 4 x 4 "
                    "register transpose costs a memory-bound kernel nothing it has to spare. 2% is the noise between "
                    "two runs of kernels of equal cost"),
  };
  transpose::set_demo_sizes(d);
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
