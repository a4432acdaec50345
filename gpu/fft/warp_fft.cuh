// WarpFft<N>: one complex FFT of power-of-two length N (2..256) held in registers across a group of
// G = min(N, 32) lanes of a warp, R = N/G values per lane, data exchanged with __shfl_xor_sync.
#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "gpu/fft/complex_ops.hpp"

namespace fftconv::fbfft::detail {

constexpr int ilog2(int n) { return n <= 1 ? 0 : 1 + ilog2(n / 2); }
constexpr int bitrev(int x, int bits) {
  int y = 0;
  for (int b = 0; b < bits; ++b) y |= ((x >> b) & 1) << (bits - 1 - b);
  return y;
}

__device__ __forceinline__ float2 shfl_xor2(float2 v, int mask) {
  return make_float2(__shfl_xor_sync(0xffffffffu, v.x, mask), __shfl_xor_sync(0xffffffffu, v.y, mask));
}
__device__ __forceinline__ float2 shfl2(float2 v, int src, int width) {
  return make_float2(__shfl_sync(0xffffffffu, v.x, src, width), __shfl_sync(0xffffffffu, v.y, src, width));
}
// exp(-i*pi*num/den), den a power of two (so num/den is exact).
__device__ __forceinline__ float2 twiddle(int num, int den) {
  float s, c;
  sincospif(-static_cast<float>(num) / static_cast<float>(den), &s, &c);
  return make_float2(c, s);
}

// Note [warp FFT data placement]
// Element i = r*G + p of a length-N transform lives in register r of lane p of its group
// (the group is G consecutive lanes, G = min(N, 32); a warp holds 32/G groups = transforms).
// forward() is a radix-2 decimation in frequency (DIF): register-local stages for the spans >= G,
// then log2(G) shuffle stages. It leaves X[k] at position i with k = bitrev_N(i) = freq(r, p);
// nothing is reordered: loads and stores of frequency data use freq() as their address.
// inverse() runs the DIT butterflies, the exact inverses of the DIF stages (without the 1/2),
// in the opposite order with conjugate twiddles: from X[freq(r, p)] at position (r, p) it leaves
// N * idft(X)[i] at position i (natural order). Twiddles are computed once per thread by init()
// with sincospif and reused for every transform the thread does (they depend on p, r only).
// Every lane of the warp must call forward()/inverse()/partner() (full-mask shuffles).
template <int N>
struct WarpFft {
  static_assert(N >= 2 && N <= 256 && (N & (N - 1)) == 0, "WarpFft: N must be a power of two in [2, 256]");
  static constexpr int kG = N < 32 ? N : 32;  // lanes per transform
  static constexpr int kR = N / kG;           // values per lane
  static constexpr int kLogG = ilog2(kG);
  static constexpr int kLogR = ilog2(kR);
  static constexpr int kGroupsPerWarp = 32 / kG;

  float2 tw_lane[kLogG];                  // shuffle stage of span h = 2^s: exp(-i pi (p mod h) / h)
  float2 tw_reg[kR > 1 ? kR - 1 : 1];     // register stage of span hr*G: [hr-1 + m] = exp(-i pi (m G + p)/(hr G))
  int p_ = 0;                             // position in the group

  __device__ __forceinline__ void init(int p) {
    p_ = p;
#pragma unroll
    for (int s = 1; s < kLogG; ++s) tw_lane[s] = twiddle(p & ((1 << s) - 1), 1 << s);
    tw_lane[0] = make_float2(1.f, 0.f);
#pragma unroll
    for (int m = 1; m < kR; ++m) {  // entry m-1 belongs to span hr = largest power of two <= m
      const int hr = 1 << ilog2(m);
      tw_reg[m - 1] = twiddle((m - hr) * kG + p, hr * kG);
    }
  }

  // Frequency index held in register r after forward() (and expected there by inverse()).
  __device__ __forceinline__ int freq(int r) const {
    return (__brev(static_cast<unsigned>(p_)) >> (32 - kLogG)) * kR + bitrev(r, kLogR);
  }

  __device__ __forceinline__ void forward(float2 (&v)[kR]) const {
#pragma unroll
    for (int st = kLogR - 1; st >= 0; --st)
#pragma unroll
      for (int r = 0, hr = 1 << st; r < kR; ++r)
        if ((r & hr) == 0) {
          const float2 a = v[r], b = v[r + hr];
          v[r] = cadd(a, b);
          v[r + hr] = cmul(csub(a, b), tw_reg[hr - 1 + (r & (hr - 1))]);
        }
#pragma unroll
    for (int s = kLogG - 1; s >= 0; --s) {
      const int h = 1 << s;
      const bool upper = (p_ & h) != 0;
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        const float2 o = shfl_xor2(v[r], h);
        const float2 d = csub(o, v[r]);
        v[r] = upper ? (s == 0 ? d : cmul(d, tw_lane[s])) : cadd(v[r], o);
      }
    }
  }

  __device__ __forceinline__ void inverse(float2 (&v)[kR]) const {
#pragma unroll
    for (int s = 0; s < kLogG; ++s) {
      const int h = 1 << s;
      const bool upper = (p_ & h) != 0;
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        const float2 o = shfl_xor2(v[r], h);
        if (s == 0) {
          v[r] = upper ? csub(o, v[r]) : cadd(v[r], o);
        } else {
          v[r] = upper ? csub(o, cmulconj(v[r], tw_lane[s])) : cadd(v[r], cmulconj(o, tw_lane[s]));
        }
      }
    }
#pragma unroll
    for (int st = 0; st < kLogR; ++st)
#pragma unroll
      for (int r = 0, hr = 1 << st; r < kR; ++r)
        if ((r & hr) == 0) {
          const float2 u = v[r], t = cmulconj(v[r + hr], tw_reg[hr - 1 + (r & (hr - 1))]);
          v[r] = cadd(u, t);
          v[r + hr] = csub(u, t);
        }
  }

  // After forward(): o[r] = X[(N - freq(r)) mod N], fetched from the lane that holds it.
  // With k = a*R + b (a = bitrev_G(p), b = bitrev_R(r)): for b != 0, N-k = (G-1-a)*R + (R-b);
  // for b == 0 (r == 0), N-k = ((G-a) mod G)*R. The source register is uniform across lanes.
  __device__ __forceinline__ void partner(const float2 (&v)[kR], float2 (&o)[kR]) const {
    const int a = static_cast<int>(__brev(static_cast<unsigned>(p_)) >> (32 - kLogG));
    const int src0 = static_cast<int>(__brev(static_cast<unsigned>((kG - a) & (kG - 1))) >> (32 - kLogG));
    const int src1 = static_cast<int>(__brev(static_cast<unsigned>(kG - 1 - a)) >> (32 - kLogG));
    o[0] = shfl2(v[0], src0, kG);
    partner_rest(v, o, src1, std::make_integer_sequence<int, kR>{});
  }

 private:
  // Registers r >= 1 read register bitrev_R(R - bitrev_R(r)), a compile-time index (no local memory).
  template <int... I>
  __device__ __forceinline__ static void partner_rest(const float2 (&v)[kR], float2 (&o)[kR], int src,
                                                      std::integer_sequence<int, I...>) {
    ((I == 0 ? void() : void(o[I] = shfl2(v[bitrev(kR - bitrev(I, kLogR), kLogR) % kR], src, kG))), ...);
  }
};

// Two real sequences a, b packed as z = a + i b: from Z[k] (s) and Z[N-k] (o),
// A[k] = (Z[k] + conj(Z[N-k])) / 2 and B[k] = (Z[k] - conj(Z[N-k])) / (2i).
__device__ __forceinline__ float2 unpack_a(float2 s, float2 o) { return make_float2(0.5f * (s.x + o.x), 0.5f * (s.y - o.y)); }
__device__ __forceinline__ float2 unpack_b(float2 s, float2 o) { return make_float2(0.5f * (s.y + o.y), 0.5f * (o.x - s.x)); }
// Z = A + i B for the inverse of two real sequences.
__device__ __forceinline__ float2 pack_ab(float2 a, float2 b) { return make_float2(a.x - b.y, a.y + b.x); }

}  // namespace fftconv::fbfft::detail
