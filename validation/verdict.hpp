// One verdict on a pass's result against its float64 reference, the way every caller judges it:
// normwise errors (compare.hpp), the tolerance model with Note [cancellation] (tolerance.hpp).
// Unwritten elements (still NaN from the poison) count as non-finite and fail.
#pragma once
#include <cstdint>
#include <vector>

#include "common/problem.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/tolerance.hpp"

namespace fftconv {

struct Verdict {
  ErrorStats error;
  Tolerance tol;
  bool ok = false;
};

// basis_elems as for tolerance(): Nh·Nw of the transform, 1 for time-domain backends.
// rms_a, rms_b: root mean square of the two operands the pass reads (operand_rms).
// products: the precision the plan's products ran in (Plan::last_products(); tf32 widens the bound).
Verdict judge_stats(const ConvProblem& p, Pass pass, const ErrorStats& error, double rms_a, double rms_b,
                    int64_t basis_elems, ProductMath products = ProductMath::fp32);
Verdict judge_result(const ConvProblem& p, Pass pass, const PassData& d, const std::vector<double>& ref,
                     int64_t basis_elems, ProductMath products = ProductMath::fp32);
// The precision a plan's last execute() used for its products (fp32 for plans without products).
ProductMath plan_product_math(const Plan& plan);

// The untiled power-of-two basis of a problem, an upper bound of every FFT backend's basis.
int64_t pow2_basis_elems(const ConvProblem& p);

}  // namespace fftconv
