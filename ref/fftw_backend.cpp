// The `fftw` backend: the paper's Table 1 pipeline on the CPU (FFTW3 + Eigen + OpenMP), untiled
// or over the shared tiling planner's tiles (ref/fftw_tiled.cpp). Basis chosen among 2,3,5,7-smooth
// sizes by a cost estimate; reduction chunks chosen to fit a workspace budget.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "common/padding.hpp"
#include "common/tensor.hpp"
#include "ref/backends.hpp"
#include "ref/fftw_depthwise.hpp"
#include "ref/fftw_pass.hpp"
#include "tiling/planner.hpp"

namespace fftconv {

std::size_t touched_bytes(const ConvProblem& p, DType d) {
  const std::size_t e = d == DType::f32 ? 4 : 8;
  return std::size_t(p.input_elems() + p.weight_elems() + p.output_elems()) * e;
}

const std::vector<std::string_view>& fftw_option_keys() {
  static const std::vector<std::string_view> keys = with_tiling_option_keys({"fftw_planner", "fftw_cgemm"});
  return keys;
}

EngineOptions engine_options(const PlanOptions& o) {
  check_option_keys("fftw", o.extra, fftw_option_keys());
  auto pick = [&](const char* key, const char* a, const char* b) {
    auto it = o.extra.find(key);
    if (it == o.extra.end() || it->second == a) return false;
    if (it->second == b) return true;
    throw InvalidArgument(std::string(key) + ": expected " + a + " or " + b + ", got '" + it->second + "'");
  };
  EngineOptions e;
  e.measure = !pick("fftw_planner", "measure", "estimate");
  e.eigen_products = pick("fftw_cgemm", "auto", "eigen");
  e.threads = o.threads;
  e.wisdom_stem = e.measure ? fftw_wisdom_stem(o.tune_cache) : std::string();  // only measuring learns
  return e;
}

std::size_t default_budget(const ConvProblem& p, const PlanOptions& o, std::size_t minimum) {
  if (o.workspace_limit > 0) return o.workspace_limit;
  // Note [fftw workspace budget]: by default the frequency buffers may take as much memory as the
  // tensors the pass touches (at least 8 MiB), so peak memory stays a small multiple of the data;
  // and at least one chunk of the basis (a pinned basis larger than the default choice, e.g. 256x256
  // for a 198x198 padded input, needed 9.77 MB where the tensors take 9.16).
  return std::max({touched_bytes(p, o.dtype), std::size_t(8) << 20, minimum});
}

PassShape pass_shape(const ConvProblem& p, Pass pass) {
  // Rows of the input in the basis that can be nonzero (and of gradInput that are kept): the padded
  // side, or with zero padding only up to the end of the data (Note [wrapped padding]).
  const int64_t hp = p.padding == Padding::zero ? p.h + p.ph : p.padded_h(), oh = p.out_h(), kh = p.kh;
  switch (pass) {
    case Pass::fprop: return {p.S, p.f, p.fo, false, true, hp, kh, oh, "C[S][fo] = X[S][f] * conj(W[fo][f])^T"};
    case Pass::bprop: return {p.S, p.fo, p.f, false, false, oh, kh, hp, "C[S][f] = G[S][fo] * W[fo][f]"};
    case Pass::accgrad: return {p.fo, p.S, p.f, true, false, oh, hp, kh, "C[fo][f] = conj(G[S][fo])^T * X[S][f]"};
  }
  return {};
}

BasisChoice choose_basis(int64_t need_h, int64_t need_w, const PassShape& sh, const PlanOptions& o) {
  BasisChoice bc;
  std::vector<int64_t> hs = o.basis_h > 0 ? std::vector<int64_t>{o.basis_h} : smooth7_candidates(need_h);
  std::vector<int64_t> ws = o.basis_w > 0 ? std::vector<int64_t>{o.basis_w} : smooth7_candidates(need_w);
  if (o.basis_h > 0 && o.basis_h < need_h)
    throw InvalidArgument("basis_h: " + std::to_string(o.basis_h) + " is below the needed " + std::to_string(need_h));
  if (o.basis_w > 0 && o.basis_w < need_w)
    throw InvalidArgument("basis_w: " + std::to_string(o.basis_w) + " is below the needed " + std::to_string(need_w));
  std::ostringstream why;
  double best = 0;
  for (int64_t nh : hs)
    for (int64_t nw : ws) {
      const double fft = double(sh.M * sh.R) * rfft2_flops_rows(nh, nw, sh.rows_a) +
                         double(sh.R * sh.N) * rfft2_flops_rows(nh, nw, sh.rows_b) +
                         double(sh.M * sh.N) * rfft2_flops_rows(nh, nw, sh.rows_c);
      const double gemm = 8.0 * double(sh.M) * double(sh.R) * double(sh.N) * double(nh * (nw / 2 + 1));
      const double cost = fft + gemm;
      char line[160];
      std::snprintf(line, sizeof line, "%s%lldx%lld: %.3g flop (fft %.3g + cgemm %.3g)", why.tellp() ? "; " : "",
                    (long long)nh, (long long)nw, cost, fft, gemm);
      why << line;
      if (bc.nh == 0 || cost < best) { best = cost; bc.nh = nh; bc.nw = nw; }
    }
  bc.cost = best;
  bc.candidates = int64_t(hs.size() * ws.size());
  const auto label = [](int64_t h, int64_t w) { return std::to_string(h) + "x" + std::to_string(w); };
  bc.range = bc.candidates == 1 ? label(hs[0], ws[0]) : label(hs.front(), ws.front()) + " ... " + label(hs.back(), ws.back());
  bc.table = why.str();
  return bc;
}

namespace {

template <class T>
class FftwPlan final : public FftwPlanBase<T> {
  using Base = FftwPlanBase<T>;
  using Base::engine_, Base::opts_, Base::p_, Base::pass_, Base::steps_ptr;

 public:
  FftwPlan(const ConvProblem& p, Pass pass, const PlanOptions& o, std::string note)
      : Base(p, pass, o), note_(std::move(note)) {
    shape_ = pass_shape(p, pass);
    basis_ = choose_basis(p.wrapped_h(), p.wrapped_w(), shape_, o);  // Note [wrapped padding]
    engine_ = std::make_unique<FreqEngine<T>>(basis_.nh, basis_.nw, engine_options(o));
    budget_ = default_budget(p, o, engine_->workspace_bytes(1, 1, 1));
    chunks_ = engine_->chunk(shape_.M, shape_.R, shape_.N, budget_);
    if (pass != Pass::accgrad)  // weights from prepare_weights(): B whole, only M chunked
      prepared_chunks_ = this->prepared_chunks(shape_.M, shape_, budget_, chunks_);
  }
  std::size_t workspace_bytes() const override { return std::max(chunks_.workspace, prepared_chunks_.workspace); }
  std::pair<int64_t, int64_t> fourier_basis() const override { return {basis_.nh, basis_.nw}; }
  std::string candidates() const override { return basis_.table; }
  std::string describe() const override {
    std::ostringstream s;
    s << "fftw (" << to_string(opts_.dtype) << "): untiled, Fourier basis " << basis_.nh << "x" << basis_.nw
      << " for padded input " << p_.padded_h() << "x" << p_.padded_w() << ", the lowest estimated cost of "
      << basis_.candidates << " candidate bases (" << basis_.range << "); per frequency (" << engine_->nfreq() << " of them) " << shape_.formula
      << "; chunks M " << chunks_.mc << "/" << shape_.M << ", N " << chunks_.nc << "/" << shape_.N << ", workspace "
      << chunks_.workspace << " bytes (budget " << budget_ << "); " << engine_->threads()
      << " threads, products " << engine_->products() << this->prepared_text(prepared_chunks_, shape_.M) << note_;
    return s.str();
  }

 private:
  std::string note_;
  PassShape shape_;
  BasisChoice basis_;
  ChunkPlan chunks_, prepared_chunks_;
  std::size_t budget_ = 0;  // the chunks' workspace budget (Note [fftw workspace budget])
  void run(const Args& a, const FftwWeightSpectra<T>* prepared) const override {
    run_untiled<T>(*engine_, prepared ? prepared_chunks_ : chunks_, p_, pass_, static_cast<const T*>(a.input),
                   static_cast<const T*>(a.weight), static_cast<const T*>(a.grad_output), static_cast<T*>(a.result),
                   steps_ptr(), prepared);
  }
};

class FftwBackend final : public Backend {
 public:
  std::string_view name() const override { return "fftw"; }
  Location location() const override { return Location::host; }
  Support supports(const ConvProblem& p, Pass, DType) const override {
    if (problem_support(p).ok && is_fftw_depthwise(p)) return {};
    return dense_problem_support(p);
  }
  std::vector<std::string_view> option_keys() const override { return fftw_option_keys(); }
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& o) const override {
    check_option_keys(*this, o);
    require_fp32_products(o, "fftw");
    if (problem_support(p).ok && is_fftw_depthwise(p)) return make_fftw_depthwise_plan(p, pass, o);
    require_dense(p, "fftw");
    if (o.tile.kind != TileSpec::Kind::none) return make_fftw_tiled_plan(p, pass, o);
    return make_fftw_untiled_plan(p, pass, o);
  }
  std::string_view summary() const override {
    return "Table 1 pipeline: FFTW R2C/C2R + a complex product per frequency (float32: an AVX-512 kernel where built, else Eigen; float64: Eigen) + OpenMP; untiled or tiled (float32, float64)";
  }
};

}  // namespace

std::unique_ptr<Plan> make_fftw_untiled_plan(const ConvProblem& p, Pass pass, const PlanOptions& o, std::string note) {
  if (o.dtype == DType::f32) return std::make_unique<FftwPlan<float>>(p, pass, o, std::move(note));
  return std::make_unique<FftwPlan<double>>(p, pass, o, std::move(note));
}

std::shared_ptr<const Backend> make_fftw_backend() { return std::make_shared<FftwBackend>(); }

}  // namespace fftconv
