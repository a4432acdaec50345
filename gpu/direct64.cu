// Direct convolution on the GPU in double (see direct64.hpp): naive kernels, one thread per result
// element, the same index maps as the CPU `direct` (common/padding.hpp).
#include "gpu/direct64.hpp"

#include <algorithm>

#include "common/padding.hpp"
#include "gpu/cuda_check.hpp"

namespace fftconv {

namespace {

constexpr int kBlock = 256;

// The problem's sizes as plain device-side data (ConvProblem's members are host functions).
struct Geometry {
  int64_t S, f, fo, h, w, kh, kw, ph, pw, oh, ow;
  Padding padding;
  __device__ int64_t out_h() const { return oh; }
  __device__ int64_t out_w() const { return ow; }
};
Geometry geometry(const ConvProblem& p) {
  return {p.S, p.f, p.fo, p.h, p.w, p.kh, p.kw, p.ph, p.pw, p.out_h(), p.out_w(), p.padding};
}

__device__ double padded_input(const float* x, const Geometry& p, int64_t s, int64_t i, int64_t y, int64_t xx) {
  const int64_t r = padded_source(y, p.h, p.ph, p.padding), c = padded_source(xx, p.w, p.pw, p.padding);
  if (r < 0 || c < 0) return 0.0;
  return double(x[((s * p.f + i) * p.h + r) * p.w + c]);
}

// out[s][j][y][x] = sum_{i,u,v} xpad[s][i][y+u][x+v] * w[j][i][u][v]
__global__ void fprop_kernel(Geometry p, const float* x, const float* w, double* out) {
  const int64_t oh = p.out_h(), ow = p.out_w(), n = p.S * p.fo * oh * ow;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t xo = e % ow, yo = (e / ow) % oh, j = (e / (ow * oh)) % p.fo, s = e / (ow * oh * p.fo);
    double acc = 0;
    for (int64_t i = 0; i < p.f; ++i)
      for (int64_t u = 0; u < p.kh; ++u)
        for (int64_t v = 0; v < p.kw; ++v)
          acc += padded_input(x, p, s, i, yo + u, xo + v) * double(w[((j * p.f + i) * p.kh + u) * p.kw + v]);
    out[e] = acc;
  }
}

// The padded-grid gradient at (yy, xx): gpad[s][i][yy][xx] = sum_{j,u,v} g[s][j][yy-u][xx-v] * w[j][i][u][v].
__device__ double padded_grad(const Geometry& p, const float* g, const float* w, int64_t s, int64_t i, int64_t yy,
                              int64_t xx) {
  const int64_t oh = p.out_h(), ow = p.out_w();
  double acc = 0;
  for (int64_t j = 0; j < p.fo; ++j)
    for (int64_t u = 0; u < p.kh; ++u) {
      const int64_t y = yy - u;
      if (y < 0 || y >= oh) continue;
      for (int64_t v = 0; v < p.kw; ++v) {
        const int64_t x = xx - v;
        if (x < 0 || x >= ow) continue;
        acc += double(g[((s * p.fo + j) * oh + y) * ow + x]) * double(w[((j * p.f + i) * p.kh + u) * p.kw + v]);
      }
    }
  return acc;
}

// Padded positions of one axis whose source is r (Note [bprop padding adjoint]): the copy, and for
// mirror padding the reflections on either side. Returns how many were written to pos.
__device__ int padded_positions(int64_t r, int64_t n, int64_t pad, Padding mode, int64_t pos[3]) {
  const int64_t cand[3] = {r + pad, pad - r, pad + 2 * (n - 1) - r};
  int count = 0;
  for (int k = 0; k < (mode == Padding::zero ? 1 : 3); ++k) {
    const int64_t q = cand[k];
    if (q < 0 || q >= n + 2 * pad || padded_source(q, n, pad, mode) != r) continue;
    bool dup = false;
    for (int m = 0; m < count; ++m) dup = dup || pos[m] == q;
    if (!dup) pos[count++] = q;
  }
  return count;
}

// gradInput[s][i][r][c] = sum over padded positions (yy, xx) with source (r, c) of gpad[s][i][yy][xx].
__global__ void bprop_kernel(Geometry p, const float* g, const float* w, double* out) {
  const int64_t n = p.S * p.f * p.h * p.w;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = e % p.w, r = (e / p.w) % p.h, i = (e / (p.w * p.h)) % p.f, s = e / (p.w * p.h * p.f);
    int64_t ys[3], xs[3];
    const int ny = padded_positions(r, p.h, p.ph, p.padding, ys), nx = padded_positions(c, p.w, p.pw, p.padding, xs);
    double acc = 0;
    for (int a = 0; a < ny; ++a)
      for (int b = 0; b < nx; ++b) acc += padded_grad(p, g, w, s, i, ys[a], xs[b]);
    out[e] = acc;
  }
}

// gw[j][i][u][v] = sum_{s,y,x} xpad[s][i][y+u][x+v] * g[s][j][y][x]
__global__ void accgrad_kernel(Geometry p, const float* x, const float* g, double* out) {
  const int64_t oh = p.out_h(), ow = p.out_w(), n = p.fo * p.f * p.kh * p.kw;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = e % p.kw, u = (e / p.kw) % p.kh, i = (e / (p.kw * p.kh)) % p.f, j = e / (p.kw * p.kh * p.f);
    double acc = 0;
    for (int64_t s = 0; s < p.S; ++s)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo)
          acc += padded_input(x, p, s, i, y + u, xo + v) * double(g[((s * p.fo + j) * oh + y) * ow + xo]);
    out[e] = acc;
  }
}

unsigned grid_for(int64_t n) {
  return unsigned(std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, int64_t(1) << 20));
}

}  // namespace

void direct64_pass_device(const ConvProblem& p, Pass pass, const float* input, const float* weight,
                          const float* grad_output, double* result, void* stream) {
  p.validate();
  auto st = static_cast<cudaStream_t>(stream);
  const int64_t n = p.result_elems(pass);
  const Geometry g = geometry(p);
  switch (pass) {
    case Pass::fprop: fprop_kernel<<<grid_for(n), kBlock, 0, st>>>(g, input, weight, result); break;
    case Pass::bprop: bprop_kernel<<<grid_for(n), kBlock, 0, st>>>(g, grad_output, weight, result); break;
    case Pass::accgrad: accgrad_kernel<<<grid_for(n), kBlock, 0, st>>>(g, input, grad_output, result); break;
  }
  FFTCONV_CUDA_CHECK_LAUNCH();
}

std::vector<double> direct64_pass(const ConvProblem& p, Pass pass, const float* input, const float* weight,
                                  const float* grad_output) {
  p.validate();
  auto upload = [](const float* host, int64_t elems) {
    DeviceBuffer b;
    if (host == nullptr) return b;
    b.allocate(std::size_t(elems) * sizeof(float));
    FFTCONV_CUDA_CHECK(cudaMemcpy(b.get(), host, b.bytes(), cudaMemcpyHostToDevice));
    return b;
  };
  const DeviceBuffer x = upload(pass == Pass::bprop ? nullptr : input, p.input_elems());
  const DeviceBuffer w = upload(pass == Pass::accgrad ? nullptr : weight, p.weight_elems());
  const DeviceBuffer g = upload(pass == Pass::fprop ? nullptr : grad_output, p.output_elems());
  const int64_t n = p.result_elems(pass);
  DeviceBuffer out(std::size_t(n) * sizeof(double));
  direct64_pass_device(p, pass, x.as<const float>(), w.as<const float>(), g.as<const float>(), out.as<double>());
  std::vector<double> host(static_cast<std::size_t>(n));
  FFTCONV_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  return host;
}

bool cuda_device_available() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

}  // namespace fftconv
