// 1×1 kernels on the cufft backend without transforms (Note [pointwise basis]).
#pragma once
#include <memory>

#include "common/backend.hpp"

namespace fftconv {

// Note [pointwise basis]
// The spectrum of a 1×1 kernel is the same at every frequency of any basis, so the product of every
// frequency is one matrix, W (fo×f), and by linearity the transforms around it cancel: the pass is
// the product of the spatial planes themselves, a basis of 1×1. fprop computes Y[s] = W·X[s] and
// bprop gX[s] = Wᵀ·G[s] as one strided batched SGEMM over the images, m = h·w; accGrad computes
// gW = Σ_s G[s]·X[s]ᵀ as per-image partial products (a batched SGEMM into the workspace, in chunks
// of images under the workspace limit) summed by one SGEMV per chunk. That is a quarter of the
// complex products' real flops over the same pixels (no Hermitian half-plane halves 8 real flops per
// complex term), and no transform. It applies to the dense problems with kh = kw = 1 and no
// padding, the form strided 1×1 layers (ResNet's downsampling shortcuts) take after the polyphase
// lowering; a pinned basis, tile or tensor-core math selects the FFT pipeline instead.

// The plan below computes the problems is_pointwise() (common/backend.hpp) accepts.

// The pointwise plan of such a problem for any pass, its accGrad partials within
// opts.workspace_limit (0: at most 256 MiB; below two images' partials, none). Throws Unsupported
// for other problems, OutOfMemory when its buffers do not fit.
std::unique_ptr<Plan> make_cufft_pointwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts);

}  // namespace fftconv
