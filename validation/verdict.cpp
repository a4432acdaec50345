// judge_result (see verdict.hpp).
#include "validation/verdict.hpp"

#include <algorithm>
#include <cmath>

#include "common/fft_size.hpp"

namespace fftconv {

Verdict judge_stats(const ConvProblem& p, Pass pass, const ErrorStats& error, double rms_a, double rms_b,
                    int64_t basis_elems, ProductMath products) {
  Verdict v;
  v.error = error;
  // A reference of exact zeros (every output reads only zero padding, possible with stride and
  // dilation): the errors are measured against the expected norm of Note [cancellation] instead.
  const int64_t n = p.result_elems(pass);
  const double expected = std::sqrt(double(n) * double(std::max<int64_t>(p.reduction_length(pass), 1))) * rms_a * rms_b;
  if (!(error.ref_norm > 0) && error.finite_ok() && expected > 0) {
    v.error.rel_l2 = error.diff_norm / expected;
    v.error.max_abs_rel = error.max_diff / (expected / std::sqrt(double(std::max<int64_t>(n, 1))));
  }
  v.tol = with_cancellation(
      tolerance(p, pass, DType::f32, basis_elems, products),
      cancellation_factor(p.result_elems(pass), p.reduction_length(pass), rms_a, rms_b, v.error.ref_norm));
  v.ok = v.error.finite_ok() && v.error.rel_l2 <= v.tol.rel_l2 && v.error.max_abs_rel <= v.tol.max_abs_rel;
  return v;
}

Verdict judge_result(const ConvProblem& p, Pass pass, const PassData& d, const std::vector<double>& ref,
                     int64_t basis_elems, ProductMath products) {
  const auto [rms_a, rms_b] = operand_rms(d, pass);
  return judge_stats(p, pass, compare(d.result.data(), ref.data(), int64_t(ref.size())), rms_a, rms_b, basis_elems,
                     products);
}

ProductMath plan_product_math(const Plan& plan) {
  const std::string m = plan.last_products().math;
  return m.empty() ? ProductMath::fp32 : parse_product_math(m);
}

int64_t pow2_basis_elems(const ConvProblem& p) { return next_pow2(p.padded_h()) * next_pow2(p.padded_w()); }

}  // namespace fftconv
