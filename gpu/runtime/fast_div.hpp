// Division by a divisor fixed at run time, for the index arithmetic of device kernels.
#pragma once
#include <cstdint>

#include "gpu/runtime/host_device.hpp"

namespace fftconv {

// n / d for any 32-bit n by one multiply-high and two shifts (Granlund & Montgomery, "Division by
// invariant integers using multiplication", 1994, Fig. 4.1): l = ceil(log2 d),
// m = floor(2^32 (2^l - d) / d) + 1, t = mulhi(m, n), n / d = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0).
struct FastDiv {
  uint32_t d = 1, mul = 1, s1 = 0, s2 = 0;

  static FastDiv make(uint32_t divisor) {
    FastDiv f;
    f.d = divisor == 0 ? 1 : divisor;
    uint32_t l = 0;
    while ((uint64_t(1) << l) < f.d) ++l;
    f.mul = uint32_t((((uint64_t(1) << l) - f.d) << 32) / f.d + 1);
    f.s1 = l < 1 ? l : 1;
    f.s2 = l > 1 ? l - 1 : 0;
    return f;
  }
  FFTCONV_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(mul, n);
#else
    const uint32_t t = uint32_t((uint64_t(mul) * n) >> 32);
#endif
    return (t + ((n - t) >> s1)) >> s2;
  }
};

// A FastDiv behind an int64 interface (x / d as div(x), the divisor as d), for index arithmetic
// written over int64 (common/lowering.hpp's LoweringDivisors): exact for 0 <= x < 2^32.
struct IndexDiv {
  FastDiv f;
  int64_t d = 1;
  static IndexDiv make(int64_t divisor) { return {FastDiv::make(uint32_t(divisor)), divisor}; }
  FFTCONV_HD int64_t div(int64_t x) const { return int64_t(f.div(uint32_t(x))); }
};

}  // namespace fftconv
