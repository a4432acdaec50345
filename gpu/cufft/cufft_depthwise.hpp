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
// memory traffic, while its time-domain cost grows with kh·kw: large kernels (13-51 in RepLKNet and
// SLaK) are where the FFT wins most. So the traffic is cut twice. The basis is the smallest
// 2,3,5,7-smooth size holding the problem's circular extent per side (Note [wrapped padding]: zero
// padding needs n + p, not n + 2p), pinnable with basis_h/w. And cuFFT callbacks (edges=callback;
// Note [cufft callbacks]) do the rest inside the transforms: the R2C loads the unpadded planes, its
// store multiplies by the channel's kernel spectrum (fprop, bprop), and the C2R stores the clipped
// window, leaving one read and one write of the spectra per transform. edges=copy runs the pad,
// product and clip as kernels of their own; neither wins everywhere (the callbacks slow some of
// cuFFT's kernels), so with autotune both are timed on the two smallest bases. Stride 1, no
// dilation, no bias (the lowering above the backends adds those). (H100, RepLKNet 31x31 at 56x56,
// fprop: 1.54 ms by copies at 90x90, 1.00 ms by callbacks at 72x72.)

// The plan of a depthwise problem (is_depthwise(p)) for any pass. Throws Unsupported for other
// problems, OutOfMemory when its buffers do not fit.
std::unique_ptr<Plan> make_cufft_depthwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts);

}  // namespace fftconv
