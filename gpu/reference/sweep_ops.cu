// Device helpers of the validation sweep (see sweep_ops.hpp). Reductions are two-stage with a fixed
// grid: each block reduces a fixed, strided subset into its slot, then one block reduces the slots
// in order, so results are bitwise repeatable (no floating-point atomics).
#include "gpu/reference/sweep_ops.hpp"

#include <algorithm>
#include <cmath>

#include "common/counter_rng.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/fill_kernels.cuh"

namespace fftconv {

namespace {

constexpr int kThreads = 256;
constexpr int kReduceBlocks = 512;  // fixed, so the summation order never depends on the device

unsigned blocks_for(int64_t n) { return grid_stride_blocks(n, kThreads); }

__global__ void fill_normal_kernel(float* x, int64_t n, uint64_t key) {
  const int64_t pairs = (n + 1) / 2;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs; i += int64_t(gridDim.x) * blockDim.x) {
    float a = 0, b = 0;
    normal_pair(key, i, a, b);
    x[2 * i] = a;
    if (2 * i + 1 < n) x[2 * i + 1] = b;
  }
}

// The per-thread partial of the error sums: 4 doubles + 2 counts.
struct Partial {
  double s[4];
  long long c[2];
  __device__ void zero() {
    s[0] = s[1] = s[2] = s[3] = 0;
    c[0] = c[1] = 0;
  }
  __device__ void add(const Partial& o) {
    s[0] += o.s[0], s[1] += o.s[1];
    s[2] = fmax(s[2], o.s[2]), s[3] = fmax(s[3], o.s[3]);
    c[0] += o.c[0], c[1] += o.c[1];
  }
};

// Tree reduction of one Partial per thread in shared memory; thread 0 returns the block's total.
__device__ Partial block_reduce(Partial mine) {
  __shared__ Partial shared[kThreads];
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (int(threadIdx.x) < stride) shared[threadIdx.x].add(shared[threadIdx.x + stride]);
    __syncthreads();
  }
  return shared[0];
}

__global__ void error_partials(const float* out, const double* ref, int64_t n, Partial* slots) {
  Partial p;
  p.zero();
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const double r = ref[i], o = double(out[i]);
    if (!isfinite(r)) { ++p.c[1]; continue; }
    if (!isfinite(o)) { ++p.c[0]; continue; }
    const double d = o - r;
    p.s[0] += d * d;
    p.s[1] += r * r;
    p.s[2] = fmax(p.s[2], fabs(d));
    p.s[3] = fmax(p.s[3], fabs(r));
  }
  const Partial total = block_reduce(p);
  if (threadIdx.x == 0) slots[blockIdx.x] = total;
}

__global__ void dot_partials(const float* a, const float* b, int64_t n, Partial* slots) {
  Partial p;
  p.zero();
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p.s[0] += double(a[i]) * double(b[i]);
  const Partial total = block_reduce(p);
  if (threadIdx.x == 0) slots[blockIdx.x] = total;
}

__global__ void reduce_slots(Partial* slots, int count) {
  Partial p;
  p.zero();
  for (int i = threadIdx.x; i < count; i += blockDim.x) p.add(slots[i]);
  const Partial total = block_reduce(p);
  if (threadIdx.x == 0) slots[0] = total;
}

// Runs `partials` over kReduceBlocks blocks, reduces the slots and returns the total.
template <class Launch>
Partial reduce(Launch&& partials) {
  DeviceBuffer slots(sizeof(Partial) * kReduceBlocks);
  partials(slots.as<Partial>());
  FFTCONV_CUDA_CHECK_LAUNCH();
  reduce_slots<<<1, kThreads>>>(slots.as<Partial>(), kReduceBlocks);
  FFTCONV_CUDA_CHECK_LAUNCH();
  Partial total;
  FFTCONV_CUDA_CHECK(cudaMemcpy(&total, slots.get(), sizeof total, cudaMemcpyDeviceToHost));
  return total;
}

}  // namespace

void fill_normal_device(float* x, int64_t n, uint64_t seed) {
  if (n <= 0) return;
  fill_normal_kernel<<<blocks_for((n + 1) / 2), kThreads>>>(x, n, normal_key(seed));
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void fill_nan_device(float* x, int64_t n) {
  if (n <= 0) return;
  gpu_kernels::fill_nan(x, n, nullptr);
}

DeviceErrorSums error_sums_device(const float* out, const double* ref, int64_t n) {
  DeviceErrorSums r;
  if (n <= 0) return r;
  const Partial t = reduce([&](Partial* slots) { error_partials<<<kReduceBlocks, kThreads>>>(out, ref, n, slots); });
  for (int k = 0; k < 4; ++k) r.sums[k] = t.s[k];
  r.counts[0] = t.c[0], r.counts[1] = t.c[1];
  return r;
}

double dot_device(const float* a, const float* b, int64_t n) {
  if (n <= 0) return 0.0;
  return reduce([&](Partial* slots) { dot_partials<<<kReduceBlocks, kThreads>>>(a, b, n, slots); }).s[0];
}

}  // namespace fftconv
