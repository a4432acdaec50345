// Fills and norms on the device (see fill_kernels.cuh): grid-stride loops with 64-bit indices.
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/fill_kernels.cuh"

namespace fftconv::gpu_kernels {
namespace {

constexpr int kThreads = 256;
unsigned blocks_for(int64_t n) { return grid_stride_blocks(n, kThreads); }

__global__ void diff_norms_kernel(const float* __restrict__ x, const float* __restrict__ y, int64_t n,
                                  double* sums) {
  double d2 = 0.0, y2 = 0.0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double d = double(x[i]) - double(y[i]);
    d2 += d * d;
    y2 += double(y[i]) * double(y[i]);
  }
  for (int off = 16; off > 0; off /= 2) {
    d2 += __shfl_down_sync(0xffffffffu, d2, off);
    y2 += __shfl_down_sync(0xffffffffu, y2, off);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&sums[0], d2);
    atomicAdd(&sums[1], y2);
  }
}

__global__ void fill_uniform_kernel(float* x, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * uint64_t(i + 1);  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x[i] = float(double(z >> 40) * (1.0 / double(1ull << 23)) - 1.0);
  }
}

__global__ void fill_nan_kernel(float* x, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = __int_as_float(0x7fc00000);
}

}  // namespace

void diff_norms(const float* x, const float* y, int64_t n, double* sums, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = blocks_for(n) < 1024u ? blocks_for(n) : 1024u;
  diff_norms_kernel<<<blocks, kThreads, 0, stream>>>(x, y, n, sums);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void fill_uniform(float* x, int64_t n, uint64_t seed, cudaStream_t stream) {
  if (n == 0) return;
  fill_uniform_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n, seed);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void fill_nan(float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  fill_nan_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

}  // namespace fftconv::gpu_kernels
