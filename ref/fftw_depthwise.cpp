// The `fftw` backend's depthwise path: problems whose groups each hold one input channel (g = f,
// fo = g·m) run as transform, elementwise product per channel, inverse (Note [fftw depthwise]).
#include <omp.h>

#include <complex>
#include <sstream>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "common/padding.hpp"
#include "ref/fftw_api.hpp"
#include "ref/fftw_depthwise.hpp"
#include "ref/fftw_engine.hpp"
#include "ref/fftw_pass.hpp"

namespace fftconv {

// Note [fftw depthwise]
// With one input channel per group, the per-frequency product of the dense pipeline is a GEMM
// with a reduction of length 1 (fprop, accgrad over S aside): an elementwise product. This plan
// skips the engine's frequency-major transposition and GEMMs: every channel is transformed,
// multiplied by the m = fo/g kernel spectra of its group (computed once per execution) and
// transformed back, the channels spread over the OpenMP threads, each with its own buffers.
// Untiled only: a tiled request is answered with Unsupported, and the lowering then runs the
// groups one by one through the tiled dense plan.

bool is_fftw_depthwise(const ConvProblem& p) {
  return p.g > 1 && p.g == p.f && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && !p.bias &&
         p.padding != Padding::circular;
}

namespace {

template <class T>
struct Aligned {  // an FFTW-aligned buffer
  void* p = nullptr;
  explicit Aligned(std::size_t bytes) : p(Fftw<T>::alloc(std::max<std::size_t>(bytes, 64))) {
    if (!p) throw OutOfMemory("fftw depthwise: buffer of " + std::to_string(bytes) + " bytes", bytes);
  }
  ~Aligned() { Fftw<T>::release(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
};

template <class T>
class FftwDepthwisePlan final : public Plan {
  using C = std::complex<T>;

 public:
  FftwDepthwisePlan(const ConvProblem& p, Pass pass, const PlanOptions& o) : p_(p), pass_(pass), o_(o) {
    nh_ = next_smooth7(p.wrapped_h());  // Note [wrapped padding]
    nw_ = next_smooth7(p.wrapped_w());
    nf_ = nh_ * (nw_ / 2 + 1);
    const EngineOptions e = engine_options(o);
    const unsigned flags = e.measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    Aligned<T> re(std::size_t(nh_ * nw_) * sizeof(T)), cx(std::size_t(nf_) * sizeof(C));
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    load_fftw_wisdom<T>(e.wisdom_stem);  // Note [fftw wisdom]
    r2c_ = Fftw<T>::r2c(int(nh_), int(nw_), static_cast<T*>(re.p), static_cast<typename Fftw<T>::Cpx*>(cx.p), flags);
    c2r_ = Fftw<T>::c2r(int(nh_), int(nw_), static_cast<typename Fftw<T>::Cpx*>(cx.p), static_cast<T*>(re.p), flags);
    save_fftw_wisdom<T>(e.wisdom_stem);
    if (!r2c_ || !c2r_) throw Unsupported("fftw depthwise: FFTW could not plan a " + std::to_string(nh_) + "x" +
                                          std::to_string(nw_) + " transform");
  }
  ~FftwDepthwisePlan() override {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    if (r2c_) Fftw<T>::destroy(r2c_);
    if (c2r_) Fftw<T>::destroy(c2r_);
  }

  std::size_t workspace_bytes() const override {
    const int64_t m = p_.fo / p_.g;
    const std::size_t spectra = pass_ == Pass::accgrad ? 0 : std::size_t(p_.fo * nf_);
    return (spectra + std::size_t(threads()) * std::size_t((3 + m) * nf_)) * sizeof(C);
  }

  std::string describe() const override {
    std::ostringstream s;
    s << "fftw depthwise (" << to_string(o_.dtype) << "): untiled, Fourier basis " << nh_ << "x" << nw_
      << " for padded input " << p_.padded_h() << "x" << p_.padded_w() << "; " << p_.g << " channels x "
      << p_.fo / p_.g << " kernels each: per channel transform, elementwise product, inverse (no GEMM, Note "
      << "[fftw depthwise]); " << threads() << " threads";
    return s.str();
  }

  void execute(const Args& a) const override {
    require_operands(a, p_, pass_, "fftw");
    if (a.dtype != o_.dtype)
      throw InvalidArgument("fftw: args dtype " + std::string(to_string(a.dtype)) + " differs from the plan's " +
                            std::string(to_string(o_.dtype)));
    const auto* x = static_cast<const T*>(a.input);
    const auto* w = static_cast<const T*>(a.weight);
    const auto* g = static_cast<const T*>(a.grad_output);
    auto* out = static_cast<T*>(a.result);
    if (pass_ == Pass::accgrad) return accgrad(x, g, out);
    Aligned<T> wspec(std::size_t(p_.fo * nf_) * sizeof(C));  // the kernels' spectra
    C* W = static_cast<C*>(wspec.p);
    parallel([&](Buffers& b) {
#pragma omp for schedule(static)
      for (int64_t o = 0; o < p_.fo; ++o) {
        zero(b.re);
        load_window(w + o * p_.kh * p_.kw, p_.kh, p_.kw, 0, 0, p_.kh, p_.kw, b.re, nw_);
        forward(b.re, b.a);  // FFTW's new-array calls need the planning buffers' alignment
        std::copy(b.a, b.a + nf_, W + o * nf_);
      }
    });
    if (pass_ == Pass::fprop) fprop(x, W, out);
    else bprop(g, W, out);
  }

 private:
  struct Buffers {
    T* re;
    C* a;  // an operand's spectrum
    C* c;  // a product or a sum of products
    std::vector<C*> acc;
  };

  int threads() const { return o_.threads > 0 ? o_.threads : omp_get_max_threads(); }
  void zero(T* re) const { std::fill(re, re + nh_ * nw_, T(0)); }
  void forward(T* re, C* spec) const {
    Fftw<T>::exec_r2c(r2c_, re, reinterpret_cast<typename Fftw<T>::Cpx*>(spec));
  }
  void inverse(C* spec, T* re) const {  // destroys spec
    Fftw<T>::exec_c2r(c2r_, reinterpret_cast<typename Fftw<T>::Cpx*>(spec), re);
  }
  // Runs body(buffers) in an OpenMP parallel region with per-thread buffers (m accumulators).
  template <class F>
  void parallel(F&& body, int64_t accumulators = 0) const {
#pragma omp parallel num_threads(threads())
    {
      Aligned<T> re(std::size_t(nh_ * nw_) * sizeof(T)), sa(std::size_t(nf_) * sizeof(C)),
          sc(std::size_t(nf_) * sizeof(C)), sacc(std::size_t(std::max<int64_t>(accumulators, 1) * nf_) * sizeof(C));
      Buffers b{static_cast<T*>(re.p), static_cast<C*>(sa.p), static_cast<C*>(sc.p), {}};
      for (int64_t j = 0; j < accumulators; ++j) b.acc.push_back(static_cast<C*>(sacc.p) + j * nf_);
      body(b);
    }
  }
  // Copies the top-left rows×cols of the inverse (scaled by 1/(nh·nw)) into dst.
  void clip(const T* re, int64_t rows, int64_t cols, T* dst) const {
    const T scale = T(1) / T(nh_ * nw_);
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t xx = 0; xx < cols; ++xx) dst[y * cols + xx] = re[y * nw_ + xx] * scale;
  }

  // out[s][c·m+j] = x_pad[s][c] ⋆ w[c·m+j]: X · conj(W).
  void fprop(const T* x, const C* W, T* out) const {
    const int64_t m = p_.fo / p_.g, oh = p_.out_h(), ow = p_.out_w();
    parallel([&](Buffers& b) {
#pragma omp for schedule(static)
      for (int64_t sc = 0; sc < p_.S * p_.f; ++sc) {
        const int64_t s = sc / p_.f, c = sc % p_.f;
        zero(b.re);
        load_padded_window(p_, x + sc * p_.h * p_.w, 0, 0, p_.padded_h(), p_.padded_w(), b.re, nw_);
        forward(b.re, b.a);
        for (int64_t j = 0; j < m; ++j) {
          const C* Wo = W + (c * m + j) * nf_;
          for (int64_t e = 0; e < nf_; ++e) b.c[e] = b.a[e] * std::conj(Wo[e]);
          inverse(b.c, b.re);
          clip(b.re, oh, ow, out + ((s * p_.fo) + c * m + j) * oh * ow);
        }
      }
    });
  }

  // gpad[s][c] = sum_j g[s][c·m+j] * w[c·m+j] (full convolution): sum_j G · W; then P^T.
  void bprop(const T* g, const C* W, T* out) const {
    const int64_t m = p_.fo / p_.g, oh = p_.out_h(), ow = p_.out_w();
    const T scale = T(1) / T(nh_ * nw_);
    parallel([&](Buffers& b) {
#pragma omp for schedule(static)
      for (int64_t sc = 0; sc < p_.S * p_.f; ++sc) {
        const int64_t s = sc / p_.f, c = sc % p_.f;
        std::fill(b.c, b.c + nf_, C(0));
        for (int64_t j = 0; j < m; ++j) {
          const int64_t o = c * m + j;
          zero(b.re);
          load_window(g + (s * p_.fo + o) * oh * ow, oh, ow, 0, 0, oh, ow, b.re, nw_);
          forward(b.re, b.a);
          const C* Wo = W + o * nf_;
          for (int64_t e = 0; e < nf_; ++e) b.c[e] += b.a[e] * Wo[e];
        }
        inverse(b.c, b.re);
        for (int64_t e = 0; e < nh_ * nw_; ++e) b.re[e] *= scale;
        fold_padded_plane(b.re, nw_, out + sc * p_.h * p_.w, p_);
      }
    });
  }

  // gw[c·m+j] = sum_s x_pad[s][c] ⋆ g[s][c·m+j]: sum_s X · conj(G), the m kernels of a channel at once.
  void accgrad(const T* x, const T* g, T* out) const {
    const int64_t m = p_.fo / p_.g, oh = p_.out_h(), ow = p_.out_w();
    parallel(
        [&](Buffers& b) {
#pragma omp for schedule(static)
          for (int64_t c = 0; c < p_.f; ++c) {
            for (int64_t j = 0; j < m; ++j) std::fill(b.acc[std::size_t(j)], b.acc[std::size_t(j)] + nf_, C(0));
            for (int64_t s = 0; s < p_.S; ++s) {
              zero(b.re);
              load_padded_window(p_, x + (s * p_.f + c) * p_.h * p_.w, 0, 0, p_.padded_h(), p_.padded_w(), b.re, nw_);
              forward(b.re, b.a);
              for (int64_t j = 0; j < m; ++j) {
                zero(b.re);
                load_window(g + (s * p_.fo + c * m + j) * oh * ow, oh, ow, 0, 0, oh, ow, b.re, nw_);
                forward(b.re, b.c);
                C* acc = b.acc[std::size_t(j)];
                for (int64_t e = 0; e < nf_; ++e) acc[e] += b.a[e] * std::conj(b.c[e]);
              }
            }
            for (int64_t j = 0; j < m; ++j) {
              std::copy(b.acc[std::size_t(j)], b.acc[std::size_t(j)] + nf_, b.c);  // aligned, as planned
              inverse(b.c, b.re);
              clip(b.re, p_.kh, p_.kw, out + (c * m + j) * p_.kh * p_.kw);
            }
          }
        },
        m);
  }

  ConvProblem p_;
  Pass pass_;
  PlanOptions o_;
  int64_t nh_ = 0, nw_ = 0, nf_ = 0;
  typename Fftw<T>::Plan r2c_ = nullptr, c2r_ = nullptr;
};

}  // namespace

std::unique_ptr<Plan> make_fftw_depthwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& o) {
  p.validate();
  if (!is_fftw_depthwise(p)) throw Unsupported("fftw depthwise: not a depthwise problem: " + p.to_string());
  if (o.tile.kind != TileSpec::Kind::none)
    throw Unsupported("fftw: the depthwise path runs untiled (tile=" + o.tile.to_string() + ")");
  if (o.dtype == DType::f32) return std::make_unique<FftwDepthwisePlan<float>>(p, pass, o);
  return std::make_unique<FftwDepthwisePlan<double>>(p, pass, o);
}

}  // namespace fftconv
