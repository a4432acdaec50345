// fbfft 2-D register kernels (sides 2..32): one thread per packed row pair and one per column,
// each whole 1-D transform in that thread's registers (RegFft), the transposition between the two
// passes through shared memory. See Note [register 2-D kernels].
#include <array>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/fbfft/fbfft_dispatch.hpp"
#include "gpu/fbfft/reg_fft.cuh"

namespace fftconv::fbfft::detail {
namespace {

// Note [register 2-D kernels]
// The warp-shuffle kernels (fbfft_2d.cu) spread one transform over up to 32 lanes and pay, per
// element and per pass, log2(n) shuffle pairs, a select and runtime twiddles; Nsight Compute found
// them instruction-bound at 18-50% of the copy bandwidth. For sides up to 32 a whole 1-D transform
// fits in one thread's registers (32 complex values), so these kernels give each thread one job:
//   forward: (0) the block's kPlanes input windows are copied with consecutive threads on consecutive
//   addresses into shared memory, zero outside the window (the implicit padding), with cp.async so
//   that all of a thread's loads are in flight together without occupying registers; (1) thread
//   (q, j) packs rows 2j, 2j+1 of plane q as z = x_2j + i x_2j+1, runs RegFft<n_w> and writes the
//   two half spectra back over the real planes (after a barrier); (2) thread (q, c) runs RegFft<n_h>
//   down column c (c = 0 packs the real columns 0 and n_w/2) and stores it: in the freq_major layout
//   straight to global memory, consecutive threads on consecutive planes of one frequency; in the
//   other layouts through shared memory and a contiguous block store.
//   inverse: the mirror image (column DIT with the Hermitian split of columns 0 and n_w/2, row DIT
//   of packed row pairs with the Hermitian extension done in registers, window store).
// Thread t works on plane q = t mod kPlanes, so in stage (2) a warp shares one column c (uniform
// branches) and touches kPlanes consecutive planes; plane strides in shared memory are odd (no bank
// conflicts). Twiddles are compile-time constants, no shuffles are needed. Each thread has at most
// one row job and one column job per group of planes, which is what lets the spectra overwrite the
// real planes in place after a barrier (shared memory = the larger of the two).
template <int LH, int LW>
struct RegTile {
  static constexpr int kNh = 1 << LH, kNw = 1 << LW, kHalf = kNw / 2, kNw2 = kHalf + 1;
  static constexpr int kMaxSide = kNh > kNw ? kNh : kNw;
  // 512 / side planes per block (at most 64). Measured on the H100 (batch 65536, before cp.async):
  // 128 or 256 / side, and register caps for 2-4 blocks per SM, all gave the same times within 2%.
  static constexpr int kPlanes = 512 / kMaxSide > 64 ? 64 : 512 / kMaxSide;
  static constexpr int kRowJobs = kPlanes * (kNh / 2);
  static constexpr int kColJobs = kPlanes * kHalf;
  static constexpr int kJobs = kRowJobs > kColJobs ? kRowJobs : kColJobs;
  static constexpr int kThreads = (kJobs + 31) / 32 * 32;
  static constexpr int kRealStride = kNh * kNw + 1;                          // floats per plane, odd
  static constexpr int kSpecStride = kNh * kNw2 + ((kNh * kNw2) % 2 == 0);   // float2 per plane, odd
  static constexpr int kSmemBytes = kPlanes * kSpecStride * 8 > kPlanes * kRealStride * 4
                                        ? kPlanes * kSpecStride * 8 : kPlanes * kRealStride * 4;
  static_assert((kPlanes & (kPlanes - 1)) == 0, "kPlanes must be a power of two");
};

// Shared-memory <-> global copy of a block's half spectra in the standard or transposed layout
// (consecutive threads on consecutive global addresses; the block's planes are contiguous there).
template <class T, bool Store>
__device__ __forceinline__ void copy_spectra(Layout layout, float2* smem, float2* global_store,
                                             const float2* global_load, int64_t first, int64_t batch) {
  constexpr int kPlaneElems = T::kNh * T::kNw2;
  const int64_t planes = batch - first < T::kPlanes ? batch - first : T::kPlanes;
  const int n = static_cast<int>(planes) * kPlaneElems;
  const int64_t base = first * kPlaneElems;
  for (int e = threadIdx.x; e < n; e += T::kThreads) {
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

template <int LH, int LW>
__global__ void __launch_bounds__(RegTile<LH, LW>::kThreads) forward_2d_reg_kernel(ForwardArgs a) {
  using T = RegTile<LH, LW>;
  using RowFft = RegFft<T::kNw>;
  using ColFft = RegFft<T::kNh>;
  constexpr int kNh = T::kNh, kNw = T::kNw, kNw2 = T::kNw2, kHalf = T::kHalf, kP = T::kPlanes;
  extern __shared__ float2 smem[];
  float* real = reinterpret_cast<float*>(smem);
  const int t = threadIdx.x;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  const int q = t % kP, j = t / kP;  // plane in the group; row pair (stage 1) or column (stage 2)
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kP; first < a.batch;
       first += static_cast<int64_t>(gridDim.x) * kP) {
    // (0) the input windows, zero-padded
    for (int e = t; e < kP * kNh * kNw; e += T::kThreads) {
      const int eq = e >> (LH + LW), y = (e >> LW) & (kNh - 1), x = e & (kNw - 1);
      const int64_t plane = first + eq, yy = y - a.off_h, xx = x - a.off_w;
      const bool inside = plane < a.batch && yy >= 0 && yy < a.in_h && xx >= 0 && xx < a.in_w;
      cp_async<4>(real + eq * T::kRealStride + y * kNw + x,
                  inside ? a.input + plane * a.in_plane_stride + yy * a.in_ld + xx : a.input, inside);
    }
    cp_async_wait_all();
    __syncthreads();
    // (1) rows 2j, 2j+1 of plane q
    const bool row_job = t < T::kRowJobs;
    float2 v[kNw];
    if (row_job) {
      const float* r0 = real + q * T::kRealStride + 2 * j * kNw;
      static_for<kNw>([&](auto x) { v[x] = make_float2(r0[x], r0[kNw + x]); });
      RowFft::forward(v);
    }
    __syncthreads();  // every row is in registers before the spectra overwrite the real planes
    if (row_job) {
      float2* s = smem + q * T::kSpecStride + 2 * j * kNw2;
      static_for<kNw>([&](auto i) {
        constexpr int k = RowFft::freq(i);
        if constexpr (k <= kHalf) {
          const float2 o = v[RowFft::mirror(i)];
          s[k] = unpack_a(v[i], o);
          s[kNw2 + k] = unpack_b(v[i], o);
        }
      });
    }
    __syncthreads();
    // (2) column c = j of plane q
    if (t < T::kColJobs) {
      float2* s = smem + q * T::kSpecStride + j;
      float2 w[kNh];
      if (j == 0)
        static_for<kNh>([&](auto y) { w[y] = make_float2(s[y * kNw2].x, s[y * kNw2 + kHalf].x); });
      else
        static_for<kNh>([&](auto y) { w[y] = s[y * kNw2]; });
      ColFft::forward(w);
      const int64_t plane = first + q;
      const bool direct = a.layout == Layout::freq_major;
      float2* out = a.output + plane + j * ldb;
      const int64_t row_step = kNw2 * ldb;
      if (direct && plane >= a.batch) {
        // nothing to store for a plane past the batch
      } else if (j == 0) {
        static_for<kNh>([&](auto i) {
          constexpr int kh = ColFft::freq(i);
          const float2 o = w[ColFft::mirror(i)];
          if (direct) {
            out[kh * row_step] = unpack_a(w[i], o);
            out[kh * row_step + kHalf * ldb] = unpack_b(w[i], o);
          } else {
            s[kh * kNw2] = unpack_a(w[i], o);
            s[kh * kNw2 + kHalf] = unpack_b(w[i], o);
          }
        });
      } else {
        static_for<kNh>([&](auto i) {
          constexpr int kh = ColFft::freq(i);
          if (direct)
            out[kh * row_step] = w[i];
          else
            s[kh * kNw2] = w[i];
        });
      }
    }
    if (a.layout != Layout::freq_major) {
      __syncthreads();
      copy_spectra<T, true>(a.layout, smem, a.output, nullptr, first, a.batch);
    }
    __syncthreads();  // shared memory is free for the next group of planes
  }
}

template <int LH, int LW>
__global__ void __launch_bounds__(RegTile<LH, LW>::kThreads) inverse_2d_reg_kernel(InverseArgs a) {
  using T = RegTile<LH, LW>;
  using RowFft = RegFft<T::kNw>;
  using ColFft = RegFft<T::kNh>;
  constexpr int kNh = T::kNh, kNw = T::kNw, kNw2 = T::kNw2, kHalf = T::kHalf, kP = T::kPlanes;
  extern __shared__ float2 smem[];
  float* real = reinterpret_cast<float*>(smem);
  const int t = threadIdx.x;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  const int q = t % kP, j = t / kP;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kP; first < a.batch;
       first += static_cast<int64_t>(gridDim.x) * kP) {
    const bool direct = a.layout == Layout::freq_major;
    if (!direct) {
      copy_spectra<T, false>(a.layout, smem, nullptr, a.input, first, a.batch);
      __syncthreads();
    }
    // (1) column c = j of plane q: DIT from the frequency order to rows y
    if (t < T::kColJobs) {
      const int64_t plane = first + q;
      const bool live = plane < a.batch;
      float2* s = smem + q * T::kSpecStride + j;
      const float2* in = a.input + plane + j * ldb;
      const int64_t row_step = kNw2 * ldb;
      float2 w[kNh];
      // Column value at frequency kh (column 0, or n_w/2 when `upper`).
      auto load = [&](int kh, bool upper) {
        if (direct) return live ? in[kh * row_step + (upper ? kHalf * ldb : 0)] : make_float2(0.f, 0.f);
        return s[kh * kNw2 + (upper ? kHalf : 0)];
      };
      if (j == 0) {
        // Hermitian parts of columns 0 and n_w/2 (real after the inverse), taken pair by pair
        // (i, mirror(i)) so that only the packed column stays live.
        static_for<kNh>([&](auto i) {
          constexpr int m = ColFft::mirror(i);
          if constexpr (i <= m) {
            const float2 a0 = load(ColFft::freq(i), false), a1 = load(ColFft::freq(i), true);
            const float2 b0 = load(ColFft::freq(m), false), b1 = load(ColFft::freq(m), true);
            w[i] = pack_ab(make_float2(0.5f * (a0.x + b0.x), 0.5f * (a0.y - b0.y)),
                           make_float2(0.5f * (a1.x + b1.x), 0.5f * (a1.y - b1.y)));
            w[m] = pack_ab(make_float2(0.5f * (b0.x + a0.x), 0.5f * (b0.y - a0.y)),
                           make_float2(0.5f * (b1.x + a1.x), 0.5f * (b1.y - a1.y)));
          }
        });
      } else {
        static_for<kNh>([&](auto i) { w[i] = load(ColFft::freq(i), false); });
      }
      ColFft::inverse(w);
      if (j == 0) {
        static_for<kNh>([&](auto y) {
          s[y * kNw2] = make_float2(w[y].x, 0.f);
          s[y * kNw2 + kHalf] = make_float2(w[y].y, 0.f);
        });
      } else {
        static_for<kNh>([&](auto y) { s[y * kNw2] = w[y]; });
      }
    }
    __syncthreads();
    // (2) rows 2j, 2j+1 of plane q: Hermitian extension, DIT, scale
    const bool row_job = t < T::kRowJobs;
    float2 v[kNw];
    if (row_job) {
      const float2* s = smem + q * T::kSpecStride + 2 * j * kNw2;
      static_for<kNw>([&](auto i) {
        constexpr int k = RowFft::freq(i);
        if constexpr (k <= kHalf) {  // X[k] and, from the same two loads, X[n_w - k] = conj(X[k])
          float2 za = s[k], zb = s[kNw2 + k];
          if constexpr (k == 0 || k == kHalf) {
            za.y = 0.f;
            zb.y = 0.f;
          }
          v[i] = pack_ab(za, zb);
          if constexpr (k != 0 && k != kHalf)
            v[RowFft::mirror(i)] = pack_ab(make_float2(za.x, -za.y), make_float2(zb.x, -zb.y));
        }
      });
      RowFft::inverse(v);
    }
    __syncthreads();  // every half spectrum is read before the real rows overwrite them
    if (row_job) {
      float* r0 = real + q * T::kRealStride + 2 * j * kNw;
      static_for<kNw>([&](auto x) {
        r0[x] = v[x].x * a.scale;
        r0[kNw + x] = v[x].y * a.scale;
      });
    }
    __syncthreads();
    // (3) the output window, consecutive threads on consecutive addresses
    for (int e = t; e < kP * kNh * kNw; e += T::kThreads) {
      const int eq = e >> (LH + LW), y = (e >> LW) & (kNh - 1), x = e & (kNw - 1);
      const int64_t plane = first + eq, oy = y - a.out_off_h, ox = x - a.out_off_w;
      if (plane < a.batch && oy >= 0 && oy < a.out_h && ox >= 0 && ox < a.out_w)
        a.output[plane * a.out_plane_stride + oy * a.out_ld + ox] = real[eq * T::kRealStride + y * kNw + x];
    }
    __syncthreads();
  }
}

template <int LH, int LW, class Args>
void launch_reg(void (*kernel)(Args), const Args& a, cudaStream_t stream) {
  using T = RegTile<LH, LW>;
  const void* k = reinterpret_cast<const void*>(kernel);
  if (T::kSmemBytes > 48 * 1024)
    FFTCONV_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
  const int blocks = grid_blocks(k, T::kThreads, T::kSmemBytes, (a.batch + T::kPlanes - 1) / T::kPlanes);
  kernel<<<blocks, T::kThreads, T::kSmemBytes, stream>>>(a);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

template <int LH, int LW>
void launch_forward(const ForwardArgs& a, cudaStream_t stream) {
  launch_reg<LH, LW>(forward_2d_reg_kernel<LH, LW>, a, stream);
}
template <int LH, int LW>
void launch_inverse(const InverseArgs& a, cudaStream_t stream) {
  launch_reg<LH, LW>(inverse_2d_reg_kernel<LH, LW>, a, stream);
}
template <int LH, int LW>
const void* forward_kernel() { return reinterpret_cast<const void*>(forward_2d_reg_kernel<LH, LW>); }
template <int LH, int LW>
const void* inverse_kernel() { return reinterpret_cast<const void*>(inverse_2d_reg_kernel<LH, LW>); }

template <int LH, int LW>
constexpr Launcher make_launcher() {
  if constexpr (LH < 1 || LH > kMaxLog2dReg || LW < 1 || LW > kMaxLog2dReg) {
    return Launcher{};
  } else {
    return Launcher{&launch_forward<LH, LW>, &launch_inverse<LH, LW>, &forward_kernel<LH, LW>,
                    &inverse_kernel<LH, LW>, RegTile<LH, LW>::kSmemBytes, RegTile<LH, LW>::kThreads};
  }
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_table(std::index_sequence<I...>) {
  constexpr int kSide = kMaxLog2d + 1;
  return {make_launcher<static_cast<int>(I) / kSide, static_cast<int>(I) % kSide>()...};
}

constexpr auto kTable2dReg = make_table(std::make_index_sequence<(kMaxLog2d + 1) * (kMaxLog2d + 1)>{});

}  // namespace

const Launcher* launchers_2d_registers() { return kTable2dReg.data(); }

}  // namespace fftconv::fbfft::detail
