// The fused depthwise kernels of the sides up to 32 (reg_2d.cuh, Note [fused depthwise transforms]),
// the dispatch over every side, and accGrad's per-channel product sum.
#include <algorithm>
#include <string>

#include "common/errors.hpp"
#include "gpu/fft/reg_2d.cuh"

namespace fftconv::fbfft {
namespace detail {
const reg2d::DepthwiseLauncher* launchers_depthwise_medium();
const reg2d::DepthwiseLauncher* launchers_depthwise_large();
namespace {
constexpr auto kTable = reg2d::depthwise_table<0, reg2d::kDepthwiseMedium>();

constexpr int kProductThreads = 256;
constexpr unsigned kMaxGridY = 65535;

__global__ void weight_products_kernel(const float2* __restrict__ x, const float2* __restrict__ g, int64_t images,
                                       int64_t channels, int freqs, float2* __restrict__ out) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= freqs) return;
  for (int64_t c = blockIdx.y; c < channels; c += gridDim.y) {
    float re = 0.f, im = 0.f;
    for (int64_t s = 0; s < images; ++s) {
      const int64_t i = (s * channels + c) * freqs + q;
      const float2 a = x[i], b = g[i];
      re += a.x * b.x + a.y * b.y;
      im += a.y * b.x - a.x * b.y;
    }
    out[c * freqs + q] = make_float2(re, im);
  }
}
}  // namespace
}  // namespace detail

void depthwise(const DepthwiseArgs& a, cudaStream_t stream) {
  validate(a);
  if (a.batch == 0) return;
  DepthwiseArgs b = a;
  b.in.batch = b.out.batch = a.batch;
  b.in.output = nullptr, b.out.input = nullptr;
  const auto k = static_cast<std::size_t>(depthwise_side_index(a.in.n_h));
  using namespace detail::reg2d;
  if (k < kDepthwiseMedium) detail::kTable[k](b, stream);
  else if (k < kDepthwiseLarge) detail::launchers_depthwise_medium()[k - kDepthwiseMedium](b, stream);
  else detail::launchers_depthwise_large()[k - kDepthwiseLarge](b, stream);
}

void depthwise_weight_products(const float2* x, const float2* g, int64_t images, int64_t channels, int64_t freqs,
                               float2* out, cudaStream_t stream) {
  if (images < 0 || channels < 0 || freqs < 0 || freqs > int64_t(0x7fffffff))
    throw InvalidArgument("fbfft: depthwise_weight_products: images=" + std::to_string(images) + ", channels=" +
                          std::to_string(channels) + ", freqs=" + std::to_string(freqs) + " out of range");
  if (channels == 0 || freqs == 0) return;
  const dim3 grid(unsigned((freqs + detail::kProductThreads - 1) / detail::kProductThreads),
                  unsigned(std::min<int64_t>(channels, detail::kMaxGridY)));
  detail::weight_products_kernel<<<grid, detail::kProductThreads, 0, stream>>>(x, g, images, channels, int(freqs), out);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

}  // namespace fftconv::fbfft
