// FFT-size helpers: smooth sizes 2^a·3^b·5^c·7^d (what FFTW and cuFFT run well) and powers of two
// (what fbfft runs), and the candidate bases between the needed size and the next power of two.
#pragma once
#include <cstdint>
#include <vector>

namespace fftconv {

constexpr bool is_pow2(int64_t n) { return n >= 1 && (n & (n - 1)) == 0; }
// Whether every prime factor of n is <= max_prime (n >= 1; max_prime >= 2).
constexpr bool is_smooth(int64_t n, int64_t max_prime) {
  if (n < 1) return false;
  for (int64_t p = 2; p <= max_prime && n > 1; ++p)  // composite p never divide what is left
    while (n % p == 0) n /= p;
  return n == 1;
}
constexpr bool is_smooth7(int64_t n) { return is_smooth(n, 7); }  // n = 2^a 3^b 5^c 7^d, n >= 1
int64_t next_pow2(int64_t n);          // smallest power of two >= n (n >= 1)
int64_t next_smooth7(int64_t n);       // smallest 2,3,5,7-smooth size >= n
// Every 2,3,5,7-smooth size in [n, next_pow2(n)], ascending (the paper's autotuning space).
std::vector<int64_t> smooth7_candidates(int64_t n);
// Every max_prime-smooth size in [n, next_pow2(n)], ascending (max_prime 7: smooth7_candidates).
std::vector<int64_t> smooth_candidates(int64_t n, int64_t max_prime);
// Whether n is a side of fbfft's smooth register kernels (fbfft::kSmoothSides2d, which is checked
// against this at compile time; Note [smooth register FFT]): even, 2,3,5,7-smooth, not a power of
// two, at most 120, and at most 32 points per lane of one (n <= 32), two (n not divisible by 4) or
// four lanes. Host code (auto's cost model) reads the sides from here.
constexpr bool fbfft_smooth_side(int64_t n) {
  if (n < 2 || n % 2 != 0 || n > 120 || is_pow2(n) || !is_smooth7(n)) return false;
  return n <= 32 || (n % 4 == 0 ? n / 4 : n / 2) <= 32;
}
// Rough flop count of one complex 1-D FFT of length n: 5 n log2 n scaled by a radix penalty
// (radix 2/4 = 1.0, 3 = 1.1, 5 = 1.25, 7 = 1.4, 11 = 1.6, 13 = 1.7; other primes 4, as for a
// Bluestein transform) — used by cost models, not for timing claims.
double fft_flops_1d(int64_t n);
// Flops of one real-to-complex 2-D transform of nh×nw (about half the complex one).
double rfft2_flops(int64_t nh, int64_t nw);
// The same when only the first `rows` rows of the real plane are nonzero (forward) or needed
// (inverse): row transforms of those rows only, all column transforms (Note [row-pruned transforms]).
double rfft2_flops_rows(int64_t nh, int64_t nw, int64_t rows);

}  // namespace fftconv
