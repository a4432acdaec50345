// The `im2col` backend: unroll the padded input into a matrix and use one Eigen GEMM per sample
// (the "unrolling" strategy of the paper's Section 2), fp32. The CPU time-domain baseline.
#include <Eigen/Core>
#include <vector>

#include "common/errors.hpp"
#include "common/padding.hpp"
#include "ref/backends.hpp"

namespace fftconv {
namespace {

using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapF = Eigen::Map<MatF>;
using CMapF = Eigen::Map<const MatF>;

// col (f*kh*kw × out_h*out_w) of sample plane block x (f×h×w): col[(i,u,v)][(y,x)] = xpad[i][y+u][x+v].
void im2col(const ConvProblem& p, const float* x, float* col) {
  const int64_t oh = p.out_h(), ow = p.out_w();
#pragma omp parallel for collapse(2)
  for (int64_t i = 0; i < p.f; ++i)
    for (int64_t u = 0; u < p.kh; ++u)
      for (int64_t v = 0; v < p.kw; ++v) {
        float* row = col + ((i * p.kh + u) * p.kw + v) * oh * ow;
        const float* plane = x + i * p.h * p.w;
        for (int64_t y = 0; y < oh; ++y) {
          const int64_t r = padded_source(y + u, p.h, p.ph, p.padding);
          for (int64_t xx = 0; xx < ow; ++xx) {
            const int64_t c = padded_source(xx + v, p.w, p.pw, p.padding);
            row[y * ow + xx] = (r < 0 || c < 0) ? 0.0f : plane[r * p.w + c];
          }
        }
      }
}

// gpad[i] += scatter of col rows; then gradInput = P^T gpad (Note [bprop padding adjoint]).
void col2im_fold(const ConvProblem& p, const float* col, float* gx, std::vector<float>& gpad_all) {
  const int64_t oh = p.out_h(), ow = p.out_w(), hp = p.padded_h(), wp = p.padded_w();
  gpad_all.assign(p.f * hp * wp, 0.0f);
#pragma omp parallel for
  for (int64_t i = 0; i < p.f; ++i) {
    float* gpad = gpad_all.data() + i * hp * wp;
    for (int64_t u = 0; u < p.kh; ++u)
      for (int64_t v = 0; v < p.kw; ++v) {
        const float* row = col + ((i * p.kh + u) * p.kw + v) * oh * ow;
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) gpad[(y + u) * wp + xx + v] += row[y * ow + xx];
      }
    fold_padded_plane(gpad, wp, gx + i * p.h * p.w, p);
  }
}

class Im2colPlan final : public Plan {
 public:
  Im2colPlan(ConvProblem p, Pass pass) : p_(p), pass_(pass) {}
  std::size_t workspace_bytes() const override {
    std::size_t col = std::size_t(p_.f * p_.kh * p_.kw * p_.out_h() * p_.out_w()) * sizeof(float);
    if (pass_ == Pass::bprop) col += std::size_t(p_.f * p_.padded_h() * p_.padded_w()) * sizeof(float);
    return col;
  }
  void execute(const Args& a) const override {
    require_operands(a, pass_, "im2col");
    if (a.dtype != DType::f32) throw Unsupported("im2col: dtype must be float32");
    const ConvProblem& p = p_;
    const int64_t K = p.f * p.kh * p.kw, P = p.out_h() * p.out_w();
    std::vector<float> col(static_cast<size_t>(K * P)), gpad;
    auto* result = static_cast<float*>(a.result);
    const auto* x = static_cast<const float*>(a.input);
    const auto* g = static_cast<const float*>(a.grad_output);
    const auto* w = static_cast<const float*>(a.weight);
    MapF colm(col.data(), K, P);
    if (pass_ == Pass::accgrad) MapF(result, p.fo, K).setZero();
    for (int64_t s = 0; s < p.S; ++s) {
      switch (pass_) {
        case Pass::fprop:
          im2col(p, x + s * p.f * p.h * p.w, col.data());
          MapF(result + s * p.fo * P, p.fo, P).noalias() = CMapF(w, p.fo, K) * colm;
          break;
        case Pass::bprop:
          colm.noalias() = CMapF(w, p.fo, K).transpose() * CMapF(g + s * p.fo * P, p.fo, P);
          col2im_fold(p, col.data(), result + s * p.f * p.h * p.w, gpad);
          break;
        case Pass::accgrad:
          im2col(p, x + s * p.f * p.h * p.w, col.data());
          MapF(result, p.fo, K).noalias() += CMapF(g + s * p.fo * P, p.fo, P) * colm.transpose();
          break;
      }
    }
  }
  std::string describe() const override {
    const int64_t K = p_.f * p_.kh * p_.kw, P = p_.out_h() * p_.out_w();
    std::string shape = pass_ == Pass::fprop   ? std::to_string(p_.fo) + "x" + std::to_string(K) + " * " +
                                                   std::to_string(K) + "x" + std::to_string(P)
                        : pass_ == Pass::bprop ? std::to_string(K) + "x" + std::to_string(p_.fo) + " * " +
                                                   std::to_string(p_.fo) + "x" + std::to_string(P)
                                               : std::to_string(p_.fo) + "x" + std::to_string(P) + " * " +
                                                   std::to_string(P) + "x" + std::to_string(K);
    return "im2col: per sample, unrolled " + std::to_string(K) + "x" + std::to_string(P) +
           " matrix and one Eigen sgemm (" + shape + "), " + std::to_string(p_.S) + " samples";
  }

 private:
  ConvProblem p_;
  Pass pass_;
};

class Im2colBackend final : public Backend {
 public:
  std::string_view name() const override { return "im2col"; }
  Location location() const override { return Location::host; }
  Support supports(const ConvProblem& p, Pass, DType d) const override {
    if (d != DType::f32) return {false, "float32 only"};
    return problem_support(p);
  }
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const override {
    p.validate();
    if (opts.tile.kind != TileSpec::Kind::none)
      throw Unsupported("im2col: tile must be none, got '" + opts.tile.to_string() + "'");
    return std::make_unique<Im2colPlan>(p, pass);
  }
  std::string_view summary() const override { return "unroll + Eigen sgemm per sample (fp32 time-domain baseline)"; }
};

}  // namespace

std::shared_ptr<const Backend> make_im2col_backend() { return std::make_shared<Im2colBackend>(); }

}  // namespace fftconv
