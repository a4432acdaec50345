// Tests of the FFT-size helpers.
#include <doctest/doctest.h>

#include "common/errors.hpp"
#include "common/fft_size.hpp"

using namespace fftconv;

TEST_CASE("smooth and power-of-two sizes") {
  CHECK(is_pow2(64));
  CHECK_FALSE(is_pow2(48));
  CHECK(next_pow2(13) == 16);
  CHECK(next_pow2(16) == 16);
  CHECK(next_smooth7(11) == 12);
  CHECK(next_smooth7(13) == 14);
  CHECK(next_smooth7(127) == 128);
  CHECK(is_smooth7(2 * 3 * 5 * 7));
  CHECK_FALSE(is_smooth7(22));
  auto c = smooth7_candidates(13);
  CHECK(c == std::vector<int64_t>{14, 15, 16});
  CHECK(smooth7_candidates(64) == std::vector<int64_t>{64});
  for (int64_t n = 1; n < 2000; ++n) {
    int64_t s = next_smooth7(n);
    CHECK(s >= n);
    CHECK(is_smooth7(s));
    for (int64_t m = n; m < s; ++m) CHECK_FALSE(is_smooth7(m));
  }
}

TEST_CASE("p-smooth sizes generalize the 7-smooth ones") {
  CHECK(smooth_candidates(13, 13) == std::vector<int64_t>{13, 14, 15, 16});
  CHECK(smooth_candidates(11, 11) == std::vector<int64_t>{11, 12, 14, 15, 16});
  CHECK(smooth_candidates(17, 13) == std::vector<int64_t>{18, 20, 21, 22, 24, 25, 26, 27, 28, 30, 32});
  CHECK(smooth_candidates(13, 2) == std::vector<int64_t>{16});
  CHECK_THROWS_AS(smooth_candidates(13, 1), InvalidArgument);
  for (int64_t n = 1; n < 600; ++n) {
    CHECK(is_smooth(n, 7) == is_smooth7(n));
    if (n >= 2) CHECK(smooth_candidates(n, 7) == smooth7_candidates(n));
    // n is 13-smooth iff dividing out every prime up to 13 leaves 1
    int64_t m = n;
    for (int64_t q : {2, 3, 5, 7, 11, 13})
      while (m % q == 0) m /= q;
    CHECK(is_smooth(n, 13) == (m == 1));
  }
  CHECK_FALSE(is_smooth(0, 13));
  CHECK_FALSE(is_smooth(17, 13));
}

TEST_CASE("flop estimates prefer nicer radices") {
  CHECK(fft_flops_1d(16) / 16 < fft_flops_1d(15) / 15 * 1.2);
  CHECK(fft_flops_1d(13) / 13 > fft_flops_1d(14) / 14);
  CHECK(rfft2_flops(16, 16) > 0);
}
