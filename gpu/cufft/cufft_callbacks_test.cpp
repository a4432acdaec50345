// Host tests of the cufft callbacks' index maps (gpu/cufft/cufft_callbacks.hpp), which run in CI without a
// GPU: the multiply-shift division against `/`, the padding load against embed_planes' definition
// (padded_source), the clipping store against the crop, and the frequency-major gather.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "common/padding.hpp"
#include "gpu/cufft/cufft_callbacks.hpp"

using namespace fftconv;

TEST_CASE("FastDiv divides every 32-bit numerator exactly") {
  std::mt19937 rng(std::random_device{}());
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (uint32_t d : {12288u * 130u, 65535u, 65536u, 65537u, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu,
                     0xffffffffu})
    divisors.push_back(d);
  for (int i = 0; i < 2000; ++i) divisors.push_back(std::uniform_int_distribution<uint32_t>(1, 0xffffffffu)(rng));
  std::uniform_int_distribution<uint32_t> any(0, 0xffffffffu);
  int64_t checked = 0, wrong = 0;
  for (uint32_t d : divisors) {
    const FastDiv f = FastDiv::make(d);
    auto check = [&](uint32_t n) {
      ++checked;
      if (f.div(n) != n / d) ++wrong;
    };
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 0xffffffffu, 0xfffffffeu}) check(n);
    for (uint32_t k : {2u, 3u, 7u, 1000u}) {  // multiples and their neighbours, where rounding bites
      const uint64_t m = uint64_t(d) * k;
      if (m <= 0xffffffffull) check(uint32_t(m)), check(uint32_t(m - 1));
    }
    for (int i = 0; i < 64; ++i) check(any(rng));
  }
  INFO(checked, " quotients checked");
  CHECK(wrong == 0);
}

namespace {
// Random geometry of one R2C plan: planes of h×w padded by (ph, pw) into an nh×nw basis.
struct Geometry {
  int64_t planes, h, w, ph, pw, nh, nw, ld;
  Padding mode;
};
Geometry random_geometry(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Geometry g;
  g.mode = pick(0, 1) ? Padding::mirror : Padding::zero;
  g.planes = pick(1, 3), g.h = pick(1, 19), g.w = pick(1, 19);
  g.ph = g.mode == Padding::mirror ? pick(0, std::min<int64_t>(4, g.h - 1)) : pick(0, 4);
  g.pw = g.mode == Padding::mirror ? pick(0, std::min<int64_t>(4, g.w - 1)) : pick(0, 4);
  g.nh = g.h + 2 * g.ph + pick(0, 5), g.nw = g.w + 2 * g.pw + pick(0, 5);
  g.ld = 2 * (g.nw / 2 + 1);
  return g;
}
cufft_cb::Params params_of(const Geometry& g) {
  cufft_cb::Params p;
  p.h = int32_t(g.h), p.w = int32_t(g.w), p.ph = int32_t(g.ph), p.pw = int32_t(g.pw);
  p.mirror = g.mode == Padding::mirror;
  p.plane = FastDiv::make(uint32_t(g.nh * g.ld)), p.row = FastDiv::make(uint32_t(g.ld));
  return p;
}
}  // namespace

TEST_CASE("the padding load callback reads what embed_planes writes, zero and mirror") {
  std::mt19937 rng(std::random_device{}());
  for (int t = 0; t < 300; ++t) {
    const Geometry g = random_geometry(rng);
    const cufft_cb::Params p = params_of(g);
    INFO("planes=", g.planes, " h=", g.h, " w=", g.w, " ph=", g.ph, " pw=", g.pw, " basis=", g.nh, "x", g.nw,
         " mirror=", p.mirror);
    int64_t wrong = 0;
    for (int64_t q = 0; q < g.planes; ++q)
      for (int64_t y = 0; y < g.nh; ++y)
        for (int64_t x = 0; x < g.nw; ++x) {  // cuFFT loads columns < nw only
          const bool in_pad = y < g.h + 2 * g.ph && x < g.w + 2 * g.pw;
          const int64_t sy = in_pad ? padded_source(y, g.h, g.ph, g.mode) : -1;
          const int64_t sx = in_pad ? padded_source(x, g.w, g.pw, g.mode) : -1;
          const int64_t want = sy >= 0 && sx >= 0 ? (q * g.h + sy) * g.w + sx : -1;
          const auto o = uint32_t((q * g.nh + y) * g.ld + x);
          if (cufft_cb::load_source(p, o) != want) ++wrong;
        }
    CHECK(wrong == 0);
  }
}

TEST_CASE("the clipping store callback keeps exactly the crop window, and the gather finds [freq][plane]") {
  std::mt19937 rng(std::random_device{}());
  for (int t = 0; t < 300; ++t) {
    const Geometry g = random_geometry(rng);
    cufft_cb::Params p = params_of(g);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    p.off_h = int32_t(pick(0, g.nh - 1)), p.off_w = int32_t(pick(0, g.nw - 1));
    p.out_h = int32_t(pick(1, g.nh - p.off_h)), p.out_w = int32_t(pick(1, g.nw - p.off_w));
    std::vector<int> hits(size_t(g.planes * p.out_h * p.out_w), 0);
    int64_t wrong = 0;
    for (int64_t q = 0; q < g.planes; ++q)
      for (int64_t y = 0; y < g.nh; ++y)
        for (int64_t x = 0; x < g.nw; ++x) {
          const int64_t r = y - p.off_h, c = x - p.off_w;
          const bool kept = r >= 0 && r < p.out_h && c >= 0 && c < p.out_w;
          const int64_t got = cufft_cb::clip_target(p, uint32_t((q * g.nh + y) * g.ld + x));
          if (got != (kept ? (q * p.out_h + r) * p.out_w + c : -1)) ++wrong;
          if (got >= 0) ++hits[size_t(got)];
        }
    CHECK(wrong == 0);
    for (int h : hits) CHECK(h == 1);  // every result element written once

    const int64_t freqs = g.nh * (g.nw / 2 + 1);
    p.planes = uint32_t(g.planes), p.freq = FastDiv::make(uint32_t(freqs));
    for (int64_t q = 0; q < g.planes; ++q)
      for (int64_t k = 0; k < freqs; ++k)
        if (cufft_cb::freq_major(p, uint32_t(q * freqs + k)) != k * g.planes + q) ++wrong;
    CHECK(wrong == 0);
  }
}

TEST_CASE("the channel product callback finds each plane's kernel spectrum") {
  std::mt19937 rng(std::random_device{}());
  for (int t = 0; t < 200; ++t) {
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t channels = pick(1, 40), images = pick(1, 5), freqs = pick(1, 700);
    cufft_cb::Params p;
    p.freq = FastDiv::make(uint32_t(freqs)), p.channels = FastDiv::make(uint32_t(channels));
    INFO("channels=", channels, " images=", images, " freqs=", freqs);
    int64_t wrong = 0;
    for (int64_t s = 0; s < images; ++s)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t k = 0; k < freqs; ++k)
          if (cufft_cb::channel_spectrum(p, uint32_t((s * channels + c) * freqs + k)) != c * freqs + k) ++wrong;
    CHECK(wrong == 0);
  }
  // the largest offsets a plan may hand over (2^32 - 1)
  cufft_cb::Params p;
  p.freq = FastDiv::make(8281u), p.channels = FastDiv::make(1024u);
  const uint32_t o = UINT32_MAX;
  CHECK(cufft_cb::channel_spectrum(p, o) == int64_t((o / 8281u) % 1024u) * 8281 + o % 8281u);
}
