// What the cufft pipeline's cuFFT callbacks compute (Note [cufft callbacks]): the index maps of the
// padding load, the clipping store and the frequency-major spectra, as plain host/device functions so
// that host unit tests check them against the copy kernels' definitions, and the parameter block that
// cuFFT hands to every callback. The callbacks themselves are in cufft_callbacks_lto.cu (LTO-IR).
#pragma once
#include <cstdint>

#include "gpu/runtime/fast_div.hpp"
#include "gpu/runtime/host_device.hpp"

namespace fftconv::cufft_cb {

// The parameter block of one cuFFT plan's callbacks (device memory owned by the pipeline; cuFFT
// passes its address as callerInfo). Offsets that cuFFT hands over are element offsets into the
// plan's logical arrays: real planes [plane][nh][ld] (the in-place R2C layout, ld = 2(nw/2+1)) and
// spectra [plane][F] with F = nh(nw/2+1) frequencies. Every logical array is < 2^32 elements.
struct Params {
  // Padding load (R2C): source planes h×w (dense, planes consecutive), placed at (ph, pw) of the
  // basis, zeros or reflection (mirror) around them, zeros beyond the padded extent.
  const float* src = nullptr;
  int32_t h = 0, w = 0, ph = 0, pw = 0, mirror = 0;
  FastDiv plane;  // nh*ld: real elements per plane
  FastDiv row;    // ld: real elements per row
  // Frequency-major spectra (C2R load): element (plane, k) lives at spectra[k*planes + plane].
  float* spectra = nullptr;  // complex values as float pairs
  uint32_t planes = 0;
  FastDiv freq;  // F
  // Clipping store (C2R): dst plane (out_h×out_w, dense) = scale × the window at (off_h, off_w).
  float* dst = nullptr;
  int32_t out_h = 0, out_w = 0, off_h = 0, off_w = 0;
  float scale = 1.0f;
  // Channel product (depthwise R2C store, Note [depthwise products]): spectrum element plane*F + k
  // times its channel's kernel spectrum kernel[(plane mod C)*F + k], conjugated when conj_kernel.
  const float* kernel = nullptr;  // complex values as float pairs
  FastDiv channels;               // C
  int32_t conj_kernel = 0;
};

// Source element of the padding load at real offset `o`, or -1 where the basis reads a zero. The same
// map as gpu_kernels::embed_planes (padded_source of common/padding.hpp).
FFTCONV_HD int64_t load_source(const Params& p, uint32_t o) {
  const uint32_t plane = p.plane.div(o), e = o - plane * p.plane.d;
  const uint32_t y = p.row.div(e), x = e - y * p.row.d;
  int32_t sy = int32_t(y) - p.ph, sx = int32_t(x) - p.pw;
  if (p.mirror) {
    if (int32_t(y) >= p.h + 2 * p.ph || int32_t(x) >= p.w + 2 * p.pw) return -1;
    sy = sy < 0 ? -sy : sy;
    sy = sy >= p.h ? 2 * (p.h - 1) - sy : sy;
    sx = sx < 0 ? -sx : sx;
    sx = sx >= p.w ? 2 * (p.w - 1) - sx : sx;
  } else if (sy < 0 || sy >= p.h || sx < 0 || sx >= p.w) {
    return -1;
  }
  return (int64_t(plane) * p.h + sy) * p.w + sx;
}

// Destination element of the clipping store at real offset `o`, or -1 where the value is dropped.
// The same crop as gpu_kernels::clip_planes without the mirror fold.
FFTCONV_HD int64_t clip_target(const Params& p, uint32_t o) {
  const uint32_t plane = p.plane.div(o), e = o - plane * p.plane.d;
  const uint32_t y = p.row.div(e), x = e - y * p.row.d;
  const int32_t r = int32_t(y) - p.off_h, c = int32_t(x) - p.off_w;
  if (r < 0 || r >= p.out_h || c < 0 || c >= p.out_w) return -1;
  return (int64_t(plane) * p.out_h + r) * p.out_w + c;
}

// Frequency-major position (in complex elements) of spectrum offset `o` = plane*F + k.
FFTCONV_HD int64_t freq_major(const Params& p, uint32_t o) {
  const uint32_t plane = p.freq.div(o), k = o - plane * p.freq.d;
  return int64_t(k) * p.planes + plane;
}

// Kernel spectrum element (in complex elements) of spectrum offset `o` = plane*F + k: (plane mod C)*F + k.
FFTCONV_HD int64_t channel_spectrum(const Params& p, uint32_t o) {
  const uint32_t plane = p.freq.div(o), k = o - plane * p.freq.d;
  const uint32_t c = plane - p.channels.div(plane) * p.channels.d;
  return int64_t(c) * p.freq.d + k;
}

}  // namespace fftconv::cufft_cb
