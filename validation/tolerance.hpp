// The one tolerance model of fftconv, used by the validation suite and by every unit test.
//
// Note [tolerance model]
// A float32 result is accepted when its normwise error against a float64 reference satisfies
//   rel_l2 <= c · u · (log2(Nh·Nw) + sqrt(K))
// where u = 2^-24 (float32 unit roundoff; 2^-53 for float64 results), Nh·Nw is the Fourier basis
// the algorithm used (1 for time-domain algorithms), and K is the reduction length behind one
// result element ((f/g)·kh·kw for fprop, (fo/g)·kh·kw for bprop, S·out_h·out_w for accgrad and
// gradBias; g groups, whatever the stride and dilation: the taps a sum reads, not the zeros of a
// dilated or polyphase kernel).
// The log term is the classic error bound of Cooley–Tukey FFTs, whose normwise error grows like
// u·log2 N (Higham, "Accuracy and Stability of Numerical Algorithms", §24.1); the sqrt(K) term is the
// statistical growth of a float32 sum of K rounded products (the same book, §3.1 / §4: the worst case is
// u·K, random rounding errors give u·sqrt(K)). c = 4 is a safety factor; the max-abs criterion is
// max|out - ref| / max|ref| <= 8 × the rel_l2 tolerance (pointwise errors concentrate less evenly).
// For float64 results (checked against a float64 reference with the same roundoff) the bound is doubled.
// Non-finite values in a result whose reference is finite always fail.
#pragma once
#include <cstdint>
#include <string>

#include "common/backend.hpp"
#include "common/problem.hpp"

namespace fftconv {

struct Tolerance {
  double rel_l2 = 0;
  double max_abs_rel = 0;
};

double unit_roundoff(DType d);
// basis_elems = Nh·Nw of the transform used (tile size for tiled plans; 1 for time domain).
// products: the precision of the GPU backends' products (Note [tf32 tolerance]).
Tolerance tolerance(const ConvProblem& p, Pass pass, DType d, int64_t basis_elems,
                    ProductMath products = ProductMath::fp32);

// Note [tf32 tolerance]
// Products in plain TF32 (math=tf32) round each operand to 10 mantissa bits, a relative error of up
// to u_tf32 = 2^-11 per factor, independent from term to term: the sum of K such products carries a
// relative error of about 2·u_tf32 whatever K (the errors grow like sqrt(K), as the sum does for
// independent operands). Its tolerance adds c · 2 · u_tf32 (c = 4, about 3.9e-3) to the fp32 model.
// fp32 and 3xtf32 products are judged by the fp32 model alone.
double tf32_product_error();
// The formula as text, for reports.
std::string tolerance_formula();

// Note [cancellation]
// The model above is relative to ||ref||, but rounding errors scale with the magnitudes summed,
// not with the sum: when the terms cancel, ||ref|| is small and the relative error grows.
// For operands with independent entries the expected norm of a result of n elements, each a
// sum of K products, is sqrt(n·K)·rms(a)·rms(b). cancellation_factor() is that expected norm over
// the actual ||ref|| (at least 1), and with_cancellation() scales both bounds by it. It matters
// for results of few elements (a 1×1 output, kernel = input), where one unlucky sum is near zero.
double cancellation_factor(int64_t result_elems, int64_t K, double rms_a, double rms_b, double ref_norm);
Tolerance with_cancellation(Tolerance t, double factor);

// Note [adjoint tolerance]
// The adjoint identity <fprop(x,w), g> = <x, bprop(g,w)> = <w, accgrad(x,g)> is checked as
//   |lhs - rhs| / scale <= 2 · max over passes of tolerance(p, pass, d, basis).rel_l2,
// scale = max(||y||·||g||, ||x||·||gx||, ||w||·||gw||): by Cauchy–Schwarz an error δ in one pass's
// result moves its inner product by at most ||δ||·||other operand||, and each side carries one pass.
// Each result's norm is at least the one its sums would have without cancellation (Note
// [cancellation]): where every kernel tap of a strided, dilated layer lands in the padding, y, gx
// and gw are exactly zero and the backends' rounding noise would otherwise be measured against
// noise. Plans with tf32 products bring that mode's term along (Note [tf32 tolerance]).
double adjoint_tolerance(const ConvProblem& p, DType d, int64_t basis_elems,
                         ProductMath products = ProductMath::fp32);

// Note [fft self-test tolerance]
// A forward transform of length n = nh·nw (batch of signals, complex or real input) is accepted by
// the self-tests (linearity, impulse, time shift) when the normwise error of an identity that
// compares two computed transforms is at most 2 · 4 · u · (log2(n) + 1): each side carries the
// Cooley–Tukey bound u·log2 n (Higham §24.1) plus one rounding of the combined input to the
// transform's precision, with the model's safety factor 4.
double fft_tolerance(DType d, int64_t n);

}  // namespace fftconv
