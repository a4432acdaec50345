// The GPU rung of the reference ladder (validation/): direct time-domain convolution on the device
// in double, for problems too large for the CPU `direct`. Every product x·w is formed and summed in
// float64 exactly as the definition says; the sums are organised as im2col + cublasDgemm (Note
// [direct64 as GEMM] in direct64.cu) so that the paper's whole Table 3 grid can be checked in
// minutes rather than hours.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/problem.hpp"

namespace fftconv {

// One pass on device pointers (shapes as in common/backend.hpp Args; operands fp32, result fp64):
//   fprop:   input S×f×h×w, weight fo×f×kh×kw      -> result S×fo×out_h×out_w
//   bprop:   grad_output S×fo×out_h×out_w, weight  -> result S×f×h×w (P^T of the padded-grid gradient)
//   accgrad: input, grad_output                    -> result fo×f×kh×kw
// Unused operands may be nullptr. `stream` is a cudaStream_t (nullptr = default stream); the call
// returns when the result is complete on that stream. Scratch (the unrolled operand, at most
// `scratch_limit` bytes, 0 = a quarter of the free device memory capped at 1 GiB) is kept per host
// thread and reused by the next call. Throws InvalidProblem for an invalid problem, OutOfMemory when
// the scratch does not fit, CudaError on any CUDA or cuBLAS failure.
void direct64_pass_device(const ConvProblem& p, Pass pass, const float* input, const float* weight,
                          const float* grad_output, double* result, void* stream = nullptr,
                          std::size_t scratch_limit = 0);

// Host-callable: copies the host fp32 operands to the current device, runs the pass and returns the
// fp64 result (result_elems(pass) values). Throws as direct64_pass_device.
std::vector<double> direct64_pass(const ConvProblem& p, Pass pass, const float* input, const float* weight,
                                  const float* grad_output, std::size_t scratch_limit = 0);

// Is a CUDA device usable (cudaGetDeviceCount succeeds and is > 0)?
bool cuda_device_available();

}  // namespace fftconv
