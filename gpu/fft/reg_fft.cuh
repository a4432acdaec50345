// RegFft<N>: one complex FFT of power-of-two length N (2..32) held entirely in the registers of one
// thread, with twiddle factors that are compile-time constants. The register-resident sibling of
// WarpFft (warp_fft.cuh) with one lane per transform; see Note [register 2-D kernels].
// SmoothFft<N>: the same for 7-smooth lengths up to 32 (9, 12, 14, 28, ...: Note [smooth register
// FFT]); LaneFft<N, G> spreads one transform over G lanes, each running one of them (the transform
// a register kernel runs along each side).
#pragma once
#include <cuda_runtime.h>

#include <type_traits>
#include <utility>

#include "common/fft_size.hpp"
#include "gpu/fft/warp_fft.cuh"
#include "gpu/runtime/cp_async.cuh"

namespace fftconv::fbfft::detail {

// cos(pi x) and sin(pi x) for |x| <= 1 by Taylor series in double, evaluated by the compiler:
// the twiddles below are immediates in the instruction stream, not loads or sincos calls.
constexpr double kPiD = 3.14159265358979323846264338327950288;
constexpr double cospi_ct(double x) {
  const double t = kPiD * x;
  double term = 1.0, sum = 1.0;
  for (int i = 1; i < 40; ++i) {
    term *= -t * t / ((2.0 * i - 1.0) * (2.0 * i));
    sum += term;
  }
  return sum;
}
constexpr double sinpi_ct(double x) {
  const double t = kPiD * x;
  double term = t, sum = t;
  for (int i = 1; i < 40; ++i) {
    term *= -t * t / ((2.0 * i) * (2.0 * i + 1.0));
    sum += term;
  }
  return sum;
}

// f(std::integral_constant<int, I>{}) for I = 0..N-1: loop bodies whose register-array indices are
// compile-time constants by construction (an unrolled loop only makes them so if the unroller runs).
template <class F, int... I>
__device__ __forceinline__ void static_for_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void static_for(F&& f) {
  static_for_impl(f, std::make_integer_sequence<int, N>{});
}

// The part of a forward's input window inside its n_h x n_w basis, rows [y0, y1) x columns
// [x0, x1), and the power-of-two bounding box the sparse copy walks (Note [sparse forward windows]).
struct BasisWindow {
  int y0, y1, x0, x1, log_rows, log_cols;
  __device__ __forceinline__ BasisWindow(int64_t off_h, int64_t off_w, int64_t in_h, int64_t in_w, int n_h, int n_w)
      : y0(clip(off_h, 0, n_h)), y1(clip(off_h + in_h, y0, n_h)), x0(clip(off_w, 0, n_w)), x1(clip(off_w + in_w, x0, n_w)),
        log_rows(ceil_log2(y1 - y0)), log_cols(ceil_log2(x1 - x0)) {}
  // The box is at most half the plane: zero the planes, then copy the window alone.
  __device__ __forceinline__ bool sparse(int n_h, int n_w) const { return (2 << (log_rows + log_cols)) <= n_h * n_w; }
  // Rows 2j and 2j + 1 both lie outside the window (their packed row transform is 0).
  __device__ __forceinline__ bool zero_pair(int j) const { return 2 * j + 1 < y0 || 2 * j >= y1; }
  // cp.async copies of the window's elements of `planes` planes from plane `first` on (those below
  // `batch`): element (y, x) of plane q, in basis coordinates, to dst(q, y, x).
  template <class Dst>
  __device__ __forceinline__ void issue(const float* input, int64_t in_plane_stride, int64_t in_ld, int64_t off_h,
                                        int64_t off_w, int64_t first, int planes, int64_t batch, int nthreads,
                                        Dst&& dst) const {
    const int box = planes << (log_rows + log_cols);
    for (int e = threadIdx.x; e < box; e += nthreads) {
      const int x = x0 + (e & ((1 << log_cols) - 1)), y = y0 + ((e >> log_cols) & ((1 << log_rows) - 1));
      const int q = e >> (log_rows + log_cols);
      const int64_t plane = first + q;
      if (x < x1 && y < y1 && plane < batch)
        cp_async<4>(dst(q, y, x), input + plane * in_plane_stride + (y - off_h) * in_ld + (x - off_w), true);
    }
  }

 private:
  static __device__ __forceinline__ int clip(int64_t v, int lo, int hi) {
    return static_cast<int>(v < lo ? lo : (v < hi ? v : hi));
  }
  static __device__ __forceinline__ int ceil_log2(int n) { return n <= 1 ? 0 : 32 - __clz(n - 1); }
};

// Zeros over `n` floats of shared memory from `p` (16-byte aligned), 16-byte stores.
__device__ __forceinline__ void zero_shared(float* p, int n, int nthreads) {
  const int n4 = n / 4;
  for (int e = threadIdx.x; e < n4; e += nthreads) reinterpret_cast<float4*>(p)[e] = make_float4(0.f, 0.f, 0.f, 0.f);
  if (static_cast<int>(threadIdx.x) < n - 4 * n4) p[4 * n4 + threadIdx.x] = 0.f;
}

// cos(pi J / H) and sin(pi J / H) for 0 <= J < 2H, the angle folded into [0, pi] (where the series
// above are evaluated) for J > H.
constexpr double cospi_frac(int J, int H) {
  return J > H ? cospi_ct(static_cast<double>(2 * H - J) / H) : cospi_ct(static_cast<double>(J) / H);
}
constexpr double sinpi_frac(int J, int H) {
  return J > H ? -sinpi_ct(static_cast<double>(2 * H - J) / H) : sinpi_ct(static_cast<double>(J) / H);
}

// z * exp(-i pi J / H) (Conj = false) or z * exp(+i pi J / H) (Conj = true), J taken mod 2H (any
// integer); the factors 1, -1 and -+i cost no multiplication.
template <int J0, int H, bool Conj>
__device__ __forceinline__ float2 rotate(float2 z) {
  constexpr int J = ((J0 % (2 * H)) + 2 * H) % (2 * H);
  if constexpr (J == 0) {
    return z;
  } else if constexpr (2 * J == H) {
    return Conj ? make_float2(-z.y, z.x) : make_float2(z.y, -z.x);
  } else if constexpr (J == H) {
    return make_float2(-z.x, -z.y);
  } else if constexpr (2 * J == 3 * H) {
    return Conj ? make_float2(z.y, -z.x) : make_float2(-z.y, z.x);
  } else {
    constexpr float c = static_cast<float>(cospi_frac(J, H));
    constexpr float s = static_cast<float>(Conj ? sinpi_frac(J, H) : -sinpi_frac(J, H));
    return make_float2(z.x * c - z.y * s, z.x * s + z.y * c);
  }
}

// Note [register FFT]
// forward(): radix-2 decimation in frequency over spans N/2, N/4, ..., 1; leaves X[bitrev_N(i)] in
// v[i] (the same placement as WarpFft with one lane: freq(i) = bitrev(i)). inverse(): the DIT
// butterflies undoing each DIF stage (without its factor 1/2) in the opposite order, with conjugate
// twiddles: from X[bitrev(i)] in v[i] it leaves N * idft(X)[i] in v[i]. Every index is a template
// argument (fold expressions over index sequences), so the array lives in registers.
template <int N>
struct RegFft {
  static_assert(N >= 2 && N <= 64 && (N & (N - 1)) == 0, "RegFft: N must be a power of two in [2, 64]");
  static constexpr int kLog = ilog2(N);

  static constexpr int freq(int i) { return bitrev(i, kLog); }
  static constexpr int reg_freq(int i) { return freq(i); }
  // Register holding frequency k after forward().
  static constexpr int reg_of(int k) { return bitrev(k, kLog); }
  // Register holding X[(N - freq(i)) mod N] after forward().
  static constexpr int mirror(int i) { return bitrev((N - bitrev(i, kLog)) & (N - 1), kLog); }

  __device__ __forceinline__ static void forward(float2 (&v)[N]) {
    forward_stages(v, std::make_integer_sequence<int, kLog>{});
  }
  __device__ __forceinline__ static void inverse(float2 (&v)[N]) {
    inverse_stages(v, std::make_integer_sequence<int, kLog>{});
  }

 private:
  template <int H, int B, bool Inverse>
  __device__ __forceinline__ static void butterfly(float2 (&v)[N]) {
    constexpr int j = B % H, i0 = (B / H) * 2 * H + j, i1 = i0 + H;
    if constexpr (!Inverse) {
      const float2 a = v[i0], b = v[i1];
      v[i0] = cadd(a, b);
      v[i1] = rotate<j, H, false>(csub(a, b));
    } else {
      const float2 u = v[i0], t = rotate<j, H, true>(v[i1]);
      v[i0] = cadd(u, t);
      v[i1] = csub(u, t);
    }
  }
  template <int H, bool Inverse, int... B>
  __device__ __forceinline__ static void stage(float2 (&v)[N], std::integer_sequence<int, B...>) {
    (butterfly<H, B, Inverse>(v), ...);
  }
  template <int... S>
  __device__ __forceinline__ static void forward_stages(float2 (&v)[N], std::integer_sequence<int, S...>) {
    (stage<((N / 2) >> S), false>(v, std::make_integer_sequence<int, N / 2>{}), ...);
  }
  template <int... S>
  __device__ __forceinline__ static void inverse_stages(float2 (&v)[N], std::integer_sequence<int, S...>) {
    (stage<(1 << S), true>(v, std::make_integer_sequence<int, N / 2>{}), ...);
  }
};

}  // namespace fftconv::fbfft::detail

namespace fftconv::fbfft::detail {

// Note [smooth register FFT]
// The fbfft convolution's power-of-two basis carries up to 1.6x the frequencies (CGEMM work) of the
// smallest basis that holds the padded input: 16x16 (144 frequencies) for a 13x13 input where 14x14
// has 112, 32x32 (544) for 27x27 where 28x28 has 420, 64x64 (2,112) for 46x46 where 48x48 has
// 1,200. SmoothFft<N> is a complex FFT of a length N <= 32 whose prime factors are 2, 3, 5 and 7, in
// one thread's registers like RegFft: mixed-radix
// decimation in frequency, N = r m with r the first of 4, 2, 3, 5, 7 that divides N; each stage
// does m radix-r DFTs on the stride-m elements j + m l (written out: term by term for r = 2, 4,
// whose factors 1, -1, -i, +i cost no multiplication; by symmetric pairs for odd r, dft_small), multiplies
// by W_M^(j k) and recurses on the m contiguous elements of each k. So X[k + r q] lands where
// register m k + p holds sub-frequency q = freq_m(p): freq(i) = i / m + r freq_m(i mod m), a
// digit reversal fixed at compile time. inverse() applies each stage's adjoint in the opposite order
// (the sub-transforms first, then the conjugate twiddles and conjugate r-point DFTs), which gives
// N times the inverse DFT in natural order from the forward's order. Every index and twiddle is a
// compile-time constant (the twiddles are immediates, as in RegFft); the 2-D register kernels take
// it for their non-power-of-two sides up to 32 with one lane per transform (Note [register 2-D
// kernels]), and for longer sides as the inner transform of two or four lanes (LaneFft: 60 = 2 x 30,
// 84 = 4 x 21, 120 = 4 x 30; Note [lane-split register FFT]).
// With autotune the fbfft plan times the smooth and the power-of-two basis and keeps the faster: the
// smooth transforms run about as fast as the power-of-two register family, so they win by the
// frequencies they save (S = 128, x = 13 fprop on an H100: 103 -> 85 us with 14x14).
constexpr int smooth_radix(int n) {
  return n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : n % 3 == 0 ? 3 : n % 5 == 0 ? 5 : n % 7 == 0 ? 7 : 0;
}

template <int N>
struct SmoothFft {
  static_assert(N >= 2 && N <= 32 && is_smooth7(N), "SmoothFft: N must be 7-smooth in [2, 32]");
  static constexpr int kG = 1, kR = N;

  // Frequency held by register i of a length-M transform after forward().
  static constexpr int freq_of(int i, int m_len) {
    if (m_len == 1) return 0;
    const int r = smooth_radix(m_len), m = m_len / r;
    return i / m + r * freq_of(i % m, m);
  }
  static constexpr int reg_freq(int i) { return freq_of(i, N); }
  __host__ __device__ static constexpr int lane_freq(int) { return 0; }
  // Register holding frequency k after forward().
  static constexpr int reg_of(int k) {
    for (int j = 0; j < N; ++j)
      if (reg_freq(j) == k) return j;
    return -1;
  }
  static constexpr int mirror(int i) { return reg_of((N - reg_freq(i)) % N); }

  __device__ __forceinline__ static void forward(float2 (&v)[N], int = 0) { dif<0, N>(v); }
  __device__ __forceinline__ static void inverse(float2 (&v)[N], int = 0) { dit<0, N>(v); }
  template <int R>
  __device__ __forceinline__ static float2 partner(const float2 (&v)[N], int = 0) {
    return v[mirror(R)];
  }

 private:
  // The r-point DFT (Conj: conjugate) of the elements Base + J + m l, l < r, in place, then (forward)
  // times W_M^(J k) on output k, or (inverse) the conjugate twiddles first.
  template <int Base, int M, int J, bool Inverse>
  __device__ __forceinline__ static void radix_step(float2 (&v)[N]) {
    constexpr int r = smooth_radix(M), m = M / r;
    float2 x[r];
    static_for<r>([&](auto l) {
      x[l] = v[Base + J + m * l];
      if constexpr (Inverse) x[l] = rotate<2 * J * l, M, true>(x[l]);
    });
    float2 y[r];
    dft_small<r, Inverse>(x, y);
    static_for<r>([&](auto k) {
      if constexpr (!Inverse) y[k] = rotate<2 * J * k, M, false>(y[k]);
      v[Base + J + m * k] = y[k];
    });
  }
  // y = the r-point DFT of x (Conj: with conjugate twiddles). Powers of two term by term (their
  // factors are 1, -1, -i, +i); odd r by the symmetric pairs a_l = x_l + x_{r-l}, b_l = x_l - x_{r-l}:
  // y_k = x_0 + sum_l a_l cos(2 pi l k / r) -+ i sum_l b_l sin(2 pi l k / r) for k and r - k at once
  // (l, k = 1 .. (r-1)/2), a quarter of the term-by-term multiplications.
  template <int r, bool Conj>
  __device__ __forceinline__ static void dft_small(const float2 (&x)[r], float2 (&y)[r]) {
    if constexpr (r % 2 == 0) {
      static_for<r>([&](auto k) {
        float2 acc = x[0];
        static_for<r - 1>([&](auto l1) {
          constexpr int l = l1 + 1;
          acc = cadd(acc, rotate<2 * l * k, r, Conj>(x[l]));
        });
        y[k] = acc;
      });
    } else {
      constexpr int h = (r - 1) / 2;
      float2 a[h], b[h];
      float2 y0 = x[0];
      static_for<h>([&](auto l0) {
        a[l0] = cadd(x[l0 + 1], x[r - 1 - l0]);
        b[l0] = csub(x[l0 + 1], x[r - 1 - l0]);
        y0 = cadd(y0, a[l0]);
      });
      y[0] = y0;
      static_for<h>([&](auto k0) {
        constexpr int k = k0 + 1;
        float2 t = x[0], u = make_float2(0.f, 0.f);
        static_for<h>([&](auto l0) {
          constexpr int l = l0 + 1;
          constexpr float c = static_cast<float>(cospi_frac(2 * ((l * k) % r), r));  // cos(2 pi l k / r)
          constexpr float sn = static_cast<float>(sinpi_frac(2 * ((l * k) % r), r));
          t = make_float2(t.x + c * a[l0].x, t.y + c * a[l0].y);
          u = make_float2(u.x + sn * b[l0].x, u.y + sn * b[l0].y);
        });
        // forward: y_k = t - i u, y_{r-k} = t + i u; conjugate twiddles swap the signs.
        const float2 minus_iu = make_float2(u.y, -u.x);
        y[k] = Conj ? csub(t, minus_iu) : cadd(t, minus_iu);
        y[r - k] = Conj ? cadd(t, minus_iu) : csub(t, minus_iu);
      });
    }
  }
  template <int Base, int M>
  __device__ __forceinline__ static void dif(float2 (&v)[N]) {
    if constexpr (M > 1) {
      constexpr int r = smooth_radix(M), m = M / r;
      static_for<m>([&](auto j) { radix_step<Base, M, j, false>(v); });
      static_for<r>([&](auto k) { dif<Base + m * k, m>(v); });
    }
  }
  template <int Base, int M>
  __device__ __forceinline__ static void dit(float2 (&v)[N]) {
    if constexpr (M > 1) {
      constexpr int r = smooth_radix(M), m = M / r;
      static_for<r>([&](auto k) { dit<Base + m * k, m>(v); });
      static_for<m>([&](auto j) { radix_step<Base, M, j, true>(v); });
    }
  }
};

}  // namespace fftconv::fbfft::detail

namespace fftconv::fbfft::detail {

// Lanes per transform of the register kernels: one up to 32 points; longer powers of two over 4
// lanes (64 and 128 points: 16 or 32 registers each; a whole 64-point transform would need 128
// registers of data); longer smooth sides over 2 lanes where each holds at most 32 points (36..64:
// 1.05-1.4x faster than 4 lanes on an H100, fewer shuffle stages), else 4 (72..120).
constexpr int lanes_for(int n) { return n <= 32 ? 1 : ((n & (n - 1)) != 0 && n / 2 <= 32 ? 2 : 4); }

// Note [lane-split register FFT]
// LaneFft<N, G>: one length-N transform over G (1, 2 or 4) consecutive lanes, lane p holding the
// R = N/G elements i = p*R + r in v[r]. forward(): the first log2(G) DIF stages (spans N/2 .. R)
// pair lanes p and p^m (m = span/R) through one shuffle per register; their twiddles
// exp(-i pi ((p & (m-1)) R + r) / (m R)) are a compile-time factor times 1 or -i (m <= 2); the
// lane's R points are one length-R transform inside the lane: RegFft<R> when R is a power of two,
// SmoothFft<R> otherwise (R need not be even: 84 = 4 x 21; Note [smooth register FFT]). Position
// (p, r) then holds X[k] with k = f_R(r) * G + bitrev_G(p) = reg_freq(r) + lane_freq(p), f_R the
// inner transform's register order. inverse() undoes it (the inner DIT first, then the lane stages
// with conjugate twiddles); partner<r>() fetches X[(N - k) mod N] for register r (from the lane
// itself when p = 0, else from lane bitrev_G(G - bitrev_G(p)) at the compile-time register holding
// inner frequency R - 1 - f_R(r)), one register at a time so no second array of partners is live.
// Every lane of the warp must call forward/inverse/partner (full-mask shuffles); with G = 1 there
// are no shuffles and this is the inner transform.
template <int N, int G>
struct LaneFft {
  static_assert(G == 1 || G == 2 || G == 4, "LaneFft: G must be 1, 2 or 4");
  static constexpr int kG = G, kR = N / G, kLogG = ilog2(G);
  static_assert(kR >= 2 && kR * G == N, "LaneFft: at least two values per lane, G divides N");
  using Inner = std::conditional_t<(kR & (kR - 1)) == 0, RegFft<kR>, SmoothFft<kR>>;

  static constexpr int reg_freq(int r) { return Inner::reg_freq(r) * G; }
  __host__ __device__ static constexpr int lane_freq(int p) { return bitrev(p, kLogG); }

  __device__ __forceinline__ static void forward(float2 (&v)[kR], int p) {
    if constexpr (G > 1) {
      static_for<kLogG>([&](auto s) {
        constexpr int m = 1 << (kLogG - 1 - s);  // lane distance; span m * R
        const bool upper = (p & m) != 0;
        static_for<kR>([&](auto r) {
          const float2 o = shfl_xor2(v[r], m);
          float2 d = csub(o, v[r]);
          if constexpr (m == 2) d = (p & 1) ? make_float2(d.y, -d.x) : d;  // exp(-i pi (p & 1) / 2)
          d = rotate<r, m * kR, false>(d);
          v[r] = upper ? d : cadd(v[r], o);
        });
      });
    }
    Inner::forward(v);
  }

  __device__ __forceinline__ static void inverse(float2 (&v)[kR], int p) {
    Inner::inverse(v);
    if constexpr (G > 1) {
      static_for<kLogG>([&](auto s) {
        constexpr int m = 1 << s;
        const bool upper = (p & m) != 0;
        static_for<kR>([&](auto r) {
          float2 x = v[r];
          if (upper) {
            x = rotate<r, m * kR, true>(x);
            if constexpr (m == 2) x = (p & 1) ? make_float2(-x.y, x.x) : x;  // exp(+i pi (p & 1) / 2)
          }
          const float2 o = shfl_xor2(x, m);
          v[r] = upper ? csub(o, x) : cadd(x, o);
        });
      });
    }
  }

  // X[(N - k) mod N] for the k held in register R (a shuffle when G > 1: every lane must call it).
  template <int R>
  __device__ __forceinline__ static float2 partner(const float2 (&v)[kR], int p) {
    if constexpr (G == 1) {
      return v[Inner::mirror(R)];
    } else {
      constexpr int a = Inner::reg_freq(R);
      constexpr int r0 = Inner::reg_of((kR - a) % kR), r1 = Inner::reg_of(kR - 1 - a);
      const int b = lane_freq(p);
      const float2 x1 = shfl2(v[r1], b == 0 ? 0 : lane_freq(G - b), G);
      return p == 0 ? v[r0] : x1;
    }
  }
};

}  // namespace fftconv::fbfft::detail
