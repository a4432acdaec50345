// The products of few input channels as kernels that bypass the CGEMM (Note [small-K products]): the
// fprop's, written plane by plane for the standard-layout inverse, and bprop's and accGrad's, which
// read gradOutput's spectra plane by plane.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

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

}  // namespace fftconv::fbfft_conv
