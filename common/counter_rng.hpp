// A counter-based standard normal generator shared by the host and the device: element i of a
// tensor drawn with `seed` depends only on (seed, i), so host threads, GPU threads and the number of
// either never change the values (validation/ draws sweep operands with it on whichever side the
// backends run). Box–Muller over splitmix64 of the seed and the pair index, computed in double.
// Host and device libm may differ in the last bit of log/sin/cos; after rounding to float the
// two sides agree except in rare last-bit cases.
#pragma once
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define FFTCONV_HOST_DEVICE __host__ __device__
#else
#define FFTCONV_HOST_DEVICE
#endif

namespace fftconv {

FFTCONV_HOST_DEVICE inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The key of a tensor drawn with `seed` (pass it to normal_pair for every pair index).
FFTCONV_HOST_DEVICE inline uint64_t normal_key(uint64_t seed) { return splitmix64(seed); }

// Elements 2*pair and 2*pair+1 of the tensor with key `key`.
FFTCONV_HOST_DEVICE inline void normal_pair(uint64_t key, int64_t pair, float& first, float& second) {
  const uint64_t r = splitmix64(key ^ splitmix64(uint64_t(pair)));
  // Two 32-bit uniforms in (0, 1] and [0, 1).
  const double u1 = (double(r >> 32) + 1.0) * 0x1p-32, u2 = double(r & 0xffffffffULL) * 0x1p-32;
  const double rad = sqrt(-2.0 * log(u1)), t = 6.283185307179586 * u2;
  first = float(rad * cos(t));
  second = float(rad * sin(t));
}

}  // namespace fftconv
