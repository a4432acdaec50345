// Running one plan on host PassData wherever its backend lives (device staging for CUDA backends),
// and the GPU reference rung (gpu/direct64), both only when CUDA is built (FFTCONV_HAVE_CUDA).
#pragma once
#include <string>
#include <vector>

#include "common/backend.hpp"
#include "validation/data.hpp"

namespace fftconv {

// Executes `plan` (made by `b`) on d's operands and writes d.result. For Location::cuda backends the
// operands and the NaN-poisoned result are copied to the current device and the result back.
// Returns the wall time of execute() in ms (device work synchronized). Throws what the plan throws;
// Unsupported for a CUDA backend in a build without CUDA.
double execute_pass(const Backend& b, const Plan& plan, PassData& d);

// Runs `plan` on device pointers `a` with the device synchronized before and after; returns the wall
// time of execute() in ms. Unsupported in a build without CUDA.
double execute_on_device(const Plan& plan, const Args& a);

// Is the gpu64 reference usable (CUDA built and a device present)?
bool gpu_reference_available();
// The float64 result of the pass on d's operands by the GPU direct kernel; throws Unsupported
// when gpu_reference_available() is false.
std::vector<double> gpu_reference(const ConvProblem& p, Pass pass, const PassData& d);
// Selects device local_rank % device count (no-op without CUDA, devices, or when local_rank < 0).
// Returns a line saying what was selected (empty when nothing was).
std::string select_device_for_rank(int local_rank);

}  // namespace fftconv
