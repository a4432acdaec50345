// The GPU rung of the reference ladder: direct time-domain convolution on the device, one thread per
// result element accumulating in double, for problems too large for the CPU `direct` (validation/).
#pragma once
#include <cstdint>
#include <vector>

#include "common/problem.hpp"

namespace fftconv {

// One pass on device pointers (shapes as in common/backend.hpp Args; operands fp32, result fp64):
//   fprop:   input S×f×h×w, weight fo×f×kh×kw      -> result S×fo×out_h×out_w
//   bprop:   grad_output S×fo×out_h×out_w, weight  -> result S×f×h×w (P^T of the padded-grid gradient)
//   accgrad: input, grad_output                    -> result fo×f×kh×kw
// Unused operands may be nullptr. `stream` is a cudaStream_t (nullptr = default stream). Asynchronous;
// launch errors throw CudaError. Throws InvalidProblem for an invalid problem.
void direct64_pass_device(const ConvProblem& p, Pass pass, const float* input, const float* weight,
                          const float* grad_output, double* result, void* stream = nullptr);

// Host-callable: copies the host fp32 operands to the current device, runs the pass and returns the
// fp64 result (result_elems(pass) values). Throws OutOfMemory when the device buffers do not fit,
// CudaError on any CUDA failure.
std::vector<double> direct64_pass(const ConvProblem& p, Pass pass, const float* input, const float* weight,
                                  const float* grad_output);

// Is a CUDA device usable (cudaGetDeviceCount succeeds and is > 0)?
bool cuda_device_available();

}  // namespace fftconv
