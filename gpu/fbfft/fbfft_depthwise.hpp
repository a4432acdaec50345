// Depthwise convolution on fbfft (Note [fused depthwise transforms], gpu/fft/reg_2d.cuh): the
// forward, the product by the channel's kernel spectrum and the inverse of fprop and bprop in one
// kernel per pass; accGrad transforms both operands and sums the products over the images.
#pragma once
#include <memory>

#include "common/backend.hpp"

namespace fftconv::fbfft_conv {

// Whether p is a depthwise problem (is_depthwise) that this path runs: zero padding (the
// transforms pad implicitly with zeros) and a circular extent (Note [wrapped padding]) within the
// largest fused side, 120.
Support depthwise_support(const ConvProblem& p);

// The plan of such a problem for any pass, untiled. With autotune and no pinned basis the two
// smallest sides are timed (the smallest, and the next power of two or the next side). Throws
// Unsupported for another problem, a fixed tile or a pinned kernel family other than registers,
// OutOfMemory when its buffers do not fit.
std::unique_ptr<Plan> make_depthwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts);

}  // namespace fftconv::fbfft_conv
