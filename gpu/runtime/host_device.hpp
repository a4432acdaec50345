// FFTCONV_HD: a function the device kernels and the host tests both run (inlined on both sides);
// plain inline where the compiler is not nvcc.
#pragma once

#if defined(__CUDACC__)
#define FFTCONV_HD __host__ __device__ __forceinline__
#else
#define FFTCONV_HD inline
#endif
