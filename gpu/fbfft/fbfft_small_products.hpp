// The products of few input channels as kernels that bypass the CGEMM (Note [small-K products]): the
// fprop's, written plane by plane for the standard-layout inverse, and bprop's and accGrad's, which
// read gradOutput's spectra plane by plane.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "common/problem.hpp"

namespace fftconv::fbfft_conv {

// The most input channels the kernel sums (its operand rows live in registers).
inline constexpr int kMaxSmallK = 4;

// c[(s*m + j)*freqs + q] = sum_{i<k} x[q*ld_x + s*k + i] conj(w[q*ld_w + j*k + i]) for s < images,
// j < m, q < freqs: the fprop product (Note [fbfft CGEMM without transpositions]) from freq_major
// operands into the standard layout [plane][freq].
struct SmallProducts {
  const float2* x = nullptr;
  const float2* w = nullptr;
  float2* c = nullptr;
  int64_t ld_x = 0, ld_w = 0;
  int64_t images = 0, m = 0, freqs = 0;
  int k = 0;
};

// Throws InvalidArgument naming the field for k outside 1..kMaxSmallK, short strides or null
// pointers; CudaError on a failed launch.
void small_k_products(const SmallProducts& a, cudaStream_t stream);

// c[(r*k + i)*c_plane + q*c_freq] (+)= sum_{t<red} g'[(r*g_row + t*g_red)*freqs + q] b[q*ld_b + t*k + i]
// for r < rows, i < k, q < freqs, with g' = conj(g) when conj_g: gradOutput's spectra g in the standard
// layout against a freq_major operand of k <= kMaxSmallK columns. bprop: r = image, t = output channel,
// b = the weight spectra; accGrad: r = output channel, t = image, b = the input spectra, conj_g.
struct SmallGradProducts {
  const float2* g = nullptr;
  const float2* b = nullptr;
  float2* c = nullptr;
  int64_t g_row = 0, g_red = 0, ld_b = 0, c_plane = 0, c_freq = 0;
  int64_t rows = 0, red = 0, freqs = 0;
  int k = 0;
  bool conj_g = false, accumulate = false;
};

// Throws like small_k_products (fields rows, red, ld_b, g_row, g_red, c_plane, c_freq).
void small_k_grad_products(const SmallGradProducts& a, cudaStream_t stream);

// A pass's arguments on the fbfft pipeline's spectra of `images` images, f input and fo output
// channels: the input spectra freq_major at frequency stride ld_in ([freq][s*f + i]), the weight
// spectra freq_major ([freq][o*f + i]) and gradOutput's in the standard layout ([s*fo + o][freq]).
// fprop: c = [s*fo + o][freq]. bprop (b = the weights): c = [s*f + i][freq]. accGrad (b = the input):
// c = [freq][o*f + i], added to when accumulate.
inline SmallProducts fprop_small_products(const float2* x, const float2* w, float2* c, int64_t images, int64_t ld_in,
                                          int64_t f, int64_t fo, int64_t freqs) {
  SmallProducts a;
  a.x = x, a.w = w, a.c = c, a.ld_x = ld_in, a.ld_w = fo * f, a.images = images, a.m = fo, a.freqs = freqs;
  a.k = static_cast<int>(f);
  return a;
}

inline SmallGradProducts grad_small_products(Pass pass, const float2* g, const float2* b, float2* c, int64_t images,
                                             int64_t ld_in, int64_t f, int64_t fo, int64_t freqs, bool accumulate) {
  SmallGradProducts a;
  a.g = g, a.b = b, a.c = c, a.freqs = freqs, a.k = static_cast<int>(f), a.accumulate = accumulate;
  if (pass == Pass::bprop) {
    a.rows = images, a.red = fo, a.g_row = fo, a.g_red = 1, a.ld_b = fo * f, a.c_plane = freqs, a.c_freq = 1;
  } else {
    a.rows = fo, a.red = images, a.g_row = 1, a.g_red = fo, a.ld_b = ld_in, a.c_plane = 1, a.c_freq = fo * f;
    a.conj_g = true;
  }
  return a;
}

}  // namespace fftconv::fbfft_conv
