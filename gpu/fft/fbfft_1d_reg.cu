// fbfft 1-D register / four-step kernels (n = 4..256): two real planes packed as one complex
// transform; up to 32 points one thread per plane pair with the whole transform in its registers,
// from 64 points the four-step split of the 2-D kernels' rows. See Note [1-D register kernels].
#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/fourstep.cuh"

namespace fftconv::fbfft::detail {
namespace {

// Note [1-D register kernels]
// A batch of 1-D transforms is the row pass of a 2-D transform with planes for rows: planes 2j and
// 2j+1 are packed as z = x_2j + i x_2j+1 (one complex transform for two real ones, unpacked with
// the Hermitian symmetry of each). A block works on a group of plane pairs in shared memory:
// * n <= 32 ("small"): one thread per pair, RegFft<n> in its registers. Pair j's region holds
//   n/2 + 1 16-byte groups: its 2n input floats, then its n + 2 output values (the two half
//   spectra, in their global order). A quarter-warp's 16-byte accesses to group g of 8
//   consecutive regions fall in distinct banks because n/2 + 1 is odd; a thread only touches its
//   own region, so compute needs no barrier, and every access to it is 16 bytes wide. The staging
//   through the region is what makes the global stores whole lines. The block's regions are
//   contiguous and match the global order of the standard layout in both directions, so loads and
//   stores are plain 16-byte copies when whole pairs of whole planes are moved.
// * n >= 64 ("four-step"): the row pass of the four-step 2-D kernels (Note [four-step 2-D
//   kernels]): 8 lanes per pair in pass 1, R1 in pass 2, the exchange in place in the pair's region
//   (base(j) = j (n + 8) + 4 floor(j/2) float2), then the half spectra at base(j) + k (plane 2j)
//   and base(j) + n/2 + 1 + k (plane 2j+1).
// The inverse is the same with swapped data; the imaginary parts of X[0] and X[n/2] are ignored
// (the C2R contract). An odd batch's last pair has a zero partner.

// Note [1-D block shapes]
// The block shape (Shape1d, shape_1d.hpp) is a knob, "plain" being the shape above with 32 pairs:
// the four-step kind takes 4, 8, 16 or 32 pairs per block (the launch bounds keep the register cap
// of the 32-pair block); `prefetch` gives either kind two buffers of pair regions, so a block that
// loops over groups (the grid is at most one wave) issues the next group's cp.async loads before it
// computes the current one; `fill` lets the small kind halve its block until the grid fills one
// wave; `groups` (2, 4, 8) cuts the grid so that each block loops over at least that many groups,
// its loads and stores overlapping its compute. The automatic shape, measured on the H100 (`fftconv
// bench fft --dims 1 --shapes-1d ...`): 4 pairs without prefetch for the four-step kind (x 0.93 the
// plain shape's time in geomean, never slower), prefetch and fill for the small kind, and at n = 32
// also groups=2 where the cut grid keeps three warps per SM or more (launch_tile): without the cut,
// n = 32 at 65,536 planes runs as one wave of one-warp blocks that all load, then compute, then
// store (1.48x -> 1.56x cuFFT with it).
template <int LN, int P = 32, bool Pipe = false>
struct Tile1 {
  static constexpr int kN = 1 << LN, kHalf = kN / 2, kNh2 = kHalf + 1;
  static constexpr bool kFour = kN >= 64, kPipe = Pipe;
  static constexpr int kThreads = kFour ? 8 * P : 128;
  // Registers per thread capped at 128 at 256 points (RegFft<32> needs > 80), 85 for 64 and 128.
  static constexpr int kMinBlocks = kFour ? (kN == 256 ? 512 : 768) / kThreads : 4;
  static constexpr int kPairs = kFour ? P : kThreads;  // at most; small batches use fewer (small kind)
  static constexpr int kRs = kFour ? kN + 8 : kN + 2;   // float2 per pair region
  static constexpr int base(int j) { return kFour ? j * kRs + 4 * (j >> 1) : j * kRs; }
  static constexpr int kData = kFour ? kPairs * (kRs + 2) : kPairs * kRs;  // float2
  static constexpr int kTw = kFour ? 8 * (kN / 8 + 1) : 0;  // Split<kN>::kTwStride rows of twiddles
  static constexpr int kBuffers = Pipe ? 2 : 1;  // Pipe: the next group loads while this one computes
  // float2 of one buffer of pair regions, and the block's dynamic shared memory.
  static constexpr int buffer(int pairs) { return kFour ? kData : pairs * kRs; }
  static constexpr int smem_bytes(int pairs) { return (kBuffers * buffer(pairs) + kTw) * 8; }
  static constexpr int kSmemBytes = smem_bytes(kPairs);
  static_assert(!kFour || kRs % 16 == 8, "pair stride must be 8 mod 16 float2");
};

// The block's planes: [first, first + planes), pairs = ceil(planes / 2).
struct Group {
  int64_t first;
  int planes;
};
// The group that starts at plane `first` of `batch` for blocks of `pairs` pairs.
__device__ __forceinline__ Group group_at(int64_t first, int64_t batch, int pairs) {
  return Group{first, static_cast<int>(batch - first < 2 * pairs ? batch - first : 2 * pairs)};
}

// Loads of the input planes into the pair regions (plane 2j at float 2 base(j), 2j+1 after it),
// zero outside each plane's window and for a missing partner: asynchronous copies committed as one
// group (wait_group<> before the barrier that publishes them).
//
// Here and in store_spectra, load_spectra and store_real, a full group and a block's last, partial
// group take separate 16-byte loops: one loop with the plane predicate would serve both, but the
// extra compare and registers in these short loops, which share the block with the FFT, made the
// kernels up to 15% slower (docs/design-notes.md).
template <class T>
__device__ __forceinline__ void load_real(const ForwardArgs& a, float* real, Group g, int pairs, bool whole) {
  constexpr int kN = T::kN, kLN = ilog2(kN);
  const int t = threadIdx.x, nt = blockDim.x;
  if (whole && g.planes == 2 * pairs) {  // contiguous planes: 16-byte copies
    const float4* src = reinterpret_cast<const float4*>(a.input + g.first * kN);
    for (int e = t; e < pairs * kN / 2; e += nt) {
      const int j = e >> (kLN - 1), q = e & (kN / 2 - 1);
      cp_async<16>(real + 2 * T::base(j) + 4 * q, src + e, true);
    }
  } else if (whole) {  // a partial group of contiguous planes: 16-byte copies, zero past the last plane
    const float4* src = reinterpret_cast<const float4*>(a.input + g.first * kN);
    const int live = g.planes * (kN / 4);
    for (int e = t; e < pairs * kN / 2; e += nt) {
      const int j = e >> (kLN - 1), q = e & (kN / 2 - 1);
      cp_async<16>(real + 2 * T::base(j) + 4 * q, e < live ? src + e : src, e < live);
    }
  } else {
    for (int e = t; e < 2 * pairs * kN; e += nt) {
      const int q = e >> kLN, x = e & (kN - 1);
      const int64_t xx = x - a.off_w;
      const bool inside = q < g.planes && xx >= 0 && xx < a.in_w;
      cp_async<4>(real + 2 * T::base(q >> 1) + (q & 1) * kN + x,
                  inside ? a.input + (g.first + q) * a.in_plane_stride + xx : a.input, inside);
    }
  }
  cp_async_commit();
}

// The half spectra of the block's planes (pair j: plane 2j's at base(j), 2j+1's after them).
template <class T>
__device__ __forceinline__ void store_spectra(const ForwardArgs& a, const float2* data, Group g, int pairs) {
  constexpr int kNh2 = T::kNh2;
  const int t = threadIdx.x, nt = blockDim.x;
  if (a.layout == Layout::freq_major) {
    const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
    for (int k = 0; k < kNh2; ++k)
      for (int q = t; q < g.planes; q += nt)
        a.output[k * ldb + g.first + q] = data[T::base(q >> 1) + (q & 1) * kNh2 + k];
    return;
  }
  float2* out = a.output + g.first * kNh2;
  if (g.planes == 2 * pairs && (reinterpret_cast<uintptr_t>(out) & 15) == 0) {  // 16-byte stores
    float4* o4 = reinterpret_cast<float4*>(out);
    for (int e = t; e < pairs * kNh2; e += nt) {
      const int j = e / kNh2, q = e - j * kNh2;
      o4[e] = reinterpret_cast<const float4*>(data + T::base(j))[q];
    }
  } else if ((reinterpret_cast<uintptr_t>(out) & 15) == 0) {  // a partial group: whole pairs in 16-byte stores
    float4* o4 = reinterpret_cast<float4*>(out);
    const int whole_pairs = g.planes >> 1;
    for (int e = t; e < whole_pairs * kNh2; e += nt) {
      const int j = e / kNh2, q = e - j * kNh2;
      o4[e] = reinterpret_cast<const float4*>(data + T::base(j))[q];
    }
    if (g.planes & 1)  // the last plane, without a partner
      for (int m = t; m < kNh2; m += nt) out[(g.planes - 1) * kNh2 + m] = data[T::base(whole_pairs) + m];
  } else {
    for (int e = t; e < g.planes * kNh2; e += nt) {
      const int j = e / (2 * kNh2), m = e - j * 2 * kNh2;
      out[e] = data[T::base(j) + m];
    }
  }
}

// Loads of the input half spectra into the pair regions, zero for a missing partner (one committed
// group of asynchronous copies, like load_real).
template <class T>
__device__ __forceinline__ void load_spectra(const InverseArgs& a, float2* data, Group g, int pairs) {
  constexpr int kNh2 = T::kNh2;
  const int t = threadIdx.x, nt = blockDim.x;
  if (a.layout == Layout::freq_major) {
    const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
    for (int k = 0; k < kNh2; ++k)
      for (int q = t; q < 2 * pairs; q += nt) {
        const bool live = q < g.planes;
        cp_async<8>(data + T::base(q >> 1) + (q & 1) * kNh2 + k, live ? a.input + k * ldb + g.first + q : a.input, live);
      }
  } else {
    const float2* in = a.input + g.first * kNh2;
    if (g.planes == 2 * pairs && (reinterpret_cast<uintptr_t>(in) & 15) == 0) {
      const float4* i4 = reinterpret_cast<const float4*>(in);
      for (int e = t; e < pairs * kNh2; e += nt) {
        const int j = e / kNh2, q = e - j * kNh2;
        cp_async<16>(data + T::base(j) + 2 * q, i4 + e, true);
      }
    } else if ((reinterpret_cast<uintptr_t>(in) & 15) == 0) {
      // a partial group: whole pairs in 16-byte copies, zero past them; a last plane without a partner
      // in 8-byte copies (its last 16-byte piece would reach past it), its partner zero
      const float4* i4 = reinterpret_cast<const float4*>(in);
      const int whole_pairs = g.planes >> 1;
      for (int e = t; e < pairs * kNh2; e += nt) {
        const int j = e / kNh2, q = e - j * kNh2;
        if (j == whole_pairs && (g.planes & 1)) continue;
        cp_async<16>(data + T::base(j) + 2 * q, j < whole_pairs ? i4 + e : i4, j < whole_pairs);
      }
      if (g.planes & 1)
        for (int m = t; m < 2 * kNh2; m += nt)
          cp_async<8>(data + T::base(whole_pairs) + m, m < kNh2 ? in + (g.planes - 1) * kNh2 + m : a.input, m < kNh2);
    } else {
      for (int e = t; e < 2 * pairs * kNh2; e += nt) {
        const int j = e / (2 * kNh2), m = e - j * 2 * kNh2;
        const bool live = e < g.planes * kNh2;
        cp_async<8>(data + T::base(j) + m, live ? in + e : a.input, live);
      }
    }
  }
  cp_async_commit();
}

// The output windows of the block's planes from the pair regions' real planes.
template <class T>
__device__ __forceinline__ void store_real(const InverseArgs& a, const float* real, Group g, int pairs, bool whole) {
  constexpr int kN = T::kN, kLN = ilog2(kN);
  const int t = threadIdx.x, nt = blockDim.x;
  if (whole && g.planes == 2 * pairs) {
    float4* dst = reinterpret_cast<float4*>(a.output + g.first * kN);
    for (int e = t; e < pairs * kN / 2; e += nt) {
      const int j = e >> (kLN - 1), q = e & (kN / 2 - 1);
      dst[e] = reinterpret_cast<const float4*>(real + 2 * T::base(j))[q];
    }
  } else if (whole) {  // a partial group of contiguous planes: 16-byte stores
    float4* dst = reinterpret_cast<float4*>(a.output + g.first * kN);
    for (int e = t; e < g.planes * (kN / 4); e += nt) {
      const int j = e >> (kLN - 1), q = e & (kN / 2 - 1);
      dst[e] = reinterpret_cast<const float4*>(real + 2 * T::base(j))[q];
    }
  } else {
    for (int e = t; e < g.planes * kN; e += nt) {
      const int q = e >> kLN, x = e & (kN - 1);
      const int64_t ox = x - a.out_off_w;
      if (ox >= 0 && ox < a.out_w) a.output[(g.first + q) * a.out_plane_stride + ox] = real[2 * T::base(q >> 1) + (q & 1) * kN + x];
    }
  }
}

// Pairs per block of the small kind: fewer for small batches, so that the blocks cover the SMs.
__device__ __forceinline__ int block_pairs(int max_pairs) { return static_cast<int>(blockDim.x) < max_pairs ? blockDim.x : max_pairs; }

// The loads of a block's loop over groups (Note [1-D block shapes]); load(buffer, first) issues
// the committed copies of the group at `first` into a buffer. first_group() starts the loop (under
// Pipe it issues the first group into buffer 0); group_ready() leaves the group at `first` in
// buffer `cur`, published after the caller's barrier: without Pipe it loads it now, with Pipe it
// first issues the next group (first + step) into the other buffer, then waits for the earlier one.
template <class T, class Load>
__device__ __forceinline__ void first_group(Load&& load, float2* smem, int64_t first, int64_t batch) {
  if constexpr (T::kPipe)
    if (first < batch) load(smem, first);
}
template <class T, class Load>
__device__ __forceinline__ void group_ready(Load&& load, float2* smem, int buf, int cur, int64_t first, int64_t step,
                                            int64_t batch) {
  if constexpr (T::kPipe) {
    if (first + step < batch) {
      load(smem + (cur ^ 1) * buf, first + step);
      cp_async_wait_group<1>();
    } else {
      cp_async_wait_group<0>();
    }
  } else {
    load(smem + cur * buf, first);
    cp_async_wait_group<0>();
  }
}

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks) forward_1d_reg_kernel(ForwardArgs a) {
  constexpr int kN = T::kN, kHalf = T::kHalf, kNh2 = T::kNh2, LN = ilog2(kN);
  extern __shared__ __align__(16) float2 smem[];
  const int t = threadIdx.x;
  const int pairs = T::kFour ? T::kPairs : block_pairs(T::kPairs);
  const bool whole = a.off_w == 0 && a.in_w >= kN && a.in_plane_stride == kN && (reinterpret_cast<uintptr_t>(a.input) & 15) == 0;
  const int buf = T::buffer(pairs);
  float2* tw = smem + T::kBuffers * buf;
  if constexpr (T::kFour) fill_twiddles<kN>(tw, T::kThreads);
  wait_for_prior_grids();  // Note [dependent launch]
  auto load = [&](float2* dst, int64_t first) {
    load_real<T>(a, reinterpret_cast<float*>(dst), group_at(first, a.batch, pairs), pairs, whole);
  };
  int cur = 0;  // the buffer of the group being computed (Pipe: the other one is loading)
  // the block's groups of 2 * pairs planes, in a loop of its own (Note [uniform plane loops])
  first_group<T>(load, smem, static_cast<int64_t>(blockIdx.x) * 2 * pairs, a.batch);
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * 2 * pairs; first < a.batch;
       first += static_cast<int64_t>(gridDim.x) * 2 * pairs) {
    const Group g = group_at(first, a.batch, pairs);
    float2* data = smem + cur * buf;
    float* real = reinterpret_cast<float*>(data);
    group_ready<T>(load, smem, buf, cur, first, static_cast<int64_t>(gridDim.x) * 2 * pairs, a.batch);
    __syncthreads();
    if constexpr (!T::kFour) {
      if (t < pairs) {
        float4* r = reinterpret_cast<float4*>(data + T::base(t));
        float2 v[kN];
        static_for<kN / 4>([&](auto q) {
          const float4 xa = r[q], xb = r[kN / 4 + q];
          v[4 * q] = make_float2(xa.x, xb.x);
          v[4 * q + 1] = make_float2(xa.y, xb.y);
          v[4 * q + 2] = make_float2(xa.z, xb.z);
          v[4 * q + 3] = make_float2(xa.w, xb.w);
        });
        RegFft<kN>::forward(v);  // v[i] = Z[bitrev(i)]
        auto z = [&](auto k) {
          constexpr int idx = bitrev(decltype(k)::value % kN, LN);
          return v[idx];
        };
        // output value m of the pair: A[m] (m <= n/2), then B[m - n/2 - 1]
        auto value = [&](auto m) {
          constexpr int mm = decltype(m)::value, k = mm <= kHalf ? mm : mm - kNh2;
          const float2 zk = z(std::integral_constant<int, k>{}), zm = z(std::integral_constant<int, (kN - k) % kN>{});
          return mm <= kHalf ? unpack_a(zk, zm) : unpack_b(zk, zm);
        };
        static_for<kNh2>([&](auto q) {
          const float2 lo = value(std::integral_constant<int, 2 * q>{}), hi = value(std::integral_constant<int, 2 * q + 1>{});
          r[q] = make_float4(lo.x, lo.y, hi.x, hi.y);
        });
      }
    } else {
      using S = Split<kN>;
      for_jobs<8, T::kPairs, T::kThreads>([&](int j, int n2) {
        const float* p = real + 2 * T::base(j) + n2;
        float2 z[S::kR1];
        static_for<S::kR1>([&](auto n1) { z[n1] = make_float2(p[8 * n1], p[kN + 8 * n1]); });
        pass1<kN>(z, tw + n2 * S::kTwStride);
        store_row_pass1<T, kN>(data, j, n2, z);
      });
      __syncthreads();
      for_jobs<S::kR1, T::kPairs, T::kThreads>([&](int j, int k1) {
        float2 v[8], o[8];
        row_pass2<T, kN>(data, j, k1, v);
        row_partners<kN>(v, k1, o);
        __syncwarp();  // the pair's lanes have read the exchange rows
        float2* r = data + T::base(j);
        static_for<8>([&](auto i) {
          constexpr int b = bitrev(i, 3);  // v[i] = X[k], k = k1 + R1 b
          if constexpr (b < 4) {           // A[k] at k; lane 0 also B[0]
            r[k1 + S::kR1 * b] = unpack_a(v[i], o[i]);
            if (b == 0 && k1 == 0) r[kNh2] = unpack_b(v[i], o[i]);
          } else if (b == 4 && k1 == 0) {  // k = n/2: A and B
            r[kHalf] = unpack_a(v[i], o[i]);
            r[kNh2 + kHalf] = unpack_b(v[i], o[i]);
          } else {  // B[n - k] at n/2 + 1 + n - k
            r[(kNh2 + kN - S::kR1 * b) - k1] = unpack_b(o[i], v[i]);
          }
        });
      });
    }
    __syncthreads();
    store_spectra<T>(a, data, g, pairs);
    __syncthreads();  // shared memory is free for the next group
    if constexpr (T::kPipe) cur ^= 1;
  }
}

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks) inverse_1d_reg_kernel(InverseArgs a) {
  constexpr int kN = T::kN, kHalf = T::kHalf, kNh2 = T::kNh2, LN = ilog2(kN);
  extern __shared__ __align__(16) float2 smem[];
  const int t = threadIdx.x;
  const int pairs = T::kFour ? T::kPairs : block_pairs(T::kPairs);
  const bool whole = a.out_off_w == 0 && a.out_w == kN && a.out_plane_stride == kN && (reinterpret_cast<uintptr_t>(a.output) & 15) == 0;
  const int buf = T::buffer(pairs);
  float2* tw = smem + T::kBuffers * buf;
  if constexpr (T::kFour) fill_twiddles<kN>(tw, T::kThreads);
  wait_for_prior_grids();  // Note [dependent launch]
  auto load = [&](float2* dst, int64_t first) { load_spectra<T>(a, dst, group_at(first, a.batch, pairs), pairs); };
  int cur = 0;  // the buffer of the group being computed (Pipe: the other one is loading)
  // the block's groups of 2 * pairs planes, in a loop of its own (Note [uniform plane loops])
  first_group<T>(load, smem, static_cast<int64_t>(blockIdx.x) * 2 * pairs, a.batch);
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * 2 * pairs; first < a.batch;
       first += static_cast<int64_t>(gridDim.x) * 2 * pairs) {
    const Group g = group_at(first, a.batch, pairs);
    float2* data = smem + cur * buf;
    float* real = reinterpret_cast<float*>(data);
    group_ready<T>(load, smem, buf, cur, first, static_cast<int64_t>(gridDim.x) * 2 * pairs, a.batch);
    __syncthreads();
    if constexpr (!T::kFour) {
      if (t < pairs) {
        float4* r = reinterpret_cast<float4*>(data + T::base(t));
        float2 s[2 * kNh2];  // A[0..n/2], B[0..n/2]
        static_for<kNh2>([&](auto q) {
          const float4 w = r[q];
          s[2 * q] = make_float2(w.x, w.y);
          s[2 * q + 1] = make_float2(w.z, w.w);
        });
        float2 v[kN];
        static_for<kN>([&](auto k) {
          float2 za, zb;
          if constexpr (k == 0 || k == kHalf) {
            za = make_float2(s[k].x, 0.f);
            zb = make_float2(s[kNh2 + k].x, 0.f);
          } else if constexpr (k < kHalf) {
            za = s[k];
            zb = s[kNh2 + k];
          } else {
            za = conjf2(s[kN - k]);
            zb = conjf2(s[kNh2 + kN - k]);
          }
          v[k] = swap_ri(pack_ab(za, zb));
        });
        RegFft<kN>::forward(v);  // swap(v[i]) = n idft(Z)[bitrev(i)]
        // 16-byte stores, like the loads: the regions are kRs float2 apart, so a warp's 4-byte
        // stores would meet 4 to a bank (Note [1-D register kernels]).
        auto at = [&](auto x) { return v[bitrev(decltype(x)::value, LN)]; };
        static_for<kN / 4>([&](auto q) {
          constexpr int x = 4 * q;
          const float2 v0 = at(std::integral_constant<int, x>{}), v1 = at(std::integral_constant<int, x + 1>{}),
                       v2 = at(std::integral_constant<int, x + 2>{}), v3 = at(std::integral_constant<int, x + 3>{});
          r[q] = make_float4(v0.y * a.scale, v1.y * a.scale, v2.y * a.scale, v3.y * a.scale);
          r[kN / 4 + q] = make_float4(v0.x * a.scale, v1.x * a.scale, v2.x * a.scale, v3.x * a.scale);
        });
      }
    } else {
      using S = Split<kN>;
      for_jobs<8, T::kPairs, T::kThreads>([&](int j, int n2) {
        const float2* r = data + T::base(j);
        float2 z[S::kR1];
        static_for<S::kR1>([&](auto n1) {
          float2 val;
          if constexpr (n1 < S::kR1 / 2) {  // k = 8 n1 + n2 < n/2
            const float2 x0 = r[8 * n1 + n2], x1 = r[kNh2 + 8 * n1 + n2];
            val = (n1 == 0 && n2 == 0) ? make_float2(x0.x, x1.x) : pack_ab(x0, x1);
          } else {  // k >= n/2: conj of n - k; k = n/2 (n2 = 0): real parts of X[n/2]
            const float2 x0 = r[kN - 8 * n1 - n2], x1 = r[kNh2 + kN - 8 * n1 - n2];
            val = (n1 == S::kR1 / 2 && n2 == 0) ? make_float2(x0.x, x1.x) : pack_ab(conjf2(x0), conjf2(x1));
          }
          z[n1] = swap_ri(val);
        });
        pass1<kN>(z, tw + n2 * S::kTwStride);
        store_row_pass1<T, kN>(data, j, n2, z);
      });
      __syncthreads();
      for_jobs<S::kR1, T::kPairs, T::kThreads>([&](int j, int k1) {
        float2 v[8];
        row_pass2<T, kN>(data, j, k1, v);
        __syncwarp();  // the pair's lanes have read the exchange rows
        float* r0 = real + 2 * T::base(j) + k1;
        static_for<8>([&](auto i) {
          constexpr int x = S::kR1 * bitrev(i, 3);
          r0[x] = v[i].y * a.scale;
          r0[kN + x] = v[i].x * a.scale;
        });
      });
    }
    __syncthreads();
    store_real<T>(a, real, g, pairs, whole);
    __syncthreads();
    if constexpr (T::kPipe) cur ^= 1;
  }
}

// The kernel of tile T in the direction of Args.
template <class T, class Args>
const void* tile_kernel() {
  if constexpr (std::is_same_v<Args, ForwardArgs>)
    return reinterpret_cast<const void*>(forward_1d_reg_kernel<T>);
  else
    return reinterpret_cast<const void*>(inverse_1d_reg_kernel<T>);
}

// Small kind: pairs per block halved (down to 32) while the batch would fill fewer blocks than two
// per SM (fill: than one full wave of resident blocks); the four-step kind has T::kPairs pairs.
// groups (Shape1d::groups): the grid is cut to ceil(groups of the batch / groups) blocks so that each
// block loops over that many, unless the cut grid would hold fewer than three warps per SM (then it is
// not cut): n = 32 with the cut was 3-5% slower at 32,768 planes (two one-warp blocks per SM) and 5-8%
// faster at 65,536 (3.9 per SM) and 131,072 (two four-warp blocks per SM), H100.
template <class T, class Args>
void launch_tile(const Args& a, const Shape1d& shape, cudaStream_t stream) {
  const void* k = tile_kernel<T, Args>();
  prepare_kernel(k, T::kSmemBytes);  // the largest block's; before any occupancy query
  int threads = T::kThreads;
  if constexpr (!T::kFour) {
    auto blocks_for = [&](int th) { return (a.batch + 2 * th - 1) / (2 * th); };
    while (threads > 32) {
      const int64_t enough = shape.fill ? grid_blocks(k, threads, T::smem_bytes(threads), INT64_MAX)
                                             : 2 * static_cast<int64_t>(sm_count());
      if (blocks_for(threads) >= enough) break;
      threads /= 2;
    }
  }
  const int smem = T::smem_bytes(T::kFour ? T::kPairs : threads);
  const int64_t pairs = T::kFour ? T::kPairs : threads;
  const int64_t block_groups = (a.batch + 2 * pairs - 1) / (2 * pairs);
  const int64_t cut = shape.groups > 1 ? (block_groups + shape.groups - 1) / shape.groups : block_groups;
  const bool enough_warps = cut * threads >= 3 * 32 * static_cast<int64_t>(sm_count());
  const int blocks = grid_blocks(k, threads, smem, enough_warps ? cut : block_groups);
  launch_kernel(k, blocks, threads, smem, stream, a);
}

// The automatic shape (Note [1-D block shapes]) and the shape to launch: the one given, or it.
template <int LN>
constexpr Shape1d kAutoShape = Tile1<LN>::kFour ? Shape1d{4, false, false}
                               : LN == 5        ? Shape1d{0, true, true, 2}
                                                : Shape1d{0, true, true};
template <int LN>
Shape1d resolve_shape(const std::optional<Shape1d>& s) {
  return s ? *s : kAutoShape<LN>;
}

// f(T{}) for the tile that a shape selects (every instance exists; validate() has checked pairs).
template <int LN, class F>
void with_tile(const Shape1d& s, F&& f) {
  if constexpr (Tile1<LN>::kFour) {
    switch (s.pairs) {
      case 4: return s.prefetch ? f(Tile1<LN, 4, true>{}) : f(Tile1<LN, 4, false>{});
      case 8: return s.prefetch ? f(Tile1<LN, 8, true>{}) : f(Tile1<LN, 8, false>{});
      case 16: return s.prefetch ? f(Tile1<LN, 16, true>{}) : f(Tile1<LN, 16, false>{});
      default: return s.prefetch ? f(Tile1<LN, 32, true>{}) : f(Tile1<LN, 32, false>{});
    }
  } else {
    return s.prefetch ? f(Tile1<LN, 32, true>{}) : f(Tile1<LN, 32, false>{});
  }
}

template <int LN, class Args>
void launch_1d(const Args& a, cudaStream_t stream) {
  const Shape1d s = resolve_shape<LN>(a.shape_1d);
  with_tile<LN>(s, [&](auto tile) { launch_tile<decltype(tile)>(a, s, stream); });
}
template <int LN>
void launch_forward(const ForwardArgs& a, cudaStream_t stream) {
  launch_1d<LN>(a, stream);
}
template <int LN>
void launch_inverse(const InverseArgs& a, cudaStream_t stream) {
  launch_1d<LN>(a, stream);
}
// The automatic shape's tile (what the Launcher's fixed fields describe).
template <int LN>
using AutoTile = Tile1<LN, kAutoShape<LN>.pairs ? kAutoShape<LN>.pairs : 32, kAutoShape<LN>.prefetch>;
template <int LN>
const void* forward_kernel() { return tile_kernel<AutoTile<LN>, ForwardArgs>(); }
template <int LN>
const void* inverse_kernel() { return tile_kernel<AutoTile<LN>, InverseArgs>(); }
template <int LN>
void shaped(const std::optional<Shape1d>& s, bool inverse, const void** kernel, int* threads, int* smem_bytes) {
  with_tile<LN>(resolve_shape<LN>(s), [&](auto tile) {
    using T = decltype(tile);
    *kernel = inverse ? tile_kernel<T, InverseArgs>() : tile_kernel<T, ForwardArgs>();
    *threads = T::kThreads;
    *smem_bytes = T::kSmemBytes;
  });
}

template <int LN>
constexpr Launcher make_launcher() {
  if constexpr (LN < 2 || LN > kMaxLog1d) {
    return Launcher{};
  } else {
    return Launcher{&launch_forward<LN>, &launch_inverse<LN>, &forward_kernel<LN>, &inverse_kernel<LN>,
                    AutoTile<LN>::kSmemBytes, AutoTile<LN>::kThreads, &shaped<LN>};
  }
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_table(std::index_sequence<I...>) {
  return {make_launcher<static_cast<int>(I)>()...};
}

constexpr auto kTable1dReg = make_table(std::make_index_sequence<kMaxLog1d + 1>{});

}  // namespace

const Launcher* launchers_1d_registers() { return kTable1dReg.data(); }

}  // namespace fftconv::fbfft::detail
