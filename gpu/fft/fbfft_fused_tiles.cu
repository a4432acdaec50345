// The fused tiled fprop (Note [fused tiles]): one kernel per pass that forwards a group of tiles'
// input channels, multiplies by the kernel spectra summed over the channels and inverts each output
// channel to its overlap-save window, the spectra in shared memory; on the register 2-D stages.
#include <algorithm>
#include <string>

#include "common/errors.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/fft/reg_2d.cuh"

namespace fftconv::fbfft {
namespace detail::fused {

// Note [fused tiles]
// The unfused tiled fprop moves every tile spectrum through global memory three times (forward,
// CGEMM, inverse). Here a block takes nt consecutive items (tile t of image s, item = t*S + s;
// nt = 1, 2 or 4) and keeps them on chip:
//   (A) it forwards the nt*f input planes, P at a time (16 at 32x32, 32 at 16x16; 256 threads): each
//       tile's read window, clipped to the image (implicit zero padding), goes to the work area by
//       cp.async, and the register forward's row and column stages write its half spectrum into the
//       input-spectra area, which holds all nt*f of them;
//   (B) for each group of P / nt output channels j, thread (j, q) accumulates
//       sum_i X[u][i][q] conj(W[j][i][q]) in registers for each item u, one coalesced L2 read of W
//       serving nt tiles; the inverse's stages turn the sums into real planes, and each plane's
//       overlap-save window (where no circular wrap reaches) is stored straight into the output.
// Invariant: from (A) to the end of (B) the block's input spectra are never overwritten, and each
// output plane is written once by one block: no atomics, a deterministic result. Global memory sees
// the input once per tile (plus the halo), the output once, the kernel spectra once per block.
// Shared memory: P work planes and the nt*f input spectra at an odd float2 stride, plus the tile
// headers. f half spectra must fit kFusedSpectraBudget (156 KiB: f <= 36 at 32x32, f <= 137 at
// 16x16) so that nt = 1 stays within sm_90's 227 KiB a block; wider layers are refused, since
// chunking f would keep fo output spectra per tile alive across chunks. nt is the most of 4, 2, 1
// whose block fits two to a multiprocessor (<= 113 KiB; L1 at 32x32: nt = 2, 96,560 bytes).
// Measured (H100, L1 fprop, 32x32 tiles): 3.53 ms fused against 4.33 ms unfused.

constexpr int kMaxTiles = 4;
constexpr int64_t kTwoPerSm = 113 * 1024;

template <int N>
struct Fused {
  using T = reg2d::RegTile<N, N, 0>;
  static constexpr int kP = T::kPlanes, kLogP = ilog2(kP), kThreads = T::kThreads;
  static constexpr int kStride = T::smem_bytes(1) / 8;  // float2 per plane, odd
  static constexpr int kFreqs = N * (N / 2 + 1);
  // Blocks per multiprocessor the launch bounds ask for: two at 32x32 (shared memory allows no
  // more at L1-like shapes), three at 16x16.
  static constexpr int kMinBlocks = N == 16 ? 3 : 2;
  // The products write the work area at the stride the inverse stages read (T::kSpecStride).
  static_assert(T::smem_bytes(1) % 8 == 0 && kStride == T::kSpecStride && kStride % 2 == 1, "plane stride");
  static_assert(T::RowFft::kG == 1 && T::ColFft::kG == 1, "one lane per 1-D transform");
};

// One input plane of the group being forwarded: the source plane, the read window's origin in source
// coordinates (padded coordinates minus the padding: negative above / left of the image), and its
// extent clipped to the basis (0: a plane past the block's items, zeros).
struct InputSlot {
  const float* src;
  int64_t y0, x0;
  int rh, rw;
};
// One item of the block: its image's first output plane, the kept window's origin in the output, and
// its extent (0 past the batch).
struct OutputItem {
  float* out;
  int64_t y0, x0;
  int wh, ww;
};

int64_t smem_bytes(int n, int64_t f, int nt) {
  const int stride = n == 16 ? Fused<16>::kStride : Fused<32>::kStride, planes = n == 16 ? Fused<16>::kP : Fused<32>::kP;
  return (planes + int64_t(nt) * f) * stride * 8 + planes * int64_t(sizeof(InputSlot)) + kMaxTiles * int64_t(sizeof(OutputItem));
}

// Stages (1)-(2) of the register forward (forward_2d_reg_kernel) on the work area's real planes:
// the half spectrum of plane q goes to dst + q * kStride (standard layout) for q < live_planes.
template <int N>
__device__ __forceinline__ void forward_to(float2* work, float2* dst, int live_planes, const reg2d::Job<1>& rj,
                                           const reg2d::Job<1>& cj) {
  using F = Fused<N>;
  using T = typename F::T;
  using RowFft = typename T::RowFft;
  using ColFft = typename T::ColFft;
  constexpr int kNw = T::kNw, kNw2 = T::kNw2, kHalf = T::kHalf;
  const float* real = reinterpret_cast<const float*>(work);
  // (1) rows 2j, 2j+1 of plane q, packed
  float2 v[RowFft::kR];
  {
    const float* r0 = real + rj.q * T::kRealStride + 2 * rj.j * kNw;
    static_for<RowFft::kR>([&](auto r) { v[r] = make_float2(r0[r], r0[kNw + r]); });
    RowFft::forward(v, rj.p);
  }
  __syncthreads();  // every row is in registers before the spectra overwrite the real planes
  {
    float2* s = work + rj.q * T::kSpecStride + 2 * rj.j * kNw2;
    static_for<RowFft::kR>([&](auto r) {
      const float2 o = RowFft::template partner<r>(v, rj.p);
      const int k = RowFft::reg_freq(r);
      if (rj.live && k <= kHalf) {
        s[k] = unpack_a(v[r], o);
        s[kNw2 + k] = unpack_b(v[r], o);
      }
    });
  }
  __syncthreads();
  // (2) column c = j of plane q, into the plane's half spectrum at dst
  {
    const float2* s = work + cj.q * T::kSpecStride + cj.j;
    float2 w[ColFft::kR];
    if (!cj.live)
      static_for<ColFft::kR>([&](auto r) { w[r] = make_float2(0.f, 0.f); });
    else if (cj.j == 0)
      static_for<ColFft::kR>([&](auto r) { w[r] = make_float2(s[r * kNw2].x, s[r * kNw2 + kHalf].x); });
    else
      static_for<ColFft::kR>([&](auto r) { w[r] = s[r * kNw2]; });
    ColFft::forward(w, cj.p);
    const bool store = cj.live && cj.q < live_planes;
    float2* out = dst + cj.q * F::kStride + cj.j;
    if (cj.j == 0) {
      static_for<ColFft::kR>([&](auto r) {
        constexpr int kh = ColFft::reg_freq(r);
        const float2 o = ColFft::template partner<r>(w, cj.p);
        if (store) {
          out[kh * kNw2] = unpack_a(w[r], o);
          out[kh * kNw2 + kHalf] = unpack_b(w[r], o);
        }
      });
    } else if (store) {
      static_for<ColFft::kR>([&](auto r) { out[ColFft::reg_freq(r) * kNw2] = w[r]; });
    }
  }
}

template <int N>
__global__ void __launch_bounds__(Fused<N>::kThreads, Fused<N>::kMinBlocks) fused_tiles_kernel(FusedTilesArgs a, int log_nt) {
  using F = Fused<N>;
  using T = typename F::T;
  constexpr int kP = F::kP, kStride = F::kStride, kFreqs = F::kFreqs, kThreads = F::kThreads;
  extern __shared__ float2 smem[];
  const int nt = 1 << log_nt;
  const int f = static_cast<int>(a.f), planes_in = nt * f;
  float2* work = smem;
  float2* spectra = smem + kP * kStride;  // the nt*f input spectra, plane u*f + i
  auto* slots = reinterpret_cast<InputSlot*>(spectra + planes_in * kStride);
  auto* items = reinterpret_cast<OutputItem*>(slots + kP);
  float* real = reinterpret_cast<float*>(work);
  const int t = threadIdx.x;
  const int64_t count = a.S * a.rows.count * a.cols.count, plane_out = a.out_h * a.out_w;
  const reg2d::Job<1> rj(t, N / 2, F::kLogP), cj(t, N / 2, F::kLogP);
  wait_for_prior_grids();  // Note [dependent launch]
  for (const auto [i0, live_items] : block_groups(count, nt)) {  // Note [uniform plane loops]
    if (t < kMaxTiles) {
      OutputItem it{a.output, 0, 0, 0, 0};
      if (t < live_items) {
        const int64_t item = i0 + t, tile = item / a.S, s = item - tile * a.S;
        const int64_t tr = tile / a.cols.count, tc = tile - tr * a.cols.count;
        it.out = a.output + s * a.fo * plane_out;
        it.y0 = a.rows.origin + tr * a.rows.step;
        it.x0 = a.cols.origin + tc * a.cols.step;
        const int64_t rest_h = a.rows.extent - tr * a.rows.step, rest_w = a.cols.extent - tc * a.cols.step;
        it.wh = static_cast<int>(rest_h < a.rows.step ? rest_h : a.rows.step);
        it.ww = static_cast<int>(rest_w < a.cols.step ? rest_w : a.cols.step);
      }
      items[t] = it;
    }
    __syncthreads();
    // (A) the input spectra of the block's items, kP planes at a time
    for (int a0 = 0; a0 < planes_in; a0 += kP) {
      if (t < kP) {
        InputSlot sl{a.input, 0, 0, 0, 0};
        const int plane = a0 + t, u = plane / f, i = plane - u * f;
        if (plane < planes_in && u < live_items) {
          const int64_t item = i0 + u, s = item % a.S;
          const OutputItem& it = items[u];
          sl.src = a.input + (s * a.f + i) * a.h * a.w;
          sl.y0 = it.y0 - a.ph;
          sl.x0 = it.x0 - a.pw;
          const int64_t rh = it.wh + a.kh - 1, rw = it.ww + a.kw - 1;
          sl.rh = static_cast<int>(rh < N ? rh : N);
          sl.rw = static_cast<int>(rw < N ? rw : N);
        }
        slots[t] = sl;
      }
      __syncthreads();
#pragma unroll 4
      for (int e = t; e < kP * N * N; e += kThreads) {
        const int q = reg2d::plane_of<T>(e), y = reg2d::row_of<T>(e), x = reg2d::col_of<T>(e);
        const InputSlot& sl = slots[q];
        const int64_t sy = sl.y0 + y, sx = sl.x0 + x;
        const bool inside = y < sl.rh && x < sl.rw && sy >= 0 && sy < a.h && sx >= 0 && sx < a.w;
        cp_async<4>(real + q * T::kRealStride + y * N + x, inside ? sl.src + sy * a.w + sx : a.input, inside);
      }
      cp_async_wait_all();
      __syncthreads();
      forward_to<N>(work, spectra + a0 * kStride, planes_in - a0, rj, cj);
      __syncthreads();  // the spectra are complete; the work area and the slots are free
    }
    // (B) per group of kP / nt output channels: products, inverse, kept windows
    const int channels = kP >> log_nt;
    for (int64_t j0 = 0; j0 < a.fo; j0 += channels) {
#pragma unroll 1
      for (int e = t; e < channels * kFreqs; e += kThreads) {
        const int jl = e / kFreqs, q = e - jl * kFreqs;
        const int64_t j = j0 + jl;
        float2 acc[kMaxTiles];
        static_for<kMaxTiles>([&](auto u) { acc[u] = make_float2(0.f, 0.f); });
        if (j < a.fo) {
          const float2* __restrict__ wk = a.kernel + j * a.f * kFreqs + q;
          for (int i = 0; i < f; ++i) {
            const float2 k = __ldg(wk + int64_t(i) * kFreqs);
            static_for<kMaxTiles>([&](auto u) {
              if (u < nt) {
                const float2 x = spectra[(u * f + i) * kStride + q];
                acc[u].x += x.x * k.x + x.y * k.y;  // X conj(W)
                acc[u].y += x.y * k.x - x.x * k.y;
              }
            });
          }
        }
        static_for<kMaxTiles>([&](auto u) {
          if (u < nt) work[((jl << log_nt) + u) * kStride + q] = acc[u];
        });
      }
      __syncthreads();
      reg2d::inverse_to_real<T>(1.0f / float(N * N), work, rj, cj);
#pragma unroll 4
      for (int e = t; e < kP * N * N; e += kThreads) {
        const int q = reg2d::plane_of<T>(e), y = reg2d::row_of<T>(e), x = reg2d::col_of<T>(e);
        const int u = q & (nt - 1);
        const int64_t j = j0 + (q >> log_nt);
        const OutputItem& it = items[u];
        if (j < a.fo && y < it.wh && x < it.ww)
          it.out[j * plane_out + (it.y0 + y) * a.out_w + it.x0 + x] = real[q * T::kRealStride + y * N + x];
      }
      __syncthreads();  // the work area is free for the next group
    }
  }
}

template <int N>
const void* kernel_of() {
  return reinterpret_cast<const void*>(fused_tiles_kernel<N>);
}

template <int N>
void launch(const FusedTilesArgs& a, int nt, cudaStream_t stream) {
  const void* k = kernel_of<N>();
  const int smem = static_cast<int>(smem_bytes(N, a.f, nt));
  prepare_kernel(k, smem);
  const int64_t count = a.S * a.rows.count * a.cols.count;
  const int blocks = grid_blocks(k, Fused<N>::kThreads, smem, (count + nt - 1) / nt);
  launch_kernel(fused_tiles_kernel<N>, blocks, Fused<N>::kThreads, smem, stream, 1, a, ilog2(nt));
}

[[noreturn]] void bad(const std::string& field, int64_t value, const std::string& why) {
  throw_invalid_argument("fbfft: fused tiles", field, value, why);
}

void validate_axis(const TileAxis& ax, int64_t k, int n, int64_t out, const char* name) {
  const std::string field = std::string(name) + ".";
  if (ax.step < 1) bad(field + "step", ax.step, "must be >= 1");
  if (ax.step + k - 1 > n)
    bad(field + "step", ax.step, "reads step + k - 1 = " + std::to_string(ax.step + k - 1) + " > n = " + std::to_string(n));
  if (ax.count < 1) bad(field + "count", ax.count, "must be >= 1");
  if (ax.origin < 0) bad(field + "origin", ax.origin, "must be >= 0");
  if (ax.extent < 1 || ax.extent > (ax.count) * ax.step || ax.extent <= (ax.count - 1) * ax.step)
    bad(field + "extent", ax.extent, "must be covered by count tiles of step, the last one not empty");
  if (ax.origin + ax.extent > out)
    bad(field + "extent", ax.extent, "with origin " + std::to_string(ax.origin) + " exceeds the output's " +
                                         std::to_string(out));
}

}  // namespace detail::fused

int64_t fused_tiles_plane_bytes(int n) {
  using namespace detail::fused;
  return n == 16 ? Fused<16>::kStride * 8 : n == 32 ? Fused<32>::kStride * 8 : 0;
}

std::string fused_tiles_unsupported(int n, int64_t f) {
  const int64_t plane = fused_tiles_plane_bytes(n);
  if (plane == 0) return "tile basis " + std::to_string(n) + "x" + std::to_string(n) + " has no fused kernel (16x16, 32x32)";
  if (f < 1 || f * plane > kFusedSpectraBudget)
    return "f=" + std::to_string(f) + " input spectra of " + std::to_string(plane) + " bytes exceed the fused kernel's " +
           std::to_string(kFusedSpectraBudget) + "-byte shared-memory budget at " + std::to_string(n) + "x" +
           std::to_string(n) + " (at most f=" + std::to_string(kFusedSpectraBudget / plane) +
           "; Note [fused tiles])";
  return "";
}

int fused_tiles_per_block(int n, int64_t f) {
  for (int nt : {4, 2})
    if (nt * f * fused_tiles_plane_bytes(n) <= kFusedSpectraBudget && fused_tiles_smem_bytes(n, f, nt) <= detail::fused::kTwoPerSm)
      return nt;
  return 1;
}

int64_t fused_tiles_smem_bytes(int n, int64_t f, int tiles_per_block) {
  return fused_tiles_plane_bytes(n) ? detail::fused::smem_bytes(n, f, tiles_per_block) : 0;
}

void validate(const FusedTilesArgs& a) {
  using detail::fused::bad;
  if (std::string why = fused_tiles_unsupported(a.n, a.f); !why.empty()) throw Unsupported("fbfft: fused tiles: " + why);
  if (a.S < 1) bad("S", a.S, "must be >= 1");
  if (a.fo < 1) bad("fo", a.fo, "must be >= 1");
  if (a.h < 1) bad("h", a.h, "must be >= 1");
  if (a.w < 1) bad("w", a.w, "must be >= 1");
  if (a.ph < 0) bad("ph", a.ph, "must be >= 0");
  if (a.pw < 0) bad("pw", a.pw, "must be >= 0");
  if (a.kh < 1 || a.kh > a.n) bad("kh", a.kh, "must be in 1..n");
  if (a.kw < 1 || a.kw > a.n) bad("kw", a.kw, "must be in 1..n");
  if (a.out_h != a.h + 2 * a.ph - a.kh + 1) bad("out_h", a.out_h, "must be h + 2 ph - kh + 1");
  if (a.out_w != a.w + 2 * a.pw - a.kw + 1) bad("out_w", a.out_w, "must be w + 2 pw - kw + 1");
  detail::fused::validate_axis(a.rows, a.kh, a.n, a.out_h, "rows");
  detail::fused::validate_axis(a.cols, a.kw, a.n, a.out_w, "cols");
  if (a.tiles_per_block != 0 && a.tiles_per_block != 1 && a.tiles_per_block != 2 && a.tiles_per_block != 4)
    bad("tiles_per_block", a.tiles_per_block, "must be 0, 1, 2 or 4");
  if (!a.input || !a.kernel || !a.output) bad("S", a.S, "needs non-null input, kernel and output pointers");
}

void fused_tiles_fprop(const FusedTilesArgs& a, cudaStream_t stream) {
  validate(a);
  const int nt = a.tiles_per_block ? a.tiles_per_block : fused_tiles_per_block(a.n, a.f);
  if (a.n == 16) detail::fused::launch<16>(a, nt, stream);
  else detail::fused::launch<32>(a, nt, stream);
}

std::string fused_tiles_attributes(int n) {
  if (!fused_tiles_plane_bytes(n)) return "none";
  const void* fn = n == 16 ? detail::fused::kernel_of<16>() : detail::fused::kernel_of<32>();
  cudaFuncAttributes attr{};
  FFTCONV_CUDA_CHECK(cudaFuncGetAttributes(&attr, fn));
  return "regs=" + std::to_string(attr.numRegs) + " lmem=" + std::to_string(attr.localSizeBytes) + "B";
}

}  // namespace fftconv::fbfft
