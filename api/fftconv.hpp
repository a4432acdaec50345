// The public entry point: every built-in backend in selection order, plus the core types.
#pragma once
#include "common/backend.hpp"
#include "common/errors.hpp"
#include "common/problem.hpp"
#include "common/tensor.hpp"

namespace fftconv {

// fbfft, cufft (when built with CUDA), fftw, im2col, direct — in this order, so that
// select_backend() prefers the GPU, then FFT, then time-domain code. Built once, thread-safe.
const Registry& builtin_registry();

}  // namespace fftconv
