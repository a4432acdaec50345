// Building blocks of the four-step kernels (fbfft_2d_fourstep.cu, fbfft_1d_reg.cu): a length-N
// transform split as N = R1 x 8 between lanes that exchange through shared memory, and the
// packed-row passes shared by the 2-D rows and the 1-D plane pairs. See Note [four-step 2-D kernels].
#pragma once
#include <cuda_runtime.h>

#include "gpu/fft/reg_fft.cuh"

namespace fftconv::fbfft::detail {

template <int N>
struct Split {
  static_assert(N == 32 || N == 64 || N == 128 || N == 256, "four-step split: N = 32, 64, 128 or 256");
  static constexpr int kR1 = N / 8, kLogR1 = ilog2(kR1), kTwStride = kR1 + 1;
};

__device__ __forceinline__ float2 swap_ri(float2 z) { return make_float2(z.y, z.x); }

// f(job, lane) for Jobs jobs of Tpj consecutive threads each (a job's lanes share a warp).
template <int Tpj, int Jobs, int Threads, class F>
__device__ __forceinline__ void for_jobs(F&& f) {
  static_assert(Threads % Tpj == 0 && (Tpj * Jobs) % Threads == 0 && 32 % Tpj == 0, "job shape");
#pragma unroll 1
  for (int g = threadIdx.x; g < Tpj * Jobs; g += Threads) f(g / Tpj, g % Tpj);
}

// f(c, lane) for Cols columns and Lanes lanes each, consecutive threads on consecutive columns.
template <int Lanes, int Cols, int Threads, class F>
__device__ __forceinline__ void for_cols(F&& f) {
  static_assert(Threads % Cols == 0 && (Lanes * Cols) % Threads == 0, "column shape");
#pragma unroll 1
  for (int g = threadIdx.x; g < Lanes * Cols; g += Threads) f(g % Cols, g / Cols);
}

// W_N^(a b) at [a * (R1 + 1) + b] for a < 8, b < R1.
template <int N>
__device__ void fill_twiddles(float2* tw, int nthreads) {
  using S = Split<N>;
  for (int e = threadIdx.x; e < 8 * S::kR1; e += nthreads) {
    const int a = e / S::kR1, b = e % S::kR1;
    tw[a * S::kTwStride + b] = twiddle(2 * a * b, N);
  }
}

// RegFft<R1> of z[n1] = x[8 n1 + n2], then times W_N^(n2 k1) (tw = the table row of n2):
// z[i] = Y[k1] W_N^(n2 k1) with k1 = bitrev(i).
template <int N>
__device__ __forceinline__ void pass1(float2 (&z)[Split<N>::kR1], const float2* tw) {
  using S = Split<N>;
  RegFft<S::kR1>::forward(z);
  static_for<S::kR1>([&](auto i) {
    constexpr int k1 = bitrev(i, S::kLogR1);
    if constexpr (k1 != 0) z[i] = cmul(z[i], tw[k1]);
  });
}

// Row pass 1 of job j, lane n2, from z (in registers) to the padded exchange rows.
template <class T, int N>
__device__ __forceinline__ void store_row_pass1(float2* data, int j, int n2, const float2 (&z)[Split<N>::kR1]) {
  using S = Split<N>;
  __syncwarp();  // the job's lanes have read their inputs
  float2* q = data + T::base(j) + n2 * S::kTwStride;
  static_for<S::kR1>([&](auto i) { q[bitrev(i, S::kLogR1)] = z[i]; });
}

// Row pass 2 of job j, lane k1: v[i] = X[k1 + R1 bitrev_8(i)].
template <class T, int N>
__device__ __forceinline__ void row_pass2(const float2* data, int j, int k1, float2 (&v)[8]) {
  using S = Split<N>;
  const float2* r = data + T::base(j) + k1;
  static_for<8>([&](auto n2) { v[n2] = r[n2 * S::kTwStride]; });
  RegFft<8>::forward(v);
}

// After row_pass2 on lane k1: o[i] = X[(N - k) mod N] for the k held in v[i] (from lane R1 - k1,
// register 7 - i; lane 0 holds its own partners). Shuffles: every lane of the warp must call it.
template <int N>
__device__ __forceinline__ void row_partners(const float2 (&v)[8], int k1, float2 (&o)[8]) {
  using S = Split<N>;
  const int src = (S::kR1 - k1) & (S::kR1 - 1);
  static_for<8>([&](auto i) {
    constexpr int mirror = 7 - i;
    const float2 sh = shfl2(v[mirror], src, S::kR1);
    constexpr int own = bitrev((8 - bitrev(i, 3)) & 7, 3);
    o[i] = k1 == 0 ? v[own] : sh;
  });
}

}  // namespace fftconv::fbfft::detail
