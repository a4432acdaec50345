// Device helpers of the FFT benchmark: a counter-based uniform fill (no host round trip for
// gigabyte buffers) and a device-side normwise comparison that also counts non-finite values.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cuda_check.hpp"

namespace fftconv::bench {

struct ErrorSums {
  double diff_sq = 0, ref_sq = 0;
  unsigned long long non_finite = 0;  // non-finite values in the tested array
};

namespace detail {

__device__ inline uint64_t mix64(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void fill_uniform_kernel(float* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = float(mix64(seed ^ mix64(uint64_t(i))) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void compare_kernel(const float* got, const float* ref, int64_t n, ErrorSums* sums) {
  double d = 0, r = 0;
  unsigned long long bad = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float g = got[i], e = ref[i];
    if (!isfinite(g)) {
      ++bad;
      continue;
    }
    d += double(g - e) * double(g - e);
    r += double(e) * double(e);
  }
  for (int o = 16; o > 0; o /= 2) {
    d += __shfl_xor_sync(0xffffffffu, d, o);
    r += __shfl_xor_sync(0xffffffffu, r, o);
    bad += __shfl_xor_sync(0xffffffffu, bad, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&sums->diff_sq, d);
    atomicAdd(&sums->ref_sq, r);
    atomicAdd(&sums->non_finite, bad);
  }
}

}  // namespace detail

// p[i] uniform in [-1, 1), a pure function of (seed, i).
inline void fill_uniform(float* p, int64_t n, uint64_t seed, cudaStream_t stream) {
  detail::fill_uniform_kernel<<<1024, 256, 0, stream>>>(p, n, seed);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

// Sums of (got-ref)^2 and ref^2 over n floats, and the count of non-finite got values. Synchronizes.
inline ErrorSums compare_on_device(const float* got, const float* ref, int64_t n, cudaStream_t stream) {
  DeviceBuffer d_sums(sizeof(ErrorSums));
  FFTCONV_CUDA_CHECK(cudaMemsetAsync(d_sums.get(), 0, sizeof(ErrorSums), stream));
  detail::compare_kernel<<<1024, 256, 0, stream>>>(got, ref, n, d_sums.as<ErrorSums>());
  FFTCONV_CUDA_CHECK_LAUNCH();
  ErrorSums h;
  FFTCONV_CUDA_CHECK(cudaMemcpyAsync(&h, d_sums.get(), sizeof h, cudaMemcpyDeviceToHost, stream));
  FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h;
}

}  // namespace fftconv::bench
