// FFT self-tests (see fft_selftest.hpp) and the FFTW adapters they run on.
#include "validation/fft_selftest.hpp"

#include <fftw3.h>

#include <cmath>
#include <memory>
#include <numbers>
#include <random>

#include "common/errors.hpp"
#include "ref/fftw_api.hpp"
#include "validation/tolerance.hpp"

namespace fftconv {

using cd = std::complex<double>;

std::string FftShape::to_string() const {
  return std::to_string(batch) + "x" + std::to_string(nh) + "x" + std::to_string(nw) + (real_input ? " r2c" : " c2c");
}

namespace {

double round_to(double v, DType d) { return d == DType::f32 ? double(float(v)) : v; }
cd round_to(cd v, DType d) { return {round_to(v.real(), d), round_to(v.imag(), d)}; }

std::vector<cd> random_signal(const FftShape& s, DType d, std::mt19937_64& rng) {
  std::normal_distribution<double> nd(0.0, 1.0);
  std::vector<cd> x(std::size_t(s.in_elems()));
  for (auto& v : x) v = round_to(cd(nd(rng), s.real_input ? 0.0 : nd(rng)), d);
  return x;
}

std::vector<cd> transform(const FftShape& s, const ForwardBatch& f, const std::vector<cd>& in) {
  std::vector<cd> out(std::size_t(s.out_elems()), cd(std::nan(""), std::nan("")));
  f(in, out);
  return out;
}

// ||a - b|| / ||b||; NaN anywhere gives NaN (a failed test).
double rel_error(const std::vector<cd>& a, const std::vector<cd>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  if (std::isnan(num) || std::isnan(den)) return std::nan("");
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// exp(-2πi(u·r/nh + v·c/nw)): the spectrum of an impulse at (r, c), also the shift factor.
cd phase(const FftShape& s, int64_t u, int64_t v, int64_t r, int64_t c) {
  const double t = -2.0 * std::numbers::pi *
                   (double((u * r) % s.nh) / double(s.nh) + double((v * c) % s.nw) / double(s.nw));
  return {std::cos(t), std::sin(t)};
}

}  // namespace

std::vector<SelfTestResult> fft_selftest(const FftShape& s, DType d, const ForwardBatch& forward, uint64_t seed) {
  if (s.batch < 1 || s.nh < 1 || s.nw < 1)
    throw InvalidArgument("fft self-test: bad shape " + s.to_string());
  std::mt19937_64 rng(seed);
  const double tol = fft_tolerance(d, s.nh * s.nw);
  const int64_t plane = s.nh * s.nw, oplane = s.nh * s.out_cols();
  std::vector<SelfTestResult> out;

  {  // linearity: F(a·x + b·y) = a·F(x) + b·F(y)
    std::normal_distribution<double> nd(0.0, 1.0);
    const cd a(nd(rng), s.real_input ? 0.0 : nd(rng)), b(nd(rng), s.real_input ? 0.0 : nd(rng));
    const auto x = random_signal(s, d, rng), y = random_signal(s, d, rng);
    std::vector<cd> z(x.size());
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = round_to(a * x[i] + b * y[i], d);
    const auto fx = transform(s, forward, x), fy = transform(s, forward, y), fz = transform(s, forward, z);
    std::vector<cd> expect(fx.size());
    for (std::size_t i = 0; i < fx.size(); ++i) expect[i] = a * fx[i] + b * fy[i];
    out.push_back({"linearity", rel_error(fz, expect), tol});
  }
  {  // impulse: a unit impulse at a random (r, c) of each signal has spectrum exp(-2πi(ur/nh + vc/nw))
    std::vector<cd> x(std::size_t(s.in_elems()), cd(0, 0)), expect(std::size_t(s.out_elems()));
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t r = std::uniform_int_distribution<int64_t>(0, s.nh - 1)(rng);
      const int64_t c = std::uniform_int_distribution<int64_t>(0, s.nw - 1)(rng);
      x[std::size_t(b * plane + r * s.nw + c)] = 1.0;
      for (int64_t u = 0; u < s.nh; ++u)
        for (int64_t v = 0; v < s.out_cols(); ++v) expect[std::size_t(b * oplane + u * s.out_cols() + v)] = phase(s, u, v, r, c);
    }
    out.push_back({"impulse", rel_error(transform(s, forward, x), expect), tol});
  }
  {  // time shift: F(x shifted cyclically by (r, c))[u, v] = F(x)[u, v] · exp(-2πi(ur/nh + vc/nw))
    const auto x = random_signal(s, d, rng);
    const int64_t r = std::uniform_int_distribution<int64_t>(0, s.nh - 1)(rng);
    const int64_t c = std::uniform_int_distribution<int64_t>(0, s.nw - 1)(rng);
    std::vector<cd> xs(x.size());
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t i = 0; i < s.nh; ++i)
        for (int64_t j = 0; j < s.nw; ++j)
          xs[std::size_t(b * plane + ((i + r) % s.nh) * s.nw + (j + c) % s.nw)] = x[std::size_t(b * plane + i * s.nw + j)];
    const auto fx = transform(s, forward, x), fs = transform(s, forward, xs);
    std::vector<cd> expect(fx.size());
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t u = 0; u < s.nh; ++u)
        for (int64_t v = 0; v < s.out_cols(); ++v) {
          const std::size_t k = std::size_t(b * oplane + u * s.out_cols() + v);
          expect[k] = fx[k] * phase(s, u, v, r, c);
        }
    out.push_back({"time shift", rel_error(fs, expect), tol});
  }
  return out;
}

namespace {

template <class T>
ForwardBatch make_fftw_forward(const FftShape& s) {
  using Api = Fftw<T>;
  return [s](const std::vector<cd>& in, std::vector<cd>& out) {
    int n[2] = {int(s.nh), int(s.nw)};
    const std::size_t nin = std::size_t(s.in_elems()), nout = std::size_t(s.out_elems());
    auto deleter = [](void* p) { Api::release(p); };
    std::unique_ptr<void, decltype(deleter)> ibuf(Api::alloc(nin * 2 * sizeof(T)), deleter);
    std::unique_ptr<void, decltype(deleter)> obuf(Api::alloc(nout * 2 * sizeof(T)), deleter);
    auto* o = static_cast<typename Api::Cpx*>(obuf.get());
    typename Api::Plan plan;
    if (s.real_input) {
      auto* i = static_cast<T*>(ibuf.get());
      plan = Api::many_r2c_2d(n, int(s.batch), i, o, FFTW_ESTIMATE);
      for (std::size_t k = 0; k < nin; ++k) i[k] = T(in[k].real());
    } else {
      auto* i = static_cast<typename Api::Cpx*>(ibuf.get());
      plan = Api::many_c2c_2d(n, int(s.batch), i, o, FFTW_FORWARD, FFTW_ESTIMATE);
      for (std::size_t k = 0; k < nin; ++k) { i[k][0] = T(in[k].real()); i[k][1] = T(in[k].imag()); }
    }
    if (!plan) throw Unsupported("fftw: no plan for " + s.to_string());
    Api::execute(plan);
    Api::destroy(plan);
    out.resize(nout);
    for (std::size_t k = 0; k < nout; ++k) out[k] = cd(double(o[k][0]), double(o[k][1]));
  };
}

}  // namespace

ForwardBatch fftw_forward(const FftShape& shape, DType precision) {
  return precision == DType::f32 ? make_fftw_forward<float>(shape) : make_fftw_forward<double>(shape);
}

std::vector<FftShape> selftest_shapes() {
  return {
      {1, 1, 1, false},  {3, 1, 2, true},    {4, 1, 16, false}, {2, 1, 13, true},  {5, 8, 8, true},
      {2, 16, 16, false}, {3, 32, 32, true}, {2, 7, 11, false}, {2, 9, 25, true},  {2, 12, 18, true},
      {1, 64, 64, true}, {2, 128, 64, false}, {1, 17, 31, true}, {4, 5, 6, true},  {1, 256, 256, true},
  };
}

}  // namespace fftconv
