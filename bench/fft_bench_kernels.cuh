// Device helpers of the FFT benchmark: a counter-based uniform fill (no host round trip for
// gigabyte buffers), a device-side normwise comparison that also counts non-finite values, and a
// streaming copy kernel (the same-size and same-shape copy baselines).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/dependent_launch.cuh"

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

// Reads n_in and writes n_out 16-byte pieces (dst[i] = src[i] for i < min, zeros beyond n_in):
// K pieces per thread, consecutive threads on consecutive pieces (coalesced), loads issued before
// stores; may be launched dependent, as the fbfft kernels are (Note [dependent launch]).
template <int K>
__global__ void __launch_bounds__(256) copy_kernel(float4* __restrict__ dst, int64_t n_out, const float4* __restrict__ src,
                                                   int64_t n_in) {
  const int64_t base = blockIdx.x * int64_t(256 * K) + threadIdx.x;
  wait_for_prior_grids();
  float4 v[K];
#pragma unroll
  for (int k = 0; k < K; ++k) v[k] = base + 256 * k < n_in ? src[base + 256 * k] : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int k = 0; k < K; ++k)
    if (base + 256 * k < n_out) dst[base + 256 * k] = v[k];
}

}  // namespace detail

// Reads n_in and writes n_out 16-byte pieces with a kernel (not cudaMemcpy, whose D2D copies
// captured in a graph may go through the copy engines): the same path as a transform kernel's loads
// and stores, launched as a programmatic dependent launch when `dependent`, like the fbfft kernels.
// dst[i] = src[i] below min(n_in, n_out), 0 from n_in to n_out; nothing is written from n_out on.
// pieces_per_thread (1, 2 or 4) trades bytes in flight per thread against blocks: four fill a
// large copy with fewer, longer threads; one spreads a small copy over more SMs.
inline void copy_device(float4* dst, int64_t n_out, const float4* src, int64_t n_in, cudaStream_t stream, bool dependent,
                        int pieces_per_thread = 4) {
  if (n_in < 0 || n_out < 0) throw InvalidArgument("copy_device: piece counts must be >= 0 (n_in " + std::to_string(n_in) +
                                                   ", n_out " + std::to_string(n_out) + ")");
  if (pieces_per_thread != 1 && pieces_per_thread != 2 && pieces_per_thread != 4)
    throw InvalidArgument("copy_device: pieces_per_thread must be 1, 2 or 4, got " + std::to_string(pieces_per_thread));
  const int64_t n = n_in > n_out ? n_in : n_out;
  if (n == 0) return;
  const int64_t per_block = 256 * int64_t(pieces_per_thread);
  const LaunchConfig cfg(dim3(static_cast<unsigned>((n + per_block - 1) / per_block)), dim3(256), 0, stream, dependent);
  void (*kernel)(float4*, int64_t, const float4*, int64_t) =
      pieces_per_thread == 1 ? detail::copy_kernel<1> : pieces_per_thread == 2 ? detail::copy_kernel<2> : detail::copy_kernel<4>;
  FFTCONV_CUDA_CHECK(cudaLaunchKernelEx(&cfg.config, kernel, dst, n_out, src, n_in));
}

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
