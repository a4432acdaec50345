// fbfft forward transforms of small input windows (at most kMaxWindow × kMaxWindow) as a direct
// DFT of the window, in the freq_major layout. See Note [pruned forward of small windows].
#include <algorithm>
#include <string>

#include "common/errors.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/fbfft/fbfft.hpp"
#include "gpu/fbfft/fbfft_dispatch.hpp"
#include "gpu/fbfft/reg_fft.cuh"
#include "gpu/fbfft/warp_fft.cuh"

namespace fftconv::fbfft {
namespace {

// Note [pruned forward of small windows]
// A convolution's weights are kh×kw planes (3×3 in the paper's experiment) padded to the n_h×n_w
// basis: a full FFT reads almost nothing and computes mostly on zeros, and its cost is that of any
// transform of the basis (at S=128, 64×64, 16,384 weight planes took 0.5 ms of the fbfft fprop's
// 1.9 ms). Here each thread owns one plane and evaluates the DFT of its window directly, separably:
// for each kw, R[y] = sum_x w[y][x] W_nw^(kw (x + off_w)) (K×K terms), then for each kh of the
// block's rows X[kh][kw] = sum_y R[y] W_nh^(kh (y + off_h)) (K terms), with the powers of
// W_N = exp(-2 pi i / N) from a table in shared memory (all lanes read the same entry). Consecutive
// threads own consecutive planes, so every store of a warp is one 256-byte run of a frequency row
// of the freq_major layout: the kernel is bound by writing the spectra, which any forward must do.
// Blocks split the kh rows when the batch alone would leave SMs idle. Window points that fall
// outside the transform are ignored, as in forward().
constexpr int kWindowThreads = 128;

template <int K>
__global__ void __launch_bounds__(kWindowThreads) forward_window_kernel(ForwardArgs a, int rows_per_block) {
  extern __shared__ float2 table[];  // table[m] = W_N^m, N = max(n_h, n_w)
  const int big = a.n_h > a.n_w ? a.n_h : a.n_w;
  for (int m = threadIdx.x; m < big; m += blockDim.x) table[m] = detail::twiddle(2 * m, big);
  __syncthreads();
  const int step_h = big / a.n_h, step_w = big / a.n_w;  // W_nh^j = W_N^(j step_h)
  const int nw2 = a.n_w / 2 + 1;
  const int64_t plane = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool live = plane < a.batch;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  float w[K][K];
  const float* src = a.input + (live ? plane : 0) * a.in_plane_stride;
  detail::static_for<K>([&](auto y) {
    detail::static_for<K>([&](auto x) {
      const bool inside = live && y < a.in_h && x < a.in_w && y + a.off_h < a.n_h && x + a.off_w < a.n_w;
      w[y][x] = inside ? __ldg(src + y * a.in_ld + x) : 0.f;
    });
  });
  const int kh0 = blockIdx.y * rows_per_block, kh1 = min(a.n_h, kh0 + rows_per_block);
  float2* out = a.output + plane;
#pragma unroll 1
  for (int kw = 0; kw < nw2; ++kw) {
    float2 r[K];
    detail::static_for<K>([&](auto y) {
      float2 acc = make_float2(0.f, 0.f);
      detail::static_for<K>([&](auto x) {
        const float2 t = table[((kw * (x + static_cast<int>(a.off_w))) & (a.n_w - 1)) * step_w];
        acc.x += w[y][x] * t.x;
        acc.y += w[y][x] * t.y;
      });
      r[y] = acc;
    });
#pragma unroll 2
    for (int kh = kh0; kh < kh1; ++kh) {
      float2 acc = make_float2(0.f, 0.f);
      detail::static_for<K>([&](auto y) {
        const float2 t = table[((kh * (y + static_cast<int>(a.off_h))) & (a.n_h - 1)) * step_h];
        acc.x += r[y].x * t.x - r[y].y * t.y;
        acc.y += r[y].x * t.y + r[y].y * t.x;
      });
      if (live) out[(static_cast<int64_t>(kh) * nw2 + kw) * ldb] = acc;
    }
  }
}

template <int K>
void launch_window(const ForwardArgs& a, cudaStream_t stream) {
  const int64_t plane_blocks = (a.batch + kWindowThreads - 1) / kWindowThreads;
  // Split the rows until there are about four blocks per SM (or one row per block).
  const int64_t want = 4 * static_cast<int64_t>(detail::sm_count());
  const int splits = static_cast<int>(std::clamp<int64_t>((want + plane_blocks - 1) / plane_blocks, 1, a.n_h));
  const int rows = (a.n_h + splits - 1) / splits;
  const dim3 grid(static_cast<unsigned>(plane_blocks), static_cast<unsigned>((a.n_h + rows - 1) / rows));
  const int big = std::max(a.n_h, a.n_w);
  forward_window_kernel<K><<<grid, kWindowThreads, big * sizeof(float2), stream>>>(a, rows);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool window_supported(const ForwardArgs& a) {
  auto pow2 = [](int n) { return n >= 1 && (n & (n - 1)) == 0; };
  return a.layout == Layout::freq_major && a.in_h <= kMaxWindow && a.in_w <= kMaxWindow && pow2(a.n_h) && pow2(a.n_w) &&
         a.n_w >= 2 && a.n_h <= 256 && a.n_w <= 256;
}

void forward_window(const ForwardArgs& a, cudaStream_t stream) {
  validate(a);
  if (!window_supported(a))
    throw Unsupported("fbfft: forward_window needs the freq_major layout, a window of at most " +
                      std::to_string(kMaxWindow) + "x" + std::to_string(kMaxWindow) + " (in_h=" + std::to_string(a.in_h) +
                      ", in_w=" + std::to_string(a.in_w) + ") and power-of-two sizes up to 256 (n_h=" +
                      std::to_string(a.n_h) + ", n_w=" + std::to_string(a.n_w) + ")");
  if (a.batch == 0) return;
  const int64_t k = std::max(a.in_h, a.in_w);
  if (k <= 2)
    launch_window<2>(a, stream);
  else if (k <= 4)
    launch_window<4>(a, stream);
  else
    launch_window<8>(a, stream);
}

}  // namespace fftconv::fbfft
