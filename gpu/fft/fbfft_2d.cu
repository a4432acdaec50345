// fbfft 2-D kernels (n_h, n_w in 2..64, and 128×128): row FFTs of packed row pairs in registers,
// the half spectrum transposed through shared memory, column FFTs in registers (columns 0 and
// n_w/2 packed into one), and coalesced stores in the requested layout. See Note [fbfft 2-D].
#include <array>
#include <utility>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/kernel_loop.cuh"
#include "gpu/fft/warp_fft.cuh"

namespace fftconv::fbfft::detail {
namespace {

// Note [fbfft 2-D]
// A block holds kPlanes planes' half spectra in shared memory, kNh rows of kNw2 = n_w/2+1 complex
// (odd row stride for n_w >= 4: column reads are free of bank conflicts).
// Forward: (1) each row job packs rows 2j, 2j+1 as z = x_2j + i x_2j+1, loads them clipped from
// global memory, runs a WarpFft<n_w>, splits the two spectra with one shuffle and writes
// kw <= n_w/2 to shared memory; (2) each column job c in [0, n_w/2) runs a WarpFft<n_h> on
// column c, where job 0 packs the two real columns 0 and n_w/2 (real because the rows are real)
// and splits them the same way; (3) the block stores its planes in the output layout, consecutive
// threads on consecutive addresses. Inverse runs the mirror image: coalesced load, column DIT
// (job 0 packs the Hermitian parts of columns 0 and n_w/2, whose inverses are taken real), row
// DIT of packed row pairs with Hermitian gather, and the window store with the scale.
// All job loops are warp-uniform (full-mask shuffles); a job reads its column before any lane of
// the warp writes it back (__syncwarp), and columns of different jobs are disjoint.
template <int LH, int LW>
struct Tile2d {
  static constexpr int kNh = 1 << LH, kNw = 1 << LW, kHalf = kNw / 2, kNw2 = kHalf + 1;
  static constexpr int kPlanes = kNh * kNw >= 2048 ? 1 : 2048 / (kNh * kNw);
  static constexpr int kPlaneElems = kNh * kNw2;
  static constexpr int kSmemBytes = kPlanes * kPlaneElems * static_cast<int>(sizeof(float2));
  static constexpr int kRowJobs = kPlanes * (kNh / 2);
  static constexpr int kColJobs = kPlanes * kHalf;
  static constexpr int kWarps = kThreads / 32;
};

// The (q, kh, kw) that thread-strided element e of a block's kPlanes half spectra maps to, in the
// memory order of the layout (so consecutive e are consecutive global addresses).
template <class T>
__device__ __forceinline__ void block_element(Layout layout, int e, int& q, int& kh, int& kw) {
  if (layout == Layout::freq_major) {
    const int f = e / T::kPlanes;
    q = e % T::kPlanes;
    kh = f / T::kNw2;
    kw = f % T::kNw2;
  } else {
    q = e / T::kPlaneElems;
    const int rem = e % T::kPlaneElems;
    if (layout == Layout::transposed) {
      kw = rem / T::kNh;
      kh = rem % T::kNh;
    } else {
      kh = rem / T::kNw2;
      kw = rem % T::kNw2;
    }
  }
}

template <int LH, int LW>
__global__ void __launch_bounds__(kThreads) forward_2d_kernel(ForwardArgs a) {
  using T = Tile2d<LH, LW>;
  using RowFft = WarpFft<T::kNw>;
  using ColFft = WarpFft<T::kNh>;
  extern __shared__ float2 smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  RowFft row;
  row.init(lane % RowFft::kG);
  ColFft col;
  col.init(lane % ColFft::kG);
  wait_for_prior_grids();  // Note [dependent launch]
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  for (const auto [first, planes] : block_groups(a.batch, T::kPlanes)) {  // Note [uniform plane loops]
    // (1) rows
    for (int j0 = warp * RowFft::kGroupsPerWarp; j0 < T::kRowJobs; j0 += T::kWarps * RowFft::kGroupsPerWarp) {
      const int job = j0 + lane / RowFft::kG;
      const int q = job / (T::kNh / 2), y0 = 2 * (job % (T::kNh / 2));
      const int64_t plane = first + q;
      const bool live = job < T::kRowJobs && plane < a.batch;
      const int64_t ya = y0 - a.off_h, yb = ya + 1;
      const bool row_a = live && ya >= 0 && ya < a.in_h, row_b = live && yb >= 0 && yb < a.in_h;
      const float* base = a.input + (live ? plane * a.in_plane_stride : 0);
      float2 v[RowFft::kR];
#pragma unroll
      for (int r = 0; r < RowFft::kR; ++r) {
        const int64_t xx = r * RowFft::kG + row.p_ - a.off_w;
        const bool inside = xx >= 0 && xx < a.in_w;
        v[r].x = (row_a && inside) ? __ldg(base + ya * a.in_ld + xx) : 0.f;
        v[r].y = (row_b && inside) ? __ldg(base + yb * a.in_ld + xx) : 0.f;
      }
      row.forward(v);
      float2 o[RowFft::kR];
      row.partner(v, o);
      if (job < T::kRowJobs) {
        float2* s = smem + q * T::kPlaneElems + y0 * T::kNw2;
#pragma unroll
        for (int r = 0; r < RowFft::kR; ++r) {
          const int k = row.freq(r);
          if (k <= T::kHalf) {
            s[k] = unpack_a(v[r], o[r]);
            s[T::kNw2 + k] = unpack_b(v[r], o[r]);
          }
        }
      }
    }
    __syncthreads();
    // (2) columns
    for (int j0 = warp * ColFft::kGroupsPerWarp; j0 < T::kColJobs; j0 += T::kWarps * ColFft::kGroupsPerWarp) {
      const int job = j0 + lane / ColFft::kG;
      const bool live = job < T::kColJobs;
      const int q = live ? job / T::kHalf : 0, c = job % T::kHalf;
      float2* s = smem + q * T::kPlaneElems;
      float2 v[ColFft::kR];
#pragma unroll
      for (int r = 0; r < ColFft::kR; ++r) {
        const int y = r * ColFft::kG + col.p_;
        if (!live) {
          v[r] = make_float2(0.f, 0.f);
        } else if (c == 0) {
          v[r] = make_float2(s[y * T::kNw2].x, s[y * T::kNw2 + T::kHalf].x);
        } else {
          v[r] = s[y * T::kNw2 + c];
        }
      }
      col.forward(v);
      float2 o[ColFft::kR];
      col.partner(v, o);
      __syncwarp();
      if (live) {
#pragma unroll
        for (int r = 0; r < ColFft::kR; ++r) {
          const int k = col.freq(r);
          if (c == 0) {
            s[k * T::kNw2] = unpack_a(v[r], o[r]);
            s[k * T::kNw2 + T::kHalf] = unpack_b(v[r], o[r]);
          } else {
            s[k * T::kNw2 + c] = v[r];
          }
        }
      }
    }
    __syncthreads();
    // (3) store in the output layout
    for (int e = threadIdx.x; e < T::kPlanes * T::kPlaneElems; e += kThreads) {
      int q, kh, kw;
      block_element<T>(a.layout, e, q, kh, kw);
      const int64_t plane = first + q;
      if (plane < a.batch)
        a.output[freq_offset(a.layout, plane, kh, kw, T::kNh, T::kNw2, ldb)] = smem[q * T::kPlaneElems + kh * T::kNw2 + kw];
    }
    __syncthreads();
  }
}

template <int LH, int LW>
__global__ void __launch_bounds__(kThreads) inverse_2d_kernel(InverseArgs a) {
  using T = Tile2d<LH, LW>;
  using RowFft = WarpFft<T::kNw>;
  using ColFft = WarpFft<T::kNh>;
  extern __shared__ float2 smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  RowFft row;
  row.init(lane % RowFft::kG);
  ColFft col;
  col.init(lane % ColFft::kG);
  wait_for_prior_grids();  // Note [dependent launch]
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  for (const auto [first, planes] : block_groups(a.batch, T::kPlanes)) {  // Note [uniform plane loops]
    // (1) load the block's half spectra
    for (int e = threadIdx.x; e < T::kPlanes * T::kPlaneElems; e += kThreads) {
      int q, kh, kw;
      block_element<T>(a.layout, e, q, kh, kw);
      const int64_t plane = first + q;
      smem[q * T::kPlaneElems + kh * T::kNw2 + kw] =
          plane < a.batch ? a.input[freq_offset(a.layout, plane, kh, kw, T::kNh, T::kNw2, ldb)] : make_float2(0.f, 0.f);
    }
    __syncthreads();
    // (2) columns: DIT from the frequency order to rows y
    for (int j0 = warp * ColFft::kGroupsPerWarp; j0 < T::kColJobs; j0 += T::kWarps * ColFft::kGroupsPerWarp) {
      const int job = j0 + lane / ColFft::kG;
      const bool live = job < T::kColJobs;
      const int q = live ? job / T::kHalf : 0, c = job % T::kHalf;
      float2* s = smem + q * T::kPlaneElems;
      float2 v[ColFft::kR];
#pragma unroll
      for (int r = 0; r < ColFft::kR; ++r) {
        const int k = col.freq(r);
        if (!live) {
          v[r] = make_float2(0.f, 0.f);
        } else if (c == 0) {
          const int km = (T::kNh - k) & (T::kNh - 1);
          const float2 p0 = s[k * T::kNw2], m0 = s[km * T::kNw2];
          const float2 p1 = s[k * T::kNw2 + T::kHalf], m1 = s[km * T::kNw2 + T::kHalf];
          v[r] = pack_ab(make_float2(0.5f * (p0.x + m0.x), 0.5f * (p0.y - m0.y)),
                         make_float2(0.5f * (p1.x + m1.x), 0.5f * (p1.y - m1.y)));
        } else {
          v[r] = s[k * T::kNw2 + c];
        }
      }
      col.inverse(v);
      __syncwarp();
      if (live) {
#pragma unroll
        for (int r = 0; r < ColFft::kR; ++r) {
          const int y = r * ColFft::kG + col.p_;
          if (c == 0) {
            s[y * T::kNw2] = make_float2(v[r].x, 0.f);
            s[y * T::kNw2 + T::kHalf] = make_float2(v[r].y, 0.f);
          } else {
            s[y * T::kNw2 + c] = v[r];
          }
        }
      }
    }
    __syncthreads();
    // (3) rows: Hermitian gather of row pairs, DIT, window store
    for (int j0 = warp * RowFft::kGroupsPerWarp; j0 < T::kRowJobs; j0 += T::kWarps * RowFft::kGroupsPerWarp) {
      const int job = j0 + lane / RowFft::kG;
      const bool in_block = job < T::kRowJobs;
      const int q = in_block ? job / (T::kNh / 2) : 0, y0 = 2 * (job % (T::kNh / 2));
      const int64_t plane = first + q;
      const float2* s = smem + q * T::kPlaneElems + y0 * T::kNw2;
      float2 v[RowFft::kR];
#pragma unroll
      for (int r = 0; r < RowFft::kR; ++r) {
        const int k = row.freq(r);
        const int kk = k <= T::kHalf ? k : T::kNw - k;
        float2 za = in_block ? s[kk] : make_float2(0.f, 0.f);
        float2 zb = in_block ? s[T::kNw2 + kk] : make_float2(0.f, 0.f);
        if (kk == 0 || kk == T::kHalf) {
          za.y = 0.f;
          zb.y = 0.f;
        } else if (k > T::kHalf) {
          za.y = -za.y;
          zb.y = -zb.y;
        }
        v[r] = pack_ab(za, zb);
      }
      row.inverse(v);
      if (in_block && plane < a.batch) {
        const int64_t oy = y0 - a.out_off_h;
        const bool row_a = oy >= 0 && oy < a.out_h, row_b = oy + 1 >= 0 && oy + 1 < a.out_h;
        float* base = a.output + plane * a.out_plane_stride;
#pragma unroll
        for (int r = 0; r < RowFft::kR; ++r) {
          const int64_t ox = r * RowFft::kG + row.p_ - a.out_off_w;
          if (ox >= 0 && ox < a.out_w) {
            if (row_a) base[oy * a.out_ld + ox] = v[r].x * a.scale;
            if (row_b) base[(oy + 1) * a.out_ld + ox] = v[r].y * a.scale;
          }
        }
      }
    }
    __syncthreads();
  }
}

// Launches a 2^LH × 2^LW kernel (forward or inverse) over a.batch planes, kPlanes per block.
template <int LH, int LW, class Args>
void launch_2d(void (*kernel)(Args), const Args& a, cudaStream_t stream) {
  using T = Tile2d<LH, LW>;
  const void* k = reinterpret_cast<const void*>(kernel);
  prepare_kernel(k, T::kSmemBytes);
  const int blocks = grid_blocks(k, kThreads, T::kSmemBytes, (a.batch + T::kPlanes - 1) / T::kPlanes);
  launch_kernel(kernel, blocks, kThreads, T::kSmemBytes, stream, 1, a);
}

template <int LH, int LW>
void launch_forward(const ForwardArgs& a, cudaStream_t stream) {
  launch_2d<LH, LW>(forward_2d_kernel<LH, LW>, a, stream);
}
template <int LH, int LW>
void launch_inverse(const InverseArgs& a, cudaStream_t stream) {
  launch_2d<LH, LW>(inverse_2d_kernel<LH, LW>, a, stream);
}

template <int LH, int LW>
const void* forward_kernel() { return reinterpret_cast<const void*>(forward_2d_kernel<LH, LW>); }
template <int LH, int LW>
const void* inverse_kernel() { return reinterpret_cast<const void*>(inverse_2d_kernel<LH, LW>); }

template <int LH, int LW>
constexpr bool kHasKernel = (LH >= 1 && LH <= 6 && LW >= 1 && LW <= 6) || (LH == 7 && LW == 7);

template <int LH, int LW>
constexpr Launcher make_launcher() {
  if constexpr (!kHasKernel<LH, LW>) {
    return Launcher{};
  } else {
    return Launcher{&launch_forward<LH, LW>, &launch_inverse<LH, LW>, &forward_kernel<LH, LW>,
                    &inverse_kernel<LH, LW>, Tile2d<LH, LW>::kSmemBytes};
  }
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_table(std::index_sequence<I...>) {
  constexpr int kSide = kMaxLog2d + 1;
  return {make_launcher<static_cast<int>(I) / kSide, static_cast<int>(I) % kSide>()...};
}

constexpr auto kTable2d = make_table(std::make_index_sequence<(kMaxLog2d + 1) * (kMaxLog2d + 1)>{});

}  // namespace

const Launcher* launchers_2d() { return kTable2d.data(); }

}  // namespace fftconv::fbfft::detail
