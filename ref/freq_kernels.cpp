// Note [frequency CGEMM]
// The fftw backend multiplies one small complex matrix pair per frequency: on L2, S = 8 (a 64×64
// basis, 2,112 frequencies) C(8×64) = A(8×64) · B(64×nc) for fprop and bprop and C(64×64) =
// A(64×8) · B(8×64) for accGrad. Eigen packs both operands into its panel layout for every
// product; with 8 rows each packed element of B is used 8 times, and packing took more samples
// than the multiplication (perf: gemm_pack_rhs 9.5%, the kernels 11.4% of a bprop run). This kernel
// reads the row-major operands as they are: 8 complex columns of C (one 16-float vector, masked at
// the right edge) for up to 8 rows at a time, accumulating sum_k Re(a_ik) b_k and sum_k Im(a_ik)
// b_k in two vectors per row (FMAs with broadcast scalars of A), and only at the end forms
// c_i = re + i·im (conjugations become sign changes there: conj(b) conjugates both sums, conj(a)
// turns +i into -i). The summation order over k is fixed, so results repeat bit for bit.
#include "ref/freq_kernels.hpp"

#include <algorithm>
#include <cstring>

#include "common/errors.hpp"

#if defined(__AVX512F__)
// GCC 12's AVX-512 intrinsics pass a deliberately undefined register to the unpack and 128-bit
// lane shuffles and then warn that it is uninitialized: silenced for that header only (ref/eigen.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // GCC's name; clang (the sanitizer build) knows no such group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace fftconv {

#if defined(__AVX512F__)
namespace {

// Rows [m0, m0 + MB) of C for columns [n0, n0 + 8) (mask: the valid float lanes).
template <int MB, bool CA, bool CB>
inline void block(const float* a, const float* b, float* c, int64_t m0, int64_t n0, int64_t K, int64_t N,
                  __mmask16 mask, bool accumulate) {
  __m512 re[MB], im[MB];
#pragma GCC unroll 8
  for (int i = 0; i < MB; ++i) re[i] = im[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    const __m512 bv = _mm512_maskz_loadu_ps(mask, b + 2 * (k * N + n0));
#pragma GCC unroll 8
    for (int i = 0; i < MB; ++i) {
      const float* ai = a + 2 * ((m0 + i) * K + k);
      re[i] = _mm512_fmadd_ps(_mm512_set1_ps(ai[0]), bv, re[i]);
      im[i] = _mm512_fmadd_ps(_mm512_set1_ps(ai[1]), bv, im[i]);
    }
  }
  const __m512 ones = _mm512_set1_ps(1.f);
  const __m512i odd = _mm512_set_epi32(int(0x80000000), 0, int(0x80000000), 0, int(0x80000000), 0, int(0x80000000), 0,
                                       int(0x80000000), 0, int(0x80000000), 0, int(0x80000000), 0, int(0x80000000), 0);
#pragma GCC unroll 8
  for (int i = 0; i < MB; ++i) {
    __m512 r = re[i], s = im[i];
    if constexpr (CB) {  // sum Re(a) conj(b) = conj(sum Re(a) b), the same for Im(a)
      r = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(r), odd));
      s = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(s), odd));
    }
    const __m512 sw = _mm512_shuffle_ps(s, s, 0xB1);  // (Im s, Re s) in each complex lane
    // CA: c = r - i s (even lanes r + Im s, odd r - Re s); else c = r + i s.
    __m512 v = CA ? _mm512_fmsubadd_ps(ones, r, sw) : _mm512_fmaddsub_ps(ones, r, sw);
    float* ci = c + 2 * ((m0 + i) * N + n0);
    if (accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, ci));
    _mm512_mask_storeu_ps(ci, mask, v);
  }
}

template <bool CA, bool CB>
void run(const float* a, const float* b, float* c, int64_t M, int64_t K, int64_t N, bool accumulate) {
  for (int64_t n0 = 0; n0 < N; n0 += 8) {
    const int64_t w = std::min<int64_t>(8, N - n0);
    const __mmask16 mask = static_cast<__mmask16>(w == 8 ? 0xFFFFu : (1u << (2 * w)) - 1u);
    int64_t m0 = 0;
    for (; m0 + 8 <= M; m0 += 8) block<8, CA, CB>(a, b, c, m0, n0, K, N, mask, accumulate);
    switch (M - m0) {  // the last rows
      case 7: block<7, CA, CB>(a, b, c, m0, n0, K, N, mask, accumulate); break;
      case 6: block<6, CA, CB>(a, b, c, m0, n0, K, N, mask, accumulate); break;
      case 5: block<5, CA, CB>(a, b, c, m0, n0, K, N, mask, accumulate); break;
      case 4: block<4, CA, CB>(a, b, c, m0, n0, K, N, mask, accumulate); break;
      case 3: block<3, CA, CB>(a, b, c, m0, n0, K, N, mask, accumulate); break;
      case 2: block<2, CA, CB>(a, b, c, m0, n0, K, N, mask, accumulate); break;
      case 1: block<1, CA, CB>(a, b, c, m0, n0, K, N, mask, accumulate); break;
      default: break;
    }
  }
}

}  // namespace

bool have_freq_cgemm() { return true; }

void freq_cgemm(const std::complex<float>* A, const std::complex<float>* B, std::complex<float>* C, int64_t M,
                int64_t K, int64_t N, bool conj_a, bool conj_b, bool accumulate) {
  const float* a = reinterpret_cast<const float*>(A);
  const float* b = reinterpret_cast<const float*>(B);
  float* c = reinterpret_cast<float*>(C);
  if (conj_a && conj_b) run<true, true>(a, b, c, M, K, N, accumulate);
  else if (conj_a) run<true, false>(a, b, c, M, K, N, accumulate);
  else if (conj_b) run<false, true>(a, b, c, M, K, N, accumulate);
  else run<false, false>(a, b, c, M, K, N, accumulate);
}

// Note [spectrum transposition]
// The engine turns each block of up to 16 plane spectra (plane-major, F values each) into
// frequency-major rows and back. Element by element, complex<float> copies became two 4-byte moves
// each and took 16.5% of a bprop run's samples on L2, S = 8 (perf). Here 8 planes × 8 frequencies
// are loaded as 8 vectors of 8 complex values (one 8-byte lane each), transposed in registers by
// three stages of 2-source permutes (1, 2 and 4 lanes), and stored as 8 runs of 8 values.
namespace {

void transpose8x8(const double* src, int64_t src_ld, double* dst, int64_t dst_ld) {
  __m512d r[8], u[8], v[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = _mm512_loadu_pd(src + i * src_ld);
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {  // u[i] = (r_i[0], r_i+1[0], r_i[2], ...), u[i+1] the odd lanes
    u[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);
    u[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);
  }
  const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
#pragma GCC unroll 2
  for (int h = 0; h < 8; h += 4) {  // pairs of lanes: v[h] columns 0 and 4, v[h+1] 2 and 6, v[h+2] 1 and 5, v[h+3] 3 and 7
    v[h] = _mm512_permutex2var_pd(u[h], lo, u[h + 2]);
    v[h + 1] = _mm512_permutex2var_pd(u[h], hi, u[h + 2]);
    v[h + 2] = _mm512_permutex2var_pd(u[h + 1], lo, u[h + 3]);
    v[h + 3] = _mm512_permutex2var_pd(u[h + 1], hi, u[h + 3]);
  }
  constexpr int col[4] = {0, 2, 1, 3};  // the low column of v[j] (and v[j+4])
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    _mm512_storeu_pd(dst + col[j] * dst_ld, _mm512_shuffle_f64x2(v[j], v[j + 4], 0x44));
    _mm512_storeu_pd(dst + (col[j] + 4) * dst_ld, _mm512_shuffle_f64x2(v[j], v[j + 4], 0xEE));
  }
}

}  // namespace

void transpose(const std::complex<float>* src, int64_t src_ld, std::complex<float>* dst, int64_t dst_ld, int64_t rows,
               int64_t cols) {
  const double* s = reinterpret_cast<const double*>(src);  // one complex<float> per 8-byte lane
  double* d = reinterpret_cast<double*>(dst);
  const int64_t r8 = rows - rows % 8, c8 = cols - cols % 8;
  for (int64_t r = 0; r < r8; r += 8)
    for (int64_t c = 0; c < c8; c += 8) transpose8x8(s + r * src_ld + c, src_ld, d + c * dst_ld + r, dst_ld);
  auto one = [&](int64_t r, int64_t c) { std::memcpy(d + c * dst_ld + r, s + r * src_ld + c, 8); };
  for (int64_t r = 0; r < r8; ++r)
    for (int64_t c = c8; c < cols; ++c) one(r, c);
  for (int64_t r = r8; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) one(r, c);
}

#else

bool have_freq_cgemm() { return false; }

void freq_cgemm(const std::complex<float>*, const std::complex<float>*, std::complex<float>*, int64_t, int64_t,
                int64_t, bool, bool, bool) {
  throw Error("freq_cgemm: this build has no AVX-512 kernel (ref/ built without AVX-512)");
}

#endif

namespace {
// Element by element (complex<double>, and complex<float> without AVX-512).
template <class C>
void transpose_each(const C* src, int64_t src_ld, C* dst, int64_t dst_ld, int64_t rows, int64_t cols) {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + c * dst_ld + r, src + r * src_ld + c, sizeof(C));
}
}  // namespace

#if !defined(__AVX512F__)
void transpose(const std::complex<float>* src, int64_t src_ld, std::complex<float>* dst, int64_t dst_ld, int64_t rows,
               int64_t cols) {
  transpose_each(src, src_ld, dst, dst_ld, rows, cols);
}
#endif
void transpose(const std::complex<double>* src, int64_t src_ld, std::complex<double>* dst, int64_t dst_ld,
               int64_t rows, int64_t cols) {
  transpose_each(src, src_ld, dst, dst_ld, rows, cols);
}

}  // namespace fftconv
