// Internal to gpu/fbfft: the per-size launchers (constexpr tables of template instances, one table
// per translation unit so the 1-D and 2-D kernels compile in parallel) and the launch-grid helper.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <optional>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/dependent_launch.cuh"
#include "gpu/runtime/launch_shape.hpp"
#include "gpu/fft/fbfft.hpp"

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
  // The four-lane kernels only (8x8, 16x16), whose instance and block size depend on the batch: what a
  // batch of whole contiguous planes launches (the fields above: the instance that 16,384 such planes
  // take, at the largest block).
  void (*batched)(int64_t batch, bool inverse, const void** kernel, int* threads, int* smem_bytes) = nullptr;
  // The Stockham kernels only, whose sizes are runtime values: the shared memory per block that a
  // size and batch launch with (smem_bytes above: 0).
  void (*sized)(int n_h, int n_w, int64_t batch, int* smem_bytes) = nullptr;
};

// launchers_1d()[log2 n] for n = 2..256 (entry 0 empty).
const Launcher* launchers_1d();
// launchers_2d()[log2 n_h * (kMaxLog2d + 1) + log2 n_w]; entries without a kernel are empty.
const Launcher* launchers_2d();
// The register kernels (fbfft_2d_reg.cu), same indexing; entries exist for sides 2..64 and 128×128.
const Launcher* launchers_2d_registers();
// The register kernels of the smooth square sides (fbfft_2d_smooth_*.cu, Note [smooth register
// FFT]): the launcher of n_h × n_w, or null when n_h != n_w or the side is not in
// fbfft::kSmoothSides2d.
const Launcher* launcher_2d_smooth(int n_h, int n_w);
// Their tables, kSmoothSides2d in order from 36 (medium) and from 72 (large): fbfft_2d_smooth_medium.cu
// and fbfft_2d_smooth_large.cu.
const Launcher* launchers_2d_smooth_medium();
const Launcher* launchers_2d_smooth_large();
// The Stockham kernels (fbfft_stockham.cu, Note [stockham kernels]): one launcher for every size
// stockham::supported() accepts.
const Launcher* launcher_stockham();
// The lanes family (fbfft_2d_reg.cu with four lanes per 1-D transform), same indexing; entries for
// sides 16 and 32 (square or not), every layout.
const Launcher* launchers_2d_lanes();
// The 1-D register (n = 4..32) and four-step (n = 64..256) kernels (fbfft_1d_reg.cu), indexed by
// log2 n, every layout.
const Launcher* launchers_1d_registers();
// The one-thread-per-plane kernels (fbfft_2d_plane.cu), same indexing; sides 4 and 8, every layout.
const Launcher* launchers_2d_plane();
// The four-step family's 16x16 and 8x8 entries (fbfft_2d_quad.cu: four lanes per plane), standard
// and transposed layouts.
const Launcher* launcher_2d_quad16();
const Launcher* launcher_2d_quad8();
// The four-step kernels (fbfft_2d_fourstep.cu), same indexing; entries for sides 32, 64 and 128
// (square and rectangular), standard and transposed layouts only.
const Launcher* launchers_2d_fourstep();
// Their freq_major instances, launched as thread-block clusters (Note [four-step freq_major
// clusters]), same indexing and sizes.
const Launcher* launchers_2d_fourstep_clusters();

// kernel<<<grid, threads, smem, stream>>>(a, rest...) as fbfft launches its fast kernels: through
// cudaLaunchKernelEx, as a programmatic dependent launch when a.dependent_launch (every such kernel
// calls wait_for_prior_grids() before touching memory: Note [dependent launch]) and, with
// cluster > 1, in thread-block clusters of that many blocks (sm_90).
template <class... Params, class Args, class... Rest>
void launch_kernel(void (*kernel)(Params...), dim3 grid, int threads, int smem, cudaStream_t stream, int cluster,
                   const Args& a, const Rest&... rest) {
  const LaunchConfig cfg(grid, dim3(static_cast<unsigned>(threads)), static_cast<std::size_t>(smem), stream,
                         a.dependent_launch, cluster);
  FFTCONV_CUDA_CHECK(cudaLaunchKernelEx(&cfg.config, kernel, a, rest...));
}
// The same for a kernel known only by its address, whose one parameter is `a`.
template <class Args>
void launch_kernel(const void* kernel, dim3 grid, int threads, int smem, cudaStream_t stream, const Args& a) {
  const LaunchConfig cfg(grid, dim3(static_cast<unsigned>(threads)), static_cast<std::size_t>(smem), stream,
                         a.dependent_launch);
  void* args[] = {const_cast<Args*>(&a)};
  FFTCONV_CUDA_CHECK(cudaLaunchKernelExC(&cfg.config, kernel, args));
}

// The launch shapes of gpu/runtime/launch_shape.hpp, where the kernels name them.
using ::fftconv::grid_blocks;
using ::fftconv::prepare_kernel;
using ::fftconv::sm_count;

}  // namespace fftconv::fbfft::detail
