// The cufft pipeline's cuFFT callbacks (Note [cufft callbacks]), compiled to LTO-IR (not into the
// library): gpu/CMakeLists.txt turns this file into a fatbin embedded as a byte array, and cuFFT links
// the callbacks into its own kernels at plan time (cufftXtSetJITCallback). The index maps are in
// cufft_callbacks.hpp; callerInfo is the plan's cufft_cb::Params.
#include <cufftXt.h>

#include "gpu/cufft/cufft_callbacks.hpp"

using fftconv::cufft_cb::Params;

// R2C load: the padded operand read straight from the unpadded tensor.
__device__ cufftReal fftconv_cb_load_padded(void*, unsigned long long offset, void* info, void*) {
  const Params& p = *static_cast<const Params*>(info);
  const int64_t s = fftconv::cufft_cb::load_source(p, uint32_t(offset));
  return s < 0 ? 0.0f : __ldg(p.src + s);
}

// C2R load: the products' frequency-major spectra read for the inverse.
__device__ cufftComplex fftconv_cb_load_freq_major(void*, unsigned long long offset, void* info, void*) {
  const Params& p = *static_cast<const Params*>(info);
  return reinterpret_cast<const cufftComplex*>(p.spectra)[fftconv::cufft_cb::freq_major(p, uint32_t(offset))];
}

// C2R store: the kept window, scaled by 1/(nh*nw), written to the result tensor; the rest dropped.
__device__ void fftconv_cb_store_clipped(void*, unsigned long long offset, cufftReal v, void* info, void*) {
  const Params& p = *static_cast<const Params*>(info);
  const int64_t t = fftconv::cufft_cb::clip_target(p, uint32_t(offset));
  if (t >= 0) p.dst[t] = v * p.scale;
}

// R2C store (depthwise): each spectrum element times its channel's kernel spectrum, in place.
__device__ void fftconv_cb_store_channel_product(void* out, unsigned long long offset, cufftComplex v, void* info,
                                                 void*) {
  const Params& p = *static_cast<const Params*>(info);
  const float2 k = __ldg(reinterpret_cast<const float2*>(p.kernel) + fftconv::cufft_cb::channel_spectrum(p, uint32_t(offset)));
  const float ki = p.conj_kernel ? -k.y : k.y;
  static_cast<cufftComplex*>(out)[offset] = make_cuComplex(v.x * k.x - v.y * ki, v.x * ki + v.y * k.x);
}
