// Normwise error statistics (see compare.hpp).
#include "validation/compare.hpp"

#include <cmath>
#include <limits>

namespace fftconv {

template <class T>
ErrorStats compare(const T* out, const double* ref, int64_t n) {
  ErrorStats e;
  double num = 0, den = 0, maxd = 0, maxr = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double o = double(out[i]), r = ref[i];
    if (!std::isfinite(r)) { ++e.ref_nonfinite; continue; }
    if (!std::isfinite(o)) { ++e.nonfinite; continue; }
    const double d = o - r;
    num += d * d;
    den += r * r;
    maxd = std::max(maxd, std::abs(d));
    maxr = std::max(maxr, std::abs(r));
  }
  e.ref_norm = std::sqrt(den);
  e.rel_l2 = den > 0 ? std::sqrt(num / den) : (num > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  e.max_abs_rel = maxr > 0 ? maxd / maxr : (maxd > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  if (e.nonfinite > 0 && e.ref_nonfinite == 0) {
    e.rel_l2 = std::numeric_limits<double>::infinity();
    e.max_abs_rel = std::numeric_limits<double>::infinity();
  }
  return e;
}

template ErrorStats compare<float>(const float*, const double*, int64_t);
template ErrorStats compare<double>(const double*, const double*, int64_t);

}  // namespace fftconv
