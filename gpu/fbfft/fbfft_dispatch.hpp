// Internal to gpu/fbfft: the per-size launchers (constexpr tables of template instances, one table
// per translation unit so the 1-D and 2-D kernels compile in parallel) and the launch-grid helper.
#pragma once
#include <cuda_runtime.h>

#include <optional>

#include "gpu/fbfft/fbfft.hpp"

namespace fftconv::fbfft::detail {

inline constexpr int kThreads = 128;   // threads per block of every fbfft kernel
inline constexpr int kMaxLog1d = 8;    // 1-D sizes 2^1 .. 2^8
inline constexpr int kMaxLog2d = 7;    // 2-D sides 2^1 .. 2^6, and 2^7 × 2^7

struct Launcher {
  void (*forward)(const ForwardArgs&, cudaStream_t) = nullptr;
  void (*inverse)(const InverseArgs&, cudaStream_t) = nullptr;
  const void* (*forward_kernel)() = nullptr;  // the __global__ function, for cudaFuncGetAttributes
  const void* (*inverse_kernel)() = nullptr;
  int smem_bytes = 0;                         // dynamic shared memory per block
  int threads = kThreads;                     // threads per block
  // The 1-D register / four-step table only: the instance a shape launches (none: the automatic
  // one, which the fields above describe): its kernel, threads and shared memory at the largest block.
  void (*shaped)(const std::optional<Shape1d>&, bool inverse, const void** kernel, int* threads, int* smem_bytes) = nullptr;
};

// launchers_1d()[log2 n] for n = 2..256 (entry 0 empty).
const Launcher* launchers_1d();
// launchers_2d()[log2 n_h * (kMaxLog2d + 1) + log2 n_w]; entries without a kernel are empty.
const Launcher* launchers_2d();
// The register kernels (fbfft_2d_reg.cu), same indexing; entries exist for sides 2..64 and 128×128.
const Launcher* launchers_2d_registers();
// The register kernels of the smooth square sides (fbfft_2d_reg.cu, Note [smooth register FFT]):
// the launcher of n_h × n_w, or null when n_h != n_w or the side is not in fbfft::kSmoothSides2d.
const Launcher* launcher_2d_smooth(int n_h, int n_w);
// The lanes family (fbfft_2d_reg.cu with four lanes per 1-D transform), same indexing; entries for
// sides 16 and 32 (square or not), every layout.
const Launcher* launchers_2d_lanes();
// The 1-D register (n = 4..32) and four-step (n = 64..256) kernels (fbfft_1d_reg.cu), indexed by
// log2 n, every layout.
const Launcher* launchers_1d_registers();
// The one-thread-per-plane kernels (fbfft_2d_plane.cu), same indexing; sides 4 and 8, every layout.
const Launcher* launchers_2d_plane();
// The four-step family's 16x16 entry (fbfft_2d_quad.cu: four lanes per plane), standard and
// transposed layouts.
const Launcher* launcher_2d_quad16();
// The four-step kernels (fbfft_2d_fourstep.cu), same indexing; entries for sides 32, 64 and 128
// (square and rectangular), standard and transposed layouts only.
const Launcher* launchers_2d_fourstep();
// Their freq_major instances, launched as thread-block clusters (Note [four-step freq_major
// clusters]), same indexing and sizes.
const Launcher* launchers_2d_fourstep_clusters();

// A cudaLaunchKernelEx configuration of `blocks` blocks of `threads` threads in clusters of
// `cluster` blocks along x, with `smem_bytes` of dynamic shared memory, on `stream` (sm_90). The
// configuration points at the member attribute, so the object is neither copied nor moved.
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attr[1]{};
  ClusterLaunch(int blocks, int threads, int smem_bytes, int cluster, cudaStream_t stream = nullptr) {
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.dynamicSmemBytes = static_cast<std::size_t>(smem_bytes);
    config.stream = stream;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

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

}  // namespace fftconv::fbfft::detail
