// Host tests of the Stockham transforms (gpu/fft/stockham.cuh): the code the kernels run, executed
// serially on the host and checked against a direct DFT in double. They run without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <algorithm>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "common/fft_size.hpp"
#include "gpu/fft/stockham.cuh"

namespace {

using fftconv::fbfft::ForwardArgs;
using fftconv::fbfft::InverseArgs;
using fftconv::fbfft::Layout;
namespace sh = fftconv::fbfft::stockham;
using cd = std::complex<double>;

cd root(int64_t num, int n, double sign) {  // exp(sign 2 pi i num / n), num reduced exactly
  const double pi = 3.14159265358979323846, t = 2.0 * pi * static_cast<double>(num % n) / n;
  return {std::cos(t), sign * std::sin(t)};
}

// The forward contract of fbfft.hpp in double: X[kh][kw] of one plane, kw <= n_w/2.
std::vector<cd> forward_direct(const ForwardArgs& a, int64_t plane) {
  const int nw2 = a.n_w / 2 + 1;
  std::vector<cd> rows(static_cast<std::size_t>(a.n_h) * nw2), out(rows.size());
  for (int y = 0; y < a.n_h; ++y)
    for (int kw = 0; kw < nw2; ++kw) {
      cd s = 0;
      for (int x = 0; x < a.n_w; ++x) {
        const int64_t yy = y - a.off_h, xx = x - a.off_w;
        if (yy < 0 || yy >= a.in_h || xx < 0 || xx >= a.in_w) continue;
        s += double(a.input[plane * a.in_plane_stride + yy * a.in_ld + xx]) * root(int64_t(kw) * x, a.n_w, -1);
      }
      rows[std::size_t(y) * nw2 + kw] = s;
    }
  for (int kh = 0; kh < a.n_h; ++kh)
    for (int kw = 0; kw < nw2; ++kw) {
      cd s = 0;
      for (int y = 0; y < a.n_h; ++y) s += rows[std::size_t(y) * nw2 + kw] * root(int64_t(kh) * y, a.n_h, -1);
      out[std::size_t(kh) * nw2 + kw] = s;
    }
  return out;
}

// The inverse contract in double: scale Re(sum c_kw X[kh][kw] exp(+...)) at every point of the plane.
std::vector<double> inverse_direct(const InverseArgs& a, int64_t plane) {
  const int nw2 = a.n_w / 2 + 1;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  std::vector<cd> cols(static_cast<std::size_t>(a.n_h) * nw2);
  for (int y = 0; y < a.n_h; ++y)
    for (int kw = 0; kw < nw2; ++kw) {
      cd s = 0;
      for (int kh = 0; kh < a.n_h; ++kh) {
        const float2 z = a.input[fftconv::fbfft::freq_offset(a.layout, plane, kh, kw, a.n_h, nw2, ldb)];
        s += cd(z.x, z.y) * root(int64_t(kh) * y, a.n_h, 1);
      }
      cols[std::size_t(y) * nw2 + kw] = s;
    }
  std::vector<double> out(static_cast<std::size_t>(a.n_h) * a.n_w);
  for (int y = 0; y < a.n_h; ++y)
    for (int x = 0; x < a.n_w; ++x) {
      double s = 0;
      for (int kw = 0; kw < nw2; ++kw)
        s += (kw == 0 || 2 * kw == a.n_w ? 1.0 : 2.0) *
             (cols[std::size_t(y) * nw2 + kw] * root(int64_t(kw) * x, a.n_w, 1)).real();
      out[std::size_t(y) * a.n_w + x] = s * a.scale;
    }
  return out;
}

// The block code on the host: `batch` planes in groups of `planes`, as the kernel's blocks take them.
template <class Args, class Planes>
void run_blocks(const Args& a, int planes, Planes&& run_planes) {
  const sh::Geometry g(a.n_h, a.n_w, planes);
  std::vector<float2> smem(static_cast<std::size_t>(g.smem_elems()));
  const sh::Buffers b(g, smem.data());
  sh::fill_tables(g, b);
  for (int64_t first = 0; first < a.batch; first += planes)
    run_planes(a, g, b, first, static_cast<int>(std::min<int64_t>(planes, a.batch - first)));
}
void run_forward(const ForwardArgs& a, int planes) { run_blocks(a, planes, sh::forward_planes); }
void run_inverse(const InverseArgs& a, int planes) { run_blocks(a, planes, sh::inverse_planes); }

// Relative L2 error of the forward (placed input window) and the inverse (clipped window), over
// `batch` planes in blocks of `planes`, in layout l.
struct Errors {
  double forward = 0, inverse = 0;
};
Errors check(int n_h, int n_w, Layout l, int batch, int planes, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const int nw2 = n_w / 2 + 1;
  const int64_t ldb = l == Layout::freq_major ? batch + 3 : 0;
  const int64_t spectra = (l == Layout::freq_major ? ldb : batch) * int64_t(n_h) * nw2;
  Errors e;
  {  // forward: a window smaller than the transform, placed at an offset (implicit zero padding)
    ForwardArgs a;
    a.batch = batch;
    a.n_h = n_h;
    a.n_w = n_w;
    a.in_h = n_h > 1 ? n_h - n_h / 3 : 1;
    a.in_w = n_w - n_w / 4;
    a.off_h = n_h > 1 ? n_h / 5 : 0;
    a.off_w = n_w / 6;
    a.in_ld = a.in_w + 2;
    a.in_plane_stride = a.in_h * a.in_ld + 1;
    std::vector<float> in(static_cast<std::size_t>(batch * a.in_plane_stride));
    for (float& v : in) v = u(rng);
    std::vector<float2> out(static_cast<std::size_t>(spectra), make_float2(0.f, 0.f));
    a.input = in.data();
    a.output = out.data();
    a.layout = l;
    a.ld_batch = ldb;
    run_forward(a, planes);
    double num = 0, den = 0;
    for (int64_t b = 0; b < batch; ++b) {
      const std::vector<cd> want = forward_direct(a, b);
      for (int kh = 0; kh < n_h; ++kh)
        for (int kw = 0; kw < nw2; ++kw) {
          const float2 got = out[std::size_t(fftconv::fbfft::freq_offset(l, b, kh, kw, n_h, nw2, ldb ? ldb : batch))];
          num += std::norm(cd(got.x, got.y) - want[std::size_t(kh) * nw2 + kw]);
          den += std::norm(want[std::size_t(kh) * nw2 + kw]);
        }
    }
    e.forward = std::sqrt(num / den);
  }
  {  // inverse: arbitrary (not Hermitian) spectra, a clipped output window
    InverseArgs a;
    a.batch = batch;
    a.n_h = n_h;
    a.n_w = n_w;
    std::vector<float2> in(static_cast<std::size_t>(spectra));
    for (float2& v : in) v = make_float2(u(rng), u(rng));
    a.input = in.data();
    a.layout = l;
    a.ld_batch = ldb;
    a.out_h = n_h > 1 ? n_h - n_h / 4 : 1;
    a.out_w = n_w - n_w / 3;
    a.out_off_h = n_h > 1 ? n_h / 4 : 0;
    a.out_off_w = n_w / 3;
    a.out_ld = a.out_w + 1;
    a.out_plane_stride = a.out_h * a.out_ld + 3;
    a.scale = 1.f / float(n_h * n_w);
    std::vector<float> out(static_cast<std::size_t>(batch * a.out_plane_stride), 0.f);
    a.output = out.data();
    run_inverse(a, planes);
    double num = 0, den = 0;
    for (int64_t b = 0; b < batch; ++b) {
      const std::vector<double> want = inverse_direct(a, b);
      for (int64_t oy = 0; oy < a.out_h; ++oy)
        for (int64_t ox = 0; ox < a.out_w; ++ox) {
          const double w = want[std::size_t((oy + a.out_off_h) * n_w + ox + a.out_off_w)];
          const double d = out[std::size_t(b * a.out_plane_stride + oy * a.out_ld + ox)] - w;
          num += d * d;
          den += w * w;
        }
    }
    e.inverse = std::sqrt(num / den);
  }
  return e;
}

// The fp32 transform tolerance model of the GPU tests (fbfft_test.cu): 4 * 2^-24 * log2(n_h n_w).
double tolerance(int n_h, int n_w) { return 4.0 * std::ldexp(1.0, -24) * std::max(1.0, std::log2(double(n_h) * n_w)); }

}  // namespace

TEST_CASE("stockham radices: 4s, a 2, then 3s, 5s and 7s; none for sizes with a larger prime") {
  const sh::Radices r = sh::radices(840);  // 4 * 2 * 3 * 5 * 7
  REQUIRE(r.count == 5);
  CHECK((r.r[0] == 4 && r.r[1] == 2 && r.r[2] == 3 && r.r[3] == 5 && r.r[4] == 7));
  CHECK(sh::radices(256).count == 4);
  CHECK(sh::radices(11).count == 0);
  CHECK(sh::radices(2 * 13).count == 0);
  CHECK(sh::supported(1, 243));
  CHECK(sh::supported(45, 126));
  CHECK_FALSE(sh::supported(1, 288));
  CHECK_FALSE(sh::supported(11, 12));
  CHECK_FALSE(sh::supported(1, 1));
  CHECK_FALSE(sh::supported(256, 2));
}

TEST_CASE("stockham transforms on the host: every 7-smooth 1-D size to 256 against a direct DFT") {
  std::mt19937 rng(7);
  double worst = 0;
  for (int n = 2; n <= sh::kMaxSide1d; ++n) {
    if (!fftconv::is_smooth7(n)) continue;
    for (Layout l : {Layout::standard, Layout::freq_major}) {
      for (auto [batch, planes] : {std::pair{5, 4}, std::pair{3, 1}}) {
        INFO("n=" << n << " layout " << int(l) << " batch " << batch << " planes/block " << planes);
        const Errors e = check(1, n, l, batch, planes, rng);
        CHECK(e.forward <= tolerance(1, n));
        CHECK(e.inverse <= tolerance(1, n));
        worst = std::max({worst, e.forward / tolerance(1, n), e.inverse / tolerance(1, n)});
      }
    }
  }
  MESSAGE("largest rel_l2 / tolerance: " << worst);
}

TEST_CASE("stockham transforms on the host: odd, rectangular and large 2-D sizes, every layout") {
  std::mt19937 rng(11);
  double worst = 0;
  const std::pair<int, int> sizes[] = {{2, 3},   {3, 2},   {5, 7},    {9, 15},   {12, 20},  {27, 45},
                                       {42, 54}, {63, 49}, {70, 90},  {98, 126}, {128, 120}, {125, 16},
                                       {7, 128}, {81, 35}, {126, 126}, {2, 2}};
  for (auto [n_h, n_w] : sizes)
    for (Layout l : {Layout::standard, Layout::transposed, Layout::freq_major}) {
      const int planes = sh::Geometry(n_h, n_w, 1).smem_elems() * 8 > 16384 ? 1 : 4;
      INFO(n_h << "x" << n_w << " layout " << int(l) << " planes/block " << planes);
      const Errors e = check(n_h, n_w, l, 5, planes, rng);
      CHECK(e.forward <= tolerance(n_h, n_w));
      CHECK(e.inverse <= tolerance(n_h, n_w));
      worst = std::max({worst, e.forward / tolerance(n_h, n_w), e.inverse / tolerance(n_h, n_w)});
    }
  MESSAGE("largest rel_l2 / tolerance: " << worst);
}

TEST_CASE("stockham planes per block: within the shared-memory target, at least one") {
  CHECK(sh::planes_per_block(128, 128) == 1);  // both buffers of one 128 x 128 plane: 133 KB
  const int q = sh::planes_per_block(1, 96);
  CHECK(q > 1);
  CHECK(sh::Geometry(1, 96, q).smem_elems() * 8 <= sh::kSmemTarget);
  CHECK(sh::Geometry(1, 96, 2 * q).smem_elems() * 8 > sh::kSmemTarget);
}

TEST_CASE("stockham fast division: quotient and remainder of every index the kernels divide") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> big(0, std::numeric_limits<int>::max());
  int wrong = 0;
  for (int d = 1; d <= 20000; d += d < 300 ? 1 : 97) {
    const sh::FastDiv f(d);
    for (int k = 0; k < 2000; ++k) {
      const int x = k < 1000 ? k : big(rng);
      int q, r;
      f.divmod(x, q, r);
      wrong += q != x / d || r != x % d;
    }
  }
  CHECK(wrong == 0);
}
