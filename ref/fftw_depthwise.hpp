// The fftw backend's depthwise path (ref/fftw_depthwise.cpp, Note [fftw depthwise]).
#pragma once
#include <memory>

#include "common/backend.hpp"

namespace fftconv {

// g = f > 1 (one input channel per group, fo = g·m) and otherwise dense: stride 1, no dilation,
// no bias, zero or mirror padding.
bool is_fftw_depthwise(const ConvProblem& p);
// The untiled depthwise plan; Unsupported for another problem or a tiled request.
std::unique_ptr<Plan> make_fftw_depthwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& o);

}  // namespace fftconv
