// fbfft 2-D four-step kernels (sides 32, 64 and 128, every layout): one plane per
// block in shared memory, every 1-D transform split as N = R1 x 8 between the registers of 8 (then
// R1) threads that exchange through shared memory. See Note [four-step 2-D kernels]; in the
// freq_major layout the blocks of a thread-block cluster exchange their planes' spectra
// (Note [four-step freq_major clusters]).
#include <cooperative_groups.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/fourstep.cuh"
#include "gpu/fft/kernel_loop.cuh"

namespace fftconv::fbfft::detail {
namespace {

// Note [four-step 2-D kernels]
// At 64x64 and 128x128 the other families are issue-bound, not memory-bound (the register family
// runs one 512-thread block per SM, so its loads and arithmetic never overlap). These kernels do
// little work per element and leave the overlap to several small blocks per SM:
// * One plane per block (256 threads; 19 KB of shared memory at 64x64, 73 KB at 128x128), so 3-4
//   blocks per SM alternate between loading and computing.
// * Each length-N transform (N = R1 * 8) is a four-step split between 8 and R1 threads. Forward,
//   n = 8 n1 + n2, k = k1 + R1 k2: pass 1, lane n2 runs RegFft<R1> over n1 and multiplies by
//   W_N^(n2 k1) (a table in shared memory); pass 2, lane k1 runs RegFft<8> over n2 and holds
//   X[k1 + R1 k2]. The inverse runs on swapped data (N idft(x) = swap(dft(swap(x))), swap(a + ib) =
//   b + ia: register renaming) and, for the columns, the transposed split n = n1 + R1 n2,
//   k = 8 k1 + k2 (lane n1: RegFft<8> and W_N^(n1 k2); lane k2: RegFft<R1>).
// * The inverse's inputs X[kh][n_w/2] go to slots n_w + 3, n_w + 4; columns 0 and n_w/2 are
//   projected on their Hermitian parts (the C2R contract) and packed into column 0 before the
//   column passes.
// * Global memory: the input window with 16-byte cp.async where 4 floats lie inside the window
//   and are aligned (4-byte zero-filling copies elsewhere: the implicit padding), the spectra as one
//   contiguous run per plane, the output window with 16-byte stores where possible.
// 64x64 forward at 16,384 planes on an H100: 1.9x cuFFT, 85% of the copy bandwidth.

// Note [four-step shared-memory layout]
// Every shared-memory address is a per-thread base plus a compile-time offset (no index arithmetic
// per element) and the accesses of a half-warp fall in distinct banks:
// - row pair j owns [base(j), base(j) + RS) float2, base(j) = j RS + 4 floor(j/2), RS = n_w + 8; its
//   real rows 2j, 2j+1 are its first 2 n_w floats. Row jobs are consecutive threads (a job's lanes
//   share a warp; __syncwarp between a job's reads and its in-place writes). The row exchange goes
//   to n2 (R1 + 1) + k1 (padded rows). The packed pair's spectrum X = FFT(row_2j + i row_2j+1) is
//   unpacked in place: A_2j[c] at slot c, A_2j+1[c] at slot c + n_w/2 + 2 (0 < c < n_w/2), and
//   (A[0], A[n_w/2]) of rows 2j and 2j+1 (both real) as one complex value at slots 0 and n_w + 2:
//   column 0 is then the packed pair of the real columns 0 and n_w/2 (unpacked when stored).
// - column c, row u lives at base(u/2) + slot(u mod 2, c). Column jobs are spread over the threads
//   c-fastest (a half-warp: 16 consecutive columns, consecutive slots). Each lane works in place on
//   its own elements: forward pass 1 reads rows u = 8 n1 + n2 and writes Y[n2][k1] at u = 8 k1 + n2,
//   pass 2 reads u = 8 k1 + n2 and writes X[k1 + R1 k2] at u = 8 k1 + k2.
// Invariant: no lane writes what another lane still has to read, so no barrier is needed inside a
// pass. The forward's spectra are therefore stored at u = perm(kh) = 8 (kh mod R1) + kh / R1 (the
// final store gathers through perm), and the inverse loads its input rows kh at perm(kh) so that its
// transposed split again works in place and leaves row y at u = y for the row pass.
template <int LH, int LW>
struct FsTile {
  static constexpr int kNh = 1 << LH, kNw = 1 << LW, kHalf = kNw / 2, kNw2 = kHalf + 1, kJh = kNh / 2;
  static constexpr int kRs = kNw + 8;
  static constexpr int kColStep = 4 * kRs + 8;  // base(j + 4) - base(j): column rows u and u + 8
  using H = Split<kNh>;
  using W = Split<kNw>;
  // 256 threads, fewer where a pass has less work (32-point sides: 64 threads, smaller blocks)
  static constexpr int min2(int x, int y) { return x < y ? x : y; }
  static constexpr int kThreads = min2(min2(256, min2(kJh * 8, kJh * W::kR1)), min2(kHalf * 8, kHalf * H::kR1));
  static constexpr int kMinBlocks = kThreads < 256 ? 2048 / kThreads / 2 : (kNh * kNw >= 128 * 64 ? 3 : 4);
  static constexpr int kTwW = 8 * W::kTwStride, kTwH = 8 * H::kTwStride;  // float2
  static constexpr int kData = kJh * (kRs + 2);                            // float2
  // Planes lie kRegion float2 apart (the cluster kernels' blocks may own several): kData is 0 mod
  // 16, and the pad puts the same slot of two planes in different banks (Note [four-step freq_major
  // clusters]: the exchange reads or writes both of a block's planes in one warp access).
  static constexpr int kRegion = kData + 4;
  static constexpr int smem_bytes(int regions) { return ((regions - 1) * kRegion + kData + kTwW + kTwH) * 8; }
  static constexpr int kSmemBytes = smem_bytes(1);
  static_assert(kRs % 16 == 8, "row-pair stride must be 8 mod 16 float2");

  static constexpr int base(int j) { return j * kRs + 4 * (j >> 1); }
  static constexpr int slot(int b, int c) { return b == 0 ? c : (c == 0 ? kNw + 2 : c + kHalf + 2); }
  static constexpr int slot_n(int b) { return kNw + 3 + b; }
  static constexpr int col(int c, int u) { return base(u >> 1) + slot(u & 1, c); }
  static constexpr int perm(int kh) { return 8 * (kh & (H::kR1 - 1)) + (kh >> H::kLogR1); }
  static constexpr int real_idx(int y, int x) { return 2 * base(y >> 1) + (y & 1) * kNw + x; }
};

// Column rows u = 8 m + r: lane r of the strided pattern (elements m) and lane m of the blocked
// pattern (elements r).
template <class T>
__device__ __forceinline__ float2* col_strided(float2* data, int c, int r) {
  return data + T::base(r >> 1) + T::slot(r & 1, c);
}
template <class T>
__device__ __forceinline__ float2* col_blocked(float2* data, int c, int m, int b) {
  return data + m * T::kColStep + T::slot(b, c);
}


// Spectrum value (kh, kw) of the plane whose forward column passes left it in `data`: row kh at
// column row u = perm(kh); columns 0 and n_w/2 unpacked from the packed column 0.
template <class T>
__device__ __forceinline__ float2 spectrum_value(const float2* data, int kh, int kw) {
  const int u = T::perm(kh);
  if (kw == 0 || kw == T::kHalf) {
    const float2 z = data[T::col(0, u)], zm = data[T::col(0, T::perm((T::kNh - kh) & (T::kNh - 1)))];
    return kw == 0 ? unpack_a(z, zm) : unpack_b(z, zm);
  }
  return data[T::col(kw, u)];
}

// Where the inverse's input value (kh, kw) goes in `data` (row kh at column row u = perm(kh);
// X[kh][n_w/2] at slot_n).
template <class T>
__device__ __forceinline__ int spectrum_slot(int kh, int kw) {
  const int u = T::perm(kh);
  return kw < T::kHalf ? T::col(kw, u) : T::base(u >> 1) + T::slot_n(u & 1);
}

// The shared-memory carve-up of every four-step kernel: `regions` planes, then the twiddle tables of
// the rows and the columns (filled once per block).
template <class T>
struct FsSmem {
  float2* base;
  float2* tw_w;
  float2* tw_h;
  __device__ __forceinline__ FsSmem(float2* smem, int regions)
      : base(smem), tw_w(smem + (regions - 1) * T::kRegion + T::kData), tw_h(tw_w + T::kTwW) {
    fill_twiddles<T::kNw>(tw_w, T::kThreads);
    fill_twiddles<T::kNh>(tw_h, T::kThreads);
  }
  __device__ __forceinline__ float2* data(int region = 0) const { return base + region * T::kRegion; }
  __device__ __forceinline__ float* real(int region = 0) const { return reinterpret_cast<float*>(data(region)); }
};

// The input window covers the plane, its rows 16-byte aligned: the forward's fast loader.
template <class T>
__device__ __forceinline__ bool whole_input(const ForwardArgs& a) {
  return a.off_h == 0 && a.off_w == 0 && a.in_h >= T::kNh && a.in_w >= T::kNw && a.in_ld % 4 == 0 &&
         a.in_plane_stride % 4 == 0 && (reinterpret_cast<uintptr_t>(a.input) & 15) == 0;
}
// The output window is the whole plane, its rows 16-byte aligned: the inverse's 16-byte stores.
template <class T>
__device__ __forceinline__ bool whole_output(const InverseArgs& a) {
  return a.out_off_h == 0 && a.out_off_w == 0 && a.out_h == T::kNh && a.out_w == T::kNw && a.out_ld % 4 == 0 &&
         a.out_plane_stride % 4 == 0 && (reinterpret_cast<uintptr_t>(a.output) & 15) == 0;
}

// Forward step (0) for one plane: its input window into `real`, zero outside it, as cp.async copies
// that the caller completes (cp_async_wait_all, or a commit and wait_group) before a barrier.
template <int LH, int LW>
__device__ __forceinline__ void issue_input(const ForwardArgs& a, int64_t plane, bool whole, const BasisWindow& win,
                                            bool sparse, float* real) {
  using T = FsTile<LH, LW>;
  constexpr int kNh = T::kNh, kNw = T::kNw, kThreads = T::kThreads;
  const int t = threadIdx.x;
  const float* src = a.input + plane * a.in_plane_stride;
  if (sparse) {  // Note [sparse forward windows]
    zero_shared(real, 2 * T::kData, kThreads);
    __syncthreads();  // the zeros land before the window's copies
    win.issue(a.input, a.in_plane_stride, a.in_ld, a.off_h, a.off_w, plane, 1, a.batch, kThreads,
              [&](int, int y, int x) { return real + T::real_idx(y, x); });
  } else if (whole) {  // the plane is the window: 16-byte copies, rows y0 + i kRowStep
    constexpr int kGroupsPerRow = kNw / 4, kRowStep = kThreads / kGroupsPerRow;
    const int y0 = t / kGroupsPerRow, x = (t % kGroupsPerRow) * 4;
    const float* s0 = src + y0 * a.in_ld + x;
    float* d0 = real + T::real_idx(y0, x);
    static_for<kNh / kRowStep>([&](auto i) {
      cp_async<16>(d0 + T::real_idx(i * kRowStep, 0), s0 + i * kRowStep * a.in_ld, true);
    });
  } else {
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
  }
}

// Forward steps (1)-(3) for the plane loaded into `data`: rows, columns; leaves the half spectra
// there (spectrum_value) and ends with a barrier. A warp whose row pairs all lie outside the window
// skips their row passes (Note [sparse forward windows]): pass 1 zeroes the pair's slots past its
// real rows instead, so that the pair's whole region holds the zeros that both passes would write.
template <int LH, int LW>
__device__ __forceinline__ void transform_plane(float2* data, const float2* tw_w, const float2* tw_h,
                                                const BasisWindow& win) {
  using T = FsTile<LH, LW>;
  using H = typename T::H;
  using W = typename T::W;
  constexpr int kNh = T::kNh, kNw = T::kNw, kHalf = T::kHalf, kThreads = T::kThreads;
  constexpr int kStep = T::kColStep;
  const float* real = reinterpret_cast<const float*>(data);
  // (1) rows: packed row pairs, pass 1
  for_jobs<8, T::kJh, kThreads>([&](int j, int n2) {
    if (__all_sync(0xffffffffu, win.zero_pair(j))) {
      data[T::base(j) + kNw + n2] = make_float2(0.f, 0.f);  // slots kNw .. kNw + 7: 8 lanes
      return;
    }
    const float* p = real + 2 * T::base(j) + n2;
    float2 z[W::kR1];
    static_for<W::kR1>([&](auto n1) { z[n1] = make_float2(p[8 * n1], p[kNw + 8 * n1]); });
    pass1<kNw>(z, tw_w + n2 * W::kTwStride);
    store_row_pass1<T, kNw>(data, j, n2, z);
  });
  __syncthreads();
  // (2) rows, pass 2, and the unpacking of the two real rows' half spectra (partners by shuffle)
  for_jobs<W::kR1, T::kJh, kThreads>([&](int j, int k1) {
    if (__all_sync(0xffffffffu, win.zero_pair(j))) return;  // the region is zero already
    float2 v[8];
    row_pass2<T, kNw>(data, j, k1, v);
    float2 o[8];
    row_partners<kNw>(v, k1, o);
    __syncwarp();  // the job's lanes have read the exchange rows
    float2* r = data + T::base(j);
    static_for<8>([&](auto i) {
      constexpr int b = bitrev(i, 3);  // v[i] = X[k], k = k1 + R1 b
      if constexpr (b < 4) {           // A_2j[k] at slot k; k = 0: (A_2j[0], A_2j[n_w/2])
        const float2 val = unpack_a(v[i], o[i]);
        r[k1 + W::kR1 * b] = (b == 0 && k1 == 0) ? make_float2(v[0].x, v[1].x) : val;
      } else {  // A_2j+1[n_w - k] at slot n_w - k + n_w/2 + 2; k = n_w/2: (A_2j+1[0], A_2j+1[n_w/2]) at n_w + 2
        const float2 val = unpack_b(o[i], v[i]);
        r[(3 * kHalf + 2 - W::kR1 * b) - k1] = (b == 4 && k1 == 0) ? make_float2(v[0].y, v[1].y) : val;
      }
    });
  });
  __syncthreads();
  // (3) columns 0 (packed with n_w/2) .. n_w/2 - 1, in place per lane
  for_cols<8, kHalf, kThreads>([&](int c, int n2) {
    float2* p = col_strided<T>(data, c, n2);
    float2 z[H::kR1];
    static_for<H::kR1>([&](auto n1) { z[n1] = p[n1 * kStep]; });
    pass1<kNh>(z, tw_h + n2 * H::kTwStride);
    static_for<H::kR1>([&](auto i) { p[bitrev(i, H::kLogR1) * kStep] = z[i]; });  // Y[n2][k1] at u = 8 k1 + n2
  });
  __syncthreads();
  for_cols<H::kR1, kHalf, kThreads>([&](int c, int k1) {
    float2* q0 = col_blocked<T>(data, c, k1, 0);
    float2* q1 = col_blocked<T>(data, c, k1, 1);
    float2 v[8];
    static_for<8>([&](auto n2) { v[n2] = (n2 & 1 ? q1 : q0)[T::base(n2 >> 1)]; });
    RegFft<8>::forward(v);
    static_for<8>([&](auto i) {
      constexpr int k2 = bitrev(i, 3);  // X[k1 + R1 k2] at u = 8 k1 + k2
      (k2 & 1 ? q1 : q0)[T::base(k2 >> 1)] = v[i];
    });
  });
  __syncthreads();
}

// Forward step (4) in the standard and transposed layouts: the plane's half spectra as one
// contiguous run; columns 0 and n_w/2 unpacked here.
template <int LH, int LW>
__device__ __forceinline__ void store_plane(const ForwardArgs& a, int64_t plane, const float2* data) {
  using T = FsTile<LH, LW>;
  constexpr int kNh = T::kNh, kHalf = T::kHalf, kNw2 = T::kNw2, kThreads = T::kThreads;
  const int t = threadIdx.x;
  float2* out = a.output + plane * (kNh * kNw2);
  if (a.layout == Layout::transposed) {  // consecutive threads on consecutive kh of a column kw
    for (int e = t; e < kNh * kNw2; e += kThreads) out[e] = spectrum_value<T>(data, e & (kNh - 1), e >> LH);
  } else if (kHalf >= 32) {  // warp w stores rows kh = w, w + 8, ..: lanes on consecutive kw
    const int lane = t & 31;
    for (int kh = t >> 5; kh < kNh; kh += kThreads / 32) {
      const int u = T::perm(kh);
      const float2* row = data + T::base(u >> 1) + ((u & 1) ? kHalf + 2 : 0);  // slot(u & 1, c) for c > 0
      float2* o = out + kh * kNw2;
      static_for<kHalf / 32>([&](auto m) {
        const int c = lane + 32 * m;
        if (m == 0 && lane == 0) {
          o[0] = spectrum_value<T>(data, kh, 0);
          o[kHalf] = spectrum_value<T>(data, kh, kHalf);
        } else {
          o[c] = row[c];
        }
      });
    }
  } else {  // consecutive threads on consecutive kw of a row kh
    for (int e = t; e < kNh * kHalf; e += kThreads) {
      const int kh = e / kHalf, c = e % kHalf;
      float2* o = out + kh * kNw2;
      if (c == 0) {
        o[0] = spectrum_value<T>(data, kh, 0);
        o[kHalf] = spectrum_value<T>(data, kh, kHalf);
      } else {
        o[c] = spectrum_value<T>(data, kh, c);
      }
    }
  }
}

template <int LH, int LW>
__global__ void __launch_bounds__(FsTile<LH, LW>::kThreads, FsTile<LH, LW>::kMinBlocks)
    forward_fs_kernel(ForwardArgs a) {
  using T = FsTile<LH, LW>;
  extern __shared__ __align__(16) float2 smem[];
  const FsSmem<T> sm(smem, 1);
  wait_for_prior_grids();  // Note [dependent launch]
  const bool whole = whole_input<T>(a);
  const BasisWindow win(a.off_h, a.off_w, a.in_h, a.in_w, T::kNh, T::kNw);
  const bool sparse = win.sparse(T::kNh, T::kNw);
  for (const auto [plane, planes] : block_groups(a.batch, 1)) {  // Note [uniform plane loops]
    issue_input<LH, LW>(a, plane, whole, win, sparse, sm.real());
    cp_async_wait_all();
    __syncthreads();
    transform_plane<LH, LW>(sm.data(), sm.tw_w, sm.tw_h, win);
    store_plane<LH, LW>(a, plane, sm.data());
    __syncthreads();  // shared memory is free for the next plane
  }
}

// Inverse step (0) in the standard and transposed layouts: the plane's half spectra, row kh of
// column kw at column row u = perm(kh).
template <int LH, int LW>
__device__ __forceinline__ void load_plane(const InverseArgs& a, int64_t plane, float2* data) {
  using T = FsTile<LH, LW>;
  constexpr int kNh = T::kNh, kHalf = T::kHalf, kNw2 = T::kNw2, kThreads = T::kThreads;
  const int t = threadIdx.x;
  const float2* in = a.input + plane * (kNh * kNw2);
  if (a.layout == Layout::transposed) {
    for (int e = t; e < kNh * kNw2; e += kThreads) cp_async<8>(data + spectrum_slot<T>(e & (kNh - 1), e >> LH), in + e, true);
  } else if (kHalf >= 32) {  // warp w loads rows kh = w, w + 8, ..: lanes on consecutive kw
    const int lane = t & 31;
    for (int kh = t >> 5; kh < kNh; kh += kThreads / 32) {
      const int u = T::perm(kh);
      float2* row = data + T::base(u >> 1);
      const float2* i = in + kh * kNw2;
      static_for<kHalf / 32>([&](auto m) {
        const int c = lane + 32 * m;
        cp_async<8>(row + T::slot(u & 1, c), i + c, true);
      });
      if (lane == 0) cp_async<8>(row + T::slot_n(u & 1), i + kHalf, true);
    }
  } else {  // consecutive threads on consecutive kw of a row kh
    for (int e = t; e < kNh * kHalf; e += kThreads) {
      const int kh = e / kHalf, c = e % kHalf;
      const float2* i = in + kh * kNw2;
      cp_async<8>(data + spectrum_slot<T>(kh, c), i + c, true);
      if (c == 0) cp_async<8>(data + spectrum_slot<T>(kh, kHalf), i + kHalf, true);
    }
  }
  cp_async_wait_all();
  __syncthreads();
}

// Inverse steps (1)-(4) for one plane whose spectra are in `data`: Hermitian projection, columns,
// rows, the output window; ends with a barrier.
template <int LH, int LW>
__device__ __forceinline__ void inverse_plane(const InverseArgs& a, int64_t plane, bool whole, float2* data,
                                              const float2* tw_w, const float2* tw_h) {
  using T = FsTile<LH, LW>;
  using H = typename T::H;
  using W = typename T::W;
  constexpr int kNh = T::kNh, kNw = T::kNw, kHalf = T::kHalf, kThreads = T::kThreads;
  constexpr int kStep = T::kColStep;
  float* real = reinterpret_cast<float*>(data);
  const int t = threadIdx.x;
  // (1) Hermitian parts of columns 0 and n_w/2, packed as column 0 (each pair kh, -kh by one thread)
  for (int kh = t; kh <= kNh / 2; kh += kThreads) {
    const int u = T::perm(kh), um = T::perm((kNh - kh) & (kNh - 1));
    const float2 a0 = data[T::col(0, u)], b0 = data[T::col(0, um)];
    const float2 a1 = data[T::base(u >> 1) + T::slot_n(u & 1)], b1 = data[T::base(um >> 1) + T::slot_n(um & 1)];
    const float2 h0 = unpack_a(a0, b0), h1 = unpack_a(a1, b1);
    data[T::col(0, u)] = pack_ab(h0, h1);
    data[T::col(0, um)] = pack_ab(conjf2(h0), conjf2(h1));
  }
  __syncthreads();
  // (2) columns, transposed split, in place per lane: lane n1 holds rows kh = n1 + R1 n2 at u = 8 n1 + n2
  for_cols<H::kR1, kHalf, kThreads>([&](int c, int n1) {
    float2* q0 = col_blocked<T>(data, c, n1, 0);
    float2* q1 = col_blocked<T>(data, c, n1, 1);
    float2 z[8];
    static_for<8>([&](auto n2) { z[n2] = swap_ri((n2 & 1 ? q1 : q0)[T::base(n2 >> 1)]); });
    RegFft<8>::forward(z);
    const float2* tw = tw_h + n1;
    static_for<8>([&](auto i) {
      constexpr int k2 = bitrev(i, 3);
      if constexpr (k2 != 0) z[i] = cmul(z[i], tw[k2 * H::kTwStride]);  // W_N^(n1 k2)
      (k2 & 1 ? q1 : q0)[T::base(k2 >> 1)] = z[i];                       // at u = 8 n1 + k2
    });
  });
  __syncthreads();
  for_cols<8, kHalf, kThreads>([&](int c, int k2) {
    float2* p = col_strided<T>(data, c, k2);
    float2 v[H::kR1];
    static_for<H::kR1>([&](auto n1) { v[n1] = p[n1 * kStep]; });
    RegFft<H::kR1>::forward(v);
    static_for<H::kR1>([&](auto i) { p[bitrev(i, H::kLogR1) * kStep] = swap_ri(v[i]); });  // row 8 k1 + k2 at u = itself
  });
  __syncthreads();
  // (3) rows: z = B_2j + i B_2j+1 with the Hermitian extension, pass 1
  for_jobs<8, T::kJh, kThreads>([&](int j, int n2) {
    const float2* r = data + T::base(j);
    const int pb0 = n2 == 0 ? kNw + 2 : n2 + kHalf + 2;  // slot(1, n2)
    const int pa_mid = n2 == 0 ? 0 : kHalf - n2;         // slot(0, n_w/2 - n2), or slot 0
    float2 z[W::kR1];
    static_for<W::kR1>([&](auto n1) {
      float2 val;
      if constexpr (n1 == 0) {  // k = n2
        const float2 x0 = r[n2], x1 = r[pb0];
        val = n2 == 0 ? make_float2(x0.x, x1.x) : pack_ab(x0, x1);
      } else if constexpr (n1 < W::kR1 / 2) {  // 0 < k < n_w/2
        val = pack_ab(r[8 * n1 + n2], r[8 * n1 + n2 + kHalf + 2]);
      } else if constexpr (n1 == W::kR1 / 2) {  // k = n_w/2 + n2: conj of n_w/2 - n2
        const float2 x0 = r[pa_mid], x1 = r[kNw + 2 - n2];
        val = n2 == 0 ? make_float2(x0.y, x1.y) : pack_ab(conjf2(x0), conjf2(x1));
      } else {  // k > n_w/2: conj of n_w - k
        val = pack_ab(conjf2(r[kNw - 8 * n1 - n2]), conjf2(r[kNw - 8 * n1 - n2 + kHalf + 2]));
      }
      z[n1] = swap_ri(val);
    });
    pass1<kNw>(z, tw_w + n2 * W::kTwStride);
    store_row_pass1<T, kNw>(data, j, n2, z);
  });
  __syncthreads();
  for_jobs<W::kR1, T::kJh, kThreads>([&](int j, int k1) {
    float2 v[8];
    row_pass2<T, kNw>(data, j, k1, v);
    __syncwarp();  // the job's lanes have read the exchange rows
    float* r0 = real + 2 * T::base(j) + k1;
    static_for<8>([&](auto i) {
      constexpr int x = W::kR1 * bitrev(i, 3);
      r0[x] = v[i].y * a.scale;  // swap_ri: the real part is .y
      r0[kNw + x] = v[i].x * a.scale;
    });
  });
  __syncthreads();
  // (4) the output window
  float* dst = a.output + plane * a.out_plane_stride;
  if (whole) {  // the window is the plane: 16-byte stores
    constexpr int kGroupsPerRow = kNw / 4, kRowStep = kThreads / kGroupsPerRow;
    const int y0 = t / kGroupsPerRow, x = (t % kGroupsPerRow) * 4;
    float* d0 = dst + y0 * a.out_ld + x;
    const float* s0 = real + T::real_idx(y0, x);
    static_for<kNh / kRowStep>([&](auto i) {
      *reinterpret_cast<float4*>(d0 + i * kRowStep * a.out_ld) =
          *reinterpret_cast<const float4*>(s0 + T::real_idx(i * kRowStep, 0));
    });
  } else {
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
  }
  __syncthreads();
}

template <int LH, int LW>
__global__ void __launch_bounds__(FsTile<LH, LW>::kThreads, FsTile<LH, LW>::kMinBlocks)
    inverse_fs_kernel(InverseArgs a) {
  using T = FsTile<LH, LW>;
  extern __shared__ __align__(16) float2 smem[];
  const FsSmem<T> sm(smem, 1);
  wait_for_prior_grids();  // Note [dependent launch]
  const bool whole = whole_output<T>(a);
  for (const auto [plane, planes] : block_groups(a.batch, 1)) {  // Note [uniform plane loops]
    load_plane<LH, LW>(a, plane, sm.data());
    inverse_plane<LH, LW>(a, plane, whole, sm.data(), sm.tw_w, sm.tw_h);
  }
}

// Note [four-step freq_major clusters]
// In the freq_major layout a plane's 2,112 values (64x64) lie ld_batch * 8 bytes apart, so a block
// that owns one plane would store (or load) 8 bytes per 32-byte sector. Here the C blocks of a
// thread-block cluster (sm_90) own a group of G = C * PB consecutive planes, PB per block, and
// compute them exactly as above, one plane per shared-memory region (the forward issues all of its
// PB input windows before it transforms the first, so the second plane's loads overlap the first
// plane's arithmetic); only the global side of the spectra is shared out through distributed shared
// memory: block r of the cluster stores (forward) or loads (inverse) the frequencies
// [r F / C, (r + 1) F / C) of all G planes, consecutive threads on consecutive planes of one
// frequency, i.e. runs of G * 8 bytes, reading (forward) or writing (inverse) the other blocks'
// shared memory. Cluster barriers order the exchange: the forward's spectra are complete before any
// block reads them and read before any block overwrites them with its next planes; the inverse's
// blocks are done with their previous planes before their shared memory is written and see all of
// their spectra before they compute. Invariant: every block of a cluster runs the same number of
// groups (g is the cluster's), so the barriers match; a block whose planes lie past the batch takes
// part in the exchange only.
// Shape (kClusterForward, cluster_blocks_inverse, cluster_planes_inverse): the forward in clusters
// of 2 blocks of PB = kClusterPlanes = 2 planes (C = 4 at one plane per block, so that runs stay 4
// planes long); the inverse, whose loads suffer from short runs, in clusters of 4 blocks of 2 planes,
// or at 128x128, where two such blocks do not fit an SM, of 8 blocks of one plane (three blocks per
// SM, 64-byte runs; L1's inverse on an H200: 1.12 ms against 1.26 in clusters of 2 blocks of 2
// planes, 1.31 of 4 blocks of 1); the PB planes of a block are FsTile::kRegion apart (no bank
// conflicts in the exchange) and the clusters use the load-balancing scheduling policy. 64x64 at
// 16,384 planes on an H100: forward 0.28 ms, inverse 0.32 ms, 1.3x / 1.5x the standard layout's time.
constexpr int kClusterForward = 2, kClusterPlanes = 2;
// Shared memory of an sm_90 multiprocessor; every resident block also takes 1 KB of it.
constexpr int kSmemPerSm = 228 * 1024, kSmemPerBlockReserved = 1024;
// Whether two inverse blocks of kClusterPlanes planes do not fit one SM.
template <class T>
constexpr bool one_plane_inverse() {
  return 2 * (T::smem_bytes(kClusterPlanes) + kSmemPerBlockReserved) > kSmemPerSm;
}
template <class T>
constexpr int cluster_blocks_inverse() {
  return one_plane_inverse<T>() ? 8 : 4;
}
template <class T>
constexpr int cluster_planes_inverse() {
  return one_plane_inverse<T>() ? 1 : kClusterPlanes;
}
static_assert(cluster_blocks_inverse<FsTile<6, 6>>() == 4 && cluster_planes_inverse<FsTile<7, 7>>() == 1,
              "the measured choices: 64x64 in clusters of 4 blocks of 2 planes, 128x128 of 8 blocks of 1");
// Global accesses per thread that one exchange keeps in flight.
constexpr int kExchangeBatch = 8;

// The exchange of a group of G planes (`planes` of them inside the batch) between the C blocks of
// a cluster: load(q, f, live) for plane q of the group and frequency f of block `rank`'s slice,
// then store(q, f, value), kBatch elements per thread at a time so that all loads are in flight
// before the first store.
template <class T, int C, int G, class Load, class Store>
__device__ __forceinline__ void exchange(int rank, int planes, Load&& load, Store&& store) {
  constexpr int kF = T::kNh * T::kNw2, kSlice = (kF + C - 1) / C;
  constexpr int kPerThread = (kSlice * G + T::kThreads - 1) / T::kThreads;
  const int f0 = rank * kSlice;
  const int n = (kF - f0 < kSlice ? kF - f0 : kSlice) * G;
#pragma unroll 1
  for (int i0 = 0; i0 < kPerThread; i0 += kExchangeBatch) {
    using V = decltype(load(0, 0, true));
    V v[kExchangeBatch];
    static_for<kExchangeBatch>([&](auto i) {
      const int e = threadIdx.x + (i0 + i) * T::kThreads, q = e % G;
      v[i] = load(q, f0 + e / G, e < n && q < planes);
    });
    static_for<kExchangeBatch>([&](auto i) {
      const int e = threadIdx.x + (i0 + i) * T::kThreads, q = e % G;
      if (e < n && q < planes) store(q, f0 + e / G, v[i]);
    });
  }
}

template <int LH, int LW, int C, int PB>
__global__ void __launch_bounds__(FsTile<LH, LW>::kThreads, FsTile<LH, LW>::kMinBlocks)
    forward_fs_cluster_kernel(ForwardArgs a) {
  using T = FsTile<LH, LW>;
  constexpr int kNw2 = T::kNw2, G = C * PB;
  extern __shared__ __align__(16) float2 smem[];
  const FsSmem<T> sm(smem, PB);
  wait_for_prior_grids();  // Note [dependent launch]
  const bool whole = whole_input<T>(a);
  const BasisWindow win(a.off_h, a.off_w, a.in_h, a.in_w, T::kNh, T::kNw);
  const bool sparse = win.sparse(T::kNh, T::kNw);
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;  // frequency stride
  for (const auto [g, group_planes] : cluster_groups<C>(a.batch, G)) {  // the cluster's G planes from g on
    const int64_t first = g + rank * PB;  // this block's planes: first .. first + PB - 1
    static_for<PB>([&](auto i) {
      if (first + i < a.batch) issue_input<LH, LW>(a, first + i, whole, win, sparse, sm.real(i));
      cp_async_commit();
    });
    static_for<PB>([&](auto i) {
      cp_async_wait_group<PB - 1 - i>();
      __syncthreads();
      if (first + i < a.batch) transform_plane<LH, LW>(sm.data(i), sm.tw_w, sm.tw_h, win);
    });
    cluster.sync();  // every plane of the group is in its block's shared memory
    // the group's planes in the batch, computed here: taken from the loop head, the value cost the
    // 4-block instances 8 more registers
    const int planes = plane_group(g, a.batch, G).planes;
    float2* out = a.output + g;
    exchange<T, C, G>(
        rank, planes,
        [&](int q, int f, bool live) {
          if (!live) return make_float2(0.f, 0.f);
          const int kh = f / kNw2;
          return spectrum_value<T>(cluster.map_shared_rank(sm.data(q % PB), q / PB), kh, f - kh * kNw2);
        },
        [&](int q, int f, float2 v) { out[int64_t(f) * ldb + q] = v; });
    cluster.sync();  // the other blocks have read this block's planes
  }
}

template <int LH, int LW, int C, int PB>
__global__ void __launch_bounds__(FsTile<LH, LW>::kThreads, FsTile<LH, LW>::kMinBlocks)
    inverse_fs_cluster_kernel(InverseArgs a) {
  using T = FsTile<LH, LW>;
  constexpr int kNw2 = T::kNw2, G = C * PB;
  extern __shared__ __align__(16) float2 smem[];
  const FsSmem<T> sm(smem, PB);
  wait_for_prior_grids();  // Note [dependent launch]
  const bool whole = whole_output<T>(a);
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;  // frequency stride
  for (const auto [g, planes] : cluster_groups<C>(a.batch, G)) {  // the cluster's G planes from g on
    cluster.sync();  // every block of the cluster is running and done with its previous planes
    const float2* in = a.input + g;
    exchange<T, C, G>(
        rank, planes,
        [&](int q, int f, bool live) { return live ? __ldcs(in + int64_t(f) * ldb + q) : make_float2(0.f, 0.f); },
        [&](int q, int f, float2 v) {
          const int kh = f / kNw2;
          cluster.map_shared_rank(sm.data(q % PB), q / PB)[spectrum_slot<T>(kh, f - kh * kNw2)] = v;
        });
    cluster.sync();  // this block's planes are complete in its shared memory
    const int64_t first = g + rank * PB;
    static_for<PB>([&](auto i) {
      if (first + i < a.batch) inverse_plane<LH, LW>(a, first + i, whole, sm.data(i), sm.tw_w, sm.tw_h);
    });
  }
}

template <class Kernel, class Args>
void launch_fs(Kernel* kernel, int threads, int smem, const Args& a, cudaStream_t stream) {
  const void* k = reinterpret_cast<const void*>(kernel);
  prepare_kernel(k, smem);
  const int blocks = grid_blocks(k, threads, smem, a.batch);
  launch_kernel(kernel, blocks, threads, smem, stream, 1, a);
}

// Clusters (Note [four-step freq_major clusters]): a whole number of clusters, at most one wave of
// resident clusters (Note [cluster waves]), kClusterPlanes planes per block in clusters of C blocks
// (`planes`, the kernel instance for them) or, for a batch that would give fewer than one block per
// SM that way, one plane per block in clusters of C1 blocks (`one`): twice the blocks, half the
// serial work per block (the overlap that two planes per block buy needs the SMs to be full).
template <class T, int C1, int C, int PB, class Args>
void launch_fs_cluster(void (*one)(Args), void (*planes)(Args), const Args& a, cudaStream_t stream) {
  const bool small = (a.batch + C * PB - 1) / (C * PB) * C < sm_count();
  const int pb = small ? 1 : PB, threads = T::kThreads, smem = T::smem_bytes(pb);
  const int c = small ? C1 : C;
  void (*kernel)(Args) = small ? one : planes;
  const void* k = reinterpret_cast<const void*>(kernel);
  prepare_kernel(k, smem, true);  // before the cluster occupancy query (Note [kernel attributes once])
  const int64_t groups = (a.batch + c * pb - 1) / (c * pb);
  const int blocks = grid_blocks(k, threads, smem, groups * c, c);  // Note [cluster waves]
  launch_kernel(kernel, blocks, threads, smem, stream, c, a);
}

template <int LH, int LW>
void launch_forward(const ForwardArgs& a, cudaStream_t stream) {
  launch_fs(forward_fs_kernel<LH, LW>, FsTile<LH, LW>::kThreads, FsTile<LH, LW>::kSmemBytes, a, stream);
}
template <int LH, int LW>
void launch_inverse(const InverseArgs& a, cudaStream_t stream) {
  launch_fs(inverse_fs_kernel<LH, LW>, FsTile<LH, LW>::kThreads, FsTile<LH, LW>::kSmemBytes, a, stream);
}
template <int LH, int LW>
void launch_forward_cluster(const ForwardArgs& a, cudaStream_t stream) {
  constexpr int C = kClusterForward, C1 = kClusterForward * kClusterPlanes;  // G = 4 both ways
  launch_fs_cluster<FsTile<LH, LW>, C1, C, kClusterPlanes>(forward_fs_cluster_kernel<LH, LW, C1, 1>,
                                           forward_fs_cluster_kernel<LH, LW, C, kClusterPlanes>, a, stream);
}
template <int LH, int LW>
void launch_inverse_cluster(const InverseArgs& a, cudaStream_t stream) {
  using T = FsTile<LH, LW>;
  constexpr int C = cluster_blocks_inverse<T>(), PB = cluster_planes_inverse<T>(), C1 = 4;
  launch_fs_cluster<T, C1, C, PB>(inverse_fs_cluster_kernel<LH, LW, C1, 1>, inverse_fs_cluster_kernel<LH, LW, C, PB>, a,
                                  stream);
}
template <auto Kernel>
const void* kernel_address() { return reinterpret_cast<const void*>(Kernel); }

// Clustered: the freq_major instances (Note [four-step freq_major clusters]).
template <int LH, int LW, bool Clustered>
constexpr Launcher make_launcher() {
  if constexpr (LH < 5 || LW < 5) {
    return Launcher{};
  } else if constexpr (Clustered) {
    return Launcher{&launch_forward_cluster<LH, LW>, &launch_inverse_cluster<LH, LW>,
                    &kernel_address<forward_fs_cluster_kernel<LH, LW, kClusterForward, kClusterPlanes>>,
                    &kernel_address<inverse_fs_cluster_kernel<LH, LW, cluster_blocks_inverse<FsTile<LH, LW>>(),
                                                              cluster_planes_inverse<FsTile<LH, LW>>()>>,
                    FsTile<LH, LW>::smem_bytes(kClusterPlanes), FsTile<LH, LW>::kThreads};
  } else {
    return Launcher{&launch_forward<LH, LW>, &launch_inverse<LH, LW>, &kernel_address<forward_fs_kernel<LH, LW>>,
                    &kernel_address<inverse_fs_kernel<LH, LW>>, FsTile<LH, LW>::kSmemBytes, FsTile<LH, LW>::kThreads};
  }
}

template <bool Clustered, std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_table(std::index_sequence<I...>) {
  constexpr int kSide = kMaxLog2d + 1;
  return {make_launcher<static_cast<int>(I) / kSide, static_cast<int>(I) % kSide, Clustered>()...};
}

constexpr auto kTable2dFourStep = make_table<false>(std::make_index_sequence<(kMaxLog2d + 1) * (kMaxLog2d + 1)>{});
constexpr auto kTable2dFourStepClusters = make_table<true>(std::make_index_sequence<(kMaxLog2d + 1) * (kMaxLog2d + 1)>{});

}  // namespace

const Launcher* launchers_2d_fourstep() { return kTable2dFourStep.data(); }
const Launcher* launchers_2d_fourstep_clusters() { return kTable2dFourStepClusters.data(); }

}  // namespace fftconv::fbfft::detail
