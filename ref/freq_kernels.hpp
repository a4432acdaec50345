// The fftw engine's inner kernels: the per-frequency complex products (Note [frequency CGEMM]) and
// the transpositions between plane-major spectra and frequency-major buffers (Note [spectrum
// transposition]).
#pragma once
#include <complex>
#include <cstdint>

namespace fftconv {

// Whether this build has the AVX-512 kernel below (ref/ built with AVX-512, Note [AVX-512 in ref]).
bool have_freq_cgemm();

// C = [C +] op(A) · op(B) for row-major M×K A, K×N B and M×N C (leading dimensions K, N, N), op =
// complex conjugate where the flag is set; accumulate adds to C instead of overwriting it. Only
// when have_freq_cgemm() (otherwise throws Error).
void freq_cgemm(const std::complex<float>* A, const std::complex<float>* B, std::complex<float>* C, int64_t M,
                int64_t K, int64_t N, bool conj_a, bool conj_b, bool accumulate);

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols (the matrices must not overlap).
// In blocks of 8×8 elements transposed in AVX-512 registers for complex<float> where built
// (Note [spectrum transposition]), element by element otherwise.
void transpose(const std::complex<float>* src, int64_t src_ld, std::complex<float>* dst, int64_t dst_ld, int64_t rows,
               int64_t cols);
void transpose(const std::complex<double>* src, int64_t src_ld, std::complex<double>* dst, int64_t dst_ld,
               int64_t rows, int64_t cols);

}  // namespace fftconv
