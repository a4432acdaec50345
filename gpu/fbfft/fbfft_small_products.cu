// The small-K products of every pass (Note [small-K products]).
#include "gpu/fbfft/fbfft_small_products.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"

namespace fftconv::fbfft_conv {
namespace {

// Note [small-K products]
// With k = f <= 4 input channels (L1 and the 7x7 stems: 3) an fprop's products are a few
// multiply-adds per value and its cost is memory: the fo*S product spectra are written once and read
// once by the inverse (818 MB each way at L1). cuBLAS's CGEMM of depth 3 writes them at a fraction of
// the DRAM rate, and in the freq_major layout the inverse reads each plane as 8-byte pieces 8 bytes *
// fo*S apart (runs of one cluster's planes), far slower than the standard layout's contiguous planes.
// This kernel writes the standard layout [plane][freq] directly:
// - a block takes a tile of 32 frequencies x 16 images x 16 output channels; it stages the input and
//   weight spectra of its frequencies (runs of 16*k values per frequency, contiguous in freq_major)
//   in shared memory, transposed to [row][frequency] with a padded stride;
// - warp w holds the k input values of image s (lane = frequency) in registers and, for each output
//   channel j, sums u conj(v) and stores the 32 frequencies of plane s*m + j: 256 contiguous bytes.
// bprop and accGrad read the big operand, gradOutput's fo*S spectra, once: its forward writes the
// standard layout (the freq_major forward at 128x128 is as slow as that inverse), and a second kernel
// sums over output channels (bprop) or images (accGrad) reading one 256-byte run of a plane per
// (row, reduction index), against the k columns of the weight or input spectra staged in shared
// memory; it writes bprop's f*S planes in the standard layout and accGrad's fo*f values freq_major
// (the pruned inverse to the kernel window reads that layout), staged through shared memory so that
// each frequency's run of a block's rows is written whole.
// The blocks of one frequency tile are adjacent in the grid, so the operand runs that every block of
// the tile stages again (the weight spectra for each image tile, the input spectra for each output
// channel tile) come from L2 rather than DRAM.
// Invariant: each value is the CGEMM's sum of products (fp32, in ascending reduction index), written
// once (accGrad: added to the previous chunks' sum).
// L1 on an H200: fprop 1.62 -> 1.02 ms, bprop 1.89 -> 0.95 ms, accGrad 1.95 -> 1.01 ms against the CGEMM.
constexpr int kTF = 32, kTS = 16, kTJ = 16, kThreads = 256, kWarps = kThreads / 32;

// Note [small-K register budget]
// Both kernels are instantiated for each k <= kMaxSmallK, so that the operand values and the
// accumulators a thread holds are sized exactly, and bounded to 32 registers a thread: eight blocks
// of 256 threads fill a multiprocessor (the grad kernel, sized for k = 4 at run time with two rows a
// warp, took 64 registers and ran four). The grad kernel holds one row a warp and stages 16
// reduction indices at a time. Invariant: the sums and their order are the same for every k; the
// results are bit-identical to the kernels sized at run time. Measured (H100, the products alone):
// L1 bprop 0.312 -> 0.288 ms, accGrad 0.307 -> 0.285 ms.
constexpr int kBlocksPerSM = 8;

// Stages, for each of the nq frequencies from q0, the run of `run` values src[q*ld + r] (one
// frequency's rows, contiguous in a freq_major operand from src) into dst[r][q - q0], transposed.
__device__ __forceinline__ void stage_runs(float2 (*dst)[kTF + 1], const float2* src, int64_t ld, int64_t q0, int nq,
                                           int run) {
  for (int e = threadIdx.x; e < nq * run; e += kThreads) {
    const int q = e / run, r = e - q * run;
    dst[r][q] = __ldg(src + (q0 + q) * ld + r);
  }
}

// K = k: the k input values of an image and the accumulators live in registers, sized exactly, so
// that eight blocks a multiprocessor fit its register file (Note [small-K register budget]).
template <int K>
__global__ void __launch_bounds__(kThreads, kBlocksPerSM) small_k_kernel(SmallProducts a, int image_blocks) {
  __shared__ float2 xs[kTS * K][kTF + 1];
  __shared__ float2 ws[kTJ * K][kTF + 1];
  const int64_t q0 = int64_t(blockIdx.y) * kTF, s0 = int64_t(blockIdx.x % image_blocks) * kTS,
                j0 = int64_t(blockIdx.x / image_blocks) * kTJ;
  const int nq = static_cast<int>(std::min<int64_t>(kTF, a.freqs - q0));
  const int ns = static_cast<int>(std::min<int64_t>(kTS, a.images - s0));
  const int nj = static_cast<int>(std::min<int64_t>(kTJ, a.m - j0));
  stage_runs(xs, a.x + s0 * K, a.ld_x, q0, nq, ns * K);
  stage_runs(ws, a.w + j0 * K, a.ld_w, q0, nq, nj * K);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane >= nq) return;  // (no barrier follows)
  for (int s = warp; s < ns; s += kWarps) {
    float2 u[K];
#pragma unroll
    for (int i = 0; i < K; ++i) u[i] = xs[s * K + i][lane];
    float2* out = a.c + ((s0 + s) * a.m + j0) * a.freqs + q0 + lane;
    for (int j = 0; j < nj; ++j) {
      float2 acc = make_float2(0.f, 0.f);
#pragma unroll
      for (int i = 0; i < K; ++i) {
        const float2 v = ws[j * K + i][lane];
        acc.x = fmaf(u[i].x, v.x, fmaf(u[i].y, v.y, acc.x));  // u conj(v)
        acc.y = fmaf(u[i].y, v.x, fmaf(-u[i].x, v.y, acc.y));
      }
      out[j * a.freqs] = acc;
    }
  }
}

// bprop's and accGrad's products (Note [small-K products]): a block takes 32 frequencies x kWarps
// result rows; warp w holds row w, lane = frequency, and sums over the reduction index t, reading one
// 256-byte run of a gradOutput plane per t and the K values of b at t from shared memory, where they
// are staged kRed reduction indices at a time. A standard-layout result is stored plane by plane
// (256 bytes a warp), a freq_major one a frequency's run at a time.
constexpr int kRows = kWarps, kRed = 16;

template <int K>
__global__ void __launch_bounds__(kThreads, kBlocksPerSM) small_k_grad_kernel(SmallGradProducts a) {
  __shared__ float2 bs[kRed * K][kTF + 1];
  static_assert(kRows <= kRed, "the freq_major result's staging fits bs");
  const int64_t q0 = int64_t(blockIdx.y) * kTF, r0 = int64_t(blockIdx.x) * kRows;
  const int nq = static_cast<int>(std::min<int64_t>(kTF, a.freqs - q0));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t r = r0 + warp;  // this warp's row
  const bool active = lane < nq, has_row = r < a.rows;
  const float sign = a.conj_g ? -1.f : 1.f;
  float2 acc[K];
#pragma unroll
  for (int i = 0; i < K; ++i) acc[i] = make_float2(0.f, 0.f);
  for (int64_t t0 = 0; t0 < a.red; t0 += kRed) {
    const int nt = static_cast<int>(std::min<int64_t>(kRed, a.red - t0));
    __syncthreads();  // the previous chunk is consumed
    stage_runs(bs, a.b + t0 * K, a.ld_b, q0, nq, nt * K);
    __syncthreads();
    if (!active || !has_row) continue;
    const int64_t step = a.g_red * a.freqs;
    const float2* g = a.g + (r * a.g_row + t0 * a.g_red) * a.freqs + q0 + lane;
#pragma unroll 4
    for (int t = 0; t < nt; ++t) {
      float2 u = __ldg(g + t * step);
      u.y *= sign;
#pragma unroll
      for (int i = 0; i < K; ++i) {
        const float2 w = bs[t * K + i][lane];
        acc[i].x = fmaf(u.x, w.x, fmaf(-u.y, w.y, acc[i].x));
        acc[i].y = fmaf(u.x, w.y, fmaf(u.y, w.x, acc[i].y));
      }
    }
  }
  if (a.c_plane == 1) {
    // Rows contiguous at each frequency (accGrad's freq_major result): the block's nr·K values of a
    // frequency are one run, so they go through shared memory and each run is written whole, not one
    // 8-byte store per lane c_freq values apart.
    __syncthreads();  // every warp is done with bs
    float2(*cs)[kTF + 1] = bs;  // cs[(row - r0)·K + i][frequency - q0]
    if (active && has_row)
#pragma unroll
      for (int i = 0; i < K; ++i) cs[warp * K + i][lane] = acc[i];
    __syncthreads();
    const int run = static_cast<int>(std::min<int64_t>(kRows, a.rows - r0)) * K;
    for (int e = threadIdx.x; e < nq * run; e += kThreads) {
      const int q = e / run, j = e - q * run;
      float2* out = a.c + r0 * K + j + (q0 + q) * a.c_freq;
      float2 v = cs[j][q];
      if (a.accumulate) v.x += out->x, v.y += out->y;
      *out = v;
    }
    return;
  }
  if (!active || !has_row) return;
#pragma unroll
  for (int i = 0; i < K; ++i) {
    float2* out = a.c + (r * K + i) * a.c_plane + (q0 + lane) * a.c_freq;
    float2 v = acc[i];
    if (a.accumulate) v.x += out->x, v.y += out->y;
    *out = v;
  }
}

// Calls f(std::integral_constant<int, k>) for k (checked to be in 1..kMaxSmallK).
template <class F>
void with_k(int k, F&& f) {
  static_assert(kMaxSmallK == 4, "an instance for every k");
  switch (k) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    default: f(std::integral_constant<int, 4>{}); break;
  }
}

[[noreturn]] void bad(const std::string& field, int64_t value, const std::string& why) {
  throw_invalid_argument("small_k_products", field, value, why);
}

// The checks both launches share.
void check_k_freqs(int k, int64_t freqs) {
  if (k < 1 || k > kMaxSmallK) bad("k", k, "must be in 1.." + std::to_string(kMaxSmallK));
  if (freqs < 1) bad("freqs", freqs, "must be >= 1");
}

}  // namespace

void small_k_products(const SmallProducts& a, cudaStream_t stream) {
  check_k_freqs(a.k, a.freqs);
  if (a.images < 0) bad("images", a.images, "must be >= 0");
  if (a.m < 1) bad("m", a.m, "must be >= 1");
  if (a.ld_x < a.images * a.k) bad("ld_x", a.ld_x, "must be >= images * k (" + std::to_string(a.images * a.k) + ")");
  if (a.ld_w < a.m * a.k) bad("ld_w", a.ld_w, "must be >= m * k (" + std::to_string(a.m * a.k) + ")");
  if (a.images == 0) return;
  if (!a.x || !a.w || !a.c) bad("images", a.images, "needs non-null x, w and c");
  const int64_t gs = (a.images + kTS - 1) / kTS, gj = (a.m + kTJ - 1) / kTJ, gq = (a.freqs + kTF - 1) / kTF;
  if (gs * gj > INT32_MAX) bad("images", a.images, "times m is too large for one launch");
  if (gq > 65535) bad("freqs", a.freqs, "is too large for one launch");
  with_k(a.k, [&](auto k) {
    small_k_kernel<k()><<<dim3(static_cast<unsigned>(gs * gj), static_cast<unsigned>(gq)), kThreads, 0, stream>>>(
        a, static_cast<int>(gs));
  });
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void small_k_grad_products(const SmallGradProducts& a, cudaStream_t stream) {
  check_k_freqs(a.k, a.freqs);
  if (a.rows < 0) bad("rows", a.rows, "must be >= 0");
  if (a.red < 1) bad("red", a.red, "must be >= 1");
  if (a.ld_b < a.red * a.k) bad("ld_b", a.ld_b, "must be >= red * k (" + std::to_string(a.red * a.k) + ")");
  if (a.g_row < 1) bad("g_row", a.g_row, "must be >= 1");
  if (a.g_red < 1) bad("g_red", a.g_red, "must be >= 1");
  if (a.c_plane < 1) bad("c_plane", a.c_plane, "must be >= 1");
  if (a.c_freq < 1) bad("c_freq", a.c_freq, "must be >= 1");
  if (a.rows == 0) return;
  if (!a.g || !a.b || !a.c) bad("rows", a.rows, "needs non-null g, b and c");
  const int64_t gr = (a.rows + kRows - 1) / kRows, gq = (a.freqs + kTF - 1) / kTF;
  if (gr > INT32_MAX) bad("rows", a.rows, "is too large for one launch");
  if (gq > 65535) bad("freqs", a.freqs, "is too large for one launch");
  with_k(a.k, [&](auto k) {
    small_k_grad_kernel<k()><<<dim3(static_cast<unsigned>(gr), static_cast<unsigned>(gq)), kThreads, 0, stream>>>(a);
  });
  FFTCONV_CUDA_CHECK_LAUNCH();
}

}  // namespace fftconv::fbfft_conv
