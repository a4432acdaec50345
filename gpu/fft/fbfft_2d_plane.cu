// fbfft 2-D one-thread-per-plane kernels (sides 4 and 8): the whole 2-D transform of a plane in one
// thread's registers. The register family's entries at these sizes. See Note [one-thread 2-D kernels].
#include <array>
#include <cstdint>
#include <utility>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/fourstep.cuh"
#include "gpu/fft/kernel_loop.cuh"

namespace fftconv::fbfft::detail {
namespace {

// Note [one-thread 2-D kernels]
// Nsight Compute on the H100 had the row/column register kernels issue-bound at 8x8 and 16x16
// (8x8 forward, batch 65,536: 146 warp instructions per plane, 65% issue, DRAM 27%), most of it
// per-element index arithmetic of the generic loads and stores. A plane of at most 64 values fits
// in one thread's registers, so these kernels give each thread one plane: packed row pairs
// (RegFft<n_w>), the Hermitian unpacking, the packed columns 0 and n_w/2 and the other columns
// (RegFft<n_h>), all with compile-time indices. A block of 128 threads stages its 128 planes
// through shared memory so that global memory is read and written in 16-byte pieces by
// consecutive threads: plane q's region has an odd number of 16-byte groups (so 8 consecutive
// threads' 16-byte accesses to the same group fall in distinct banks) holding its input, then its
// output in the global order of the layout. The frequency-major layout goes straight between
// registers and global memory (consecutive threads on consecutive planes). The inverse mirrors it
// (columns 0 and n_w/2 projected on their Hermitian parts, the C2R contract).
template <int LH, int LW>
struct PlaneTile {
  static constexpr int kNh = 1 << LH, kNw = 1 << LW, kHalf = kNw / 2, kNw2 = kHalf + 1;
  static constexpr int kInGroups = kNh * kNw / 4, kOutGroups = kNh * kNw2 / 2;
  static constexpr int kMax = kInGroups > kOutGroups ? kInGroups : kOutGroups;
  static constexpr int kGroups = kMax % 2 ? kMax : kMax + 1;  // odd
  static constexpr int kThreads = 128;  // at most: the launcher halves it (to 32) for small batches
  static constexpr int smem_bytes(int threads) { return threads * kGroups * 16; }
  static constexpr int kSmemBytes = smem_bytes(kThreads);
  static_assert(kNh >= 4 && kNw >= 4 && kNh <= 8 && kNw <= 8, "one-thread kernels: sides 4 and 8");
};

// The plane's spectrum X[kh][kw] (kw <= n_w/2): rows(j, v) fills v[x] = (x[2j][x], x[2j+1][x]);
// out(kh, kw, value) is called once per output, kh and kw compile-time.
template <int LH, int LW, class Rows, class Out>
__device__ __forceinline__ void plane_forward(Rows rows, Out out) {
  using T = PlaneTile<LH, LW>;
  constexpr int kNh = T::kNh, kNw = T::kNw, kHalf = T::kHalf;
  // rows: pairs 2j, 2j+1 packed; A[y][k] for k < n_w/2 kept, column 0 packed with n_w/2
  float2 col[kHalf][kNh];  // col[c][y]: c = 0 holds (A[y][0], A[y][n_w/2]) as one complex value
  static_for<kNh / 2>([&](auto j) {
    float2 v[kNw];
    rows(j, v);
    RegFft<kNw>::forward(v);  // v[i] = Z[bitrev(i)]
    static_for<kHalf>([&](auto k) {
      constexpr int ik = bitrev(k, LW), im = bitrev((kNw - k) % kNw, LW);
      if constexpr (k == 0) {
        constexpr int ih = bitrev(kHalf, LW);  // Z[n_w/2]
        col[0][2 * j] = make_float2(v[0].x, v[ih].x);
        col[0][2 * j + 1] = make_float2(v[0].y, v[ih].y);
      } else {
        col[k][2 * j] = unpack_a(v[ik], v[im]);
        col[k][2 * j + 1] = unpack_b(v[ik], v[im]);
      }
    });
  });
  static_for<kHalf>([&](auto c) {
    RegFft<kNh>::forward(col[c]);  // col[c][i] = C[bitrev(i)]
    static_for<kNh>([&](auto kh) {
      constexpr int i = bitrev(kh, LH), im = bitrev((kNh - kh) % kNh, LH);
      if constexpr (c == 0) {
        out(kh, std::integral_constant<int, 0>{}, unpack_a(col[0][i], col[0][im]));
        out(kh, std::integral_constant<int, kHalf>{}, unpack_b(col[0][i], col[0][im]));
      } else {
        out(kh, c, col[c][i]);
      }
    });
  });
}

// The inverse: in(kh, kw) gives X[kh][kw]; rows(j, v) receives n_h n_w idft (unscaled) of rows 2j
// (v[i].y) and 2j+1 (v[i].x) at x = bitrev(i).
template <int LH, int LW, class In, class Rows>
__device__ __forceinline__ void plane_inverse(In in, Rows rows) {
  using T = PlaneTile<LH, LW>;
  constexpr int kNh = T::kNh, kNw = T::kNw, kHalf = T::kHalf;
  float2 col[kHalf][kNh];  // natural order kh, swapped for the forward-FFT inverse
  static_for<kNh>([&](auto kh) {
    constexpr int km = (kNh - kh) % kNh;
    // Hermitian parts of columns 0 and n_w/2, packed
    const float2 a0 = in(kh, std::integral_constant<int, 0>{}), b0 = in(std::integral_constant<int, km>{}, std::integral_constant<int, 0>{});
    const float2 a1 = in(kh, std::integral_constant<int, kHalf>{}), b1 = in(std::integral_constant<int, km>{}, std::integral_constant<int, kHalf>{});
    col[0][kh] = swap_ri(pack_ab(unpack_a(a0, b0), unpack_a(a1, b1)));
    static_for<kHalf - 1>([&](auto c1) { col[c1 + 1][kh] = swap_ri(in(kh, std::integral_constant<int, c1 + 1>{})); });
  });
  static_for<kHalf>([&](auto c) { RegFft<kNh>::forward(col[c]); });  // swap(col[c][i]) = B[bitrev(i)][c]
  static_for<kNh / 2>([&](auto j) {
    constexpr int i0 = bitrev(2 * j, LH), i1 = bitrev(2 * j + 1, LH);
    // row pair z[k] = B[2j][k] + i B[2j+1][k], Hermitian-extended, swapped
    float2 v[kNw];
    static_for<kNw>([&](auto k) {
      float2 za, zb;
      if constexpr (k == 0) {
        za = make_float2(swap_ri(col[0][i0]).x, 0.f);
        zb = make_float2(swap_ri(col[0][i1]).x, 0.f);
      } else if constexpr (k == kHalf) {
        za = make_float2(swap_ri(col[0][i0]).y, 0.f);
        zb = make_float2(swap_ri(col[0][i1]).y, 0.f);
      } else if constexpr (k < kHalf) {
        za = swap_ri(col[k][i0]);
        zb = swap_ri(col[k][i1]);
      } else {
        za = conjf2(swap_ri(col[kNw - k][i0]));
        zb = conjf2(swap_ri(col[kNw - k][i1]));
      }
      v[k] = swap_ri(pack_ab(za, zb));
    });
    RegFft<kNw>::forward(v);  // swap(v[i]) = (row 2j + i row 2j+1)[bitrev(i)]
    rows(j, v);
  });
}

template <int LH, int LW>
__global__ void __launch_bounds__(PlaneTile<LH, LW>::kThreads, 4) forward_plane_kernel(ForwardArgs a) {
  using T = PlaneTile<LH, LW>;
  constexpr int kNh = T::kNh, kNw = T::kNw, kNw2 = T::kNw2, kG = T::kGroups;
  const int kP = static_cast<int>(blockDim.x);  // planes per block: T::kThreads, fewer for small batches
  extern __shared__ __align__(16) float4 sm4[];
  const int t = threadIdx.x;
  wait_for_prior_grids();  // Note [dependent launch]
  const bool whole = a.off_h == 0 && a.off_w == 0 && a.in_h >= kNh && a.in_w >= kNw && a.in_ld == kNw &&
                     a.in_plane_stride == kNh * kNw && (reinterpret_cast<uintptr_t>(a.input) & 15) == 0;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  for (const auto [first, planes] : block_groups(a.batch, kP)) {  // Note [uniform plane loops]
    // (0) inputs into the regions (zero outside the windows)
    if (whole && planes == kP) {
      const float4* src = reinterpret_cast<const float4*>(a.input + first * (kNh * kNw));
      for (int e = t; e < kP * T::kInGroups; e += kP) {
        const int q = e / T::kInGroups, g = e - q * T::kInGroups;
        cp_async<16>(sm4 + q * kG + g, src + e, true);
      }
    } else {
      float* sf = reinterpret_cast<float*>(sm4);
      for (int e = t; e < kP * kNh * kNw; e += kP) {
        const int q = e >> (LH + LW), y = (e >> LW) & (kNh - 1), x = e & (kNw - 1);
        const int64_t yy = y - a.off_h, xx = x - a.off_w;
        const bool inside = q < planes && yy >= 0 && yy < a.in_h && xx >= 0 && xx < a.in_w;
        cp_async<4>(sf + q * kG * 4 + y * kNw + x, inside ? a.input + (first + q) * a.in_plane_stride + yy * a.in_ld + xx : a.input,
                    inside);
      }
    }
    cp_async_wait_all();
    __syncthreads();
    // (1) this thread's plane (its own region only: no barrier until the block's copies)
    const float4* mine = sm4 + t * kG;
    auto rows = [&](auto j, auto& v) {
      constexpr int g0 = 2 * decltype(j)::value * kNw / 4, g1 = g0 + kNw / 4;  // rows 2j, 2j+1
      static_for<kNw / 4>([&](auto q) {
        const float4 r0 = mine[g0 + q], r1 = mine[g1 + q];
        v[4 * q] = make_float2(r0.x, r1.x);
        v[4 * q + 1] = make_float2(r0.y, r1.y);
        v[4 * q + 2] = make_float2(r0.z, r1.z);
        v[4 * q + 3] = make_float2(r0.w, r1.w);
      });
    };
    const bool direct = a.layout == Layout::freq_major;
    const bool transposed = a.layout == Layout::transposed;
    float2* o2 = reinterpret_cast<float2*>(sm4 + t * kG);
    if (direct) {  // one copy of the transform per layout: nothing layout-dependent stays live
      float2* o = a.output + first + t;
      const bool live = t < planes;
      plane_forward<LH, LW>(rows, [&](auto kh, auto kw, float2 v) {
        constexpr int e = decltype(kh)::value * kNw2 + decltype(kw)::value;
        if (live) o[e * ldb] = v;
      });
    } else if (transposed) {
      plane_forward<LH, LW>(rows, [&](auto kh, auto kw, float2 v) { o2[decltype(kw)::value * kNh + decltype(kh)::value] = v; });
    } else {
      plane_forward<LH, LW>(rows, [&](auto kh, auto kw, float2 v) { o2[decltype(kh)::value * kNw2 + decltype(kw)::value] = v; });
    }
    if (!direct) {
      __syncthreads();
      float2* out = a.output + first * (kNh * kNw2);
      if (planes == kP && (reinterpret_cast<uintptr_t>(out) & 15) == 0) {
        float4* o4 = reinterpret_cast<float4*>(out);
        for (int e = t; e < kP * T::kOutGroups; e += kP) {
          const int q = e / T::kOutGroups, g = e - q * T::kOutGroups;
          o4[e] = sm4[q * kG + g];
        }
      } else {
        const float2* s2 = reinterpret_cast<const float2*>(sm4);
        for (int e = t; e < planes * kNh * kNw2; e += kP) {
          const int q = e / (kNh * kNw2), m = e - q * (kNh * kNw2);
          out[e] = s2[q * kG * 2 + m];
        }
      }
    }
    __syncthreads();
  }
}

template <int LH, int LW>
__global__ void __launch_bounds__(PlaneTile<LH, LW>::kThreads, 4) inverse_plane_kernel(InverseArgs a) {
  using T = PlaneTile<LH, LW>;
  constexpr int kNh = T::kNh, kNw = T::kNw, kNw2 = T::kNw2, kG = T::kGroups;
  const int kP = static_cast<int>(blockDim.x);  // planes per block: T::kThreads, fewer for small batches
  extern __shared__ __align__(16) float4 sm4[];
  const int t = threadIdx.x;
  wait_for_prior_grids();  // Note [dependent launch]
  const bool whole = a.out_off_h == 0 && a.out_off_w == 0 && a.out_h == kNh && a.out_w == kNw && a.out_ld == kNw &&
                     a.out_plane_stride == kNh * kNw && (reinterpret_cast<uintptr_t>(a.output) & 15) == 0;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  const bool direct = a.layout == Layout::freq_major;
  const bool transposed = a.layout == Layout::transposed;
  for (const auto [first, planes] : block_groups(a.batch, kP)) {  // Note [uniform plane loops]
    if (!direct) {
      const float2* in = a.input + first * (kNh * kNw2);
      if (planes == kP && (reinterpret_cast<uintptr_t>(in) & 15) == 0) {
        const float4* i4 = reinterpret_cast<const float4*>(in);
        for (int e = t; e < kP * T::kOutGroups; e += kP) {
          const int q = e / T::kOutGroups, g = e - q * T::kOutGroups;
          cp_async<16>(sm4 + q * kG + g, i4 + e, true);
        }
      } else {
        float2* s2 = reinterpret_cast<float2*>(sm4);
        for (int e = t; e < kP * kNh * kNw2; e += kP) {
          const int q = e / (kNh * kNw2), m = e - q * (kNh * kNw2);
          const bool live = q < planes;
          cp_async<8>(s2 + q * kG * 2 + m, live ? in + e : a.input, live);
        }
      }
      cp_async_wait_all();
      __syncthreads();
    }
    // this thread's plane (its own region only: no barrier until the block's copies)
    const float2* i2 = reinterpret_cast<const float2*>(sm4 + t * kG);
    float4* mine = sm4 + t * kG;
    auto rows = [&](auto j, const auto& v) {  // rows 2j, 2j+1 over the (already read) spectra
      constexpr int g0 = 2 * decltype(j)::value * kNw / 4, g1 = g0 + kNw / 4;
      static_for<kNw / 4>([&](auto q) {
        constexpr int x0 = 4 * decltype(q)::value;
        constexpr int i0 = bitrev(x0, LW), i1 = bitrev(x0 + 1, LW), i2 = bitrev(x0 + 2, LW), i3 = bitrev(x0 + 3, LW);
        mine[g0 + q] = make_float4(v[i0].y * a.scale, v[i1].y * a.scale, v[i2].y * a.scale, v[i3].y * a.scale);
        mine[g1 + q] = make_float4(v[i0].x * a.scale, v[i1].x * a.scale, v[i2].x * a.scale, v[i3].x * a.scale);
      });
    };
    if (direct) {  // one copy of the transform per layout: nothing layout-dependent stays live
      const float2* in = a.input + first + t;
      const bool live = t < planes;
      plane_inverse<LH, LW>(
          [&](auto kh, auto kw) {
            constexpr int e = decltype(kh)::value * kNw2 + decltype(kw)::value;
            return live ? in[e * ldb] : make_float2(0.f, 0.f);
          },
          rows);
    } else if (transposed) {
      plane_inverse<LH, LW>([&](auto kh, auto kw) { return i2[decltype(kw)::value * kNh + decltype(kh)::value]; }, rows);
    } else {
      plane_inverse<LH, LW>([&](auto kh, auto kw) { return i2[decltype(kh)::value * kNw2 + decltype(kw)::value]; }, rows);
    }
    __syncthreads();
    if (whole && planes == kP) {
      float4* dst = reinterpret_cast<float4*>(a.output + first * (kNh * kNw));
      for (int e = t; e < kP * T::kInGroups; e += kP) {
        const int q = e / T::kInGroups, g = e - q * T::kInGroups;
        dst[e] = sm4[q * kG + g];
      }
    } else {
      const float* sf = reinterpret_cast<const float*>(sm4);
      for (int e = t; e < planes * kNh * kNw; e += kP) {
        const int q = e >> (LH + LW), y = (e >> LW) & (kNh - 1), x = e & (kNw - 1);
        const int64_t oy = y - a.out_off_h, ox = x - a.out_off_w;
        if (oy >= 0 && oy < a.out_h && ox >= 0 && ox < a.out_w)
          a.output[(first + q) * a.out_plane_stride + oy * a.out_ld + ox] = sf[q * kG * 4 + y * kNw + x];
      }
    }
    __syncthreads();
  }
}

// Planes (threads) per block: 128, halved down to 32 while the batch would fill fewer blocks than two
// per SM (8x8 at batch 16,384: 128 blocks of 128 left a single 4-warp block per SM).
template <int LH, int LW, class Kernel, class Args>
void launch_plane(Kernel* kernel, const Args& a, cudaStream_t stream) {
  using T = PlaneTile<LH, LW>;
  int threads = T::kThreads;
  while (threads > 32 && (a.batch + threads - 1) / threads < 2 * static_cast<int64_t>(sm_count())) threads /= 2;
  const int smem = T::smem_bytes(threads);
  const void* k = reinterpret_cast<const void*>(kernel);
  prepare_kernel(k, smem);
  const int blocks = grid_blocks(k, threads, smem, (a.batch + threads - 1) / threads);
  launch_kernel(kernel, blocks, threads, smem, stream, 1, a);
}

template <int LH, int LW>
void launch_forward(const ForwardArgs& a, cudaStream_t stream) {
  launch_plane<LH, LW>(forward_plane_kernel<LH, LW>, a, stream);
}
template <int LH, int LW>
void launch_inverse(const InverseArgs& a, cudaStream_t stream) {
  launch_plane<LH, LW>(inverse_plane_kernel<LH, LW>, a, stream);
}
template <int LH, int LW>
const void* forward_kernel() { return reinterpret_cast<const void*>(forward_plane_kernel<LH, LW>); }
template <int LH, int LW>
const void* inverse_kernel() { return reinterpret_cast<const void*>(inverse_plane_kernel<LH, LW>); }

template <int LH, int LW>
constexpr Launcher make_launcher() {
  if constexpr (LH < 2 || LW < 2 || LH > 3 || LW > 3) {
    return Launcher{};
  } else {
    return Launcher{&launch_forward<LH, LW>, &launch_inverse<LH, LW>, &forward_kernel<LH, LW>,
                    &inverse_kernel<LH, LW>, PlaneTile<LH, LW>::kSmemBytes, PlaneTile<LH, LW>::kThreads};
  }
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_table(std::index_sequence<I...>) {
  constexpr int kSide = kMaxLog2d + 1;
  return {make_launcher<static_cast<int>(I) / kSide, static_cast<int>(I) % kSide>()...};
}

constexpr auto kTable2dPlane = make_table(std::make_index_sequence<(kMaxLog2d + 1) * (kMaxLog2d + 1)>{});

}  // namespace

const Launcher* launchers_2d_plane() { return kTable2dPlane.data(); }

}  // namespace fftconv::fbfft::detail
