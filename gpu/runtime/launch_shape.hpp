// Launch shapes on the current device: the wave of resident blocks or clusters of a kernel, its
// attributes set once, the multiprocessor count. Shared by the transforms (gpu/fft) and the
// products (gpu/gemm).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

// Blocks for `work_blocks` blocks of work on the current device: at most one full wave of resident
// blocks (the kernels loop over their work, so per-thread twiddle set-up is amortized). With
// `cluster` > 1 the kernel is launched as clusters of that many blocks and the wave is
// cudaOccupancyMaxActiveClusters' count (Note [cluster waves]); work_blocks is then a multiple of
// `cluster`, and so is the result.
int grid_blocks(const void* kernel, int threads, int smem_bytes, int64_t work_blocks, int cluster = 1);
// Sets the kernel's dynamic shared memory limit to at least smem_bytes (when above the default
// 48 KiB) and, with cluster_load_balancing, its cluster scheduling policy to load balancing, once
// per kernel and device (Note [kernel attributes once]). Before any occupancy query or launch.
void prepare_kernel(const void* kernel, int smem_bytes, bool cluster_load_balancing = false);
// Multiprocessors of the current device (cached per device).
int sm_count();

// make(device) for the current device, computed the first time a device asks (under a lock, so
// once); the reference stays valid. Each call site (each `make` type) has its own values.
template <class T, class Make>
const T& once_per_device(Make&& make) {
  static std::mutex mutex;
  static std::map<int, T> values;  // (map nodes do not move)
  int device = 0;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  auto it = values.find(device);
  if (it == values.end()) it = values.emplace(device, make(device)).first;
  return it->second;
}

}  // namespace fftconv
