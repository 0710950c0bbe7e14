// pitched_memory: what does cudaMallocPitch's padding buy a 2-D kernel?
//
// A pitched row starts on the 32-byte sector grid, so a warp's 128 bytes touch 4 sectors; an unpadded row
// of odd width mostly starts off it, and the same warp touches 5. For a streaming kernel the fifth sector
// is one a neighbouring warp needs anyway and finds in cache, so DRAM traffic hardly grows: padding matters
// where the L1/L2 request rate, not DRAM, is the limit. The demo also shows the pitch chosen for several
// widths and cudaMalloc3D's slice pitch.
//
// Run: build/bin/pitched_memory [--size 64M] [--width 4099] [--csv pitched.csv]
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/ch01_resources.hpp"
#include "01_memory_model/kernels/pitched.cuh"
#include "common/access_model.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

constexpr unsigned kVolumeWidth = 255, kVolumeHeight = 129;  // odd on purpose; depth follows from --size

std::vector<float> small_integers(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7919u) % 1024u);
  return v;
}

int device_attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

void pitch_table(Context& ctx) {
  const auto align = static_cast<std::size_t>(device_attribute(cudaDevAttrTexturePitchAlignment, ctx.device().ordinal));
  for (const std::size_t width : {1, 31, 32, 100, 127, 128, 129, 1000, 1024, 4099, 8191}) {
    const PitchedBuffer<float> buf(width, 2);
    const std::size_t row = width * sizeof(float);
    const std::string params = fmt::format("width={}", width);
    bool ok = ctx.check(compare_value(buf.pitch() >= row, true, "pitch >= row bytes"), params);
    ok = ctx.check(compare_value(buf.pitch() % align, std::size_t{0}, "pitch % texture pitch alignment"), params) && ok;
    ctx.add_row(params, width, ok)
        .set("row_bytes", static_cast<double>(row))
        .set("pitch_bytes", static_cast<double>(buf.pitch()))
        .set("padding_bytes", static_cast<double>(buf.pitch() - row))
        .set("tex_pitch_alignment", static_cast<double>(align));
  }
}

// ---- 2-D: pitched vs unpadded ----------------------------------------------------------------------

struct ImageShape {
  std::uint64_t width = 0, height = 0;
};

// --width and --size as an image: the rows must be countable and the padded rows must fit in memory.
ImageShape image_shape(const Context& ctx) {
  const std::uint64_t width = ctx.extra_size("width");
  if (width > (1u << 24)) throw CliError("--width must be at most 16M elements");
  const std::uint64_t height = std::max<std::uint64_t>(1, ctx.size() / width);
  if (height >= (std::uint64_t{1} << 31)) throw CliError("--size / --width gives too many rows");
  // Narrow rows are padded to a full pitch each: check the real footprint (two pitched arrays, rows
  // rounded up to 512 B, a safe bound on the pitch alignment) against the free memory.
  const double need = 2.0 * static_cast<double>(ceil_div<std::uint64_t>(width * sizeof(float), 512) * 512) *
                      static_cast<double>(height);
  require_free_device_memory(need, fmt::format("--size {} with --width {}: the padded rows", ctx.size(), width));
  return {width, height};
}

// The run's image, made by its first 2-D variant at the shape --size and --width give.
struct Image {
  unsigned width = 0, height = 0;
  std::vector<float> host, expected;
  double pitched_ms = 0.0;  // the pitched_2d row, for the vs_pitched column

  explicit Image(const ImageShape& shape)
      : width(static_cast<unsigned>(shape.width)),
        height(static_cast<unsigned>(shape.height)),
        host(small_integers(shape.width * shape.height)),
        expected(vertical_sum_reference(host, shape.width, shape.height)) {}
  explicit Image(const Context& ctx) : Image(image_shape(ctx)) {}
};

// Sectors per warp request for a warp reading 32 consecutive elements of one row, averaged over the
// warps of the first 64 rows (the row starts cycle through their alignments long before that).
cml::model::GlobalAccess row_access(unsigned width, unsigned height, std::size_t pitch) {
  const std::uint64_t per_row = ceil_div<std::uint64_t>(width, 32);
  const std::uint64_t rows = std::min<std::uint64_t>(height, 64);
  return cml::model::global_pattern(rows * per_row, 4, [&](std::uint64_t w, unsigned lane) -> std::optional<std::uint64_t> {
    const std::uint64_t x = (w % per_row) * 32 + lane;
    if (x >= width) return std::nullopt;
    return (w / per_row) * pitch + x * sizeof(float);
  });
}

void run_2d(Context& ctx, bool pitched) {
  Image& img = ctx.state<Image>(ctx);
  const std::size_t n = std::size_t{img.width} * img.height;
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(float);
  const std::string params = fmt::format("{}x{}", img.width, img.height);
  std::size_t pitch = 0;
  Row* row = nullptr;
  if (pitched) {
    PitchedBuffer<float> in(img.width, img.height), out(img.width, img.height);
    in.upload(img.host.data(), ctx.stream());  // cudaMemcpy2D: packed host rows -> pitched rows
    pitch = in.pitch();
    std::vector<float> got(n);
    row = &ctx.measure(
        params, n, bytes,
        [&](cudaStream_t s) { launch_vertical_sum_2d(in.data(), in.pitch(), out.data(), out.pitch(), img.width, img.height, s); },
        [&] {
          out.download(got.data(), ctx.stream());  // cudaMemcpy2D back, dropping the padding
          return compare_exact(got, img.expected);
        },
        [&](cudaStream_t s) { out.poison(s); });
  } else {
    DeviceBuffer<float> in(n), out(n);
    in.upload(img.host);
    pitch = std::size_t{img.width} * sizeof(float);
    row = &ctx.measure(
        params, n, bytes,
        [&](cudaStream_t s) { launch_vertical_sum_2d(in.data(), pitch, out.data(), pitch, img.width, img.height, s); },
        [&] { return compare_exact(out.download(), img.expected); }, [&](cudaStream_t s) { out.poison(s); });
  }
  const cml::model::GlobalAccess model = row_access(img.width, img.height, pitch);
  row->set("width", img.width)
      .set("height", img.height)
      .set("pitch_bytes", static_cast<double>(pitch))
      .set("model_ld_sectors_per_req", model.sectors_per_request())
      .set("model_efficiency", model.efficiency());
  if (!row->verified) return;
  if (pitched) img.pitched_ms = row->median_ms;
  else if (img.pitched_ms > 0.0) row->set("vs_pitched", row->median_ms / img.pitched_ms);
}

// ---- 3-D --------------------------------------------------------------------------------------------

void malloc3d(Context& ctx) {
  const std::uint64_t depth64 = std::max<std::uint64_t>(1, ctx.size() / (kVolumeWidth * kVolumeHeight));
  if (depth64 >= (1u << 24)) throw CliError("--size gives too deep a volume");
  const auto depth = static_cast<unsigned>(depth64);
  const std::size_t n = std::size_t{kVolumeWidth} * kVolumeHeight * depth;
  const std::vector<float> host = small_integers(n);
  const std::vector<float> expected = scale_3d_reference(host, kVolumeWidth, kVolumeHeight, depth);
  Pitched3DBuffer<float> in(kVolumeWidth, kVolumeHeight, depth), out(kVolumeWidth, kVolumeHeight, depth);
  in.upload(host.data());  // cudaMemcpy3D
  std::vector<float> got(n);
  Row& row = ctx.measure(
      fmt::format("{}x{}x{}", kVolumeWidth, kVolumeHeight, depth), n, 2.0 * static_cast<double>(n) * sizeof(float),
      [&](cudaStream_t s) { launch_scale_3d(in.ptr(), out.ptr(), kVolumeWidth, kVolumeHeight, depth, s); },
      [&] {
        out.download(got.data());  // cudaMemcpy3D
        return compare_exact(got, expected);
      },
      [&](cudaStream_t s) { out.poison(s); });
  row.set("width", kVolumeWidth)
      .set("height", kVolumeHeight)
      .set("depth", depth)
      .set("pitch_bytes", static_cast<double>(in.pitch()))
      .set("slice_pitch_bytes", static_cast<double>(in.slice_pitch()));
}

Demo make_demo() {
  Demo d;
  d.name = "pitched_memory";
  d.summary =
      "cudaMallocPitch + cudaMemcpy2D and cudaMalloc3D + cudaMemcpy3D with kernels that index rows through\n"
      "the pitch; the pitch chosen for several widths; a 2-D kernel on a pitched vs an unpadded odd-width\n"
      "array.";
  d.size_meaning = "floats per array (width x height; default 8x L2 bytes / 4)";
  d.variants = {
      {"pitch_table", "the pitch cudaMallocPitch picks for several row widths", pitch_table},
      {"pitched_2d", "vertical 3-point sum over a cudaMallocPitch array", [](Context& c) { run_2d(c, true); }},
      {"unpadded_2d", "the same kernel over the same array packed without padding",
       [](Context& c) { run_2d(c, false); }},
      {"malloc3d", "cudaMalloc3D + cudaMemcpy3D volume, 2 x + z per element", malloc3d},
  };
  d.claims = {
      Claim{"pitches_aligned",
            "Every pitch cudaMallocPitch picks holds the row and is a multiple of the texture pitch alignment.",
            "rows of pitch_table with pitch_bytes < row_bytes or pitch_bytes % tex_pitch_alignment != 0",
            Bound::at_most(0), "the documented contract of cudaMallocPitch; any violation is a defect",
            ClaimKind::device,
            [](const RunRows& r) {
              double bad = 0;
              for (const Row* row : r.rows("pitch_table")) {
                const double pitch = RunRows::value(*row, "pitch_bytes");
                const double align = RunRows::value(*row, "tex_pitch_alignment");
                if (!(pitch >= RunRows::value(*row, "row_bytes")) || !(align > 0) || std::fmod(pitch, align) != 0)
                  bad += 1;
              }
              return bad;
            }},
      only_ratio_claim("padding_matters_little",
                       "For this streaming kernel, the unpadded array is never faster than the pitched one "
                       "and at most modestly slower.",
                       "unpadded_2d", "pitched_2d", "median_ms", Bound::between(0.97, 1.15),
                       "the fifth sector of a misaligned warp is mostly one its neighbour also reads, served "
                       "from cache, so DRAM traffic barely grows; 3% below allows for noise, 15% above "
                       "bounds what the extra requests may cost"),
      only_ratio_claim("volume_streams_like_2d",
                       "Indexing a cudaMalloc3D volume by slice pitch and row pitch streams at close to the "
                       "speed of the 2-D pitched kernel.",
                       "malloc3d", "pitched_2d", "gb_per_s", Bound::at_least(0.85),
                       "both kernels read and write each element once; the volume's short (1 KiB) rows and "
                       "its pitch arithmetic may cost a little, not more than 15%"),
  };
  d.extras = {ExtraOption::size("width", "row width in floats for the 2-D variants (odd by default)", 4099)};
  d.check_options = [](Context& ctx) { (void)image_shape(ctx); };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  // Two pitched arrays (padding: at most a few percent at the default width).
  d.device_bytes = [](std::uint64_t n) { return 2.2 * static_cast<double>(n) * sizeof(float); };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
