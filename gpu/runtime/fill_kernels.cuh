// Device fills and norms shared by the GPU backends' autotuners, the validation sweep and the
// benchmarks: deterministic uniform operands, NaN poisoning, and the squared norms of a difference.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace fftconv::gpu_kernels {

// sums[0] += sum (x-y)^2, sums[1] += sum y^2 in double (sums must be zeroed by the caller).
void diff_norms(const float* x, const float* y, int64_t n, double* sums, cudaStream_t stream);

// Fills n floats with a deterministic pseudo-random sequence in [-1, 1) (hash of seed and index).
void fill_uniform(float* x, int64_t n, uint64_t seed, cudaStream_t stream);

// Fills n floats with a quiet NaN.
void fill_nan(float* x, int64_t n, cudaStream_t stream);

}  // namespace fftconv::gpu_kernels
