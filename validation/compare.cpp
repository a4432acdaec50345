// Normwise error statistics (see compare.hpp).
#include "validation/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fftconv {

ErrorStats error_stats(const ErrorSums& s) {
  ErrorStats e;
  e.nonfinite = s.nonfinite;
  e.ref_nonfinite = s.ref_nonfinite;
  e.ref_norm = std::sqrt(s.sq_ref);
  e.diff_norm = std::sqrt(s.sq_diff);
  e.max_diff = s.max_diff;
  const double inf = std::numeric_limits<double>::infinity();
  if (e.nonfinite > 0 && e.ref_nonfinite == 0) {
    e.rel_l2 = e.max_abs_rel = inf;
    return e;
  }
  e.rel_l2 = s.sq_ref > 0 ? std::sqrt(s.sq_diff / s.sq_ref) : (s.sq_diff > 0 ? inf : 0.0);
  e.max_abs_rel = s.max_ref > 0 ? s.max_diff / s.max_ref : (s.max_diff > 0 ? inf : 0.0);
  return e;
}

template <class T>
ErrorStats compare(const T* out, const double* ref, int64_t n) {
  ErrorSums s;
  for (int64_t i = 0; i < n; ++i) {
    const double o = double(out[i]), r = ref[i];
    if (!std::isfinite(r)) { ++s.ref_nonfinite; continue; }
    if (!std::isfinite(o)) { ++s.nonfinite; continue; }
    const double d = o - r;
    s.sq_diff += d * d;
    s.sq_ref += r * r;
    s.max_diff = std::max(s.max_diff, std::abs(d));
    s.max_ref = std::max(s.max_ref, std::abs(r));
  }
  return error_stats(s);
}

template ErrorStats compare<float>(const float*, const double*, int64_t);
template ErrorStats compare<double>(const double*, const double*, int64_t);

}  // namespace fftconv
