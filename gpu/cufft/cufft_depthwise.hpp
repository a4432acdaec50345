// Depthwise convolution on cuFFT (Note [depthwise products]): groups = f = fo, one kernel per
// channel, so the product of each frequency is one complex scalar per (image, channel), no GEMM.
#pragma once
#include <memory>

#include "common/backend.hpp"

namespace fftconv {

// Note [depthwise products]
// A depthwise layer (g = f = fo = C) convolves each channel with its own kh×kw kernel. In the
// frequency domain the per-frequency matrix product of a dense layer becomes a diagonal one: fprop
// multiplies every input spectrum by its channel's conjugated kernel spectrum, bprop by the kernel
// spectrum, and accGrad sums X·conj(G) over the images of each channel. The pass is then bound by
// memory traffic (pad, R2C, the pointwise product in place, C2R, clip), while its time-domain cost
// grows with kh·kw: large kernels (13-51 in RepLKNet and SLaK) are where the FFT wins most. The
// basis is the smallest 2,3,5,7-smooth size holding the padded input per side (pinnable with
// basis_h/w); stride 1, no dilation, no bias (the lowering above the backends adds those).
bool depthwise_native(const ConvProblem& p);

// The plan of a depthwise problem (depthwise_native(p)) for any pass. Throws Unsupported for other
// problems, OutOfMemory when its buffers do not fit.
std::unique_ptr<Plan> make_cufft_depthwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts);

}  // namespace fftconv
