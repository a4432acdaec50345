// Complex arithmetic on float2 for the fbfft transforms, on the device and in the host tests of the
// code they share (stockham.cuh).
#pragma once
#include <cuda_runtime.h>

#include "gpu/runtime/host_device.hpp"

namespace fftconv::fbfft::detail {

FFTCONV_HD float2 cadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
FFTCONV_HD float2 csub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
FFTCONV_HD float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
FFTCONV_HD float2 cmulconj(float2 a, float2 b) {  // a * conj(b)
  return make_float2(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
}
FFTCONV_HD float2 conjf2(float2 a) { return make_float2(a.x, -a.y); }

}  // namespace fftconv::fbfft::detail
