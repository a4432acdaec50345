// The `direct` backend: the ground truth as a Backend (float32 and float64 host tensors).
#include <sstream>

#include "common/errors.hpp"
#include "ref/backends.hpp"
#include "ref/direct.hpp"
#include "ref/parallel.hpp"

namespace fftconv {
namespace {

class DirectPlan final : public Plan {
 public:
  DirectPlan(ConvProblem p, Pass pass, int threads) : p_(p), pass_(pass), threads_(plan_threads(threads)) {}
  std::size_t workspace_bytes() const override { return 0; }
  void execute(const Args& a) const override {
    require_operands(a, p_, pass_, "direct");
    if (a.dtype == DType::f32) run<float>(a);
    else run<double>(a);
  }
  template <class T>
  void run(const Args& a) const {
    direct_pass<T>(p_, pass_, static_cast<const T*>(a.input), static_cast<const T*>(a.weight),
                   static_cast<const T*>(a.grad_output), static_cast<T*>(a.result), static_cast<const T*>(a.bias),
                   static_cast<T*>(a.grad_bias), threads_);
  }
  std::string describe() const override {
    return "direct: time-domain loops over the padded input, accumulating in double (" +
           std::to_string(int64_t(p_.madds())) + " multiply-adds); " + std::to_string(threads_) + " threads";
  }

 private:
  ConvProblem p_;
  Pass pass_;
  int threads_;
};

class DirectBackend final : public Backend {
 public:
  std::string_view name() const override { return "direct"; }
  Location location() const override { return Location::host; }
  Support supports(const ConvProblem& p, Pass, DType) const override {
    return problem_support(p);
  }
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const override {
    check_option_keys(*this, opts);  // direct has no options
    require_fp32_products(opts, "direct");
    p.validate();
    if (opts.tile.kind != TileSpec::Kind::none)
      throw Unsupported("direct: tile must be none (the ground truth is never tiled), got '" +
                        opts.tile.to_string() + "'");
    return std::make_unique<DirectPlan>(p, pass, opts.threads);
  }
  std::string_view summary() const override {
    return "time-domain loops, double accumulation; the ground truth (float32 and float64; every option natively)";
  }
};

}  // namespace

std::shared_ptr<const Backend> make_direct_backend() { return std::make_shared<DirectBackend>(); }

std::vector<std::shared_ptr<const Backend>> make_ref_backends() {
  return {make_fftw_backend(), make_im2col_backend(), make_direct_backend()};
}

}  // namespace fftconv
