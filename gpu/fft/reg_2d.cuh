// Internal to gpu/fft: the 2-D register kernels as templates of their sides (RegTile, the forward
// and inverse kernels, their launchers). fbfft_2d_reg.cu instantiates the power-of-two sides,
// fbfft_2d_smooth_*.cu the smooth squares (Note [smooth register FFT]); see Note [register 2-D
// kernels].
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/reg_fft.cuh"
#include "gpu/fft/kernel_loop.cuh"

namespace fftconv::fbfft::detail::reg2d {


// Note [register 2-D kernels]
// For sides up to 32 a whole 1-D transform fits in one thread's registers (32 complex values), so
// each thread has one job per pass and needs no shuffles (the warp-shuffle kernels, fbfft_2d.cu,
// pay log2(n) shuffle pairs per element and per pass and are instruction-bound):
//   forward: (0) the block's kPlanes input windows are copied into shared memory with cp.async,
//   consecutive threads on consecutive addresses, zero outside the window (implicit padding);
//   (1) thread (q, j) packs rows 2j, 2j+1 of plane q as z = x_2j + i x_2j+1, runs RegFft<n_w> and
//   writes the two half spectra back over the real planes (after a barrier); (2) thread (q, c) runs
//   RegFft<n_h> down column c (c = 0 packs the real columns 0 and n_w/2) and stores it: in the
//   freq_major layout straight to global memory, consecutive threads on consecutive planes of one
//   frequency; in the other layouts through shared memory and a contiguous block store.
//   inverse: the mirror image (column DIT with the Hermitian split of columns 0 and n_w/2, then the
//   row DIT of packed row pairs with the Hermitian extension in registers, then the window store).
// Thread t works on plane q = t mod P (P = kPlanes planes per block, fewer when the batch would
// leave more than three quarters of the SMs idle), so in stage (2) a warp shares one column c
// (uniform branches) and touches P consecutive planes; plane strides in shared memory are odd (no
// bank conflicts). Sides of 64 use four lanes per 1-D transform (Note [lane-split register FFT]).
// Invariant: each thread has at most one row job and one column job per group of planes, which is
// what lets the spectra overwrite the real planes in place after a barrier (shared memory = the
// larger of the two).

// Note [sparse forward windows]
// A weight window (k x k in a basis of 32 to 128) fills a small part of the forward's planes, yet
// stage (0) issued one zero-filling copy, with its address arithmetic, per basis element (64 per
// thread at 32x32, beside two 32-point transforms), and every packed row pair was transformed.
// In the register forwards of windowed_side() and the four-step forwards (fbfft_2d_fourstep.cu),
// where the window's power-of-two bounding box (BasisWindow) is at most half the plane, the block
// zeroes its planes with 16-byte stores and copies the window's elements alone; and a warp whose
// row pairs all lie outside the window writes their zero spectra instead of transforming them (any
// window).
// Invariant: the spectra equal the dense path's (the skipped transforms are of zeros, up to the
// sign of a zero); the column passes are unchanged. L3's 16,384 weight planes on an H200: 0.067 ->
// 0.039 ms.

// Note [line loads at smooth sides]
// At a power-of-two side, element e's plane, row and column in stage (0) are shifts and masks; at a
// smooth side they are three divisions by constants per element (28 elements per thread at 14x14,
// beside two 14-point transforms). There thread t keeps column x = t mod n_w and walks the lines
// (plane, row) = t / n_w + i * (threads / n_w), one division per line; consecutive threads still
// copy consecutive addresses. The 14x14 forward went from 72 to 56 registers, and L5's passes ran
// 2-3% faster (H200).

// Note [lane-split small batches]
// On a small batch these kernels are latency-bound: every thread runs two whole 16- or 32-point
// transforms one after the other on a few one- or two-warp blocks. The lanes family (Kernel::lanes,
// sides 16 and 32) is the same kernel with four lanes per 1-D transform (LaneFft<n, 4>: each lane a
// quarter of the points, two shuffle stages), so a thread's chain is about a quarter as long and a
// block has four times the threads; it halves the planes per block until the batch fills half of
// the SMs (the registers family: a quarter). At large batches the extra shuffles cost issue slots,
// so the fbfft plan times both families (Note [fbfft transform tuning]) and keeps the faster per
// direction: lanes wins at S = 16 and 32 (32x32 forward at S = 16: 11.9 -> 7.2 us on an H100),
// registers from S = 64.

// Note [register wave quantization]
// The full-size blocks loop over groups of planes, the grid at most one wave (grid_blocks). With
// three blocks per SM the 16x16 forward's 512 groups at S = 128 ran in two rounds on 396 resident
// blocks; its launch bounds ask for four blocks per SM (64 registers), so every group runs in one
// round (S = 128 passes 1.4-1.9% faster; S = 64, 128 groups, 0.6-2.3% slower from the cap alone).
// The inverse takes four blocks already; the other sizes keep the compiler's choice.

// Note [rolled window stores]
// In the Full instances (planes per block fixed at compile time) the inverse's output-window loop
// has a constant trip count; unrolled at the smooth sides, where the element's plane, row and column
// take divisions by the side, it kept the addresses in registers across the transforms. So the loop
// is rolled (#pragma unroll 1) at the smooth sides only: the 28x28 inverse 140 -> 80 registers and
// 1.14-1.17x faster at 16,384 planes. The power-of-two sides, whose shifts and masks cost no
// registers, and the forward's staging loop stay unrolled (docs/design-notes.md).

// G0: lanes per 1-D transform; 0 = lanes_for(side) (the registers family), 4 = the lanes family
// (Note [lane-split small batches]).
template <int NH, int NW, int G0 = 0>
struct RegTile {
  static_assert(NH % 2 == 0 && NW % 2 == 0, "register kernels: even sides (packed row pairs, columns 0 and n_w/2)");
  static constexpr int kNh = NH, kNw = NW, kHalf = kNw / 2, kNw2 = kHalf + 1;
  static constexpr bool kPow2 = (NH & (NH - 1)) == 0 && (NW & (NW - 1)) == 0;
  static constexpr int kMaxSide = kNh > kNw ? kNh : kNw;
  using RowFft = LaneFft<kNw, G0 ? G0 : lanes_for(kNw)>;
  using ColFft = LaneFft<kNh, G0 ? G0 : lanes_for(kNh)>;
  static constexpr int kRealStride = kNh * kNw + 1;                          // floats per plane, odd
  static constexpr int kSpecStride = kNh * kNw2 + ((kNh * kNw2) % 2 == 0);   // float2 per plane, odd
  // 512 / side planes per block (at most 64; the power of two below it for smooth sides), and at
  // most 100 KB of shared memory (128 or 256 / side and other register caps time the same).
  static constexpr int kSmemCap = 100 * 1024 / (kSpecStride * 8);
  // The lanes family (four times the threads per plane) half as many: at most 512 threads, so
  // that the register cap of its launch bounds stays at 128 (at 1,024 threads the 32-point
  // forward spilled).
  static constexpr int kPlanes0 = (512 / kMaxSide > 64 ? 64 : 1 << ilog2(512 / kMaxSide)) / (G0 == 4 ? 2 : 1);
  static constexpr int kPlanes = kPlanes0 <= kSmemCap ? kPlanes0 : (kSmemCap >= 4 ? 4 : (kSmemCap >= 2 ? 2 : 1));
  // Threads (whole warps) and shared memory of a block working on `planes` planes: one row-pair
  // job and one column job per thread group (Note [register 2-D kernels]).
  static constexpr int threads(int planes) {
    const int row = kNh / 2 * RowFft::kG, col = kHalf * ColFft::kG;
    return (planes * (row > col ? row : col) + 31) / 32 * 32;
  }
  static constexpr int smem_bytes(int planes) {
    return planes * (kSpecStride * 8 > kRealStride * 4 ? kSpecStride * 8 : kRealStride * 4);
  }
  static constexpr int kThreads = threads(kPlanes);
  static constexpr int kSmemBytes = smem_bytes(kPlanes);
  // Blocks per SM the forward's launch bounds ask for (Note [register wave quantization]): four at
  // 16x16 (the inverse takes 60 registers, four blocks, without being asked).
  static constexpr int kMinBlocks = (NH == 16 && NW == 16 && G0 == 0) ? 4 : 0;  // 0: not asked
  static_assert((kPlanes & (kPlanes - 1)) == 0, "kPlanes must be a power of two");
  static_assert(kThreads <= 1024, "too many threads per block");
};

// The square sides whose full-block forward takes the sparse window path (Note [sparse forward
// windows]): those where it measured faster. Elsewhere it cost registers or time: the 16x16
// forward spilled 64 bytes under its cap of 64 registers, 50-60 and 100-120 spilled 4-20 bytes,
// 36, 84 and 96 took 30-45 more registers, the lanes family and the rectangles up to 30 more; at
// 80x80 it took 34 fewer and large_21's fprop ran 7% slower, at 48x48 odd_rect's passes moved
// by -1.4% to +1.5% (H200).
constexpr bool windowed_side(int n) { return n == 32 || n == 40; }

// Plane, row and column of element e of a block's real planes (plane-major, row-major): shifts and
// masks for powers of two (the instructions these kernels always had), division by the compile-time
// sides otherwise.
template <class T>
__device__ __forceinline__ int plane_of(int e) {
  if constexpr (T::kPow2) return e >> (ilog2(T::kNh) + ilog2(T::kNw));
  else return e / (T::kNh * T::kNw);
}
template <class T>
__device__ __forceinline__ int row_of(int e) {
  if constexpr (T::kPow2) return (e >> ilog2(T::kNw)) & (T::kNh - 1);
  else return e / T::kNw % T::kNh;
}
template <class T>
__device__ __forceinline__ int col_of(int e) {
  if constexpr (T::kPow2) return e & (T::kNw - 1);
  else return e % T::kNw;
}

// Lane p of job (q, j) of a stage with G lanes per job and jobs_per_plane jobs per plane: thread t
// has p = t mod G and job t / G = j * P + q, P = 2^log_p planes per block. Threads past the last
// job take job 0 (they compute along, so that every lane reaches the shuffles, and store nothing).
template <int G>
struct Job {
  int p, q, j;
  bool live;
  __device__ __forceinline__ Job(int t, int jobs_per_plane, int log_p) {
    p = t % G;
    const int job = t / G;
    live = job < (jobs_per_plane << log_p);
    q = live ? job & ((1 << log_p) - 1) : 0;
    j = live ? job >> log_p : 0;
  }
};

// Shared-memory <-> global copy of a block's half spectra in the standard or transposed layout
// (consecutive threads on consecutive global addresses; the block's planes are contiguous there).
template <class T, bool Store>
__device__ __forceinline__ void copy_spectra(Layout layout, float2* smem, float2* global_store,
                                             const float2* global_load, int64_t first, int64_t batch, int planes_per_block,
                                             int nthreads) {
  constexpr int kPlaneElems = T::kNh * T::kNw2;
  const int64_t planes = batch - first < planes_per_block ? batch - first : planes_per_block;
  const int n = static_cast<int>(planes) * kPlaneElems;
  const int64_t base = first * kPlaneElems;
  for (int e = threadIdx.x; e < n; e += nthreads) {
    const int q = e / kPlaneElems, rem = e - q * kPlaneElems;
    int kh, kw;
    if (layout == Layout::transposed) {
      kw = rem / T::kNh;
      kh = rem % T::kNh;
    } else {
      kh = rem / T::kNw2;
      kw = rem - kh * T::kNw2;
    }
    float2& s = smem[q * T::kSpecStride + kh * T::kNw2 + kw];
    if constexpr (Store)
      global_store[base + e] = s;
    else
      cp_async<8>(&s, global_load + base + e, true);
  }
  if constexpr (!Store) cp_async_wait_all();
}

// The block's half spectra from the freq_major layout (frequency f of plane `first + q` at
// f * ldb + first + q) into shared memory, every copy in flight at once (consecutive threads on
// consecutive planes of one frequency); planes past the batch read as zeros.
template <class T>
__device__ __forceinline__ void stage_freq_major(float2* smem, const float2* global, int64_t first, int64_t batch,
                                                 int64_t ldb, int log_p, int nthreads) {
  constexpr int kPlaneElems = T::kNh * T::kNw2;
  const int planes = 1 << log_p;
  for (int e = threadIdx.x; e < planes * kPlaneElems; e += nthreads) {
    const int q = e & (planes - 1), f = e >> log_p;
    const int64_t plane = first + q;
    const bool live = plane < batch;
    cp_async<8>(&smem[q * T::kSpecStride + f], live ? global + f * ldb + plane : global, live);
  }
  cp_async_wait_all();
}

// Stages (1)-(2) of the inverse on a block's group of planes whose standard half spectra are in
// shared memory (plane q at smem + q * kSpecStride): columns, then rows; the real planes, times
// `scale`, overwrite them (plane q at the floats smem + q * kRealStride) and are complete for every
// thread on return (Note [register 2-D kernels]).
template <class T>
__device__ __forceinline__ void inverse_to_real(float scale, float2* smem, const Job<T::RowFft::kG>& rj,
                                                const Job<T::ColFft::kG>& cj) {
  using RowFft = typename T::RowFft;
  using ColFft = typename T::ColFft;
  constexpr int kNh = T::kNh, kNw = T::kNw, kNw2 = T::kNw2, kHalf = T::kHalf;
  float* real = reinterpret_cast<float*>(smem);
  // (1) column c = j of plane q: DIT from the frequency order to rows y = p*R + r
  {
    float2* s = smem + cj.q * T::kSpecStride + cj.j;
    // Column value at frequency kh (column 0, or n_w/2 when `upper`).
    auto load = [&](int kh, bool upper) {  // threads without a job read nothing
      return cj.live ? s[kh * kNw2 + (upper ? kHalf : 0)] : make_float2(0.f, 0.f);
    };
    float2 w[ColFft::kR];
    const int lane_kh = ColFft::lane_freq(cj.p);
    if (cj.j == 0) {
      // Hermitian parts of columns 0 and n_w/2 (whose inverses are real), packed as one column.
      static_for<ColFft::kR>([&](auto r) {
        const int kh = ColFft::reg_freq(r) + lane_kh, km = T::kPow2 ? (kNh - kh) & (kNh - 1) : (kh == 0 ? 0 : kNh - kh);
        const float2 a0 = load(kh, false), a1 = load(kh, true), b0 = load(km, false), b1 = load(km, true);
        w[r] = pack_ab(make_float2(0.5f * (a0.x + b0.x), 0.5f * (a0.y - b0.y)),
                       make_float2(0.5f * (a1.x + b1.x), 0.5f * (a1.y - b1.y)));
      });
    } else {
      static_for<ColFft::kR>([&](auto r) { w[r] = load(ColFft::reg_freq(r) + lane_kh, false); });
    }
    ColFft::inverse(w, cj.p);
    if constexpr (ColFft::kG > 1) __syncwarp();  // partner lanes' reads before this lane's writes
    const int y0 = cj.p * ColFft::kR;
    if (cj.live) {
      if (cj.j == 0) {
        static_for<ColFft::kR>([&](auto r) {
          s[(y0 + r) * kNw2] = make_float2(w[r].x, 0.f);
          s[(y0 + r) * kNw2 + kHalf] = make_float2(w[r].y, 0.f);
        });
      } else {
        static_for<ColFft::kR>([&](auto r) { s[(y0 + r) * kNw2] = w[r]; });
      }
    }
  }
  __syncthreads();
  // (2) rows 2j, 2j+1 of plane q: Hermitian extension, DIT, scale
  float2 v[RowFft::kR];
  {
    const float2* s = smem + rj.q * T::kSpecStride + 2 * rj.j * kNw2;
    const int lane_k = RowFft::lane_freq(rj.p);
    static_for<RowFft::kR>([&](auto r) {
      const int k = RowFft::reg_freq(r) + lane_k;
      const int kk = k <= kHalf ? k : kNw - k;  // X[n_w - k] = conj(X[k])
      float2 za = s[kk], zb = s[kNw2 + kk];
      if (kk == 0 || kk == kHalf) {
        za.y = 0.f;
        zb.y = 0.f;
      } else if (k > kHalf) {
        za.y = -za.y;
        zb.y = -zb.y;
      }
      v[r] = pack_ab(za, zb);
    });
    RowFft::inverse(v, rj.p);
  }
  __syncthreads();  // every half spectrum is read before the real rows overwrite them
  if (rj.live) {
    float* r0 = real + rj.q * T::kRealStride + 2 * rj.j * kNw + rj.p * RowFft::kR;
    static_for<RowFft::kR>([&](auto r) {
      r0[r] = v[r].x * scale;
      r0[kNw + r] = v[r].y * scale;
    });
  }
  __syncthreads();
}

// Stages (1)-(3) of the inverse on the block's group of kP planes from `first`, whose standard half
// spectra are in shared memory (plane q at smem + q * kSpecStride): columns, rows, and the output
// window's store (Note [register 2-D kernels]).
template <class T>
__device__ __forceinline__ void inverse_group(const InverseArgs& a, float2* smem, int64_t first, int kP, int nthreads,
                                              const Job<T::RowFft::kG>& rj, const Job<T::ColFft::kG>& cj) {
  constexpr int kNh = T::kNh, kNw = T::kNw;
  const float* real = reinterpret_cast<const float*>(smem);
  const int t = threadIdx.x;
  inverse_to_real<T>(a.scale, smem, rj, cj);
  // (3) the output window, consecutive threads on consecutive addresses; a rolled loop at the
  // smooth sides (Note [rolled window stores])
  auto store = [&](int e) {
    const int eq = plane_of<T>(e), y = row_of<T>(e), x = col_of<T>(e);
    const int64_t plane = first + eq, oy = y - a.out_off_h, ox = x - a.out_off_w;
    if (plane < a.batch && oy >= 0 && oy < a.out_h && ox >= 0 && ox < a.out_w)
      a.output[plane * a.out_plane_stride + oy * a.out_ld + ox] = real[eq * T::kRealStride + y * kNw + x];
  };
  if constexpr (T::kPow2) {
    for (int e = t; e < kP * kNh * kNw; e += nthreads) store(e);
  } else {
#pragma unroll 1
    for (int e = t; e < kP * kNh * kNw; e += nthreads) store(e);
  }
}

// Note [fused depthwise transforms]
// A depthwise layer's product is elementwise (Note [depthwise products]), so its whole pass fits in
// one kernel: the forward kernel's instance for DepthwiseArgs leaves the block's half spectra in
// shared memory (the standard layout's path), multiplies each by its channel's kernel spectrum
// (read from global memory, where the C spectra stay in L2), and runs the inverse's stages on them
// (inverse_group) to the clipped window. The spectra never reach global memory: a pass reads its
// input and writes its result once, against a write and a read of every spectrum per transform in
// the cuFFT pipeline. Invariant: the fused instance runs the same stage code as the separate
// forward and inverse kernels; the forward's own instances compile to the same registers as before
// it was added.
template <class Args>
__device__ __forceinline__ const ForwardArgs& forward_args_of(const Args& a) {
  if constexpr (std::is_same_v<Args, DepthwiseArgs>) return a.in;
  else return a;
}
template <class Args>
constexpr int forward_min_blocks(int plain) { return std::is_same_v<Args, DepthwiseArgs> ? 0 : plain; }

// Each spectrum of the block's planes [first, first + planes) in shared memory times its channel's
// kernel spectrum (conjugated when a.conj).
template <class T>
__device__ __forceinline__ void multiply_by_kernels(const DepthwiseArgs& a, float2* smem, int64_t first, int planes,
                                                    int nthreads) {
  constexpr int kPlaneElems = T::kNh * T::kNw2;
  const float2* __restrict__ kernel = a.kernel;
  const int channels = static_cast<int>(a.channels), c0 = static_cast<int>(first % a.channels);
  for (int e = threadIdx.x; e < planes * kPlaneElems; e += nthreads) {
    const int q = e / kPlaneElems, f = e - q * kPlaneElems;
    const float2 k = kernel[static_cast<int64_t>((c0 + q) % channels) * kPlaneElems + f];
    const float ki = a.conj ? -k.y : k.y;
    float2& x = smem[q * T::kSpecStride + f];
    x = make_float2(x.x * k.x - x.y * ki, x.x * ki + x.y * k.x);
  }
}

template <int NH, int NW, int G0, bool Full, class Args>
__global__ void __launch_bounds__(RegTile<NH, NW, G0>::kThreads, forward_min_blocks<Args>(RegTile<NH, NW, G0>::kMinBlocks))
    forward_2d_reg_kernel(Args args, int log_p) {
  constexpr bool kFused = std::is_same_v<Args, DepthwiseArgs>;  // Note [fused depthwise transforms]
  const ForwardArgs a = forward_args_of(args);
  using T = RegTile<NH, NW, G0>;
  using RowFft = typename T::RowFft;
  using ColFft = typename T::ColFft;
  constexpr int kNh = T::kNh, kNw = T::kNw, kNw2 = T::kNw2, kHalf = T::kHalf;
  // Planes per block: T::kPlanes in the Full instance (everything below is then compile-time),
  // fewer for small batches.
  if constexpr (Full) log_p = ilog2(T::kPlanes);
  const int kP = Full ? T::kPlanes : 1 << log_p;
  const int nthreads = Full ? T::kThreads : static_cast<int>(blockDim.x);
  extern __shared__ float2 smem[];
  float* real = reinterpret_cast<float*>(smem);
  const int t = threadIdx.x;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  wait_for_prior_grids();  // Note [dependent launch]
  const Job<RowFft::kG> rj(t, kNh / 2, log_p);  // rows 2j, 2j+1 of plane q
  const Job<ColFft::kG> cj(t, kHalf, log_p);    // column j of plane q
  // Note [sparse forward windows]: the window's part of the basis; a warp whose row pairs all lie
  // outside it skips their transforms (their spectra are 0). Only in the full-block instances of
  // windowed_side() squares.
  constexpr bool kWindowed = Full && !kFused && G0 == 0 && kNh == kNw && windowed_side(kNh);
  const BasisWindow win(a.off_h, a.off_w, a.in_h, a.in_w, kNh, kNw);
  const bool sparse = kWindowed && win.sparse(kNh, kNw);
  const bool zero_rows = kWindowed && __all_sync(0xffffffffu, win.zero_pair(rj.j));
  for (const auto [first, planes] : block_groups(a.batch, kP)) {  // Note [uniform plane loops]
    // (0) the input windows, zero-padded
    if (sparse) {
      zero_shared(real, kP * T::kRealStride, nthreads);
      __syncthreads();  // the zeros land before the window's copies
      win.issue(a.input, a.in_plane_stride, a.in_ld, a.off_h, a.off_w, first, kP, a.batch, nthreads,
                [&](int q, int y, int x) { return real + q * T::kRealStride + y * kNw + x; });
    } else if constexpr (!T::kPow2) {  // Note [line loads at smooth sides]
      static_assert(T::threads(1) >= kNw, "line loads: at least one line in flight");
      const int lines = nthreads / kNw, x = t % kNw;
      for (int line = t / kNw; line < kP * kNh && t < lines * kNw; line += lines) {
        const int eq = line / kNh, y = line - eq * kNh;
        const int64_t plane = first + eq, yy = y - a.off_h, xx = x - a.off_w;
        const bool inside = plane < a.batch && yy >= 0 && yy < a.in_h && xx >= 0 && xx < a.in_w;
        cp_async<4>(real + eq * T::kRealStride + y * kNw + x,
                    inside ? a.input + plane * a.in_plane_stride + yy * a.in_ld + xx : a.input, inside);
      }
    } else {
      for (int e = t; e < kP * kNh * kNw; e += nthreads) {
        const int eq = plane_of<T>(e), y = row_of<T>(e), x = col_of<T>(e);
        const int64_t plane = first + eq, yy = y - a.off_h, xx = x - a.off_w;
        const bool inside = plane < a.batch && yy >= 0 && yy < a.in_h && xx >= 0 && xx < a.in_w;
        cp_async<4>(real + eq * T::kRealStride + y * kNw + x,
                    inside ? a.input + plane * a.in_plane_stride + yy * a.in_ld + xx : a.input, inside);
      }
    }
    cp_async_wait_all();
    __syncthreads();
    // (1) rows: lane p holds x = p*R + r of the packed row pair
    float2 v[RowFft::kR];
    if (zero_rows) {
      static_for<RowFft::kR>([&](auto r) { v[r] = make_float2(0.f, 0.f); });
    } else {
      const float* r0 = real + rj.q * T::kRealStride + 2 * rj.j * kNw + rj.p * RowFft::kR;
      static_for<RowFft::kR>([&](auto r) { v[r] = make_float2(r0[r], r0[kNw + r]); });
      RowFft::forward(v, rj.p);
    }
    __syncthreads();  // every row is in registers before the spectra overwrite the real planes
    {
      float2* s = smem + rj.q * T::kSpecStride + 2 * rj.j * kNw2;
      const int lane_k = RowFft::lane_freq(rj.p);
      static_for<RowFft::kR>([&](auto r) {
        const float2 o = RowFft::template partner<r>(v, rj.p);  // every lane: shuffles
        const int k = RowFft::reg_freq(r) + lane_k;
        if (rj.live && k <= kHalf) {
          s[k] = unpack_a(v[r], o);
          s[kNw2 + k] = unpack_b(v[r], o);
        }
      });
    }
    __syncthreads();
    // (2) column c = j of plane q: lane p holds rows y = p*R + r
    {
      float2* s = smem + cj.q * T::kSpecStride + cj.j;
      float2 w[ColFft::kR];
      const int y0 = cj.p * ColFft::kR;
      // Threads without a job read nothing (job 0's lanes may be writing its column meanwhile).
      if (!cj.live)
        static_for<ColFft::kR>([&](auto r) { w[r] = make_float2(0.f, 0.f); });
      else if (cj.j == 0)
        static_for<ColFft::kR>([&](auto r) { w[r] = make_float2(s[(y0 + r) * kNw2].x, s[(y0 + r) * kNw2 + kHalf].x); });
      else
        static_for<ColFft::kR>([&](auto r) { w[r] = s[(y0 + r) * kNw2]; });
      ColFft::forward(w, cj.p);
      // With several lanes per column a lane overwrites rows that its partner lanes read: their
      // reads are ordered before the writes by this warp barrier (all lanes of a job share a warp).
      if constexpr (ColFft::kG > 1) __syncwarp();
      const int64_t plane = first + cj.q;
      const bool direct = a.layout == Layout::freq_major;
      const int lane_kh = ColFft::lane_freq(cj.p);
      float2* out = a.output + plane + cj.j * ldb + lane_kh * kNw2 * ldb;
      const int64_t row_step = kNw2 * ldb;
      float2* sc = s + lane_kh * kNw2;
      const bool store = cj.live && !(direct && plane >= a.batch);
      if (cj.j == 0 || ColFft::kG > 1) {  // with several lanes, every lane takes part in the shuffles
        static_for<ColFft::kR>([&](auto r) {
          constexpr int kh = ColFft::reg_freq(r);
          const float2 o = ColFft::template partner<r>(w, cj.p);
          if (!store || cj.j != 0) return;
          if (direct) {
            out[kh * row_step] = unpack_a(w[r], o);
            out[kh * row_step + kHalf * ldb] = unpack_b(w[r], o);
          } else {
            sc[kh * kNw2] = unpack_a(w[r], o);
            sc[kh * kNw2 + kHalf] = unpack_b(w[r], o);
          }
        });
      }
      if (!store || cj.j == 0) {
        // stored above, or nothing to store
      } else {
        static_for<ColFft::kR>([&](auto r) {
          constexpr int kh = ColFft::reg_freq(r);
          if (direct)
            out[kh * row_step] = w[r];
          else
            sc[kh * kNw2] = w[r];
        });
      }
    }
    if constexpr (kFused) {
      __syncthreads();
      multiply_by_kernels<T>(args, smem, first, planes, nthreads);
      __syncthreads();
      inverse_group<T>(args.out, smem, first, kP, nthreads, rj, cj);
    } else if (a.layout != Layout::freq_major) {
      __syncthreads();
      copy_spectra<T, true>(a.layout, smem, a.output, nullptr, first, a.batch, kP, nthreads);
    }
    __syncthreads();  // shared memory is free for the next group of planes
  }
}

template <int NH, int NW, int G0, bool Full>
__global__ void __launch_bounds__(RegTile<NH, NW, G0>::kThreads) inverse_2d_reg_kernel(InverseArgs a, int log_p) {
  using T = RegTile<NH, NW, G0>;
  using RowFft = typename T::RowFft;
  using ColFft = typename T::ColFft;
  constexpr int kNh = T::kNh, kHalf = T::kHalf;
  // Planes per block: T::kPlanes in the Full instance (everything below is then compile-time),
  // fewer for small batches.
  if constexpr (Full) log_p = ilog2(T::kPlanes);
  const int kP = Full ? T::kPlanes : 1 << log_p;
  const int nthreads = Full ? T::kThreads : static_cast<int>(blockDim.x);
  extern __shared__ float2 smem[];
  const int t = threadIdx.x;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  wait_for_prior_grids();  // Note [dependent launch]
  const Job<RowFft::kG> rj(t, kNh / 2, log_p);
  const Job<ColFft::kG> cj(t, kHalf, log_p);
  for (const auto [first, planes] : block_groups(a.batch, kP)) {  // Note [uniform plane loops]
    // The block's spectra into shared memory first, every copy in flight at once (cp.async): in the
    // freq_major layout consecutive threads on consecutive planes of one frequency. (Reading them
    // straight from global memory in the column pass left the lanes of column 0 with four dependent
    // loads per value and the conv pipeline's inverse at about a third of the copy bandwidth:
    // Note [register 2-D kernels].)
    if (a.layout == Layout::freq_major)
      stage_freq_major<T>(smem, a.input, first, a.batch, ldb, log_p, nthreads);
    else
      copy_spectra<T, false>(a.layout, smem, nullptr, a.input, first, a.batch, kP, nthreads);
    __syncthreads();
    inverse_group<T>(a, smem, first, kP, nthreads, rj, cj);
    __syncthreads();
  }
}

// Planes per block: T::kPlanes, halved while the batch would fill fewer blocks than a quarter of
// the SMs (a small batch then spreads over more SMs: Note [register 2-D kernels]), or, in the lanes
// family, fewer than half of them (Note [lane-split small batches]); the block has the threads and
// shared memory of that many planes.
template <int NH, int NW, int G0, class Args>
void launch_reg(void (*full)(Args, int), void (*partial)(Args, int), const Args& a, cudaStream_t stream) {
  using T = RegTile<NH, NW, G0>;
  const int64_t enough = G0 ? sm_count() / 2 : sm_count() / 4;
  int log_p = ilog2(T::kPlanes);
  while (log_p > 0 && (a.batch + (int64_t(1) << log_p) - 1) >> log_p < enough) --log_p;
  const int planes = 1 << log_p;
  auto* kernel = planes == T::kPlanes ? full : partial;
  const void* k = reinterpret_cast<const void*>(kernel);
  const int threads = T::threads(planes), smem = T::smem_bytes(planes);
  prepare_kernel(k, smem);
  const int blocks = grid_blocks(k, threads, smem, (a.batch + planes - 1) / planes);
  launch_kernel(kernel, blocks, threads, smem, stream, 1, a, log_p);
}

template <int NH, int NW, int G0>
void launch_forward(const ForwardArgs& a, cudaStream_t stream) {
  launch_reg<NH, NW, G0>(forward_2d_reg_kernel<NH, NW, G0, true, ForwardArgs>, forward_2d_reg_kernel<NH, NW, G0, false, ForwardArgs>, a,
                         stream);
}
template <int NH, int NW, int G0>
void launch_inverse(const InverseArgs& a, cudaStream_t stream) {
  launch_reg<NH, NW, G0>(inverse_2d_reg_kernel<NH, NW, G0, true>, inverse_2d_reg_kernel<NH, NW, G0, false>, a, stream);
}
template <int NH, int NW, int G0>
void launch_depthwise(const DepthwiseArgs& a, cudaStream_t stream) {
  launch_reg<NH, NW, G0>(forward_2d_reg_kernel<NH, NW, G0, true, DepthwiseArgs>,
                         forward_2d_reg_kernel<NH, NW, G0, false, DepthwiseArgs>, a, stream);
}
template <int NH, int NW, int G0>
const void* forward_kernel() { return reinterpret_cast<const void*>(forward_2d_reg_kernel<NH, NW, G0, true, ForwardArgs>); }
template <int NH, int NW, int G0>
const void* inverse_kernel() { return reinterpret_cast<const void*>(inverse_2d_reg_kernel<NH, NW, G0, true>); }

template <int NH, int NW, int G0>
constexpr Launcher reg_launcher() {
  return Launcher{&launch_forward<NH, NW, G0>, &launch_inverse<NH, NW, G0>, &forward_kernel<NH, NW, G0>,
                  &inverse_kernel<NH, NW, G0>, RegTile<NH, NW, G0>::kSmemBytes, RegTile<NH, NW, G0>::kThreads};
}

// The smooth squares of kSmoothSides2d[Begin, End) (Note [smooth register FFT]), split over three
// translation units so that they compile in parallel: sides up to 32 (one lane per 1-D transform),
// 36..60 and 72..120 (two or four lanes).
inline constexpr std::size_t kSmoothMedium = smooth_side_index(36), kSmoothLarge = smooth_side_index(72);
inline constexpr std::size_t kSmoothEnd = std::size(kSmoothSides2d);
template <std::size_t Begin, std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_smooth_table(std::index_sequence<I...>) {
  return {reg_launcher<kSmoothSides2d[Begin + I], kSmoothSides2d[Begin + I], 0>()...};
}
template <std::size_t Begin, std::size_t End>
constexpr auto smooth_table() {
  return make_smooth_table<Begin>(std::make_index_sequence<End - Begin>{});
}

// The fused depthwise kernels of kDepthwiseSides[Begin, End) (Note [fused depthwise transforms]),
// split over three translation units like the smooth squares: sides up to 32, 36..64, 72..120.
using DepthwiseLauncher = void (*)(const DepthwiseArgs&, cudaStream_t);
inline constexpr std::size_t kDepthwiseMedium = depthwise_side_index(36), kDepthwiseLarge = depthwise_side_index(72);
inline constexpr std::size_t kDepthwiseEnd = std::size(kDepthwiseSides);
template <std::size_t Begin, std::size_t... I>
constexpr std::array<DepthwiseLauncher, sizeof...(I)> make_depthwise_table(std::index_sequence<I...>) {
  return {&launch_depthwise<kDepthwiseSides[Begin + I], kDepthwiseSides[Begin + I], 0>...};
}
template <std::size_t Begin, std::size_t End>
constexpr auto depthwise_table() {
  return make_depthwise_table<Begin>(std::make_index_sequence<End - Begin>{});
}

}  // namespace fftconv::fbfft::detail::reg2d
