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

// Where `auto` runs when the caller does not say: on the GPU when a CUDA backend is usable, else on
// the host.
Location default_location();

// The backend called `name`: a registry backend, or `auto` (api/auto_plan.hpp) of location `where`.
// Throws InvalidArgument listing the known names.
const Backend& find_backend(std::string_view name, Location where = default_location());

}  // namespace fftconv
