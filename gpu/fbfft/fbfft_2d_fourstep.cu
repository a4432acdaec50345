// fbfft 2-D four-step kernels (sides 64 and 128, standard and transposed layouts): one plane per
// block in shared memory, every 1-D transform split as N = R1 x 8 between the registers of 8 (then
// R1) threads that exchange through shared memory. See Note [four-step 2-D kernels].
#include <array>
#include <cstdint>
#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/fbfft/fbfft_dispatch.hpp"
#include "gpu/fbfft/reg_fft.cuh"

namespace fftconv::fbfft::detail {
namespace {

// Note [four-step 2-D kernels]
// Nsight Compute on the H100 (batch 16,384) found the other families' 64x64 and 128x128 kernels
// issue-bound, not memory-bound: 16k warp instructions per 64x64 plane (cuFFT's two kernels: 6k),
// with the register family also running one 512-thread block per SM, so loads and arithmetic never
// overlapped (DRAM 25%). These kernels do the least work per element that keeps the data in fast
// memory, and leave the overlap to several small blocks per SM:
// * One plane per block (256 threads, 19 KB of shared memory at 64x64, 71 KB at 128x128), so 3-4
//   blocks per SM alternate between loading and computing.
// * Each length-N transform (N = R1 * 8) is the four-step split n = 8 n1 + n2, k = k1 + R1 k2: pass 1,
//   thread n2 of the transform does RegFft<R1> over n1 (compile-time twiddles inside) and multiplies
//   by W_N^(n2 k1) (a table in shared memory); the values go to shared memory at
//   pos(n2, k1) = R1 n2 + (k1 + n2) mod R1 (a diagonal, so both the writes (fixed k1) and the reads
//   of pass 2 (fixed n2) hit distinct banks); pass 2, thread k1 does RegFft<8> over n2 and holds
//   X[k1 + R1 k2]: natural order, no bit reversal. Every pass works in place on the data its own
//   group of threads read (a __syncwarp between its reads and writes); passes are separated by
//   __syncthreads. The inverse is the same code on swapped data: N idft(x) = swap(dft(swap(x))) with
//   swap(a + ib) = b + ia, which costs nothing (register renaming).
// * Layout: row pair j owns the region [j*RS, (j+1)*RS) float2, RS = n_w + 8 (= 8 mod 16). The
//   real rows 2j, 2j+1 are its first 2 n_w floats (x XOR 8 (j mod 4), so 4 row pairs read by a warp
//   fall in distinct banks); the packed row pair's spectrum X = FFT(row_2j + i row_2j+1) is unpacked
//   in place into A_2j[c] at slot c and A_2j+1[c] at slot c + n_w/2 + 2 for 0 < c < n_w/2; slot 0
//   of each row holds (A[0], A[n_w/2]) (both real) as one complex value, which makes column 0 the
//   packed pair of the real columns 0 and n_w/2. Slot s of region j sits at s XOR 4 (j/2 mod 2)
//   (the columns' reads of 4 row pairs then fall in distinct banks). Column c's values for rows
//   2j, 2j+1 are slots c and c + n_w/2 + 2 of region j, so each column's pass works in place too.
// * The inverse's extra inputs X[kh][n_w/2] go to slots n_w + 2, n_w + 3; columns 0 and n_w/2 are
//   projected on their Hermitian parts before they are packed (the C2R contract).
// * Global memory: the input window with 16-byte cp.async where 4 floats lie inside the window
//   and are aligned (4-byte zero-filling copies elsewhere: the implicit padding), the spectra as one
//   contiguous run per plane, the output window with 16-byte stores where possible.
template <int N>
struct Split {
  static_assert(N == 64 || N == 128, "four-step kernels: sides 64 and 128");
  static constexpr int kR1 = N / 8, kLogR1 = ilog2(kR1), kTwStride = kR1 + 1;
  __host__ __device__ static constexpr int pos(int n2, int k1) { return kR1 * n2 + ((k1 + n2) & (kR1 - 1)); }
};

template <int LH, int LW>
struct FsTile {
  static constexpr int kNh = 1 << LH, kNw = 1 << LW, kHalf = kNw / 2, kNw2 = kHalf + 1, kJh = kNh / 2;
  static constexpr int kRs = kNw + 8;
  static constexpr int kThreads = 256;
  static constexpr int kMinBlocks = kNh * kNw >= 128 * 64 ? 3 : 4;
  using H = Split<kNh>;
  using W = Split<kNw>;
  static constexpr int kTwW = 8 * W::kTwStride, kTwH = 8 * H::kTwStride;  // float2
  static constexpr int kData = kJh * kRs;                                  // float2
  static constexpr int kSmemBytes = (kData + kTwW + kTwH) * 8;
  static_assert(kRs % 16 == 8, "row-pair stride must be 8 mod 16 float2");

  __device__ __forceinline__ static int real_idx(int y, int x) {
    return (y >> 1) * 2 * kRs + (y & 1) * kNw + (x ^ (((y >> 1) & 3) << 3));
  }
  __device__ __forceinline__ static int phys(int j, int s) { return j * kRs + (s ^ (((j >> 1) & 1) << 2)); }
  static constexpr int slot_a(int c) { return c; }
  static constexpr int slot_b(int c) { return c + kHalf + 2; }
  static constexpr int slot_n(int b) { return kNw + 2 + b; }
  // Column c (0 = the packed columns 0 and n_w/2), row u.
  __device__ __forceinline__ static int col(int c, int u) { return phys(u >> 1, (u & 1) ? slot_b(c) : slot_a(c)); }
};

__device__ __forceinline__ float2 swap_ri(float2 z) { return make_float2(z.y, z.x); }

// f(job, lane) for Jobs jobs of Tpj consecutive threads each (a job's threads share a warp).
template <int Tpj, int Jobs, int Threads, class F>
__device__ __forceinline__ void for_jobs(F&& f) {
  static_assert(Threads % Tpj == 0 && (Tpj * Jobs) % Threads == 0 && 32 % Tpj == 0, "job shape");
#pragma unroll 1
  for (int g = threadIdx.x; g < Tpj * Jobs; g += Threads) f(g / Tpj, g % Tpj);
}

// W_N^(n2 k1) for n2 < 8, k1 < R1, rows of R1 + 1 entries.
template <int N>
__device__ void fill_twiddles(float2* tw, int nthreads) {
  using S = Split<N>;
  for (int e = threadIdx.x; e < 8 * S::kR1; e += nthreads) {
    const int n2 = e / S::kR1, k1 = e % S::kR1;
    tw[n2 * S::kTwStride + k1] = twiddle(2 * n2 * k1, N);
  }
}

// Pass 1 of a length-N transform on thread n2: z[n1] = x[8 n1 + n2] in, z[i] = Y[k1] W_N^(n2 k1) out
// with k1 = bitrev(i).
template <int N>
__device__ __forceinline__ void pass1(float2 (&z)[Split<N>::kR1], int n2, const float2* tw) {
  using S = Split<N>;
  RegFft<S::kR1>::forward(z);
  const float2* t = tw + n2 * S::kTwStride;
  static_for<S::kR1>([&](auto i) {
    constexpr int k1 = bitrev(i, S::kLogR1);
    if constexpr (k1 != 0) z[i] = cmul(z[i], t[k1]);
  });
}

// Store pass 1's values of thread n2 at pos(n2, k1) through `at` (after the job's reads).
template <int N, class At>
__device__ __forceinline__ void store_pass1(const float2 (&z)[Split<N>::kR1], int n2, float2* data, At at) {
  using S = Split<N>;
  __syncwarp();
  static_for<S::kR1>([&](auto i) { data[at(S::pos(n2, bitrev(i, S::kLogR1)))] = z[i]; });
}

// Pass 2 on thread k1: v[i] = X[k1 + R1 bitrev_8(i)].
template <int N, class At>
__device__ __forceinline__ void pass2(float2 (&v)[8], int k1, const float2* data, At at) {
  using S = Split<N>;
  static_for<8>([&](auto n2) { v[n2] = data[at(S::pos(n2, k1))]; });
  RegFft<8>::forward(v);
}

template <int LH, int LW>
__global__ void __launch_bounds__(FsTile<LH, LW>::kThreads, FsTile<LH, LW>::kMinBlocks)
    forward_fs_kernel(ForwardArgs a) {
  using T = FsTile<LH, LW>;
  using H = typename T::H;
  using W = typename T::W;
  constexpr int kNh = T::kNh, kNw = T::kNw, kHalf = T::kHalf, kNw2 = T::kNw2, kThreads = T::kThreads;
  extern __shared__ __align__(16) float2 smem[];
  float2* data = smem;
  float* real = reinterpret_cast<float*>(smem);
  float2* tw_w = smem + T::kData;
  float2* tw_h = tw_w + T::kTwW;
  const int t = threadIdx.x;
  fill_twiddles<kNw>(tw_w, kThreads);
  fill_twiddles<kNh>(tw_h, kThreads);
  const bool transposed = a.layout == Layout::transposed;
  for (int64_t plane = blockIdx.x; plane < a.batch; plane += gridDim.x) {
    // (0) the input window, zero outside it
    const float* src = a.input + plane * a.in_plane_stride;
    for (int e = t; e < kNh * kNw / 4; e += kThreads) {
      const int y = e >> (LW - 2), x = (e & (kNw / 4 - 1)) * 4;
      float* dst = real + T::real_idx(y, x);
      const int64_t yy = y - a.off_h, xx = x - a.off_w;
      const bool row_in = yy >= 0 && yy < a.in_h;
      const float* p = row_in ? src + yy * a.in_ld : a.input;
      if (row_in && xx >= 0 && xx + 4 <= a.in_w && (reinterpret_cast<uintptr_t>(p + xx) & 15) == 0) {
        cp_async<16>(dst, p + xx, true);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const bool inside = row_in && xx + q >= 0 && xx + q < a.in_w;
          cp_async<4>(dst + q, inside ? p + xx + q : a.input, inside);
        }
      }
    }
    cp_async_wait_all();
    __syncthreads();
    // (1) rows: packed row pairs, pass 1
    for_jobs<8, T::kJh, kThreads>([&](int j, int n2) {
      float2 z[W::kR1];
      const float* r0 = real + j * 2 * T::kRs;
      const int sw = (j & 3) << 3;
      static_for<W::kR1>([&](auto n1) {
        const int x = (8 * n1 + n2) ^ sw;
        z[n1] = make_float2(r0[x], r0[kNw + x]);
      });
      pass1<kNw>(z, n2, tw_w);
      store_pass1<kNw>(z, n2, data, [&](int s) { return T::phys(j, s); });
    });
    __syncthreads();
    // (2) rows, pass 2, and the unpacking of the two real rows' half spectra (partners by shuffle)
    for_jobs<W::kR1, T::kJh, kThreads>([&](int j, int k1) {
      float2 v[8];
      pass2<kNw>(v, k1, data, [&](int s) { return T::phys(j, s); });
      float2 o[8];  // o[i] = X[n_w - k] for the k held in v[i]
      const int src = (W::kR1 - k1) & (W::kR1 - 1);
      static_for<8>([&](auto i) {
        constexpr int mirror = 7 - i;
        const float2 sh = shfl2(v[mirror], src, W::kR1);
        constexpr int own = bitrev((8 - bitrev(i, 3)) & 7, 3);
        o[i] = k1 == 0 ? v[own] : sh;
      });
      __syncwarp();
      static_for<8>([&](auto i) {
        constexpr int b = bitrev(i, 3);
        const int k = k1 + W::kR1 * b;
        if constexpr (b < 4) {
          if (b == 0 && k1 == 0)
            data[T::phys(j, T::slot_a(0))] = make_float2(v[0].x, v[1].x);
          else
            data[T::phys(j, T::slot_a(k))] = unpack_a(v[i], o[i]);
        } else {
          if (b == 4 && k1 == 0)
            data[T::phys(j, T::slot_b(0))] = make_float2(v[0].y, v[1].y);
          else
            data[T::phys(j, T::slot_b(kNw - k))] = unpack_b(o[i], v[i]);
        }
      });
    });
    __syncthreads();
    // (3) columns 0 (packed with n_w/2) .. n_w/2 - 1
    for_jobs<8, kHalf, kThreads>([&](int c, int n2) {
      float2 z[H::kR1];
      static_for<H::kR1>([&](auto n1) { z[n1] = data[T::col(c, 8 * n1 + n2)]; });
      pass1<kNh>(z, n2, tw_h);
      store_pass1<kNh>(z, n2, data, [&](int u) { return T::col(c, u); });
    });
    __syncthreads();
    for_jobs<H::kR1, kHalf, kThreads>([&](int c, int k1) {
      float2 v[8];
      pass2<kNh>(v, k1, data, [&](int u) { return T::col(c, u); });
      __syncwarp();
      static_for<8>([&](auto i) { data[T::col(c, k1 + H::kR1 * bitrev(i, 3))] = v[i]; });
    });
    __syncthreads();
    // (4) the plane's half spectra, one contiguous run (both layouts); column 0 unpacked here
    float2* out = a.output + plane * (kNh * kNw2);
    for (int e = t; e < kNh * kNw2; e += kThreads) {
      int kh, kw;
      if (transposed) {
        kw = e >> LH;
        kh = e & (kNh - 1);
      } else {
        kh = e / kNw2;
        kw = e - kh * kNw2;
      }
      float2 val;
      if (kw == 0 || kw == kHalf) {
        const float2 z = data[T::col(0, kh)], zm = data[T::col(0, (kNh - kh) & (kNh - 1))];
        val = kw == 0 ? unpack_a(z, zm) : unpack_b(z, zm);
      } else {
        val = data[T::col(kw, kh)];
      }
      out[e] = val;
    }
    __syncthreads();  // shared memory is free for the next plane
  }
}

template <int LH, int LW>
__global__ void __launch_bounds__(FsTile<LH, LW>::kThreads, FsTile<LH, LW>::kMinBlocks)
    inverse_fs_kernel(InverseArgs a) {
  using T = FsTile<LH, LW>;
  using H = typename T::H;
  using W = typename T::W;
  constexpr int kNh = T::kNh, kNw = T::kNw, kHalf = T::kHalf, kNw2 = T::kNw2, kThreads = T::kThreads;
  extern __shared__ __align__(16) float2 smem[];
  float2* data = smem;
  float* real = reinterpret_cast<float*>(smem);
  float2* tw_w = smem + T::kData;
  float2* tw_h = tw_w + T::kTwW;
  const int t = threadIdx.x;
  fill_twiddles<kNw>(tw_w, kThreads);
  fill_twiddles<kNh>(tw_h, kThreads);
  const bool transposed = a.layout == Layout::transposed;
  for (int64_t plane = blockIdx.x; plane < a.batch; plane += gridDim.x) {
    // (0) the plane's half spectra into the column slots
    const float2* in = a.input + plane * (kNh * kNw2);
    for (int e = t; e < kNh * kNw2; e += kThreads) {
      int kh, kw;
      if (transposed) {
        kw = e >> LH;
        kh = e & (kNh - 1);
      } else {
        kh = e / kNw2;
        kw = e - kh * kNw2;
      }
      const int d = kw < kHalf ? T::col(kw, kh) : T::phys(kh >> 1, T::slot_n(kh & 1));
      cp_async<8>(data + d, in + e, true);
    }
    cp_async_wait_all();
    __syncthreads();
    // (1) columns: column 0 = Hermitian parts of columns 0 and n_w/2, packed
    for_jobs<8, kHalf, kThreads>([&](int c, int n2) {
      float2 z[H::kR1];
      if (c == 0) {
        static_for<H::kR1>([&](auto n1) {
          const int kh = 8 * n1 + n2, km = (kNh - kh) & (kNh - 1);
          const float2 a0 = data[T::col(0, kh)], b0 = data[T::col(0, km)];
          const float2 a1 = data[T::phys(kh >> 1, T::slot_n(kh & 1))], b1 = data[T::phys(km >> 1, T::slot_n(km & 1))];
          z[n1] = swap_ri(pack_ab(unpack_a(a0, b0), unpack_a(a1, b1)));
        });
      } else {
        static_for<H::kR1>([&](auto n1) { z[n1] = swap_ri(data[T::col(c, 8 * n1 + n2)]); });
      }
      pass1<kNh>(z, n2, tw_h);
      store_pass1<kNh>(z, n2, data, [&](int u) { return T::col(c, u); });
    });
    __syncthreads();
    for_jobs<H::kR1, kHalf, kThreads>([&](int c, int k1) {
      float2 v[8];
      pass2<kNh>(v, k1, data, [&](int u) { return T::col(c, u); });
      __syncwarp();
      static_for<8>([&](auto i) { data[T::col(c, k1 + H::kR1 * bitrev(i, 3))] = swap_ri(v[i]); });
    });
    __syncthreads();
    // (2) rows: z = B_2j + i B_2j+1 with the Hermitian extension, pass 1
    for_jobs<8, T::kJh, kThreads>([&](int j, int n2) {
      float2 z[W::kR1];
      static_for<W::kR1>([&](auto n1) {
        float2 val;
        if constexpr (n1 < W::kR1 / 2) {  // k = 8 n1 + n2 < n_w/2
          if (n1 == 0 && n2 == 0) {
            val = make_float2(data[T::phys(j, T::slot_a(0))].x, data[T::phys(j, T::slot_b(0))].x);
          } else {
            const int k = 8 * n1 + n2;
            val = pack_ab(data[T::phys(j, T::slot_a(k))], data[T::phys(j, T::slot_b(k))]);
          }
        } else {
          if (n1 == W::kR1 / 2 && n2 == 0) {
            val = make_float2(data[T::phys(j, T::slot_a(0))].y, data[T::phys(j, T::slot_b(0))].y);
          } else {
            const int k = kNw - (8 * n1 + n2);
            val = pack_ab(conjf2(data[T::phys(j, T::slot_a(k))]), conjf2(data[T::phys(j, T::slot_b(k))]));
          }
        }
        z[n1] = swap_ri(val);
      });
      pass1<kNw>(z, n2, tw_w);
      store_pass1<kNw>(z, n2, data, [&](int s) { return T::phys(j, s); });
    });
    __syncthreads();
    for_jobs<W::kR1, T::kJh, kThreads>([&](int j, int k1) {
      float2 v[8];
      pass2<kNw>(v, k1, data, [&](int s) { return T::phys(j, s); });
      __syncwarp();
      float* r0 = real + j * 2 * T::kRs;
      const int sw = (j & 3) << 3;
      static_for<8>([&](auto i) {
        const int x = (k1 + W::kR1 * bitrev(i, 3)) ^ sw;
        r0[x] = v[i].y * a.scale;  // swap_ri: the real part is .y
        r0[kNw + x] = v[i].x * a.scale;
      });
    });
    __syncthreads();
    // (3) the output window
    float* dst = a.output + plane * a.out_plane_stride;
    for (int e = t; e < kNh * kNw / 4; e += kThreads) {
      const int y = e >> (LW - 2), x = (e & (kNw / 4 - 1)) * 4;
      const int64_t oy = y - a.out_off_h, ox = x - a.out_off_w;
      if (oy < 0 || oy >= a.out_h) continue;
      const float4 val = *reinterpret_cast<const float4*>(real + T::real_idx(y, x));
      float* d = dst + oy * a.out_ld + ox;
      if (ox >= 0 && ox + 4 <= a.out_w && (reinterpret_cast<uintptr_t>(d) & 15) == 0) {
        *reinterpret_cast<float4*>(d) = val;
      } else {
        static_for<4>([&](auto q) {
          const float vq = q == 0 ? val.x : q == 1 ? val.y : q == 2 ? val.z : val.w;
          if (ox + q >= 0 && ox + q < a.out_w) d[q] = vq;
        });
      }
    }
    __syncthreads();
  }
}

template <class Kernel, class Args>
void launch_fs(Kernel* kernel, int smem, const Args& a, cudaStream_t stream) {
  const void* k = reinterpret_cast<const void*>(kernel);
  if (smem > 48 * 1024)
    FFTCONV_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  constexpr int kThreads = 256;
  const int blocks = grid_blocks(k, kThreads, smem, a.batch);
  kernel<<<blocks, kThreads, smem, stream>>>(a);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

template <int LH, int LW>
void launch_forward(const ForwardArgs& a, cudaStream_t stream) {
  launch_fs(forward_fs_kernel<LH, LW>, FsTile<LH, LW>::kSmemBytes, a, stream);
}
template <int LH, int LW>
void launch_inverse(const InverseArgs& a, cudaStream_t stream) {
  launch_fs(inverse_fs_kernel<LH, LW>, FsTile<LH, LW>::kSmemBytes, a, stream);
}
template <int LH, int LW>
const void* forward_kernel() { return reinterpret_cast<const void*>(forward_fs_kernel<LH, LW>); }
template <int LH, int LW>
const void* inverse_kernel() { return reinterpret_cast<const void*>(inverse_fs_kernel<LH, LW>); }

template <int LH, int LW>
constexpr Launcher make_launcher() {
  if constexpr (LH < 6 || LW < 6) {
    return Launcher{};
  } else {
    static_assert(FsTile<LH, LW>::kThreads == 256, "launch_fs assumes 256 threads");
    return Launcher{&launch_forward<LH, LW>, &launch_inverse<LH, LW>, &forward_kernel<LH, LW>,
                    &inverse_kernel<LH, LW>, FsTile<LH, LW>::kSmemBytes, FsTile<LH, LW>::kThreads};
  }
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_table(std::index_sequence<I...>) {
  constexpr int kSide = kMaxLog2d + 1;
  return {make_launcher<static_cast<int>(I) / kSide, static_cast<int>(I) % kSide>()...};
}

constexpr auto kTable2dFourStep = make_table(std::make_index_sequence<(kMaxLog2d + 1) * (kMaxLog2d + 1)>{});

}  // namespace

const Launcher* launchers_2d_fourstep() { return kTable2dFourStep.data(); }

}  // namespace fftconv::fbfft::detail
