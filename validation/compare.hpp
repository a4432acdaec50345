// Normwise comparison of a result with a float64 reference: rel_l2 = ||out-ref||/||ref||,
// max_abs_rel = max|out-ref| / max|ref|, plus counts of non-finite values.
#pragma once
#include <cstdint>
#include <vector>

namespace fftconv {

struct ErrorStats {
  double rel_l2 = 0, max_abs_rel = 0;
  int64_t nonfinite = 0;       // non-finite values in out
  int64_t ref_nonfinite = 0;   // non-finite values in the reference
  double ref_norm = 0;         // ||ref||_2 over finite entries
  double diff_norm = 0;        // ||out - ref||_2 over finite pairs
  double max_diff = 0;         // max |out - ref| over finite pairs
  bool finite_ok() const { return nonfinite == 0 || ref_nonfinite > 0; }
};

// The raw sums a comparison accumulates over finite pairs (on the host here, on the device in
// gpu/sweep_ops), and the statistics they give.
struct ErrorSums {
  double sq_diff = 0, sq_ref = 0, max_diff = 0, max_ref = 0;
  int64_t nonfinite = 0, ref_nonfinite = 0;
};
ErrorStats error_stats(const ErrorSums& s);

template <class T>
ErrorStats compare(const T* out, const double* ref, int64_t n);

extern template ErrorStats compare<float>(const float*, const double*, int64_t);
extern template ErrorStats compare<double>(const double*, const double*, int64_t);

// Inner product in double (adjoint identity checks).
template <class A, class B>
double dot(const A* a, const B* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(a[i]) * double(b[i]);
  return s;
}

}  // namespace fftconv
