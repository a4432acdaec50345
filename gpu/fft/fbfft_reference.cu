// Direct-DFT twins of the fbfft kernels (same ForwardArgs / InverseArgs contract, any sizes):
// one thread per output element, exact integer phase reduction, double accumulation. For tests.
#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft.hpp"

namespace fftconv::fbfft {
namespace {

constexpr int kRefThreads = 128;

// exp(sign * 2 pi i (a / n_h + b / n_w)) with a < n_h, b < n_w reduced exactly.
__device__ double2 phase(int64_t a, int n_h, int64_t b, int n_w, double sign) {
  const double t = static_cast<double>(a) / n_h + static_cast<double>(b) / n_w;
  double s, c;
  sincospi(sign * 2.0 * t, &s, &c);
  return make_double2(c, s);
}

__global__ void forward_reference_kernel(ForwardArgs a) {
  const int nw2 = a.n_w / 2 + 1;
  const int64_t per_plane = static_cast<int64_t>(a.n_h) * nw2;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < a.batch * per_plane;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t plane = e / per_plane;
    const int kh = static_cast<int>((e % per_plane) / nw2), kw = static_cast<int>(e % nw2);
    double re = 0, im = 0;
    for (int y = 0; y < a.n_h; ++y) {
      const int64_t yy = y - a.off_h;
      if (yy < 0 || yy >= a.in_h) continue;
      for (int x = 0; x < a.n_w; ++x) {
        const int64_t xx = x - a.off_w;
        if (xx < 0 || xx >= a.in_w) continue;
        const double v = a.input[plane * a.in_plane_stride + yy * a.in_ld + xx];
        const double2 w = phase((int64_t(kh) * y) % a.n_h, a.n_h, (int64_t(kw) * x) % a.n_w, a.n_w, -1.0);
        re += v * w.x;
        im += v * w.y;
      }
    }
    a.output[freq_offset(a.layout, plane, kh, kw, a.n_h, nw2, ldb)] =
        make_float2(static_cast<float>(re), static_cast<float>(im));
  }
}

__global__ void inverse_reference_kernel(InverseArgs a) {
  const int nw2 = a.n_w / 2 + 1;
  const int64_t per_plane = a.out_h * a.out_w;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < a.batch * per_plane;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t plane = e / per_plane;
    const int64_t oy = (e % per_plane) / a.out_w, ox = e % a.out_w;
    const int64_t y = oy + a.out_off_h, x = ox + a.out_off_w;
    double sum = 0;
    for (int kh = 0; kh < a.n_h; ++kh) {
      for (int kw = 0; kw < nw2; ++kw) {
        const float2 z = a.input[freq_offset(a.layout, plane, kh, kw, a.n_h, nw2, ldb)];
        const double2 w = phase((kh * y) % a.n_h, a.n_h, (kw * x) % a.n_w, a.n_w, 1.0);
        const double c = (kw == 0 || 2 * kw == a.n_w) ? 1.0 : 2.0;
        sum += c * (static_cast<double>(z.x) * w.x - static_cast<double>(z.y) * w.y);
      }
    }
    a.output[plane * a.out_plane_stride + oy * a.out_ld + ox] = static_cast<float>(sum * a.scale);
  }
}

int reference_blocks(int64_t elements) {
  const int64_t b = (elements + kRefThreads - 1) / kRefThreads;
  return static_cast<int>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

}  // namespace

void forward_reference(const ForwardArgs& a, cudaStream_t stream) {
  validate(a);
  if (a.batch == 0) return;
  forward_reference_kernel<<<reference_blocks(a.batch * a.n_h * (a.n_w / 2 + 1)), kRefThreads, 0, stream>>>(a);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void inverse_reference(const InverseArgs& a, cudaStream_t stream) {
  validate(a);
  if (a.batch == 0 || a.out_h == 0 || a.out_w == 0) return;
  inverse_reference_kernel<<<reference_blocks(a.batch * a.out_h * a.out_w), kRefThreads, 0, stream>>>(a);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

}  // namespace fftconv::fbfft
