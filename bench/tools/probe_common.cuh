// What the standalone GPU probes of bench/tools share: exit on a failed CUDA or cuBLAS call, fill
// operands with reproducible values, time a call alone by its median (queued calls are timed by
// the library's own fftconv::time_gpu).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace fftconv::probe {

// The probe's name in its messages; main sets it.
inline const char* program = "probe";

// Exits with a message when a CUDA or cuBLAS call returned a status other than success (0).
inline void check(int status, const char* what) {
  if (status != 0) {
    std::fprintf(stderr, "%s: %s failed with status %d\n", program, what, status);
    std::exit(1);
  }
}

namespace {

// p[i] for i < n: hashed values in [-1, 1), the same for the same seed.
__global__ void fill_kernel(float* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = static_cast<float>(x & 0xffffu) / 32768.f - 1.f;
  }
}

}  // namespace

// Median of `repeat` event-timed calls, each alone on an idle device (its time includes the host's
// launch latency), after three untimed ones (ms).
template <class F>
float median_ms(F&& f, int repeat) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> v;
  for (int i = 0; i < repeat; ++i) {
    check(cudaEventRecord(a), "cudaEventRecord");
    f();
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
    v.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace fftconv::probe
