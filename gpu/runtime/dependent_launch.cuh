// Programmatic dependent launch (sm_90): a kernel launched with `dependent = true` is dispatched as
// soon as every block of the kernel before it on the stream has exited, before that kernel has
// completed and its stores are flushed, so that its launch and its blocks' start-up overlap that
// kernel's end (Note [dependent launch]). A kernel launched that way must call
// wait_for_prior_grids() before its first global memory access (read or write); the call is a
// no-op in a kernel launched normally.

// Note [dependent launch]
// Back to back in a CUDA graph, a kernel starts about a microsecond after the one before it ends
// (an empty kernel costs 0.84 us per call that way on the H100): the previous grid drains, its
// stores are flushed, then the next grid is launched and its blocks are dispatched. For the small
// transforms of a convolution (2-15 us each) that gap is 5-30% of the time. Launched with
// cudaLaunchAttributeProgrammaticStreamSerialization, the next grid is dispatched once every
// block of the previous one has exited; its blocks compute what needs no memory (indices,
// twiddles into shared memory) and then wait in griddepcontrol.wait until the previous grid has
// completed and its memory is visible. Every fbfft kernel (not the reference twins) and the
// benchmark's copy kernel follow that contract; fbfft::ForwardArgs / InverseArgs::dependent_launch
// (default true) chooses the launch, the fbfft convolution backend's `--opt launch=plain` turns it
// off, and the chain test in fbfft_test.cu checks that both launches give the same bits.
// The gain is largest where the transform is shortest (2-D 8x8 at 16,384 planes on an H100: 5.66 ->
// 5.34 us) and nil from 0.2 ms up. The next grid is released at block exit, not explicitly at a
// kernel's start (griddepcontrol.launch_dependents), which made grids under one wave slower; the
// products' split tail releases early, by design (Note [split tail wave]).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace fftconv {

// Blocks until the grids this one depends on have completed and their memory operations are
// visible (griddepcontrol.wait; returns at once without a programmatic dependency).
__device__ __forceinline__ void wait_for_prior_grids() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Lets the grid launched after this one as a programmatic dependent start once every block of this
// grid has called this or exited (griddepcontrol.launch_dependents; nothing without a dependent).
// What this grid stores is not visible to that grid until its wait_for_prior_grids() returns.
__device__ __forceinline__ void release_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

// The cudaLaunchKernelEx configuration of kernel<<<grid, block, smem, stream>>>, in clusters of
// `cluster` blocks along x when cluster > 1, and as a programmatic dependent launch when `dependent`
// (the kernel must then follow the contract above). Launch with
//   FFTCONV_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, args...))   (typed kernel), or
//   FFTCONV_CUDA_CHECK(cudaLaunchKernelExC(&launch.config, kernel, args))     (const void*, void** args).
// The configuration points at the member attributes, so the object is neither copied nor moved.
struct LaunchConfig {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attr[2]{};
  LaunchConfig(dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream, bool dependent, int cluster = 1) {
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = stream;
    unsigned n = 0;
    if (cluster > 1) {
      attr[n].id = cudaLaunchAttributeClusterDimension;
      attr[n].val.clusterDim.x = static_cast<unsigned>(cluster);
      attr[n].val.clusterDim.y = 1;
      attr[n].val.clusterDim.z = 1;
      ++n;
    }
    if (dependent) {
      attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[n].val.programmaticStreamSerializationAllowed = 1;
      ++n;
    }
    config.attrs = attr;
    config.numAttrs = n;
  }
  LaunchConfig(const LaunchConfig&) = delete;
  LaunchConfig& operator=(const LaunchConfig&) = delete;
};

}  // namespace fftconv
