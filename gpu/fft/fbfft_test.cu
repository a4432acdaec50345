// Tests of the fbfft transforms against FFTW in double on the host (every size and layout, padding
// offsets on all four sides, odd planes, clipped inverse windows), against the direct-DFT twins,
// and FFTW's self-test properties (linearity, impulse response, time shift). Suite "gpu".
#include <doctest/doctest.h>
#include <fftw3.h>

#include <algorithm>
#include <iterator>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/runtime/test_device.hpp"

namespace {

using fftconv::DeviceBuffer;
using fftconv::download;
using fftconv::upload;
using fftconv::fbfft::ForwardArgs;
using fftconv::fbfft::InverseArgs;
using fftconv::fbfft::Kernel;
using fftconv::fbfft::Layout;
using fftconv::fbfft::Shape1d;
using cd = std::complex<double>;


std::mt19937_64& rng() {
  static std::mt19937_64 g{std::random_device{}()};
  return g;
}
int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }
std::vector<float> random_floats(size_t n) {
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng());
  return v;
}

// Tolerance model of one fp32 FFT: c * 2^-24 * log2(N) normwise (N = n_h * n_w, at least 2).
double fft_tolerance(int n_h, int n_w) {
  constexpr double kC = 4.0;
  return kC * std::ldexp(1.0, -24) * std::max(1.0, std::log2(double(n_h) * n_w));
}

double rel_l2(const std::vector<cd>& got, const std::vector<cd>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += std::norm(got[i] - ref[i]);
    den += std::norm(ref[i]);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

void poison(DeviceBuffer& d) {  // all-ones bytes: a NaN in every float
  FFTCONV_CUDA_CHECK(cudaMemset(d.get(), 0xff, d.bytes()));
}

// FFTW r2c of one padded n_h×n_w plane (double): n_h × (n_w/2+1) half spectrum, row-major. The plan
// of the last size is kept (tests transform up to hundreds of thousands of planes of one size).
std::vector<cd> fftw_r2c(const std::vector<double>& plane, int n_h, int n_w) {
  struct Plan {
    int n_h = 0, n_w = 0;
    double* in = nullptr;
    fftw_complex* out = nullptr;
    fftw_plan p = nullptr;
    void reset() {
      if (p) fftw_destroy_plan(p);
      fftw_free(in);
      fftw_free(out);
      n_h = n_w = 0;
      in = nullptr;
      out = nullptr;
      p = nullptr;
    }
    ~Plan() { reset(); }
  };
  static Plan plan;
  const int nw2 = n_w / 2 + 1;
  if (plan.n_h != n_h || plan.n_w != n_w) {
    plan.reset();
    plan.in = static_cast<double*>(fftw_malloc(sizeof(double) * size_t(n_h) * n_w));
    plan.out = static_cast<fftw_complex*>(fftw_malloc(sizeof(fftw_complex) * size_t(n_h) * nw2));
    plan.p = n_h == 1 ? fftw_plan_dft_r2c_1d(n_w, plan.in, plan.out, FFTW_ESTIMATE)
                      : fftw_plan_dft_r2c_2d(n_h, n_w, plan.in, plan.out, FFTW_ESTIMATE);
    plan.n_h = n_h;
    plan.n_w = n_w;
  }
  std::copy(plane.begin(), plane.end(), plan.in);
  fftw_execute(plan.p);
  std::vector<cd> out(size_t(n_h) * nw2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = cd(plan.out[i][0], plan.out[i][1]);
  return out;
}

struct Size2 {
  int n_h, n_w;
};
std::vector<Size2> all_sizes() {
  std::vector<Size2> s;
  for (int n = 2; n <= 256; n *= 2) s.push_back({1, n});
  for (int h = 2; h <= 64; h *= 2)
    for (int w = 2; w <= 64; w *= 2) s.push_back({h, w});
  s.push_back({128, 128});
  s.push_back({64, 128});  // four-step family only
  s.push_back({128, 64});
  for (int n : fftconv::fbfft::kSmoothSides2d) s.push_back({n, n});  // register family only
  return s;
}
const Layout kLayouts[] = {Layout::standard, Layout::transposed, Layout::freq_major};

size_t spectrum_elems(Layout l, int64_t batch, int n_h, int n_w, int64_t ld_batch) {
  const int64_t nf = int64_t(n_h) * (n_w / 2 + 1);
  return size_t(l == Layout::freq_major ? nf * ld_batch : nf * batch);
}

// A random placement of an input plane inside the transform: offsets and sizes that clip on
// every side in some draws, odd sizes, row and plane strides larger than the data.
ForwardArgs random_forward_args(int n_h, int n_w, int64_t batch, Layout layout) {
  ForwardArgs a;
  a.batch = batch;
  a.n_h = n_h;
  a.n_w = n_w;
  a.in_w = uniform_int(1, n_w + 3);
  a.off_w = uniform_int(0, n_w - 1);
  a.in_h = n_h == 1 ? 1 : uniform_int(1, n_h + 3);
  a.off_h = n_h == 1 ? 0 : uniform_int(0, n_h - 1);
  a.in_ld = a.in_w + uniform_int(0, 3);
  a.in_plane_stride = a.in_h * a.in_ld + uniform_int(0, 5);
  a.layout = layout;
  a.ld_batch = layout == Layout::freq_major ? batch + uniform_int(0, 3) : 0;
  return a;
}

// The padded n_h×n_w plane b that the forward transform reads.
std::vector<double> padded_plane(const std::vector<float>& in, const ForwardArgs& a, int64_t b) {
  std::vector<double> p(size_t(a.n_h) * a.n_w, 0.0);
  for (int y = 0; y < a.n_h; ++y)
    for (int x = 0; x < a.n_w; ++x) {
      const int64_t yy = y - a.off_h, xx = x - a.off_w;
      if (yy >= 0 && yy < a.in_h && xx >= 0 && xx < a.in_w) p[size_t(y) * a.n_w + x] = in[b * a.in_plane_stride + yy * a.in_ld + xx];
    }
  return p;
}

// Extra settings of a check: the 1-D kernels' block shape, and whole contiguous planes (the kernels'
// 16-byte copy paths) instead of a random placement.
struct Extra {
  std::optional<fftconv::fbfft::Shape1d> shape;  // none: the automatic shape
  bool contiguous = false;
  int window_side = 0;  // > 0 (with window): the window's larger side is exactly this (an exact-K instance)
  bool window_exact = true;  // inverse_window: InverseArgs::window_exact
  int window_split = 0;      // inverse_window: InverseArgs::window_split
};

// Runs forward (fast or reference) on random data; returns rel_l2 against FFTW and checks that
// every spectrum element was written and nothing outside it (freq_major gaps stay NaN).
// `kernel` picks the family; batches up to max_batch (large ones span several blocks and the
// blocks' loop over groups of planes).
// window: the input window is cut to at most kMaxWindow × kMaxWindow and forward_window runs.
double check_forward(int n_h, int n_w, Layout layout, bool reference, Kernel kernel = Kernel::automatic, int max_batch = 9,
                     bool window = false, int min_batch = 1, const Extra& extra = {}) {
  const int64_t batch = uniform_int(min_batch, max_batch);
  ForwardArgs a = random_forward_args(n_h, n_w, batch, layout);
  a.kernel = kernel;
  a.shape_1d = extra.shape;
  if (extra.contiguous) {
    a.in_h = n_h;
    a.in_w = a.in_ld = n_w;
    a.off_h = a.off_w = 0;
    a.in_plane_stride = int64_t(n_h) * n_w;
  }
  if (window) {
    a.in_h = std::min<int64_t>(a.in_h, fftconv::fbfft::kMaxWindow);
    a.in_w = std::min<int64_t>(a.in_w, fftconv::fbfft::kMaxWindow);
    if (extra.window_side > 0) {
      a.in_h = extra.window_side;
      a.in_w = uniform_int(1, extra.window_side);
      if (uniform_int(0, 1)) std::swap(a.in_h, a.in_w);
      a.in_ld = a.in_w + uniform_int(0, 3);
      a.in_plane_stride = a.in_h * a.in_ld + uniform_int(0, 5);
    }
  }
  const auto in = random_floats(size_t(batch * a.in_plane_stride));
  DeviceBuffer d_in = upload(in);
  const size_t n_out = spectrum_elems(layout, batch, n_h, n_w, a.ld_batch);
  DeviceBuffer d_out(n_out * sizeof(float2));
  poison(d_out);
  a.input = d_in.as<float>();
  a.output = d_out.as<float2>();
  if (reference)
    fftconv::fbfft::forward_reference(a);
  else if (window)
    fftconv::fbfft::forward_window(a);
  else
    fftconv::fbfft::forward(a);
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  const auto out = download<float2>(d_out, n_out);
  const int nw2 = n_w / 2 + 1;
  std::vector<cd> got, ref;
  std::vector<char> touched(n_out, 0);
  for (int64_t b = 0; b < batch; ++b) {
    const auto spec = fftw_r2c(padded_plane(in, a, b), n_h, n_w);
    for (int kh = 0; kh < n_h; ++kh)
      for (int kw = 0; kw < nw2; ++kw) {
        const int64_t off = fftconv::fbfft::freq_offset(layout, b, kh, kw, n_h, nw2, a.ld_batch);
        touched[off] = 1;
        got.emplace_back(out[off].x, out[off].y);
        ref.push_back(spec[size_t(kh) * nw2 + kw]);
      }
  }
  int non_finite = 0, written_outside = 0;
  for (size_t i = 0; i < n_out; ++i) {
    const bool finite = std::isfinite(out[i].x) && std::isfinite(out[i].y);
    if (touched[i] && !finite) ++non_finite;
    if (!touched[i] && !std::isnan(out[i].x)) ++written_outside;
  }
  CHECK_MESSAGE(non_finite == 0, "unwritten/non-finite spectrum elements: " << non_finite);
  CHECK_MESSAGE(written_outside == 0, "elements written outside the spectrum: " << written_outside);
  return rel_l2(got, ref);
}

// Spectra of random real planes (FFTW, double → float) in `layout`; their inverse times scale
// is the plane. Runs inverse on a random window and compares with the plane's window.
// window: the output window is cut to at most kMaxWindow × kMaxWindow and inverse_window runs.
double check_inverse(int n_h, int n_w, Layout layout, bool reference, Kernel kernel = Kernel::automatic, int max_batch = 9,
                     bool window = false, int min_batch = 1, const Extra& extra = {}) {
  const int64_t batch = uniform_int(min_batch, max_batch);
  const int nw2 = n_w / 2 + 1;
  InverseArgs a;
  a.kernel = kernel;
  a.batch = batch;
  a.n_h = n_h;
  a.n_w = n_w;
  a.layout = layout;
  a.ld_batch = layout == Layout::freq_major ? batch + uniform_int(0, 3) : 0;
  a.out_off_w = uniform_int(0, n_w - 1);
  a.out_w = uniform_int(1, n_w - int(a.out_off_w));
  a.out_off_h = n_h == 1 ? 0 : uniform_int(0, n_h - 1);
  a.out_h = n_h == 1 ? 1 : uniform_int(1, n_h - int(a.out_off_h));
  if (window) {
    a.out_h = std::min<int64_t>(a.out_h, fftconv::fbfft::kMaxWindow);
    a.out_w = std::min<int64_t>(a.out_w, fftconv::fbfft::kMaxWindow);
    if (extra.window_side > 0) {  // (n_h, n_w >= window_side)
      a.out_h = extra.window_side;
      a.out_w = uniform_int(1, extra.window_side);
      if (uniform_int(0, 1)) std::swap(a.out_h, a.out_w);
      a.out_off_h = uniform_int(0, n_h - int(a.out_h));
      a.out_off_w = uniform_int(0, n_w - int(a.out_w));
    }
    a.window_exact = extra.window_exact;
    a.window_split = extra.window_split;
  }
  a.out_ld = a.out_w + uniform_int(0, 3);
  a.out_plane_stride = a.out_h * a.out_ld + uniform_int(0, 5);
  a.shape_1d = extra.shape;
  if (extra.contiguous) {
    a.out_off_h = a.out_off_w = 0;
    a.out_h = n_h;
    a.out_w = a.out_ld = n_w;
    a.out_plane_stride = int64_t(n_h) * n_w;
  }
  a.scale = float(1.0 / (double(n_h) * n_w));
  const size_t n_spec = spectrum_elems(layout, batch, n_h, n_w, a.ld_batch);
  std::vector<float2> spec(n_spec, make_float2(0.f, 0.f));
  std::vector<std::vector<float>> planes;
  for (int64_t b = 0; b < batch; ++b) {
    auto plane = random_floats(size_t(n_h) * n_w);
    const auto s = fftw_r2c(std::vector<double>(plane.begin(), plane.end()), n_h, n_w);
    for (int kh = 0; kh < n_h; ++kh)
      for (int kw = 0; kw < nw2; ++kw) {
        const cd z = s[size_t(kh) * nw2 + kw];
        spec[fftconv::fbfft::freq_offset(layout, b, kh, kw, n_h, nw2, a.ld_batch)] = make_float2(float(z.real()), float(z.imag()));
      }
    planes.push_back(std::move(plane));
  }
  DeviceBuffer d_in = upload(spec);
  const size_t n_out = size_t(batch * a.out_plane_stride);
  DeviceBuffer d_out(n_out * sizeof(float));
  poison(d_out);
  a.input = d_in.as<float2>();
  a.output = d_out.as<float>();
  if (reference)
    fftconv::fbfft::inverse_reference(a);
  else if (window)
    fftconv::fbfft::inverse_window(a);
  else
    fftconv::fbfft::inverse(a);
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  const auto out = download<float>(d_out, n_out);
  // The error is normwise against the whole planes (an FFT's error scales with the signal's norm,
  // not with the norm of the window cut from it).
  double plane_sq = 0;
  for (const auto& p : planes)
    for (float v : p) plane_sq += double(v) * v;
  double diff_sq = 0;
  std::vector<char> touched(n_out, 0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t oy = 0; oy < a.out_h; ++oy)
      for (int64_t ox = 0; ox < a.out_w; ++ox) {
        const size_t off = size_t(b * a.out_plane_stride + oy * a.out_ld + ox);
        touched[off] = 1;
        const double d = double(out[off]) - planes[b][size_t(oy + a.out_off_h) * n_w + (ox + a.out_off_w)];
        diff_sq += std::isfinite(d) ? d * d : std::numeric_limits<double>::infinity();
      }
  int non_finite = 0, written_outside = 0;
  for (size_t i = 0; i < n_out; ++i) {
    if (touched[i] && !std::isfinite(out[i])) ++non_finite;
    if (!touched[i] && !std::isnan(out[i])) ++written_outside;
  }
  CHECK_MESSAGE(non_finite == 0, "unwritten/non-finite window elements: " << non_finite);
  CHECK_MESSAGE(written_outside == 0, "elements written outside the window: " << written_outside);
  return std::sqrt(diff_sq / plane_sq);
}

std::string size_name(int n_h, int n_w, Layout l, Kernel k = Kernel::automatic) {
  return std::to_string(n_h) + "x" + std::to_string(n_w) + " " + fftconv::fbfft::to_string(l) + " " + fftconv::fbfft::to_string(k);
}

// The kernel families that have a kernel for a size and layout (the four-step family's 16x16 entry
// has none in the freq_major layout; the lanes family only sides 16 and 32).
std::vector<Kernel> families(int n_h, int n_w, Layout l = Layout::standard) {
  std::vector<Kernel> k;
  for (Kernel f : {Kernel::shuffle, Kernel::registers, Kernel::fourstep, Kernel::lanes})
    if (fftconv::fbfft::supported(n_h, n_w, f, l)) k.push_back(f);
  return k;
}

// The block shapes of the 1-D kernels for size n: pairs 4, 8, 16, 32 with and without prefetch for
// the four-step kind (n >= 64), prefetch and fill for the register kind; and a cut grid (groups 2
// and 8) with and without prefetch for each kind.
std::vector<Shape1d> shapes_1d(int n) {
  std::vector<Shape1d> v;
  for (bool prefetch : {false, true}) {
    if (n >= 64) {
      for (int pairs : {4, 8, 16, 32}) v.push_back(Shape1d{pairs, prefetch, false});
      v.push_back(Shape1d{prefetch ? 4 : 16, prefetch, false, prefetch ? 2 : 8});
    } else {
      for (bool fill : {false, true}) v.push_back(Shape1d{0, prefetch, fill});
      v.push_back(Shape1d{0, prefetch, prefetch, prefetch ? 2 : 8});
    }
  }
  return v;
}

// The pruned transforms (forward_window or inverse_window through `check`) at every 2-D size and
// every 1-D size 2..256 in the freq_major layout, and at sizes that are not powers of two (the
// cufft backend's smooth bases, Note [window twiddle indices]), batches of up to 9 and 300, three
// draws each; the inverse's lanes per plane cycle through automatic, 1, 4, 8 and 16.
template <class Check>
void check_window_sizes(Check&& check) {
  auto sizes = all_sizes();
  for (int n = 2; n <= 256; n *= 2) sizes.push_back({1, n});
  for (Size2 odd : {Size2{13, 13}, Size2{13, 11}, Size2{14, 15}, Size2{7, 10}, Size2{3, 2}, Size2{1, 13},
                    Size2{27, 28}, Size2{120, 250}})
    sizes.push_back(odd);
  double worst = 0;
  int draw = 0;
  for (const auto& s : sizes)
    for (int rep = 0; rep < 3; ++rep) {
      Extra extra;
      // inverse_window: the automatic lanes per plane (0), then each of kWindowSplits
      const int k = draw++ % (std::size(fftconv::fbfft::kWindowSplits) + 1);
      extra.window_split = k == 0 ? 0 : fftconv::fbfft::kWindowSplits[k - 1];
      INFO(size_name(s.n_h, s.n_w, Layout::freq_major) << " window, window_split " << extra.window_split);
      const double e = check(s.n_h, s.n_w, Layout::freq_major, false, Kernel::automatic, rep == 0 ? 9 : 300, true, 1, extra);
      CHECK(e <= fft_tolerance(s.n_h, s.n_w));
      worst = std::max(worst, e / fft_tolerance(s.n_h, s.n_w));
    }
  MESSAGE("largest rel_l2 / tolerance: " << worst);
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("fbfft forward matches FFTW for every size, layout and placement") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    double worst = 0;
    for (const auto& s : all_sizes())
      for (Layout l : kLayouts)
        for (Kernel k : families(s.n_h, s.n_w, l))
        for (int rep = 0; rep < 2; ++rep) {
          INFO(size_name(s.n_h, s.n_w, l, k));
          const double e = check_forward(s.n_h, s.n_w, l, false, k, rep == 0 ? 9 : 300);
          CHECK(e <= fft_tolerance(s.n_h, s.n_w));
          worst = std::max(worst, e / fft_tolerance(s.n_h, s.n_w));
        }
    MESSAGE("largest rel_l2 / tolerance: " << worst);
  }

  // The Stockham family (Note [stockham kernels]): odd sides, rectangles, the even sides without a
  // register kernel (70, 90, 98, 126) and 1-D sizes up to 256, by the automatic choice and by name
  // (powers of two too), batches of up to 9 and of 300 (several planes per block and the blocks'
  // loop over groups), every layout, against FFTW.
  TEST_CASE("fbfft Stockham kernels match FFTW at odd, rectangular and 1-D smooth sizes") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    const Size2 sizes[] = {{3, 5},    {9, 15},   {27, 45},   {42, 54},  {70, 70},  {90, 90},  {98, 98},
                           {126, 126}, {45, 128}, {125, 100}, {7, 2},    {63, 36},  {1, 3},    {1, 7},
                           {1, 12},   {1, 96},   {1, 105},  {1, 189},   {1, 243},  {1, 250}};
    double worst = 0;
    for (const Size2& s : sizes)
      for (Layout l : kLayouts)
        for (int rep = 0; rep < 2; ++rep) {
          const Kernel k = rep == 0 ? Kernel::automatic : Kernel::stockham;
          INFO(size_name(s.n_h, s.n_w, l, k));
          REQUIRE(fftconv::fbfft::resolve_kernel(s.n_h, s.n_w, Kernel::automatic, l) == Kernel::stockham);
          const double f = check_forward(s.n_h, s.n_w, l, false, k, rep == 0 ? 9 : 300);
          const double i = check_inverse(s.n_h, s.n_w, l, false, k, rep == 0 ? 9 : 300);
          CHECK(f <= fft_tolerance(s.n_h, s.n_w));
          CHECK(i <= fft_tolerance(s.n_h, s.n_w));
          worst = std::max({worst, f / fft_tolerance(s.n_h, s.n_w), i / fft_tolerance(s.n_h, s.n_w)});
        }
    for (Size2 p2 : {Size2{64, 64}, Size2{16, 128}, Size2{1, 256}, Size2{2, 2}})
      for (Layout l : kLayouts) {
        INFO(size_name(p2.n_h, p2.n_w, l, Kernel::stockham));
        CHECK(check_forward(p2.n_h, p2.n_w, l, false, Kernel::stockham, 300) <= fft_tolerance(p2.n_h, p2.n_w));
        CHECK(check_inverse(p2.n_h, p2.n_w, l, false, Kernel::stockham, 300) <= fft_tolerance(p2.n_h, p2.n_w));
      }
    MESSAGE("largest rel_l2 / tolerance: " << worst);
  }

  TEST_CASE("fbfft freq_major kernels match FFTW in their small-batch and full-size launch shapes") {
    // The register kernels use fewer planes per block (their spectra always staged in shared memory)
    // below about 33 blocks' worth of planes, the cluster kernels one plane per block below one
    // block per SM (batches up to 256 on an H100); batches of 1,100-1,300 take the full-size shapes.
    // The lanes family halves its planes per block below 66 blocks' worth (16 planes at 16x16, 8 at
    // 32x32: full size from 1,056 planes). (So that both shapes run on any GPU of up to 132 SMs.)
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    for (int n : {16, 32, 64, 14, 28, 48, 54, 84, 120})  // smooth: one lane, two (24, 27) and four (21, 30)
      for (Kernel k : families(n, n, Layout::freq_major))
        for (auto [lo, hi] : {std::pair{1, 200}, std::pair{1100, 1300}}) {
          INFO(size_name(n, n, Layout::freq_major, k) << " batch " << lo << ".." << hi);
          CHECK(check_forward(n, n, Layout::freq_major, false, k, hi, false, lo) <= fft_tolerance(n, n));
          CHECK(check_inverse(n, n, Layout::freq_major, false, k, hi, false, lo) <= fft_tolerance(n, n));
        }
    // The pruned inverse splits each plane's sum over four lanes below one block (32 planes) per SM,
    // over sixteen where four would leave more than half of the SMs idle (on an H100: batches below
    // 521 take sixteen, 521-4,192 four, 4,193 and more one lane per plane).
    for (int n : {16, 32, 64})
      for (auto [lo, hi] : {std::pair{1, 200}, std::pair{600, 800}, std::pair{4300, 4500}}) {
        INFO(size_name(n, n, Layout::freq_major) << " window, batch " << lo << ".." << hi);
        CHECK(check_inverse(n, n, Layout::freq_major, false, Kernel::automatic, hi, true, lo) <= fft_tolerance(n, n));
      }
  }

  // Every block shape of the 1-D register / four-step kernels (Note [1-D block shapes]): batches
  // of up to 300 planes at random placements in every layout, contiguous planes (the 16-byte copy
  // paths), and for the prefetching and cut-grid shapes batches of about 4M points, where the blocks
  // (one wave on an H100, or fewer) loop over groups and the second buffer is used, placed and contiguous.
  TEST_CASE("fbfft 1-D block shapes match FFTW at every size") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    double worst = 0;
    for (int n = 4; n <= 256; n *= 2) {
      const Kernel k = n <= 32 ? Kernel::registers : Kernel::fourstep;
      const double tol = fft_tolerance(1, n);
      const int big = (1 << 22) / n;
      for (const Shape1d& shape : shapes_1d(n)) {
        INFO("n=" << n << " shape " << fftconv::fbfft::to_string(shape));
        auto check = [&](Layout l, int lo, int hi, bool contiguous) {
          INFO(fftconv::fbfft::to_string(l) << " batch " << lo << ".." << hi << (contiguous ? " contiguous" : " placed"));
          const double ef = check_forward(1, n, l, false, k, hi, false, lo, {shape, contiguous});
          const double ei = check_inverse(1, n, l, false, k, hi, false, lo, {shape, contiguous});
          CHECK(ef <= tol);
          CHECK(ei <= tol);
          worst = std::max({worst, ef / tol, ei / tol});
        };
        for (Layout l : kLayouts) check(l, 1, 300, false);
        check(Layout::standard, 2000, 2100, true);
        if (shape.prefetch || shape.groups) {
          check(Layout::standard, big, big + 100, true);
          check(Layout::standard, big, big + 100, false);
        }
      }
    }
    MESSAGE("largest rel_l2 / tolerance: " << worst);
  }

  // The prefetching 1-D kernels where blocks loop over groups on an H100 (one block per SM at 256
  // points and 32 pairs; three per SM at 32 points; at 32 points the automatic shape's grid cut to
  // two blocks per SM), for the sanitizer runs (`*launch shapes*`).
  TEST_CASE("fbfft 1-D prefetch launch shapes that loop over groups") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    const std::pair<int, std::optional<Shape1d>> cases[] = {
        {256, Shape1d{32, true, false}}, {32, Shape1d{0, true, false}}, {32, std::nullopt}};
    for (const auto& [n, shape] : cases) {
      const int lo = n == 256 ? 9000 : 110000;
      INFO("n=" << n << " shape " << (shape ? fftconv::fbfft::to_string(*shape) : "automatic") << " batch " << lo);
      const Kernel k = n <= 32 ? Kernel::registers : Kernel::fourstep;
      CHECK(check_forward(1, n, Layout::standard, false, k, lo + 50, false, lo, {shape, true}) <= fft_tolerance(1, n));
      CHECK(check_inverse(1, n, Layout::standard, false, k, lo + 50, false, lo, {shape, true}) <= fft_tolerance(1, n));
    }
  }

  // The four-lane 2-D kernels (the four-step family at 8x8 and 16x16: Notes [8x8 four-lane
  // kernels], [16x16 four-lane kernels]) on contiguous planes (their 16-byte copy paths, which the
  // random placements above almost never take), on small batches (partial warps and blocks) and on
  // batches of about 60,000 planes, where the warps or blocks loop over groups (one wave of the 8x8
  // kernels holds 33,792 (inverse) to 50,688 (forward) planes on an H100); the fixed batches 16,384
  // and 16,389 take the 8x8 kernels' whole-warp instance (a multiple of eight planes) and the
  // contiguous one with a partial last warp, whatever the draws; for the sanitizer runs (`*launch
  // shapes*`).
  TEST_CASE("fbfft four-lane 2-D launch shapes: contiguous planes, partial groups and loops") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    for (int n : {8, 16})
      for (Layout l : {Layout::standard, Layout::transposed})
        for (auto [lo, hi, contiguous] : {std::tuple{1, 40, true}, std::tuple{16384, 16384, true}, std::tuple{16389, 16389, true},
                                          std::tuple{60000, 60050, true}, std::tuple{60000, 60050, false}}) {
          INFO(size_name(n, n, l, Kernel::fourstep) << " batch " << lo << ".." << hi << (contiguous ? " contiguous" : " placed"));
          Extra extra;
          extra.contiguous = contiguous;
          CHECK(check_forward(n, n, l, false, Kernel::fourstep, hi, false, lo, extra) <= fft_tolerance(n, n));
          CHECK(check_inverse(n, n, l, false, Kernel::fourstep, hi, false, lo, extra) <= fft_tolerance(n, n));
        }
  }

  // kernel_attributes with a batch reports the block that the launch takes: the 8x8 four-lane
  // launcher halves its 128 threads while the batch would fill fewer than four blocks per SM.
  TEST_CASE("fbfft kernel_attributes follows the batch where the four-lane launch depends on it") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    using fftconv::fbfft::kernel_attributes;
    for (bool inverse : {false, true}) {
      INFO((inverse ? "inverse" : "forward"));
      const std::string small = kernel_attributes(8, 8, inverse, Kernel::fourstep, Layout::standard, std::nullopt, 64);
      const std::string large = kernel_attributes(8, 8, inverse, Kernel::fourstep, Layout::standard, std::nullopt, int64_t{1} << 20);
      CHECK(small.find("threads=32 ") != std::string::npos);
      CHECK(large.find("threads=128 ") != std::string::npos);
      CHECK(kernel_attributes(8, 8, inverse, Kernel::fourstep).find("threads=128 ") != std::string::npos);
      for (int64_t batch : {int64_t{16384}, int64_t{16389}, int64_t{1} << 20})
        CHECK(kernel_attributes(16, 16, inverse, Kernel::fourstep, Layout::standard, std::nullopt, batch).find("regs=") == 0);
      CHECK_THROWS_AS(kernel_attributes(8, 8, inverse, Kernel::fourstep, Layout::standard, std::nullopt, 0), fftconv::InvalidArgument);
    }
  }

  TEST_CASE("fbfft forward_window (pruned DFT of windows up to 12x12) matches FFTW at every size and placement") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    check_window_sizes(check_forward);
    ForwardArgs a = random_forward_args(16, 16, 4, Layout::standard);
    a.in_h = a.in_w = 3;
    CHECK_FALSE(fftconv::fbfft::window_supported(a));
    a.layout = Layout::freq_major;
    CHECK(fftconv::fbfft::window_supported(a));
    a.in_w = 13;
    a.in_ld = 13;
    a.in_plane_stride = 39;
    CHECK_FALSE(fftconv::fbfft::window_supported(a));
    float dummy = 0;
    float2 dummy2{};
    a.input = &dummy;
    a.output = &dummy2;
    CHECK_THROWS_AS(fftconv::fbfft::forward_window(a), fftconv::Unsupported);
  }

  TEST_CASE("fbfft pruned transforms: the exact 3x3 and 5x5 window instances (and the padded bounds) at power-of-two and smooth sizes") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    for (int side : {3, 5})
      for (Size2 s : {Size2{8, 8}, Size2{16, 16}, Size2{32, 32}, Size2{64, 64}, Size2{13, 13}, Size2{27, 28}, Size2{16, 8}})
        for (int rep = 0; rep < 4; ++rep) {
          INFO(size_name(s.n_h, s.n_w, Layout::freq_major) << " window side " << side << ", draw " << rep);
          Extra e;
          e.window_side = side;
          const int max_batch = rep % 2 == 0 ? 9 : 5000;  // the split and the one-plane-per-lane launches
          CHECK(check_forward(s.n_h, s.n_w, Layout::freq_major, false, Kernel::automatic, max_batch, true, 1, e) <=
                fft_tolerance(s.n_h, s.n_w));
          CHECK(check_inverse(s.n_h, s.n_w, Layout::freq_major, false, Kernel::automatic, max_batch, true, 1, e) <=
                fft_tolerance(s.n_h, s.n_w));
          e.window_exact = false;  // the padded bound 4 / 8 (Note [window bounds])
          CHECK(check_inverse(s.n_h, s.n_w, Layout::freq_major, false, Kernel::automatic, max_batch, true, 1, e) <=
                fft_tolerance(s.n_h, s.n_w));
          for (int split : fftconv::fbfft::kWindowSplits) {  // every lanes-per-plane instance, whatever the batch
            INFO("window_split " << split);
            e.window_exact = rep < 2;
            e.window_split = split;
            CHECK(check_inverse(s.n_h, s.n_w, Layout::freq_major, false, Kernel::automatic, max_batch, true, 1, e) <=
                  fft_tolerance(s.n_h, s.n_w));
          }
        }
  }

  TEST_CASE("fbfft inverse_window (pruned inverse to windows up to 12x12) inverts FFTW spectra at every size") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    check_window_sizes(check_inverse);
    InverseArgs b;
    b.batch = 1;
    b.n_h = b.n_w = 16;
    b.layout = Layout::freq_major;
    b.out_h = b.out_w = 13;
    b.out_ld = 13;
    float dummy = 0;
    float2 dummy2{};
    b.input = &dummy2;
    b.output = &dummy;
    CHECK_FALSE(fftconv::fbfft::window_supported(b));
    CHECK_THROWS_AS(fftconv::fbfft::inverse_window(b), fftconv::Unsupported);
    b.out_h = b.out_w = 3;
    CHECK(fftconv::fbfft::window_supported(b));
  }

  TEST_CASE("fbfft inverse inverts FFTW spectra on clipped windows") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    double worst = 0;
    for (const auto& s : all_sizes())
      for (Layout l : kLayouts)
        for (Kernel k : families(s.n_h, s.n_w, l))
        for (int rep = 0; rep < 2; ++rep) {
          INFO(size_name(s.n_h, s.n_w, l, k));
          const double e = check_inverse(s.n_h, s.n_w, l, false, k, rep == 0 ? 9 : 300);
          CHECK(e <= fft_tolerance(s.n_h, s.n_w));
          worst = std::max(worst, e / fft_tolerance(s.n_h, s.n_w));
        }
    MESSAGE("largest rel_l2 / tolerance: " << worst);
  }

  TEST_CASE("fbfft reference kernels match FFTW (including sizes without a register kernel)") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    const Size2 sizes[] = {{1, 8}, {8, 8}, {16, 32}, {5, 12}, {1, 7}, {3, 3}};
    for (const auto& s : sizes)
      for (Layout l : kLayouts) {
        INFO(size_name(s.n_h, s.n_w, l));
        CHECK(check_forward(s.n_h, s.n_w, l, true) <= 1e-6);
        if (s.n_w % 2 == 0) CHECK(check_inverse(s.n_h, s.n_w, l, true) <= 1e-6);
      }
  }

  TEST_CASE("fbfft inverse of non-Hermitian spectra matches the reference definition") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    for (const auto& s : all_sizes())
      for (Kernel k : families(s.n_h, s.n_w)) {
      INFO(size_name(s.n_h, s.n_w, Layout::standard, k));
      const int64_t batch = 5;
      const size_t n = spectrum_elems(Layout::standard, batch, s.n_h, s.n_w, 0);
      const auto raw = random_floats(2 * n);
      DeviceBuffer d_in = upload(raw);
      DeviceBuffer d_fast(size_t(batch) * s.n_h * s.n_w * sizeof(float)), d_ref(d_fast.bytes());
      poison(d_fast);
      poison(d_ref);
      InverseArgs a;
      a.batch = batch;
      a.n_h = s.n_h;
      a.n_w = s.n_w;
      a.input = d_in.as<float2>();
      a.out_h = s.n_h;
      a.out_w = s.n_w;
      a.out_ld = s.n_w;
      a.out_plane_stride = int64_t(s.n_h) * s.n_w;
      a.output = d_fast.as<float>();
      a.kernel = k;
      fftconv::fbfft::inverse(a);
      a.output = d_ref.as<float>();
      fftconv::fbfft::inverse_reference(a);
      FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
      const auto fast = download<float>(d_fast, batch * s.n_h * s.n_w), ref = download<float>(d_ref, fast.size());
      std::vector<cd> g(fast.begin(), fast.end()), r(ref.begin(), ref.end());
      CHECK(rel_l2(g, r) <= fft_tolerance(s.n_h, s.n_w));
    }
  }

  TEST_CASE("fbfft self-tests: linearity, impulse response, time shift") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    const Size2 sizes[] = {{1, 8}, {1, 64}, {1, 256}, {8, 8}, {16, 16}, {32, 32}, {64, 64}, {16, 64}, {128, 128},
                           {12, 12}, {14, 14}, {28, 28}, {30, 30}};
    for (const auto& s : sizes)
      for (Kernel k : families(s.n_h, s.n_w)) {
      INFO(size_name(s.n_h, s.n_w, Layout::standard, k));
      const int n_h = s.n_h, n_w = s.n_w, nw2 = n_w / 2 + 1, plane = n_h * n_w;
      const int64_t batch = 4;  // planes: x, y, alpha x + beta y, shifted x
      const auto x = random_floats(plane), y = random_floats(plane);
      const float alpha = 0.75f, beta = -1.5f;
      const int sy = uniform_int(0, n_h - 1), sx = uniform_int(0, n_w - 1);
      std::vector<float> in(size_t(batch) * plane);
      for (int i = 0; i < plane; ++i) {
        in[i] = x[i];
        in[plane + i] = y[i];
        in[2 * plane + i] = alpha * x[i] + beta * y[i];
        const int r = i / n_w, c = i % n_w;
        in[3 * plane + ((r + sy) % n_h) * n_w + (c + sx) % n_w] = x[i];
      }
      DeviceBuffer d_in = upload(in);
      DeviceBuffer d_out(size_t(batch) * n_h * nw2 * sizeof(float2));
      poison(d_out);
      ForwardArgs a;
      a.batch = batch;
      a.n_h = n_h;
      a.n_w = n_w;
      a.input = d_in.as<float>();
      a.in_h = n_h;
      a.in_w = n_w;
      a.in_ld = n_w;
      a.in_plane_stride = plane;
      a.output = d_out.as<float2>();
      a.kernel = k;
      fftconv::fbfft::forward(a);
      FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
      const auto out = download<float2>(d_out, size_t(batch) * n_h * nw2);
      const size_t nf = size_t(n_h) * nw2;
      std::vector<cd> lin, lin_ref, shift, shift_ref;
      for (size_t f = 0; f < nf; ++f) {
        const int kh = int(f / nw2), kw = int(f % nw2);
        const cd X(out[f].x, out[f].y), Y(out[nf + f].x, out[nf + f].y);
        lin.emplace_back(out[2 * nf + f].x, out[2 * nf + f].y);
        lin_ref.push_back(double(alpha) * X + double(beta) * Y);
        shift.emplace_back(out[3 * nf + f].x, out[3 * nf + f].y);
        const double ph = -2.0 * M_PI * (double(kh) * sy / n_h + double(kw) * sx / n_w);
        shift_ref.push_back(X * std::polar(1.0, ph));
      }
      CHECK(rel_l2(lin, lin_ref) <= 2 * fft_tolerance(n_h, n_w));
      CHECK(rel_l2(shift, shift_ref) <= 2 * fft_tolerance(n_h, n_w));

      // Impulse at (sy, sx), read through implicit padding: a 1×1 plane placed at that offset.
      const std::vector<float> one{1.f};
      DeviceBuffer d_one = upload(one);
      DeviceBuffer d_imp(nf * sizeof(float2));
      poison(d_imp);
      ForwardArgs b = a;
      b.batch = 1;
      b.input = d_one.as<float>();
      b.in_h = b.in_w = b.in_ld = b.in_plane_stride = 1;
      b.off_h = n_h == 1 ? 0 : sy;
      b.off_w = sx;
      b.output = d_imp.as<float2>();
      fftconv::fbfft::forward(b);
      FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
      const auto imp = download<float2>(d_imp, nf);
      std::vector<cd> g, r;
      for (size_t f = 0; f < nf; ++f) {
        const int kh = int(f / nw2), kw = int(f % nw2);
        g.emplace_back(imp[f].x, imp[f].y);
        r.push_back(std::polar(1.0, -2.0 * M_PI * (double(kh) * b.off_h / n_h + double(kw) * sx / n_w)));
      }
      CHECK(rel_l2(g, r) <= fft_tolerance(n_h, n_w));
    }
  }

  // Note [dependent launch]: a chain forward -> inverse -> forward ... queued without a
  // synchronization, every buffer of the chain poisoned with NaN before it starts, so that a kernel
  // that read its input before its predecessor's stores were visible would carry NaN (or stale
  // values) to the end. Dependent launches must give the plain launches' bits.
  TEST_CASE("fbfft dependent launches in a chain give the plain launches' bits") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft transform");
    constexpr int kRounds = 4;
    struct Case {
      int n_h, n_w, window;  // window > 0: forward_window / inverse_window of window×window planes
      int64_t batch;
    };
    const Case cases[] = {{1, 8, 0, 20000},   {1, 32, 0, 20000},  {1, 128, 0, 5000}, {1, 256, 0, 3000},
                          {8, 8, 0, 20000},   {16, 16, 0, 6000},  {32, 32, 0, 3000}, {64, 64, 0, 700},
                          {32, 64, 0, 700},   {128, 128, 0, 300}, {12, 12, 0, 4000}, {16, 16, 3, 9000},
                          {32, 32, 5, 4000},  {16, 16, 12, 6000}};
    int checked = 0;
    for (const Case& c : cases)
      for (Layout l : kLayouts)
        for (Kernel k : c.window ? std::vector<Kernel>{Kernel::automatic} : families(c.n_h, c.n_w, l)) {
          if (c.window && l != Layout::freq_major) continue;  // the windowed transforms' layout
          INFO(size_name(c.n_h, c.n_w, l, k) << " batch " << c.batch << (c.window ? " window " : "") << (c.window ? std::to_string(c.window) : ""));
          const int in_h = c.window ? c.window : c.n_h, in_w = c.window ? c.window : c.n_w;
          const int64_t plane = int64_t(in_h) * in_w;
          const int64_t ld = l == Layout::freq_major ? c.batch + 3 : 0;
          const size_t nspec = spectrum_elems(l, c.batch, c.n_h, c.n_w, ld ? ld : c.batch);
          const auto x0 = random_floats(size_t(c.batch * plane));
          std::vector<float> last[2];
          std::vector<float2> spec[2];
          for (int dependent = 0; dependent < 2; ++dependent) {
            std::vector<DeviceBuffer> xs, ss;
            xs.push_back(upload(x0));
            for (int r = 0; r < kRounds; ++r) {
              xs.emplace_back(x0.size() * sizeof(float));
              ss.emplace_back(nspec * sizeof(float2));
              poison(xs.back());
              poison(ss.back());
            }
            FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
            auto common = [&](auto& args) {  // the fields ForwardArgs and InverseArgs share
              args.batch = c.batch;
              args.n_h = c.n_h;
              args.n_w = c.n_w;
              args.layout = l;
              args.ld_batch = ld;
              args.kernel = k;
              args.dependent_launch = dependent == 1;
            };
            for (int r = 0; r < kRounds; ++r) {
              ForwardArgs f;
              common(f);
              f.input = xs[r].as<float>();
              f.in_h = in_h;
              f.in_w = f.in_ld = in_w;
              f.in_plane_stride = plane;
              f.output = ss[r].as<float2>();
              InverseArgs v;
              common(v);
              v.input = ss[r].as<float2>();
              v.output = xs[r + 1].as<float>();
              v.out_h = in_h;
              v.out_w = v.out_ld = in_w;
              v.out_plane_stride = plane;
              v.scale = 1.f / float(c.n_h * c.n_w);
              if (c.window) {
                fftconv::fbfft::forward_window(f);
                fftconv::fbfft::inverse_window(v);
              } else {
                fftconv::fbfft::forward(f);
                fftconv::fbfft::inverse(v);
              }
            }
            FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
            last[dependent] = download<float>(xs.back(), x0.size());
            spec[dependent] = download<float2>(ss.back(), nspec);
          }
          // The round trips return the input (no NaN from a poisoned buffer), and both launch kinds agree bit for bit.
          double num = 0, den = 0;
          for (size_t i = 0; i < x0.size(); ++i) {
            num += (double(last[1][i]) - x0[i]) * (double(last[1][i]) - x0[i]);
            den += double(x0[i]) * x0[i];
          }
          CHECK(std::sqrt(num / den) <= 2 * kRounds * fft_tolerance(c.n_h, c.n_w));
          CHECK(std::memcmp(last[0].data(), last[1].data(), last[0].size() * sizeof(float)) == 0);
          CHECK(std::memcmp(spec[0].data(), spec[1].data(), spec[0].size() * sizeof(float2)) == 0);
          ++checked;
        }
    MESSAGE("chains checked: " << checked);
  }

  TEST_CASE("fbfft rejects bad arguments and sizes without a kernel") {
    ForwardArgs a;
    a.batch = 1;
    a.n_h = 8;
    a.n_w = 8;
    float dummy = 0;
    float2 dummy2{};
    a.input = &dummy;
    a.output = &dummy2;
    a.in_h = a.in_w = a.in_ld = 8;
    a.in_plane_stride = 64;
    a.off_w = -1;
    CHECK_THROWS_AS(fftconv::fbfft::validate(a), fftconv::InvalidArgument);
    a.off_w = 0;
    a.in_ld = 4;
    CHECK_THROWS_AS(fftconv::fbfft::validate(a), fftconv::InvalidArgument);
    a.in_ld = 8;
    CHECK_NOTHROW(fftconv::fbfft::validate(a));
    CHECK(fftconv::fbfft::supported(8, 8));
    CHECK(fftconv::fbfft::supported(1, 256));
    CHECK(fftconv::fbfft::supported(128, 128));
    CHECK(fftconv::fbfft::supported(12, 12));  // smooth squares: the register family only
    CHECK(fftconv::fbfft::supported(28, 28, Kernel::registers, Layout::freq_major));
    CHECK_FALSE(fftconv::fbfft::supported(28, 28, Kernel::shuffle));
    CHECK_FALSE(fftconv::fbfft::supported(28, 28, Kernel::lanes));
    CHECK(fftconv::fbfft::supported(12, 14));  // other 7-smooth sizes: the Stockham family
    CHECK(fftconv::fbfft::supported(1, 12));
    CHECK(fftconv::fbfft::supported(45, 126, Kernel::automatic, Layout::freq_major));
    CHECK(fftconv::fbfft::resolve_kernel(12, 14, Kernel::automatic) == Kernel::stockham);
    CHECK(fftconv::fbfft::resolve_kernel(1, 243, Kernel::automatic, Layout::freq_major, true) == Kernel::stockham);
    CHECK(fftconv::fbfft::resolve_kernel(64, 64, Kernel::stockham) == Kernel::stockham);  // by name
    CHECK(fftconv::fbfft::resolve_kernel(28, 28, Kernel::automatic) == Kernel::registers);
    CHECK(fftconv::fbfft::parse_kernel("stockham", "kernel") == Kernel::stockham);
    CHECK_FALSE(fftconv::fbfft::supported(12, 14, Kernel::registers));
    CHECK_FALSE(fftconv::fbfft::supported(26, 26));  // 13 is not a radix
    CHECK_FALSE(fftconv::fbfft::supported(1, 11));
    CHECK_FALSE(fftconv::fbfft::supported(1, 384));
    CHECK_FALSE(fftconv::fbfft::supported(140, 140));
    CHECK_FALSE(fftconv::fbfft::supported(16, 128));  // a power of two: no family below 32 against 128
    CHECK(fftconv::fbfft::supported(64, 128));  // four-step only
    CHECK(fftconv::fbfft::supported(128, 64, Kernel::fourstep));
    CHECK(fftconv::fbfft::supported(64, 64, Kernel::fourstep));
    CHECK(fftconv::fbfft::supported(32, 32, Kernel::fourstep));
    CHECK_FALSE(fftconv::fbfft::supported(16, 32, Kernel::fourstep));
    CHECK_FALSE(fftconv::fbfft::supported(64, 128, Kernel::shuffle));
    CHECK_FALSE(fftconv::fbfft::supported(1, 512));
    CHECK(fftconv::fbfft::supported(32, 32, Kernel::registers));
    CHECK(fftconv::fbfft::supported(2, 32, Kernel::registers));
    CHECK(fftconv::fbfft::supported(64, 64, Kernel::registers));
    CHECK(fftconv::fbfft::supported(8, 64, Kernel::registers));
    CHECK(fftconv::fbfft::supported(128, 128, Kernel::registers));
    CHECK_FALSE(fftconv::fbfft::supported(64, 128, Kernel::registers));
    CHECK(fftconv::fbfft::supported(1, 16, Kernel::registers));
    CHECK_FALSE(fftconv::fbfft::supported(1, 64, Kernel::registers));
    CHECK_FALSE(fftconv::fbfft::supported(1, 2, Kernel::registers));
    CHECK(fftconv::fbfft::supported(1, 256, Kernel::fourstep, Layout::freq_major));
    CHECK(fftconv::fbfft::supported(64, 64, Kernel::fourstep, Layout::freq_major));
    CHECK_FALSE(fftconv::fbfft::supported(16, 16, Kernel::fourstep, Layout::freq_major));
    CHECK(fftconv::fbfft::supported(16, 16, Kernel::lanes, Layout::freq_major));
    CHECK(fftconv::fbfft::supported(16, 32, Kernel::lanes));
    CHECK(fftconv::fbfft::supported(32, 32, Kernel::lanes, Layout::transposed));
    CHECK_FALSE(fftconv::fbfft::supported(8, 8, Kernel::lanes));
    CHECK_FALSE(fftconv::fbfft::supported(64, 64, Kernel::lanes));
    CHECK_FALSE(fftconv::fbfft::supported(1, 16, Kernel::lanes));
    CHECK(fftconv::fbfft::resolve_kernel(32, 16, Kernel::lanes, Layout::freq_major) == Kernel::lanes);
    CHECK(fftconv::fbfft::parse_kernel("lanes", "kernel") == Kernel::lanes);
    CHECK(fftconv::fbfft::resolve_kernel(1, 16, Kernel::automatic) == Kernel::registers);
    CHECK(fftconv::fbfft::resolve_kernel(1, 128, Kernel::automatic, Layout::freq_major, true) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(1, 2, Kernel::automatic) == Kernel::shuffle);
    CHECK(fftconv::fbfft::resolve_kernel(1, 64, Kernel::shuffle) == Kernel::shuffle);
    CHECK(fftconv::fbfft::supported(64, 64, Kernel::shuffle));
    CHECK(fftconv::fbfft::resolve_kernel(16, 16, Kernel::automatic) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(16, 16, Kernel::automatic, Layout::freq_major) == Kernel::registers);
    CHECK(fftconv::fbfft::resolve_kernel(8, 8, Kernel::automatic) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(8, 8, Kernel::automatic, Layout::transposed, true) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(8, 8, Kernel::automatic, Layout::freq_major) == Kernel::registers);
    CHECK_FALSE(fftconv::fbfft::supported(8, 8, Kernel::fourstep, Layout::freq_major));
    CHECK_FALSE(fftconv::fbfft::supported(8, 16, Kernel::fourstep));
    CHECK(fftconv::fbfft::resolve_kernel(32, 32, Kernel::automatic) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(32, 32, Kernel::automatic, Layout::freq_major) == Kernel::registers);
    CHECK(fftconv::fbfft::resolve_kernel(32, 32, Kernel::fourstep, Layout::freq_major) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(16, 64, Kernel::automatic) == Kernel::shuffle);
    CHECK(fftconv::fbfft::resolve_kernel(64, 64, Kernel::automatic) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(64, 64, Kernel::automatic, Layout::transposed, true) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(64, 128, Kernel::automatic) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(64, 64, Kernel::fourstep, Layout::freq_major) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(64, 128, Kernel::automatic, Layout::freq_major) == Kernel::fourstep);
    CHECK_THROWS_AS(fftconv::fbfft::resolve_kernel(64, 128, Kernel::registers, Layout::freq_major), fftconv::Unsupported);
    CHECK(fftconv::fbfft::resolve_kernel(64, 128, Kernel::fourstep, Layout::freq_major) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(64, 64, Kernel::automatic, Layout::freq_major) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(64, 64, Kernel::registers, Layout::freq_major) == Kernel::registers);
    CHECK(fftconv::fbfft::resolve_kernel(32, 64, Kernel::automatic, Layout::freq_major) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(128, 128, Kernel::automatic) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(128, 128, Kernel::automatic, Layout::freq_major) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(128, 128, Kernel::automatic, Layout::standard, true) == Kernel::fourstep);
    CHECK(fftconv::fbfft::resolve_kernel(16, 16, Kernel::shuffle) == Kernel::shuffle);
    CHECK_THROWS_AS(fftconv::fbfft::resolve_kernel(64, 128, Kernel::registers), fftconv::Unsupported);
    CHECK(fftconv::fbfft::resolve_kernel(28, 28, Kernel::automatic, Layout::freq_major) == Kernel::registers);
    CHECK(fftconv::fbfft::resolve_kernel(14, 14, Kernel::registers, Layout::standard, true) == Kernel::registers);
    CHECK_THROWS_WITH_AS(fftconv::fbfft::resolve_kernel(28, 28, Kernel::fourstep), doctest::Contains("n_h=28"),
                         fftconv::Unsupported);
    a.n_h = 11;  // 11x8: 11 is not 7-smooth
    CHECK_THROWS_WITH_AS(fftconv::fbfft::forward(a), doctest::Contains("n_h=11"), fftconv::Unsupported);
    InverseArgs b;
    b.batch = 1;
    b.n_h = 8;
    b.n_w = 8;
    b.input = &dummy2;
    b.output = &dummy;
    b.out_h = 4;
    b.out_w = 4;
    b.out_off_h = 5;  // 5 + 4 > 8
    b.out_ld = 4;
    CHECK_THROWS_AS(fftconv::fbfft::validate(b), fftconv::InvalidArgument);
    b.out_off_h = 0;
    CHECK_NOTHROW(fftconv::fbfft::validate(b));
    for (int split : {2, -1, 32}) {
      b.window_split = split;
      const std::string field = "window_split=" + std::to_string(split);
      CHECK_THROWS_WITH_AS(fftconv::fbfft::validate(b), doctest::Contains(field.c_str()), fftconv::InvalidArgument);
    }
    for (int split : fftconv::fbfft::kWindowSplits) {
      b.window_split = split;
      CHECK_NOTHROW(fftconv::fbfft::validate(b));
      CHECK(fftconv::fbfft::inverse_window_split(b) == split);
    }
    b.window_split = 0;
    b.shape_1d = Shape1d{12, false, false};
    CHECK_THROWS_WITH_AS(fftconv::fbfft::validate(b), doctest::Contains("shape_1d.pairs=12"), fftconv::InvalidArgument);
    b.shape_1d = Shape1d{0, false, false, 3};
    CHECK_THROWS_WITH_AS(fftconv::fbfft::validate(b), doctest::Contains("shape_1d.groups=3"), fftconv::InvalidArgument);
    a.n_h = 8;
    a.shape_1d = Shape1d{64, false, false};
    CHECK_THROWS_AS(fftconv::fbfft::validate(a), fftconv::InvalidArgument);
  }

  TEST_CASE("fbfft 1-D block shapes parse, print and reject bad text") {
    using fftconv::fbfft::parse_shape_1d;
    CHECK(parse_shape_1d("plain", "f") == Shape1d{});
    CHECK(parse_shape_1d("pairs=16,prefetch", "f") == Shape1d{16, true, false});
    CHECK(parse_shape_1d("fill,prefetch,pairs=8", "f") == Shape1d{8, true, true});
    CHECK(parse_shape_1d("groups=4,prefetch", "f") == Shape1d{0, true, false, 4});
    for (const Shape1d& s : {Shape1d{}, Shape1d{8, false, false}, Shape1d{32, true, true}, Shape1d{0, false, true},
                             Shape1d{0, true, true, 2}, Shape1d{16, false, false, 8}})
      CHECK(parse_shape_1d(fftconv::fbfft::to_string(s), "f") == s);
    CHECK(fftconv::fbfft::to_string(Shape1d{16, true, false}) == "pairs=16,prefetch");
    CHECK(fftconv::fbfft::to_string(Shape1d{0, true, true, 2}) == "prefetch,fill,groups=2");
    for (const char* bad : {"", "pairs=12", "pairs=", "prefetch,prefetch", "pairs=8,pairs=16", "fast", "prefetch,", "plain,fill", "default",
                            "groups=3", "groups=", "groups=1", "groups=2,groups=4", "groups=16"})
      CHECK_THROWS_WITH_AS(parse_shape_1d(bad, "--shapes-1d"), doctest::Contains("--shapes-1d: bad 1-D block shape part"),
                           fftconv::InvalidArgument);
  }
}
