// fbfft's mixed-radix Stockham kernels: every 7-smooth size without a register or four-step kernel,
// 2-D sides 2..128 (rectangles and odd sides included) and 1-D sizes 2..256, every layout, the sizes
// runtime values (Note [stockham kernels]).
#include <type_traits>

#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/kernel_loop.cuh"
#include "gpu/fft/stockham.cuh"

namespace fftconv::fbfft::detail {
namespace {

// One kernel per direction (Args: ForwardArgs or InverseArgs). The twiddle tables need no global
// memory, so they are filled while the grid before finishes (Note [dependent launch]).
template <class Args>
__global__ void __launch_bounds__(stockham::kThreads) stockham_kernel(Args a, int planes) {
  extern __shared__ float2 smem[];
  const stockham::Geometry g(a.n_h, a.n_w, planes);
  const stockham::Buffers b(g, smem);
  stockham::fill_tables(g, b);
  __syncthreads();
  wait_for_prior_grids();
  for (const auto [first, live] : block_groups(a.batch, planes)) {  // Note [uniform plane loops]
    if constexpr (std::is_same_v<Args, ForwardArgs>)
      stockham::forward_planes(a, g, b, first, live);
    else
      stockham::inverse_planes(a, g, b, first, live);
  }
}

// Planes per block: as many as the shared-memory target holds, halved while the batch would fill
// fewer blocks than there are SMs.
int block_planes(int n_h, int n_w, int64_t batch) {
  int q = stockham::planes_per_block(n_h, n_w);
  while (q > 1 && (batch + q - 1) / q < sm_count()) q /= 2;
  return q;
}

// Dynamic shared memory of a block of `planes` planes.
int block_smem(int n_h, int n_w, int planes) {
  return stockham::Geometry(n_h, n_w, planes).smem_elems() * static_cast<int>(sizeof(float2));
}

template <class Args>
void launch(void (*kernel)(Args, int), const Args& a, cudaStream_t stream) {
  const int planes = block_planes(a.n_h, a.n_w, a.batch);
  const int smem = block_smem(a.n_h, a.n_w, planes);
  const void* k = reinterpret_cast<const void*>(kernel);
  prepare_kernel(k, smem);
  const int blocks = grid_blocks(k, stockham::kThreads, smem, (a.batch + planes - 1) / planes);
  launch_kernel(kernel, blocks, stockham::kThreads, smem, stream, 1, a, planes);
}

void launch_forward(const ForwardArgs& a, cudaStream_t stream) { launch(stockham_kernel<ForwardArgs>, a, stream); }
void launch_inverse(const InverseArgs& a, cudaStream_t stream) { launch(stockham_kernel<InverseArgs>, a, stream); }
const void* forward_kernel() { return reinterpret_cast<const void*>(stockham_kernel<ForwardArgs>); }
const void* inverse_kernel() { return reinterpret_cast<const void*>(stockham_kernel<InverseArgs>); }
void sized(int n_h, int n_w, int64_t batch, int* smem_bytes) {
  *smem_bytes = block_smem(n_h, n_w, block_planes(n_h, n_w, batch));
}

constexpr Launcher kLauncher = [] {
  Launcher l{&launch_forward, &launch_inverse, &forward_kernel, &inverse_kernel, 0, stockham::kThreads};
  l.sized = &sized;
  return l;
}();

}  // namespace

const Launcher* launcher_stockham() { return &kLauncher; }

}  // namespace fftconv::fbfft::detail
