// The grid-stride loop of the fbfft kernels: a block, a warp or a thread-block cluster takes groups
// of consecutive planes (or plane pairs) of the batch in turn (Note [uniform plane loops]).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace fftconv::fbfft::detail {

// Note [uniform plane loops]
// A kernel splits its batch into groups of `per` consecutive items (planes, or plane pairs); unit u
// of U (a block, a warp, or a cluster of blocks) takes the groups that start at u per, (u + U) per,
// (u + 2U) per, ... below the batch, in that order. The loop counter depends on the unit alone,
// never on the thread, so every thread of a unit runs the body equally often: the barriers
// (__syncthreads, __syncwarp, cluster.sync) and full-mask shuffles in a body are reached by all of
// them. The last group may be partial (planes < per); a thread whose item lies past the batch stays
// in the loop and is masked in the body, it never leaves it early. Written as
//   for (const auto [first, planes] : block_groups(a.batch, kP)) { ... }
// after the kernel's wait_for_prior_grids() (Note [dependent launch]). Each range computes the unit's
// first group and stride with the arithmetic the kernels had, because ptxas allocates registers
// differently for the same values computed otherwise (the 1-D warp kernels up to 15 more). The
// 1-D register kernels (fbfft_1d_reg.cu) keep their own loop: any rewrite of its header, even the
// stride hoisted into a variable, took their n = 4 inverse from 24 to 48 registers.

// A group: items [first, first + planes) of the batch, planes = min(per, batch - first) >= 1.
struct PlaneGroup {
  int64_t first;
  int planes;
};
// The group of `per` items that starts at item `first` (< batch) of the batch.
__device__ __forceinline__ PlaneGroup plane_group(int64_t first, int64_t batch, int per) {
  return PlaneGroup{first, batch - first < per ? static_cast<int>(batch - first) : per};
}

// The groups of one unit, as a range for a range-based for: those of `per` items at start,
// start + step, ... below the batch.
class UniformGroups {
 public:
  __device__ __forceinline__ UniformGroups(int64_t start, int64_t step, int per, int64_t batch)
      : start_(start), step_(step), batch_(batch), per_(per) {}

  struct End {};
  class Iterator {
   public:
    __device__ __forceinline__ Iterator(int64_t first, int64_t step, int64_t batch, int per)
        : first_(first), step_(step), batch_(batch), per_(per) {}
    __device__ __forceinline__ PlaneGroup operator*() const { return plane_group(first_, batch_, per_); }
    __device__ __forceinline__ Iterator& operator++() {
      first_ += step_;
      return *this;
    }
    __device__ __forceinline__ bool operator!=(End) const { return first_ < batch_; }

   private:
    int64_t first_, step_, batch_;
    int per_;
  };

  __device__ __forceinline__ Iterator begin() const { return Iterator(start_, step_, batch_, per_); }
  __device__ __forceinline__ End end() const { return End{}; }

 private:
  int64_t start_, step_, batch_;
  int per_;
};

// The block's groups of `per` items.
__device__ __forceinline__ UniformGroups block_groups(int64_t batch, int per) {
  return UniformGroups(static_cast<int64_t>(blockIdx.x) * per, static_cast<int64_t>(gridDim.x) * per, per, batch);
}

// The warp's groups of `per` items, for blocks of kThreads threads (whole warps).
template <int kThreads>
__device__ __forceinline__ UniformGroups warp_groups(int64_t batch, int per) {
  static_assert(kThreads % 32 == 0, "blocks of whole warps");
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  return UniformGroups(warp * per, static_cast<int64_t>(gridDim.x) * (kThreads / 32) * per, per, batch);
}
// The same for a block size chosen at launch (blockDim.x, whole warps).
__device__ __forceinline__ UniformGroups warp_groups(int64_t batch, int per) {
  const int warps_per_block = static_cast<int>(blockDim.x >> 5);
  const int warp = static_cast<int>(threadIdx.x >> 5);
  return UniformGroups((static_cast<int64_t>(blockIdx.x) * warps_per_block + warp) * per,
                       static_cast<int64_t>(gridDim.x) * warps_per_block * per, per, batch);
}

// The cluster's groups of `per` items, for clusters of C blocks along x (every block of the
// cluster runs the same groups, so cluster barriers in the body match).
template <int C>
__device__ __forceinline__ UniformGroups cluster_groups(int64_t batch, int per) {
  return UniformGroups(static_cast<int64_t>(blockIdx.x / C) * per, static_cast<int64_t>(gridDim.x / C) * per, per, batch);
}

}  // namespace fftconv::fbfft::detail
