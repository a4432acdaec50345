// The FFT self-tests on FFTW (float and double), and proof that they catch broken transforms.
#include <doctest/doctest.h>

#include <random>

#include "validation/fft_selftest.hpp"

using namespace fftconv;

TEST_CASE("FFTW passes linearity, impulse and time-shift self-tests in float and double") {
  std::random_device rd;
  for (DType d : {DType::f32, DType::f64})
    for (const FftShape& s : selftest_shapes()) {
      const auto results = fft_selftest(s, d, fftw_forward(s, d), rd());
      REQUIRE(results.size() == 3);
      for (const auto& r : results) {
        INFO(to_string(d), " ", s.to_string(), " ", r.test, " error=", r.error, " tol=", r.tol);
        CHECK(r.ok());
      }
    }
}

TEST_CASE("the self-tests reject broken transforms") {
  const FftShape s{2, 8, 12, true};
  const ForwardBatch good = fftw_forward(s, DType::f64);
  using V = std::vector<std::complex<double>>;
  // One wrong output element (the last frequency of the last signal): linearity still holds
  // only if the error is linear, so make it depend on the data non-linearly.
  const ForwardBatch spoiled = [&](const V& in, V& out) {
    good(in, out);
    out.back() += 1e-3 * std::norm(in[0]) + 1e-3;
  };
  // Opposite sign convention (an inverse transform): fails impulse and shift.
  const ForwardBatch conjugated = [&](const V& in, V& out) {
    good(in, out);
    for (auto& v : out) v = std::conj(v);
  };
  // Drops the last signal of the batch (left NaN).
  const ForwardBatch short_batch = [&](const V& in, V& out) {
    good(in, out);
    for (std::size_t i = out.size() / 2; i < out.size(); ++i) out[i] = std::complex<double>(std::nan(""), 0);
  };
  for (const auto* f : {&spoiled, &conjugated, &short_batch}) {
    int failed = 0;
    for (const auto& r : fft_selftest(s, DType::f64, *f, 99)) failed += r.ok() ? 0 : 1;
    CHECK(failed >= 1);
  }
  int failed = 0;
  for (const auto& r : fft_selftest(s, DType::f64, conjugated, 5)) failed += r.ok() ? 0 : 1;
  CHECK(failed >= 2);
}
