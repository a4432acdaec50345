// FFT self-tests in the style of FFTW's verifier (Ergün's randomized tests): linearity, impulse
// response and time shift on random data, over any forward transform of a batch of 2-D signals.
// FFTW float/double adapters live here; the GPU code wraps cuFFT and fbfft into the same callable.
#pragma once
#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/backend.hpp"

namespace fftconv {

// A batch of `batch` signals of nh×nw (use nh = 1 for 1-D). real_input: the transform is R2C and
// returns the nw/2+1 non-redundant columns.
struct FftShape {
  int64_t batch = 1, nh = 1, nw = 1;
  bool real_input = false;
  int64_t in_elems() const { return batch * nh * nw; }
  int64_t out_cols() const { return real_input ? nw / 2 + 1 : nw; }
  int64_t out_elems() const { return batch * nh * out_cols(); }
  std::string to_string() const;
};

// The transform under test: forward, unnormalized, kernel exp(-2πi(u·y/nh + v·x/nw)).
// in: batch×nh×nw row-major (imaginary parts 0 when real_input); out: batch×nh×out_cols, already
// sized by the caller. Values are given in double; the callable rounds them to its own precision.
using ForwardBatch =
    std::function<void(const std::vector<std::complex<double>>& in, std::vector<std::complex<double>>& out)>;

struct SelfTestResult {
  std::string test;   // "linearity" | "impulse" | "time shift"
  double error = 0;   // normwise relative error of the identity
  double tol = 0;     // fft_tolerance(precision, nh·nw) (Note [fft self-test tolerance])
  bool ok() const { return error <= tol; }  // false for NaN
};

// Runs the three tests once each on fresh data drawn from `seed`; inputs are rounded to `precision`
// before use, so the identities hold to the transform's own roundoff.
std::vector<SelfTestResult> fft_selftest(const FftShape& shape, DType precision, const ForwardBatch& forward,
                                         uint64_t seed);

// FFTW forward transforms (fftw_plan_many_dft / _r2c, FFTW_ESTIMATE) in float or double.
ForwardBatch fftw_forward(const FftShape& shape, DType precision);

// The shapes the FFTW self-tests cover: powers of two, smooth and prime lengths, 1-D and 2-D.
std::vector<FftShape> selftest_shapes();

}  // namespace fftconv
