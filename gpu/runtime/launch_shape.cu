// Launch shapes on the current device (launch_shape.hpp).
#include "gpu/runtime/launch_shape.hpp"

#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/dependent_launch.cuh"

namespace fftconv {

// Note [cluster waves]
// A cluster's blocks must be co-resident on the multiprocessors of one GPC, and the H100's GPCs do
// not all hold the same number of them: with four blocks per SM the 132 SMs hold 528 blocks but only
// 124 clusters of four (cudaOccupancyMaxActiveClusters; ncu's "Max Active Clusters"). A grid of
// 132 looping clusters left 8 of them waiting for a slot, to run their whole share of the planes
// after the others had finished. The wave of a cluster kernel is the occupancy query's count of
// clusters, never blocks per SM times SMs (the 64x64 freq_major forward at 16,384 planes: 373 ->
// 309 us).
int grid_blocks(const void* kernel, int threads, int smem_bytes, int64_t work_blocks, int cluster) {
  // One full wave per (kernel, device, block shape), computed once: the occupancy query costs microseconds.
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int, int, int>, int64_t> waves;
  int device = 0;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(kernel, device, threads, smem_bytes, cluster);
  int64_t wave = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = waves.find(key);
    if (it != waves.end()) wave = it->second;
  }
  if (wave == 0) {
    if (cluster > 1) {
      const LaunchConfig one(dim3(static_cast<unsigned>(cluster)), dim3(static_cast<unsigned>(threads)),
                             static_cast<std::size_t>(smem_bytes), nullptr, false, cluster);  // one cluster's shape
      int clusters = 0;
      FFTCONV_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &one.config));
      wave = static_cast<int64_t>(cluster) * (clusters > 0 ? clusters : 1);
    } else {
      int per_sm = 0;
      FFTCONV_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes));
      wave = static_cast<int64_t>(sm_count()) * (per_sm > 0 ? per_sm : 1);
    }
    std::lock_guard<std::mutex> lock(mutex);
    waves[key] = wave;
  }
  const int64_t floor = cluster > 1 ? cluster : 1;
  return static_cast<int>(work_blocks < wave ? (work_blocks > floor ? work_blocks : floor) : wave);
}

// Note [kernel attributes once]
// The launchers used to call cudaFuncSetAttribute before every launch (the dynamic shared memory
// limit, and for the cluster kernels the scheduling policy): a host call per launch for a setting
// that belongs to the kernel on a device. It is now set the first time a (kernel, device) needs it,
// and again only when a launch asks for more shared memory than was allowed before (the limit only
// grows, so a smaller launch of the same kernel stays valid). Launches within the default limit and
// without a policy, most of them, return before any lookup.
void prepare_kernel(const void* kernel, int smem_bytes, bool cluster_load_balancing) {
  constexpr int kDefaultSmem = 48 * 1024;  // the default limit: nothing to set below it
  if (smem_bytes <= kDefaultSmem && !cluster_load_balancing) return;
  struct Set {
    int smem = kDefaultSmem;
    bool policy = false;
  };
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, Set> set;
  int device = 0;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  Set& s = set[{kernel, device}];
  if (smem_bytes > s.smem) {
    FFTCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
    s.smem = smem_bytes;
  }
  if (cluster_load_balancing && !s.policy) {
    FFTCONV_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeClusterSchedulingPolicyPreference,
                                            cudaClusterSchedulingPolicyLoadBalancing));
    s.policy = true;
  }
}

int sm_count() {
  return once_per_device<int>([](int device) {
    int sms = 0;
    FFTCONV_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
  });
}

}  // namespace fftconv
