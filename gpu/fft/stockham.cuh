// Internal to gpu/fft: the mixed-radix Stockham transforms of every 7-smooth size (runtime sides,
// shared memory), written once for the device kernels (fbfft_stockham.cu) and a serial host run that
// the host tests check against a direct DFT (stockham_test.cpp). See Note [stockham kernels].
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "gpu/fft/complex_ops.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/runtime/host_device.hpp"

#if defined(__CUDA_ARCH__)
#define FFTCONV_UNROLL _Pragma("unroll")
#else
#define FFTCONV_UNROLL
#endif

namespace fftconv::fbfft::stockham {

// Note [stockham kernels]
// Every side 2^a 3^b 5^c 7^d without a register or four-step kernel (odd sides, rectangles of smooth
// sides, 70, 90, 98, 126, and 1-D sizes up to 256) runs on one kernel pair whose sizes are runtime
// values. A block takes Q planes at once (as many as fit the shared-memory target) and works on two
// buffers in shared memory:
//   forward: the real rows of the Q planes, taken two at a time in plane-major order (rows 2j, 2j+1
//   of the flat list; a 1-D batch pairs its planes), are packed as z = x_2j + i x_2j+1 with the
//   implicit zero padding; the complex row transforms run as radix-4/2/3/5/7 Stockham stages (an
//   autosorting stage reads one buffer and writes the other, so a stage needs one barrier and no
//   bit reversal); the pairs are split into half spectra (X_a = (Z_k + conj Z_-k) / 2, X_b =
//   (Z_k - conj Z_-k) / 2i) in the other buffer; the column transforms run the same stages with the
//   element stride n_w/2+1; the block stores its spectra in the requested layout.
//   inverse: the mirror image: column transforms, the Hermitian extension of two rows packed as one
//   complex row (the imaginary parts at k = 0 and n_w/2 dropped, as the C2R contract reads them),
//   the row transforms, the clipped window store.
// Twiddles are a table exp(-2 pi i m / n) per side in shared memory, computed in double. Invariant:
// a stage's items read only the source buffer and write distinct elements of the other, so the
// items of a stage are independent and a barrier between stages is the only synchronization; the
// serial host run of the same code is then the same computation.

inline constexpr int kMaxSide1d = 256;  // 1-D sizes 2..256
inline constexpr int kThreads = 256;    // threads per block
inline constexpr int kSmemTarget = 48 * 1024;  // bytes of both buffers per block, when one plane fits
inline constexpr int kMaxPlanes = 64;

// Whether the kernels run an n_h x n_w transform (n_h = 1: 1-D; 2-D sides up to fbfft's kMaxSide2d).
constexpr bool supported(int n_h, int n_w) {
  if (n_h == 1) return n_w >= 2 && n_w <= kMaxSide1d && is_smooth7(n_w);
  return n_h >= 2 && n_w >= 2 && n_h <= kMaxSide2d && n_w <= kMaxSide2d && is_smooth7(n_h) && is_smooth7(n_w);
}

// The radices of n in stage order: 4s, then a 2, then 3s, 5s and 7s; count 0 unless n is 7-smooth.
struct Radices {
  int count = 0;
  int r[12] = {};
};
FFTCONV_HD Radices radices(int n) {
  Radices out;
  for (int r : {4, 2, 3, 5, 7})
    while (n > 1 && n % r == 0) {
      out.r[out.count++] = r;
      n /= r;
    }
  if (n != 1) out.count = 0;
  return out;
}

// Division of non-negative ints below 2^31 by a divisor d >= 1 fixed at run time, as a multiply-high
// and a shift (x / d = (umulhi(x, m) + x) >> s with s = ceil(log2 d), m = 2^32 (2^s - d) / d + 1):
// the index arithmetic of the stages divides by runtime sizes on every element.
struct FastDiv {
  uint32_t d = 1, m = 1, s = 0;
  FastDiv() = default;
  FFTCONV_HD explicit FastDiv(int divisor) : d(static_cast<uint32_t>(divisor)) {
    while ((1u << s) < d) ++s;
    m = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << s) - d)) / d + 1);
  }
  FFTCONV_HD int div(int x) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(static_cast<uint32_t>(x), m);
#else
    const uint32_t hi = static_cast<uint32_t>((uint64_t(static_cast<uint32_t>(x)) * m) >> 32);
#endif
    return static_cast<int>((hi + static_cast<uint32_t>(x)) >> s);
  }
  // x / d and x mod d
  FFTCONV_HD void divmod(int x, int& q, int& r) const {
    q = div(x);
    r = x - q * static_cast<int>(d);
  }
};

// A block's geometry for Q planes of n_h x n_w: the row pairs of the flat row list and the complex
// elements of each of the two buffers (the packed rows or the half spectra, whichever is larger).
struct Geometry {
  int n_h = 1, n_w = 2, nw2 = 2, planes = 1, pairs = 1, buffer = 0;
  FastDiv by_h, by_w, by_w2, by_plane;  // n_h, n_w, nw2, n_h nw2
  FFTCONV_HD Geometry(int h, int w, int q)
      : n_h(h), n_w(w), nw2(w / 2 + 1), planes(q), by_h(h), by_w(w), by_w2(w / 2 + 1), by_plane(h * (w / 2 + 1)) {
    pairs = (q * h + 1) / 2;
    const int rows = pairs * w, spectra = q * h * nw2;
    buffer = rows > spectra ? rows : spectra;
  }
  // Twiddle tables (n_w entries, then n_h when n_h > 1) and the two buffers, in float2.
  FFTCONV_HD int twiddles() const { return n_w + (n_h > 1 ? n_h : 0); }
  FFTCONV_HD int smem_elems() const { return twiddles() + 2 * buffer; }
};
// Planes per block for a size: as many as keep both buffers within kSmemTarget (at least one).
inline int planes_per_block(int n_h, int n_w) {
  int q = 1;
  while (q < kMaxPlanes && Geometry(n_h, n_w, 2 * q).smem_elems() * 8 <= kSmemTarget) q *= 2;
  return q;
}

using detail::cadd;
using detail::cmul;
using detail::conjf2;
using detail::csub;
FFTCONV_HD float2 times_i(float2 a, bool inverse) {  // -i a forward, +i a inverse
  return inverse ? make_float2(-a.y, a.x) : make_float2(a.y, -a.x);
}

// Items [0, n) of a step: the block's threads in turn on the device, one after the other on the host.
template <class F>
FFTCONV_HD void for_items(int n, F&& f) {
#if defined(__CUDA_ARCH__)
  for (int e = static_cast<int>(threadIdx.x); e < n; e += static_cast<int>(blockDim.x)) f(e);
#else
  for (int e = 0; e < n; ++e) f(e);
#endif
}
FFTCONV_HD void barrier() {
#if defined(__CUDA_ARCH__)
  __syncthreads();
#endif
}

// tw[m] = exp(-2 pi i m / n), m < n.
FFTCONV_HD void fill_twiddles(float2* tw, int n) {
  for_items(n, [&](int m) {
    double s, c;
#if defined(__CUDA_ARCH__)
    sincospi(-2.0 * m / n, &s, &c);
#else
    const double pi = 3.14159265358979323846;
    s = std::sin(-2.0 * pi * m / n);
    c = std::cos(-2.0 * pi * m / n);
#endif
    tw[m] = make_float2(static_cast<float>(c), static_cast<float>(s));
  });
}

// cos and sin of 2 pi j / R (j < R) for the odd radices.
template <int R>
FFTCONV_HD float root_cos(int j) {
  if constexpr (R == 3) {
    constexpr float c[3] = {1.f, -0.5f, -0.5f};
    return c[j];
  } else if constexpr (R == 5) {
    constexpr float c[5] = {1.f, 0.30901699437494742f, -0.80901699437494742f, -0.80901699437494742f,
                            0.30901699437494742f};
    return c[j];
  } else {
    static_assert(R == 7, "odd radices 3, 5, 7");
    constexpr float c[7] = {1.f, 0.62348980185873353f, -0.22252093395631440f, -0.90096886790241913f,
                            -0.90096886790241913f, -0.22252093395631440f, 0.62348980185873353f};
    return c[j];
  }
}
template <int R>
FFTCONV_HD float root_sin(int j) {
  if constexpr (R == 3) {
    constexpr float s[3] = {0.f, 0.86602540378443865f, -0.86602540378443865f};
    return s[j];
  } else if constexpr (R == 5) {
    constexpr float s[5] = {0.f, 0.95105651629515357f, 0.58778525229247313f, -0.58778525229247313f,
                            -0.95105651629515357f};
    return s[j];
  } else {
    constexpr float s[7] = {0.f, 0.78183148246802981f, 0.97492791218182361f, 0.43388373911755812f,
                            -0.43388373911755812f, -0.97492791218182361f, -0.78183148246802981f};
    return s[j];
  }
}

// In-place DFT of R values, sign -1 (forward) or +1 (inverse).
template <int R>
FFTCONV_HD void dft(float2 (&x)[R], bool inverse) {
  if constexpr (R == 2) {
    const float2 a = x[0], b = x[1];
    x[0] = cadd(a, b);
    x[1] = csub(a, b);
  } else if constexpr (R == 4) {
    const float2 a0 = cadd(x[0], x[2]), a1 = csub(x[0], x[2]), a2 = cadd(x[1], x[3]);
    const float2 a3 = times_i(csub(x[1], x[3]), inverse);
    x[0] = cadd(a0, a2);
    x[1] = cadd(a1, a3);
    x[2] = csub(a0, a2);
    x[3] = csub(a1, a3);
  } else {
    const float sign = inverse ? 1.f : -1.f;
    float2 y[R];
FFTCONV_UNROLL
    for (int m = 0; m < R; ++m) {
      y[m] = x[0];
FFTCONV_UNROLL
      for (int s = 1; s < R; ++s) {
        const int j = (s * m) % R;
        const float c = root_cos<R>(j), sn = sign * root_sin<R>(j);
        y[m].x += x[s].x * c - x[s].y * sn;
        y[m].y += x[s].x * sn + x[s].y * c;
      }
    }
FFTCONV_UNROLL
    for (int m = 0; m < R; ++m) x[m] = y[m];
  }
}

// One radix-R Stockham stage over `count` transforms of length n: transform t's element e at
// in[t * tstride + e * estride], p = the product of the radices before this stage. Item (t, i),
// i < n / R: x_s = in[i + s n/R] times exp(-+2 pi i s k / (p R)) (k = i mod p), a DFT of R points,
// out[(i - k) R + k + s p] = X_s. Consecutive items take consecutive t when the transforms are
// interleaved (tstride 1: the columns), consecutive i otherwise (the rows): consecutive threads
// then touch consecutive shared-memory words.
template <int R>
FFTCONV_HD void stage(const float2* in, float2* out, int count, int tstride, int estride, int n, int p,
                      const float2* tw, bool inverse) {
  const int q = n / R, step_unit = n / (p * R);
  const bool t_fast = tstride == 1 && estride > 1;
  const FastDiv by_fast(t_fast ? count : q), by_p(p);
  for_items(count * q, [&](int item) {
    int t, i, k, unused;
    if (t_fast)
      by_fast.divmod(item, i, t);
    else
      by_fast.divmod(item, t, i);
    by_p.divmod(i, unused, k);
    const float2* src = in + t * tstride;
    float2* dst = out + t * tstride;
    float2 x[R];
FFTCONV_UNROLL
    for (int s = 0; s < R; ++s) x[s] = src[(i + s * q) * estride];
    if (p > 1) {
      const int step = k * step_unit;
FFTCONV_UNROLL
      for (int s = 1; s < R; ++s) {
        const float2 w = tw[s * step];
        x[s] = cmul(x[s], inverse ? conjf2(w) : w);
      }
    }
    dft<R>(x, inverse);
    const int j = (i - k) * R + k;
FFTCONV_UNROLL
    for (int s = 0; s < R; ++s) dst[(j + s * p) * estride] = x[s];
  });
}

// The transforms of `count` sequences of length n in buffer a (b the scratch buffer), every stage
// followed by a barrier; returns the buffer that holds the result.
FFTCONV_HD float2* transform(float2* a, float2* b, int count, int tstride, int estride, int n, const float2* tw,
                             bool inverse) {
  const Radices rad = radices(n);
  int p = 1;
  for (int s = 0; s < rad.count; ++s) {
    const int r = rad.r[s];
    switch (r) {
      case 2: stage<2>(a, b, count, tstride, estride, n, p, tw, inverse); break;
      case 3: stage<3>(a, b, count, tstride, estride, n, p, tw, inverse); break;
      case 4: stage<4>(a, b, count, tstride, estride, n, p, tw, inverse); break;
      case 5: stage<5>(a, b, count, tstride, estride, n, p, tw, inverse); break;
      default: stage<7>(a, b, count, tstride, estride, n, p, tw, inverse); break;
    }
    barrier();
    p *= r;
    float2* c = a;
    a = b;
    b = c;
  }
  return a;
}

// The buffers of a block: the twiddle tables, then two buffers of g.buffer elements. Half spectra
// sit row-interleaved, element (q, kh, kw) at (kh Q + q) nw2 + kw, so that the column transforms of
// all Q planes are Q nw2 sequences of stride 1 (elements Q nw2 apart).
struct Buffers {
  float2 *tw_w, *tw_h, *buf0, *buf1;
  FFTCONV_HD Buffers(const Geometry& g, float2* smem)
      : tw_w(smem), tw_h(smem + g.n_w), buf0(smem + g.twiddles()), buf1(buf0 + g.buffer) {}
  FFTCONV_HD float2* other(const float2* p) const { return p == buf0 ? buf1 : buf0; }
};
FFTCONV_HD void fill_tables(const Geometry& g, const Buffers& b) {
  fill_twiddles(b.tw_w, g.n_w);
  if (g.n_h > 1) fill_twiddles(b.tw_h, g.n_h);
}

// Item e of the block's `live` planes of half spectra in the order that puts consecutive items on
// consecutive global addresses of the layout: its plane q and frequency (kh, kw).
FFTCONV_HD void spectrum_item(Layout layout, const Geometry& g, const FastDiv& by_live, int e, int& q, int& kh,
                              int& kw) {
  int f;
  if (layout == Layout::freq_major) {
    by_live.divmod(e, f, q);
    g.by_w2.divmod(f, kh, kw);
  } else if (layout == Layout::transposed) {
    g.by_plane.divmod(e, q, f);
    g.by_h.divmod(f, kw, kh);
  } else {
    g.by_plane.divmod(e, q, f);
    g.by_w2.divmod(f, kh, kw);
  }
}

// The planes [first, first + live) of the batch (live <= g.planes) in `smem` (g.smem_elems()
// float2, twiddle tables filled): forward transforms into the requested layout.
FFTCONV_HD void forward_planes(const ForwardArgs& a, const Geometry& g, const Buffers& b, int64_t first, int live) {
  const int n_h = g.n_h, n_w = g.n_w, nw2 = g.nw2, Q = g.planes, rows = Q * n_h;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  // (1) row pairs, zero outside the window and past the batch
  auto value = [&](int r, int x) -> float {
    if (r >= rows) return 0.f;
    int q, y;
    g.by_h.divmod(r, q, y);
    const int64_t yy = y - a.off_h, xx = x - a.off_w;
    if (q >= live || yy < 0 || yy >= a.in_h || xx < 0 || xx >= a.in_w) return 0.f;
    return a.input[(first + q) * a.in_plane_stride + yy * a.in_ld + xx];
  };
  for_items(g.pairs * n_w, [&](int e) {
    int j, x;
    g.by_w.divmod(e, j, x);
    b.buf0[e] = make_float2(value(2 * j, x), value(2 * j + 1, x));
  });
  barrier();
  // (2) row transforms
  const float2* z = transform(b.buf0, b.buf1, g.pairs, n_w, 1, n_w, b.tw_w, false);
  float2* spec = b.other(z);
  // (3) the two half spectra of each pair, row-interleaved
  for_items(rows * nw2, [&](int e) {
    int r, k, q, y;
    g.by_w2.divmod(e, r, k);
    g.by_h.divmod(r, q, y);
    const float2* zr = z + (r / 2) * n_w;
    const float2 zk = zr[k], zm = conjf2(zr[k == 0 ? 0 : n_w - k]);
    spec[(y * Q + q) * nw2 + k] = (r & 1) ? make_float2(0.5f * (zk.y - zm.y), -0.5f * (zk.x - zm.x))
                                          : make_float2(0.5f * (zk.x + zm.x), 0.5f * (zk.y + zm.y));
  });
  barrier();
  // (4) column transforms
  const float2* s = n_h > 1 ? transform(spec, b.other(spec), Q * nw2, 1, Q * nw2, n_h, b.tw_h, false) : spec;
  // (5) the store
  const FastDiv by_live(live);
  for_items(live * n_h * nw2, [&](int e) {
    int q, kh, kw;
    spectrum_item(a.layout, g, by_live, e, q, kh, kw);
    a.output[freq_offset(a.layout, first + q, kh, kw, n_h, nw2, ldb)] = s[(kh * Q + q) * nw2 + kw];
  });
  barrier();
}

// The inverse of the planes [first, first + live): the clipped window of each, times a.scale.
FFTCONV_HD void inverse_planes(const InverseArgs& a, const Geometry& g, const Buffers& b, int64_t first, int live) {
  const int n_h = g.n_h, n_w = g.n_w, nw2 = g.nw2, Q = g.planes, rows = Q * n_h;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  // (1) the spectra, row-interleaved; planes past the batch are zeros
  if (live < Q) {
    const FastDiv by_rest(Q - live);
    for_items((Q - live) * n_h * nw2, [&](int e) {
      int f, q;
      by_rest.divmod(e, f, q);  // f = kh nw2 + kw: (kh Q + q) nw2 + kw = f + (kh (Q - 1) + q) nw2
      const int kh = g.by_w2.div(f);
      b.buf0[f + (kh * (Q - 1) + live + q) * nw2] = make_float2(0.f, 0.f);
    });
  }
  const FastDiv by_live(live);
  for_items(live * n_h * nw2, [&](int e) {
    int q, kh, kw;
    spectrum_item(a.layout, g, by_live, e, q, kh, kw);
    b.buf0[(kh * Q + q) * nw2 + kw] = a.input[freq_offset(a.layout, first + q, kh, kw, n_h, nw2, ldb)];
  });
  barrier();
  // (2) column transforms
  const float2* c = n_h > 1 ? transform(b.buf0, b.buf1, Q * nw2, 1, Q * nw2, n_h, b.tw_h, true) : b.buf0;
  float2* z = b.other(c);
  // (3) two rows' Hermitian extensions packed as one complex row: Z = C_a + i C_b
  auto extended = [&](int r, int k) -> float2 {
    if (r >= rows) return make_float2(0.f, 0.f);
    int q, y;
    g.by_h.divmod(r, q, y);
    const float2* cr = c + (y * Q + q) * nw2;
    if (k == 0 || 2 * k == n_w) return make_float2(cr[k].x, 0.f);
    return k < nw2 ? cr[k] : conjf2(cr[n_w - k]);
  };
  for_items(g.pairs * n_w, [&](int e) {
    int j, k;
    g.by_w.divmod(e, j, k);
    const float2 ca = extended(2 * j, k), cb = extended(2 * j + 1, k);
    z[e] = make_float2(ca.x - cb.y, ca.y + cb.x);
  });
  barrier();
  // (4) row transforms
  const float2* x = transform(z, b.other(z), g.pairs, n_w, 1, n_w, b.tw_w, true);
  // (5) the window
  const int window = static_cast<int>(a.out_h * a.out_w);
  const FastDiv by_window(window > 0 ? window : 1), by_out_w(a.out_w > 0 ? static_cast<int>(a.out_w) : 1);
  for_items(live * window, [&](int e) {
    int q, w, oy, ox;
    by_window.divmod(e, q, w);
    by_out_w.divmod(w, oy, ox);
    const int r = q * n_h + oy + static_cast<int>(a.out_off_h);
    const float2 v = x[(r / 2) * n_w + ox + static_cast<int>(a.out_off_w)];
    a.output[(first + q) * a.out_plane_stride + oy * a.out_ld + ox] = ((r & 1) ? v.y : v.x) * a.scale;
  });
  barrier();
}

}  // namespace fftconv::fbfft::stockham
