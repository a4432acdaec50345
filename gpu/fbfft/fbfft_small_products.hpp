// The fprop products of few input channels as one kernel that writes the product spectra plane by
// plane, for the standard-layout inverse (Note [small-K products]).
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

}  // namespace fftconv::fbfft_conv
