// FFT-size helpers (see fft_size.hpp).
#include "common/fft_size.hpp"

#include <cmath>

#include "common/errors.hpp"

namespace fftconv {

int64_t next_pow2(int64_t n) {
  if (n < 1) throw InvalidArgument("fft size: must be >= 1, got " + std::to_string(n));
  if (n > (int64_t(1) << 62)) throw InvalidArgument("fft size: too large (" + std::to_string(n) + ")");
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

int64_t next_smooth7(int64_t n) {
  int64_t m = n < 1 ? 1 : n;
  while (!is_smooth7(m)) ++m;  // gaps between 7-smooth numbers are small at our sizes
  return m;
}

std::vector<int64_t> smooth_candidates(int64_t n, int64_t max_prime) {
  if (max_prime < 2) throw InvalidArgument("max_prime: must be >= 2, got " + std::to_string(max_prime));
  std::vector<int64_t> out;
  const int64_t hi = next_pow2(n);
  for (int64_t m = n; m <= hi; ++m)
    if (is_smooth(m, max_prime)) out.push_back(m);
  return out;
}

std::vector<int64_t> smooth7_candidates(int64_t n) { return smooth_candidates(n, 7); }

double fft_flops_1d(int64_t n) {
  if (n <= 1) return 0.0;
  double penalty = 1.0;
  int64_t m = n;
  int factors = 0;
  double weight = 0.0;
  for (auto [p, c] : {std::pair<int64_t, double>{2, 1.0}, {3, 1.1}, {5, 1.25}, {7, 1.4}, {11, 1.6}, {13, 1.7}}) {
    while (m % p == 0) { m /= p; weight += c * std::log2(double(p)); ++factors; }
  }
  if (m != 1) weight += 4.0 * std::log2(double(m));  // Bluestein-like cost for other primes
  penalty = weight / std::log2(double(n));
  return 5.0 * double(n) * std::log2(double(n)) * penalty;
}

double rfft2_flops(int64_t nh, int64_t nw) {
  // nh transforms of length nw (real: half) + (nw/2+1) transforms of length nh.
  return 0.5 * double(nh) * fft_flops_1d(nw) + double(nw / 2 + 1) * fft_flops_1d(nh);
}

}  // namespace fftconv

namespace fftconv {

double rfft2_flops_rows(int64_t nh, int64_t nw, int64_t rows) {
  const int64_t r = rows <= 0 || rows > nh ? nh : rows;
  return 0.5 * double(r) * fft_flops_1d(nw) + double(nw / 2 + 1) * fft_flops_1d(nh);
}

}  // namespace fftconv
