// Device-side helpers of the validation sweep (validation/), so that a sweep of GPU backends keeps
// every operand, result and reference on the device: seeded normal operands (the same generator as
// the host, common/counter_rng.hpp), NaN poison, and the normwise error sums and inner products,
// reduced in double in a fixed order (the same inputs always give the same bits).
// Pointers are device pointers. Fills are enqueued on the legacy default stream (so they precede any
// later work on it or on a blocking stream); the reductions return their result, complete.
#pragma once
#include <cstdint>

namespace fftconv {

// x[i] = element i of the standard normal tensor drawn with `seed` (common/counter_rng.hpp).
void fill_normal_device(float* x, int64_t n, uint64_t seed);
// x[i] = quiet NaN (the poison that marks unwritten result elements).
void fill_nan_device(float* x, int64_t n);

// Raw sums of compare(out, ref) over finite pairs (validation/compare.hpp turns them into ErrorStats):
// sums = {Σ(out-ref)², Σref², max|out-ref|, max|ref|}, counts = {non-finite out (finite ref),
// non-finite ref}.
struct DeviceErrorSums {
  double sums[4] = {0, 0, 0, 0};
  int64_t counts[2] = {0, 0};
};
DeviceErrorSums error_sums_device(const float* out, const double* ref, int64_t n);

// Σ a[i]·b[i] in double (b may equal a for a squared norm).
double dot_device(const float* a, const float* b, int64_t n);

}  // namespace fftconv
