// The tolerance model (Note [tolerance model] in tolerance.hpp).
#include "validation/tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace fftconv {

namespace {
constexpr double kSafety = 4.0;
constexpr double kMaxAbsFactor = 8.0;
}  // namespace

double unit_roundoff(DType d) { return d == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53); }

double tf32_product_error() { return kSafety * 2.0 * std::ldexp(1.0, -11); }

Tolerance tolerance(const ConvProblem& p, Pass pass, DType d, int64_t basis_elems, ProductMath products) {
  const double logn = std::log2(double(std::max<int64_t>(basis_elems, 2)));
  const double k = double(std::max<int64_t>(p.reduction_length(pass), 1));
  Tolerance t;
  // A float64 result is compared with a float64 reference carrying the same roundoff: count both.
  const double sides = d == DType::f64 ? 2.0 : 1.0;
  t.rel_l2 = sides * kSafety * unit_roundoff(d) * (logn + std::sqrt(k));
  if (products == ProductMath::tf32) t.rel_l2 += tf32_product_error();
  t.max_abs_rel = kMaxAbsFactor * t.rel_l2;
  return t;
}

std::string tolerance_formula() {
  return "rel_l2 <= 4*u*(log2(Nh*Nw) + sqrt(K)), max_abs_rel <= 8x that; u = 2^-24 (fp32), "
         "K = reduction length (fprop (f/g)*kh*kw, bprop (fo/g)*kh*kw, accgrad S*out_h*out_w)";
}

double cancellation_factor(int64_t result_elems, int64_t K, double rms_a, double rms_b, double ref_norm) {
  const double expected = std::sqrt(double(std::max<int64_t>(result_elems, 1)) * double(std::max<int64_t>(K, 1))) *
                          rms_a * rms_b;
  if (!(ref_norm > 0) || !std::isfinite(expected)) return 1.0;
  return std::max(1.0, expected / ref_norm);
}

Tolerance with_cancellation(Tolerance t, double factor) {
  t.rel_l2 *= factor;
  t.max_abs_rel *= factor;
  return t;
}

double adjoint_tolerance(const ConvProblem& p, DType d, int64_t basis_elems, ProductMath products) {
  double t = 0;
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
    t = std::max(t, tolerance(p, pass, d, basis_elems, products).rel_l2);
  return 2.0 * t;
}

double fft_tolerance(DType d, int64_t n) {
  return 2.0 * kSafety * unit_roundoff(d) * (std::log2(double(std::max<int64_t>(n, 2))) + 1.0);
}

}  // namespace fftconv
