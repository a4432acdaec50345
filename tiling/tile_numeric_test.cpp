// Numerical proof of the tile geometry without an FFT: each tile's buffer is filled exactly as a
// backend would (read_valid at its offset, zeros elsewhere, padded_source for the border), the
// spectral product is replaced by the equivalent CIRCULAR correlation/convolution on the
// fft_h×fft_w buffer (so any wrap-around would show), and the keep window is assembled.
// Compared, in double, with an untiled direct computation.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "common/errors.hpp"
#include "common/padding.hpp"
#include "tiling/planner.hpp"

using namespace fftconv;

namespace {

using Vec = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Data {
  ConvProblem p;
  Vec x, w, g;  // input S×f×h×w, weight fo×f×kh×kw, gradOutput S×fo×out_h×out_w
};

Data random_data(const ConvProblem& p, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Data d{p, Vec(p.input_elems()), Vec(p.weight_elems()), Vec(p.output_elems())};
  for (Vec* v : {&d.x, &d.w, &d.g})
    for (double& e : *v) e = u(rng);
  return d;
}

double xpad(const Data& d, int64_t s, int64_t i, int64_t y, int64_t x) {
  const ConvProblem& p = d.p;
  const int64_t r = padded_source(y, p.h, p.ph, p.padding), c = padded_source(x, p.w, p.pw, p.padding);
  if (r < 0 || c < 0) return 0.0;
  return d.x[((s * p.f + i) * p.h + r) * p.w + c];
}
double wt(const Data& d, int64_t j, int64_t i, int64_t u, int64_t v) {
  return d.w[((j * d.p.f + i) * d.p.kh + u) * d.p.kw + v];
}
double gout(const Data& d, int64_t s, int64_t j, int64_t y, int64_t x) {
  const ConvProblem& p = d.p;
  if (y < 0 || x < 0 || y >= p.out_h() || x >= p.out_w()) return 0.0;
  return d.g[((s * p.fo + j) * p.out_h() + y) * p.out_w() + x];
}

// Untiled direct results of each pass.
Vec direct(const Data& d, Pass pass) {
  const ConvProblem& p = d.p;
  const int64_t oh = p.out_h(), ow = p.out_w(), hp = p.padded_h(), wp = p.padded_w();
  if (pass == Pass::fprop) {
    Vec y(p.output_elems(), 0.0);
    for (int64_t s = 0; s < p.S; ++s)
      for (int64_t j = 0; j < p.fo; ++j)
        for (int64_t a = 0; a < oh; ++a)
          for (int64_t b = 0; b < ow; ++b) {
            double acc = 0;
            for (int64_t i = 0; i < p.f; ++i)
              for (int64_t u = 0; u < p.kh; ++u)
                for (int64_t v = 0; v < p.kw; ++v) acc += xpad(d, s, i, a + u, b + v) * wt(d, j, i, u, v);
            y[((s * p.fo + j) * oh + a) * ow + b] = acc;
          }
    return y;
  }
  if (pass == Pass::bprop) {
    Vec gx(p.input_elems()), gpad(hp * wp);
    for (int64_t s = 0; s < p.S; ++s)
      for (int64_t i = 0; i < p.f; ++i) {
        for (int64_t a = 0; a < hp; ++a)
          for (int64_t b = 0; b < wp; ++b) {
            double acc = 0;
            for (int64_t j = 0; j < p.fo; ++j)
              for (int64_t u = 0; u < p.kh; ++u)
                for (int64_t v = 0; v < p.kw; ++v) acc += gout(d, s, j, a - u, b - v) * wt(d, j, i, u, v);
            gpad[a * wp + b] = acc;
          }
        fold_padded_plane(gpad.data(), wp, gx.data() + (s * p.f + i) * p.h * p.w, p);
      }
    return gx;
  }
  Vec gw(p.weight_elems(), 0.0);
  for (int64_t j = 0; j < p.fo; ++j)
    for (int64_t i = 0; i < p.f; ++i)
      for (int64_t u = 0; u < p.kh; ++u)
        for (int64_t v = 0; v < p.kw; ++v) {
          double acc = 0;
          for (int64_t s = 0; s < p.S; ++s)
            for (int64_t a = 0; a < oh; ++a)
              for (int64_t b = 0; b < ow; ++b) acc += xpad(d, s, i, a + u, b + v) * gout(d, s, j, a, b);
          gw[((j * p.f + i) * p.kh + u) * p.kw + v] = acc;
        }
  return gw;
}

// A tile's buffers and its kept result, as a backend sees them. For an untiled plan the single
// "tile" is the whole plane at offset 0 (the untiled formulas); with zero padding it ends with the
// data (rows and columns past h + ph are zeros, and bprop keeps none of them), so that the plan's
// basis may be the circular extent (Note [wrapped padding]), which execute() then wraps around.
struct TileView {
  Window window, read, read_valid, keep;
};

std::vector<TileView> tiles_of(const TilePlan& t) {
  std::vector<TileView> out;
  const ConvProblem& p = t.problem;
  if (!t.tiled) {
    const bool zero = p.padding == Padding::zero;
    const Window pad{0, 0, zero ? p.h + p.ph : p.padded_h(), zero ? p.w + p.pw : p.padded_w()};
    const Window o{0, 0, p.out_h(), p.out_w()};
    if (t.pass == Pass::fprop) out.push_back({o, pad, pad, o});
    else if (t.pass == Pass::bprop) out.push_back({pad, o, o, pad});
    else out.push_back({o, pad, pad, {0, 0, p.kh, p.kw}});
    return out;
  }
  for (int64_t k = 0; k < t.tile_count(); ++k) {
    Tile e = t.tile(k);
    out.push_back({e.window, e.read, e.read_valid, e.keep});
  }
  return out;
}

int64_t wrap(int64_t a, int64_t n) { return ((a % n) + n) % n; }

// Executes `t` tile by tile with circular time-domain products on fft_h×fft_w buffers.
Vec execute(const TilePlan& t, const Data& d) {
  const ConvProblem& p = t.problem;
  const int64_t Nh = t.fft_h, Nw = t.fft_w, oh = p.out_h(), ow = p.out_w();
  Vec res(p.result_elems(t.pass), kNaN);
  if (t.pass != Pass::fprop && !(t.pass == Pass::bprop && t.assembly == BpropAssembly::crop_store))
    std::fill(res.begin(), res.end(), 0.0);  // accumulated results
  const bool untiled_bprop = !t.tiled && t.pass == Pass::bprop;
  Vec buf(Nh * Nw), buf2(Nh * Nw), gpad;
  auto fill = [&](auto&& src, const TileView& tv, Vec& b) {
    std::fill(b.begin(), b.end(), 0.0);
    const int64_t dy = tv.read_valid.y0 - tv.read.y0, dx = tv.read_valid.x0 - tv.read.x0;
    REQUIRE(dy + tv.read_valid.h <= Nh);
    REQUIRE(dx + tv.read_valid.w <= Nw);
    for (int64_t a = 0; a < tv.read_valid.h; ++a)
      for (int64_t c = 0; c < tv.read_valid.w; ++c)
        b[(dy + a) * Nw + dx + c] = src(tv.read_valid.y0 + a, tv.read_valid.x0 + c);
  };
  for (const TileView& tv : tiles_of(t)) {
    REQUIRE(tv.keep.y0 + tv.keep.h <= Nh);
    REQUIRE(tv.keep.x0 + tv.keep.w <= Nw);
    for (int64_t s = 0; s < p.S; ++s) {
      if (t.pass == Pass::fprop) {
        for (int64_t j = 0; j < p.fo; ++j) {
          Vec r(Nh * Nw, 0.0);
          for (int64_t i = 0; i < p.f; ++i) {
            fill([&](int64_t y, int64_t x) { return xpad(d, s, i, y, x); }, tv, buf);
            for (int64_t a = 0; a < tv.keep.h; ++a)
              for (int64_t b = 0; b < tv.keep.w; ++b)
                for (int64_t u = 0; u < p.kh; ++u)
                  for (int64_t v = 0; v < p.kw; ++v)
                    r[a * Nw + b] += buf[wrap(tv.keep.y0 + a + u, Nh) * Nw + wrap(tv.keep.x0 + b + v, Nw)] *
                                     wt(d, j, i, u, v);
          }
          for (int64_t a = 0; a < tv.keep.h; ++a)
            for (int64_t b = 0; b < tv.keep.w; ++b)
              res[((s * p.fo + j) * oh + tv.window.y0 + a) * ow + tv.window.x0 + b] = r[a * Nw + b];
        }
      } else if (t.pass == Pass::bprop) {
        for (int64_t i = 0; i < p.f; ++i) {
          Vec r(Nh * Nw, 0.0);
          for (int64_t j = 0; j < p.fo; ++j) {
            fill([&](int64_t y, int64_t x) { return gout(d, s, j, y, x); }, tv, buf);
            for (int64_t a = 0; a < tv.keep.h; ++a)
              for (int64_t b = 0; b < tv.keep.w; ++b)
                for (int64_t u = 0; u < p.kh; ++u)
                  for (int64_t v = 0; v < p.kw; ++v)
                    r[a * Nw + b] += buf[wrap(tv.keep.y0 + a - u, Nh) * Nw + wrap(tv.keep.x0 + b - v, Nw)] *
                                     wt(d, j, i, u, v);
          }
          double* gx = res.data() + (s * p.f + i) * p.h * p.w;
          if (untiled_bprop) {  // untiled: assemble g_pad, then fold_padded_plane
            gpad.assign(p.padded_h() * p.padded_w(), 0.0);
            for (int64_t a = 0; a < tv.keep.h; ++a)
              for (int64_t b = 0; b < tv.keep.w; ++b) gpad[a * p.padded_w() + b] = r[a * Nw + b];
            fold_padded_plane(gpad.data(), p.padded_w(), gx, p);
            continue;
          }
          for (int64_t a = 0; a < tv.keep.h; ++a)
            for (int64_t b = 0; b < tv.keep.w; ++b) {
              const int64_t Y = tv.window.y0 + a, X = tv.window.x0 + b;
              if (t.assembly == BpropAssembly::crop_store) {
                gx[(Y - p.ph) * p.w + X - p.pw] = r[a * Nw + b];
              } else {
                const int64_t ry = padded_source(Y, p.h, p.ph, p.padding), rx = padded_source(X, p.w, p.pw, p.padding);
                gx[ry * p.w + rx] += r[a * Nw + b];
              }
            }
        }
      } else {
        for (int64_t j = 0; j < p.fo; ++j) {
          const Window gw{tv.window.y0, tv.window.x0, tv.window.h, tv.window.w};
          TileView gv{gw, gw, gw, gw};
          fill([&](int64_t y, int64_t x) { return gout(d, s, j, y, x); }, gv, buf2);
          for (int64_t i = 0; i < p.f; ++i) {
            fill([&](int64_t y, int64_t x) { return xpad(d, s, i, y, x); }, tv, buf);
            for (int64_t u = 0; u < p.kh; ++u)
              for (int64_t v = 0; v < p.kw; ++v) {
                double acc = 0;  // circular cross-correlation over the whole buffer
                for (int64_t a = 0; a < Nh; ++a)
                  for (int64_t b = 0; b < Nw; ++b)
                    acc += buf2[a * Nw + b] * buf[wrap(a + u, Nh) * Nw + wrap(b + v, Nw)];
                res[((j * p.f + i) * p.kh + u) * p.kw + v] += acc;
              }
          }
        }
      }
    }
  }
  return res;
}

// Max |a - b| / max|b|, or infinity when a has a NaN (an element never written).
double max_rel(const Vec& a, const Vec& b) {
  double m = 0, s = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (!std::isfinite(a[k])) return std::numeric_limits<double>::infinity();
    m = std::max(m, std::fabs(a[k] - b[k]));
    s = std::max(s, std::fabs(b[k]));
  }
  return m / std::max(s, 1e-300);
}

constexpr double kDoubleGeometryTol = 1e-12;  // same sums in another order, in double

void check_all(const ConvProblem& p, const std::vector<std::pair<int64_t, int64_t>>& tiles, std::mt19937& rng) {
  const Data d = random_data(p, rng);
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    const Vec ref = direct(d, pass);
    CAPTURE(p.to_string());
    CAPTURE(to_string(pass));
    TilingOptions o;
    const TilePlan untiled = choose_untiled(p, pass, o).plan;
    CHECK(max_rel(execute(untiled, d), ref) < kDoubleGeometryTol);
    for (auto [fh, fw] : tiles) {
      if (fh < p.kh || fw < p.kw) {
        CHECK_THROWS_AS(make_tiled_plan(p, pass, fh, fw, 1), Unsupported);
        continue;
      }
      for (AccgradReduction red : {AccgradReduction::frequency, AccgradReduction::time}) {
        const TilePlan t = make_tiled_plan(p, pass, fh, fw, 7, red);
        CAPTURE(t.summary());
        CHECK(max_rel(execute(t, d), ref) < kDoubleGeometryTol);
        if (pass != Pass::accgrad) break;
      }
    }
  }
}

}  // namespace

TEST_CASE("tiled execution equals untiled direct (geometry, double, no FFT)") {
  std::mt19937 rng(std::random_device{}());
  const std::vector<std::pair<int64_t, int64_t>> tiles = {{8, 8}, {16, 16}, {32, 32}, {64, 64},
                                                          {8, 16}, {16, 8}, {12, 20}, {9, 64}};
  for (Padding pad : {Padding::zero, Padding::mirror}) {
    // Small kernel on a larger input (many tiles, remainder tiles on both axes).
    check_all(ConvProblem::parse("S=2,f=2,fo=3,h=37,w=29,kh=5,kw=3,p=2,pad=" + std::string(to_string(pad))), tiles, rng);
    // Rectangular padding and kernel, tiles larger than the problem.
    check_all(ConvProblem::parse("S=1,f=2,fo=2,h=6,w=11,kh=2,kw=4,ph=1,pw=3,pad=" + std::string(to_string(pad))),
              tiles, rng);
    // A kernel that needs the largest tile (33 > 32), and 1x1 kernels.
    check_all(ConvProblem::parse("S=1,f=1,fo=2,h=70,w=40,kh=33,kw=33,ph=3,pw=0,pad=" + std::string(to_string(pad))),
              {{64, 64}, {32, 32}, {64, 40}}, rng);
    check_all(ConvProblem::parse("S=2,f=3,fo=2,h=19,w=10,k=1,p=1,pad=" + std::string(to_string(pad))), tiles, rng);
  }
}

TEST_CASE("random problems: tiled == direct for random tile bases") {
  std::mt19937 rng(std::random_device{}());
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 25; ++trial) {
    ConvProblem p;
    p.S = uni(1, 2); p.f = uni(1, 2); p.fo = uni(1, 2);
    p.h = uni(1, 30); p.w = uni(1, 30);
    p.padding = uni(0, 1) ? Padding::mirror : Padding::zero;
    p.ph = uni(0, p.padding == Padding::mirror ? p.h - 1 : 4);
    p.pw = uni(0, p.padding == Padding::mirror ? p.w - 1 : 4);
    p.kh = uni(1, std::min<int64_t>(p.padded_h(), 9));
    p.kw = uni(1, std::min<int64_t>(p.padded_w(), 9));
    const int64_t fh = uni(std::max<int64_t>(p.kh, 2), 24), fw = uni(std::max<int64_t>(p.kw, 2), 24);
    check_all(p, {{fh, fw}}, rng);
  }
}
