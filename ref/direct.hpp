// Direct convolution, the ground truth: plain loops accumulating in double over the definition of
// torch.nn.functional.conv2d (stride, dilation, groups, bias, zero / mirror / circular padding).
// Templated on the element type so float32 and float64 tensors can both be checked.
#pragma once
#include "common/problem.hpp"

namespace fftconv {

// Computes one pass. Shapes (NCHW): input S×f×h×w, weight fo×(f/g)×kh×kw,
// grad_output S×fo×out_h×out_w; result is output (fprop), gradInput (bprop) or gradWeight (accgrad).
// With p.bias, fprop adds bias (fo values) and accgrad writes grad_bias (fo values, the sum of
// grad_output over S, out_h, out_w); grad_bias may be nullptr (not computed).
// Unused operands may be nullptr. threads: the OpenMP team (0 = OpenMP's default). Throws
// InvalidProblem for an invalid problem, OutOfMemory when its per-thread scratch cannot be allocated.
template <class T>
void direct_pass(const ConvProblem& p, Pass pass, const T* input, const T* weight, const T* grad_output,
                 T* result, const T* bias = nullptr, T* grad_bias = nullptr, int threads = 0);

extern template void direct_pass<float>(const ConvProblem&, Pass, const float*, const float*, const float*, float*,
                                        const float*, float*, int);
extern template void direct_pass<double>(const ConvProblem&, Pass, const double*, const double*, const double*,
                                         double*, const double*, double*, int);

}  // namespace fftconv
