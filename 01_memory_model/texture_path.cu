// texture_path: does reading a 2-D neighbourhood through textures beat ordinary loads?
//
// A 3x3 box sum reads each pixel nine times. Ordinary loads of neighbouring pixels coalesce and are served
// by L1 at its line rate; texture fetches go through texture units that deliver a fixed number of texels
// per clock, so nine fetches per output can make the texel rate the limit. What textures give here is
// border handling for free (the sampler clamps) and, elsewhere, filtering: not bandwidth. Point sampling
// of small integers makes every path exact, so all three compare bit for bit.
//
// Run: build/bin/texture_path [--size 64M] [--width 8191] [--csv texture.csv]
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "01_memory_model/ch01_resources.hpp"
#include "01_memory_model/kernels/box_filter.cuh"
#include "common/access_model.hpp"
#include "common/harness.hpp"

namespace {

using namespace cml;
using namespace cml::ch01;

int device_attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

struct ImageShape {
  std::uint64_t width = 0, height = 0;
};

// --width and --size as an image within the tightest of this GPU's limits for textures over pitched
// memory and over 2-D arrays.
ImageShape image_shape(const Context& ctx) {
  const int dev = ctx.device().ordinal;
  const std::uint64_t max_w = std::min(device_attribute(cudaDevAttrMaxTexture2DLinearWidth, dev),
                                       device_attribute(cudaDevAttrMaxTexture2DWidth, dev));
  const std::uint64_t max_h = std::min(device_attribute(cudaDevAttrMaxTexture2DLinearHeight, dev),
                                       device_attribute(cudaDevAttrMaxTexture2DHeight, dev));
  const std::uint64_t width = ctx.extra_size("width");
  const std::uint64_t height = std::max<std::uint64_t>(1, ctx.size() / width);
  if (width > max_w || height > max_h)
    throw CliError(fmt::format("a {} x {} image exceeds this GPU's 2-D texture limit of {} x {} (adjust --size or "
                               "--width)",
                               width, height, max_w, max_h));
  return {width, height};
}

// The run's image, made by its first variant at the shape --size and --width give.
struct Image {
  int width = 0, height = 0;
  std::vector<float> host, expected;
  PitchedBuffer<float> in, out;
  double global_ms = 0.0;  // the global_pitched row, for the vs_global column

  explicit Image(const Context& ctx) {
    const auto [w, h] = image_shape(ctx);
    width = static_cast<int>(w);
    height = static_cast<int>(h);
    host.resize(w * h);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i * 7919u) % 16u);
    expected = box3x3_reference(host, w, h);
    in = PitchedBuffer<float>(w, h);
    out = PitchedBuffer<float>(w, h);
    in.upload(host.data(), ctx.stream());
  }
};

// The global variant's loads: per output row, one warp request for each horizontal shift dx = -1, 0, 1
// (the rows above and below repeat the same pattern), over the warps of one pitched row.
cml::model::GlobalAccess box_access(int width) {
  const std::uint64_t per_row = ceil_div<std::uint64_t>(static_cast<std::uint64_t>(width), 32);
  cml::model::GlobalAccess total;
  for (int dx = -1; dx <= 1; ++dx)
    total += cml::model::global_pattern(per_row, 4, [&](std::uint64_t w, unsigned lane) -> std::optional<std::uint64_t> {
      const long long x = static_cast<long long>(w * 32 + lane);
      if (x >= width) return std::nullopt;
      return static_cast<std::uint64_t>(std::clamp<long long>(x + dx, 0, width - 1)) * sizeof(float);
    });
  return total;
}

void run(Context& ctx, const std::function<void(Image&, cudaStream_t)>& launch) {
  Image& img = ctx.state<Image>(ctx);
  const std::size_t n = static_cast<std::size_t>(img.width) * img.height;
  std::vector<float> got(n);
  Row& row = ctx.measure(
      fmt::format("{}x{}", img.width, img.height), n, 2.0 * static_cast<double>(n) * sizeof(float),
      [&](cudaStream_t s) { launch(img, s); },
      [&] {
        img.out.download(got.data(), ctx.stream());
        return compare_exact(got, img.expected);
      },
      [&](cudaStream_t s) { img.out.poison(s); });
  row.set("width", img.width).set("height", img.height);
  if (ctx.variant() == "global_pitched") {
    const cml::model::GlobalAccess model = box_access(img.width);
    row.set("model_ld_sectors_per_req", model.sectors_per_request()).set("model_efficiency", model.efficiency());
  }
  if (!row.verified) return;
  if (ctx.variant() == "global_pitched") img.global_ms = row.median_ms;
  else if (img.global_ms > 0.0) row.set("vs_global", row.median_ms / img.global_ms);
}

void global_pitched(Context& ctx) {
  run(ctx, [](Image& img, cudaStream_t s) {
    launch_box3x3_global(img.in.data(), img.in.pitch(), img.out.data(), img.out.pitch(), img.width, img.height, s);
  });
}

void texture_pitched(Context& ctx) {
  Image& img = ctx.state<Image>(ctx);
  const TextureObject tex(img.in.data(), static_cast<std::size_t>(img.width), static_cast<std::size_t>(img.height),
                          img.in.pitch());
  run(ctx, [&](Image& im, cudaStream_t s) {
    launch_box3x3_texture(tex.get(), im.out.data(), im.out.pitch(), im.width, im.height, s);
  });
}

void texture_array(Context& ctx) {
  Image& img = ctx.state<Image>(ctx);
  CudaArray2D array(static_cast<std::size_t>(img.width), static_cast<std::size_t>(img.height));
  array.upload(img.host.data());
  const TextureObject tex(array.get());
  run(ctx, [&](Image& im, cudaStream_t s) {
    launch_box3x3_texture(tex.get(), im.out.data(), im.out.pitch(), im.width, im.height, s);
  });
}

Demo make_demo() {
  Demo d;
  d.name = "texture_path";
  d.summary =
      "A 3x3 clamp-to-edge box sum read through global loads, a texture object over pitched memory and a\n"
      "texture object over a CUDA array; all verified exactly against the CPU. The texture paths buy\n"
      "border handling, not bandwidth.";
  d.size_meaning = "floats in the image (width x height; default 8x L2 bytes / 4)";
  d.variants = {
      {"global_pitched", "ordinary loads from pitched memory, clamping in code", global_pitched},
      {"texture_pitched", "tex2D over the same pitched memory, hardware clamping", texture_pitched},
      {"texture_array", "tex2D over a CUDA array (block-linear layout)", texture_array},
  };
  d.claims = {
      all_verified_claim("sampler_clamps_like_code",
                         "The texture sampler's clamp-to-edge gives bit for bit the result of clamping in "
                         "code, over pitched memory and over a CUDA array alike.",
                         {"global_pitched", "texture_pitched", "texture_array"},
                         "point sampling returns texels exactly and the sums are small integers; any "
                         "difference is a defect"),
      only_ratio_claim("texture_pitched_no_faster",
                       "A texture object over the same pitched memory is no faster than plain loads for this "
                       "filter.",
                       "texture_pitched", "global_pitched", "median_ms", Bound::at_least(0.95),
                       "nine texel fetches per output go through the texture units at a fixed texel rate, "
                       "while plain loads are served from L1 at its line rate; 5% allows for noise where "
                       "both are DRAM-bound"),
      only_ratio_claim("texture_array_no_faster",
                       "A texture object over a CUDA array, with its 2-D block-linear layout, is no faster "
                       "than plain loads for this filter either.",
                       "texture_array", "global_pitched", "median_ms", Bound::at_least(0.95),
                       "the layout helps 2-D locality, not the texel rate; 5% allows for noise where both "
                       "are DRAM-bound"),
  };
  d.extras = {ExtraOption::size("width", "image width in floats (odd by default)", 8191)};
  d.check_options = [](Context& ctx) { (void)image_shape(ctx); };
  d.default_size = [](const DeviceInfo& dev) { return std::uint64_t{8} * dev.l2_bytes / sizeof(float); };
  d.quick_size = std::uint64_t{1} << 20;
  // Pitched input and output, and the CUDA array.
  d.device_bytes = [](std::uint64_t n) { return 3.1 * static_cast<double>(n) * sizeof(float); };
  return d;
}

}  // namespace

int main(int argc, char** argv) { return cml::run_demo(make_demo(), argc, argv); }
