// Direct convolution on the GPU in double (see direct64.hpp).
//
// Note [direct64 as GEMM]
// The definition of each pass is a sum of products of two operands. Writing q = (i, u, v) for a
// weight tap and p = (y, x) for an output pixel, and X_s[q][p] = xpad[s][i][y+u][x+v] for the
// unrolled (im2col) input of image s:
//   fprop    out[s][j][p]   = sum_q W[j][q] · X_s[q][p]                    (one DGEMM per image)
//   accgrad  dW[j][q]       = sum_{s,p} g[s][j][p] · X_s[q][p]             (one DGEMM per chunk)
//   bprop    gpad[s][i][P]  = sum_{q'=(j,u,v)} W[j][i][u][v] · G_s[q'][P], G_s[q'][(yy,xx)] =
//            g[s][j][yy-u][xx-v] (0 outside), on the padded grid; then the fold P^T of
//            Note [bprop padding adjoint] (common/padding.hpp) gives gradInput.
// Every product is the one of the definition, formed and summed in float64 by cublasDgemm (pedantic
// math: no reduced-precision or emulated modes); only the order of the summation differs from the
// CPU `direct`, which moves the result by O(K·2^-53) relative — orders of magnitude below any fp32
// tolerance. The unrolled operand is built in chunks of images (or of pixels of one image when an
// image alone exceeds the scratch limit), so memory stays bounded for any problem size.
#include "gpu/reference/direct64.hpp"

#include <algorithm>
#include <map>

#include "common/padding.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/device_arena.hpp"

namespace fftconv {

namespace {

constexpr int kBlock = 256;
constexpr std::size_t kMaxScratch = std::size_t(1) << 30;

// The problem's sizes as plain device-side data (ConvProblem's members are host functions).
struct Geometry {
  int64_t S, f, fo, h, w, kh, kw, ph, pw, oh, ow, hp, wp;
  Padding padding;
};
Geometry geometry(const ConvProblem& p) {
  return {p.S, p.f, p.fo, p.h, p.w, p.kh, p.kw, p.ph, p.pw, p.out_h(), p.out_w(), p.padded_h(), p.padded_w(),
          p.padding};
}

unsigned grid_for(int64_t n) { return grid_stride_blocks(n, kBlock); }

#define FFTCONV_GRID_STRIDE(e, n) \
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < (n); e += int64_t(gridDim.x) * blockDim.x)

// A block of images [s0, s0+ns) and pixels [p0, p0+np) of the unrolled operand, and where element
// (q, s, p) of it goes: col[q*q_stride + (s-s0)*s_stride + (p-p0)].
struct Block {
  int64_t s0, ns, p0, np, q_stride, s_stride;
};

// X_s[q][p] for fprop and accgrad (q over f·kh·kw, p over out_h·out_w).
__global__ void unroll_input(Geometry g, const float* x, Block b, double* col) {
  const int64_t K = g.f * g.kh * g.kw, n = b.ns * K * b.np;
  FFTCONV_GRID_STRIDE(e, n) {
    const int64_t pl = e % b.np, q = (e / b.np) % K, sl = e / (b.np * K);
    const int64_t p = b.p0 + pl, yo = p / g.ow, xo = p % g.ow;
    const int64_t v = q % g.kw, u = (q / g.kw) % g.kh, i = q / (g.kw * g.kh);
    const int64_t r = padded_source(yo + u, g.h, g.ph, g.padding), c = padded_source(xo + v, g.w, g.pw, g.padding);
    const double val = (r < 0 || c < 0) ? 0.0 : double(x[(((b.s0 + sl) * g.f + i) * g.h + r) * g.w + c]);
    col[q * b.q_stride + sl * b.s_stride + pl] = val;
  }
}

// G_s[q'][P] for bprop (q' over fo·kh·kw, P over the padded grid hp·wp).
__global__ void unroll_grad(Geometry g, const float* go, Block b, double* col) {
  const int64_t K = g.fo * g.kh * g.kw, n = b.ns * K * b.np;
  FFTCONV_GRID_STRIDE(e, n) {
    const int64_t pl = e % b.np, q = (e / b.np) % K, sl = e / (b.np * K);
    const int64_t P = b.p0 + pl, yy = P / g.wp, xx = P % g.wp;
    const int64_t v = q % g.kw, u = (q / g.kw) % g.kh, j = q / (g.kw * g.kh);
    const int64_t y = yy - u, x = xx - v;
    const bool inside = y >= 0 && y < g.oh && x >= 0 && x < g.ow;
    col[q * b.q_stride + sl * b.s_stride + pl] =
        inside ? double(go[(((b.s0 + sl) * g.fo + j) * g.oh + y) * g.ow + x]) : 0.0;
  }
}

// The weight in double: as stored (fprop: W[j][(i,u,v)]) or with j and i swapped (bprop: W[i][(j,u,v)]).
__global__ void weight_to_double(Geometry g, const float* w, bool swap_ji, double* out) {
  const int64_t taps = g.kh * g.kw, n = g.fo * g.f * taps;
  FFTCONV_GRID_STRIDE(e, n) {
    const int64_t t = e % taps, i = (e / taps) % g.f, j = e / (taps * g.f);
    out[swap_ji ? (i * g.fo + j) * taps + t : e] = double(w[e]);
  }
}

// gt[j][(s-s0)*np + (p-p0)] = g[s][j][p] (accgrad's B operand for one block).
__global__ void grad_rows(Geometry g, const float* go, Block b, double* gt) {
  const int64_t P = g.oh * g.ow, n = g.fo * b.ns * b.np;
  FFTCONV_GRID_STRIDE(e, n) {
    const int64_t pl = e % b.np, sl = (e / b.np) % b.ns, j = e / (b.np * b.ns);
    gt[e] = double(go[((b.s0 + sl) * g.fo + j) * P + b.p0 + pl]);
  }
}

// out[s][i][r][c] = sum of gpad[s-s0][i][yy][xx] over padded (yy, xx) whose source is (r, c).
__global__ void fold_grad(Geometry g, const double* gpad, int64_t s0, int64_t ns, double* out) {
  const int64_t n = ns * g.f * g.h * g.w;
  FFTCONV_GRID_STRIDE(e, n) {
    const int64_t c = e % g.w, r = (e / g.w) % g.h, plane = e / (g.w * g.h);
    const double* src = gpad + plane * g.hp * g.wp;
    double acc = 0;
    for_each_padded_position(r, g.h, g.ph, g.padding, [&](int64_t y) {
      for_each_padded_position(c, g.w, g.pw, g.padding, [&](int64_t x) { acc += src[y * g.wp + x]; });
    });
    out[s0 * g.f * g.h * g.w + e] = acc;
  }
}

#undef FFTCONV_GRID_STRIDE

// Images per block, and pixels per block (all of them unless one image alone is too large), for an
// unrolled operand of `rows` doubles per pixel plus `fixed` doubles per image, within `elems` doubles.
Block plan_blocks(const ConvProblem& p, int64_t pixels, int64_t rows, int64_t fixed, int64_t elems) {
  const int64_t image = rows * pixels + fixed;
  if (image <= elems) return {0, std::min(elems / image, p.S), 0, pixels, 0, 0};
  if (elems - fixed < rows)
    throw OutOfMemory("direct64: the scratch limit (" + std::to_string(elems * int64_t(sizeof(double))) +
                          " bytes after the weight) cannot hold one pixel column of " + p.to_string(),
                      std::size_t(rows + fixed) * sizeof(double));
  return {0, 1, 0, std::min((elems - fixed) / rows, pixels), 0, 0};
}

// Per host thread: a cuBLAS handle per device and the scratch arena.
struct ThreadState {
  std::map<int, cublasHandle_t> handles;
  DeviceArena scratch;
  ~ThreadState() {
    for (auto& [dev, h] : handles) cublasDestroy(h);
  }
  cublasHandle_t handle() {
    int dev = 0;
    FFTCONV_CUDA_CHECK(cudaGetDevice(&dev));
    auto it = handles.find(dev);
    if (it != handles.end()) return it->second;
    cublasHandle_t h = nullptr;
    FFTCONV_CUBLAS_CHECK(cublasCreate(&h));
    if (cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(h);
      throw CudaError("cuBLAS: cannot set pedantic math mode for the direct64 reference");
    }
    handles.emplace(dev, h);
    return h;
  }
};
ThreadState& thread_state() {
  static thread_local ThreadState state;
  return state;
}

std::size_t scratch_budget(std::size_t limit) {
  if (limit) return limit;
  std::size_t free_b = 0, total_b = 0;
  FFTCONV_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return std::clamp<std::size_t>(free_b / 4, std::size_t(16) << 20, kMaxScratch);
}

}  // namespace

void direct64_pass_device(const ConvProblem& p, Pass pass, const float* input, const float* weight,
                          const float* grad_output, double* result, void* stream, std::size_t scratch_limit) {
  p.validate();
  if (!p.is_dense()) throw Unsupported("direct64: computes the dense problem only, not " + p.to_string());
  const auto st = static_cast<cudaStream_t>(stream);
  const Geometry g = geometry(p);
  ThreadState& ts = thread_state();
  const cublasHandle_t blas = ts.handle();
  FFTCONV_CUBLAS_CHECK(cublasSetStream(blas, st));
  const int64_t taps = p.kh * p.kw, P = g.oh * g.ow, Pp = g.hp * g.wp;
  const int64_t weight_elems = pass == Pass::accgrad ? 0 : p.weight_elems();
  const int64_t budget = int64_t(scratch_budget(scratch_limit) / sizeof(double)) - weight_elems;
  const double one = 1.0, zero = 0.0;

  switch (pass) {
    case Pass::fprop: {
      const int64_t K = p.f * taps;
      Block b = plan_blocks(p, P, K, 0, budget);
      ts.scratch.reserve(std::size_t(weight_elems + b.ns * K * b.np) * sizeof(double));
      double* wd = reinterpret_cast<double*>(ts.scratch.base());
      double* col = wd + weight_elems;
      weight_to_double<<<grid_for(weight_elems), kBlock, 0, st>>>(g, weight, false, wd);
      FFTCONV_CUDA_CHECK_LAUNCH();
      const int64_t step = b.ns;
      for (int64_t s0 = 0; s0 < p.S; s0 += step)
        for (int64_t p0 = 0; p0 < P; p0 += b.np) {
          Block c{s0, std::min(step, p.S - s0), p0, std::min(b.np, P - p0), 0, 0};
          c.q_stride = c.np, c.s_stride = K * c.np;
          unroll_input<<<grid_for(c.ns * K * c.np), kBlock, 0, st>>>(g, input, c, col);
          FFTCONV_CUDA_CHECK_LAUNCH();
          // out_s^T (np × fo, ld P) = X_s^T (np × K) · W^T (K × fo), for each image of the block.
          FFTCONV_CUBLAS_CHECK(cublasDgemmStridedBatched(
              blas, CUBLAS_OP_N, CUBLAS_OP_N, int(c.np), int(p.fo), int(K), &one, col, int(c.np), K * c.np, wd,
              int(K), 0, &zero, result + s0 * p.fo * P + p0, int(P), p.fo * P, int(c.ns)));
        }
      break;
    }
    case Pass::bprop: {
      const int64_t K = p.fo * taps;
      Block b = plan_blocks(p, Pp, K, p.f * Pp, budget);
      ts.scratch.reserve(std::size_t(weight_elems + b.ns * K * b.np + b.ns * p.f * Pp) * sizeof(double));
      double* wd = reinterpret_cast<double*>(ts.scratch.base());
      double* gpad = wd + weight_elems;
      double* col = gpad + b.ns * p.f * Pp;
      weight_to_double<<<grid_for(weight_elems), kBlock, 0, st>>>(g, weight, true, wd);
      FFTCONV_CUDA_CHECK_LAUNCH();
      const int64_t step = b.ns;
      for (int64_t s0 = 0; s0 < p.S; s0 += step) {
        const int64_t ns = std::min(step, p.S - s0);
        for (int64_t p0 = 0; p0 < Pp; p0 += b.np) {
          Block c{s0, ns, p0, std::min(b.np, Pp - p0), 0, 0};
          c.q_stride = c.np, c.s_stride = K * c.np;
          unroll_grad<<<grid_for(c.ns * K * c.np), kBlock, 0, st>>>(g, grad_output, c, col);
          FFTCONV_CUDA_CHECK_LAUNCH();
          // gpad_s^T (np × f, ld Pp) = G_s^T (np × K) · Wt^T (K × f), for each image of the block.
          FFTCONV_CUBLAS_CHECK(cublasDgemmStridedBatched(
              blas, CUBLAS_OP_N, CUBLAS_OP_N, int(c.np), int(p.f), int(K), &one, col, int(c.np), K * c.np, wd,
              int(K), 0, &zero, gpad + p0, int(Pp), p.f * Pp, int(c.ns)));
        }
        fold_grad<<<grid_for(ns * p.f * p.h * p.w), kBlock, 0, st>>>(g, gpad, s0, ns, result);
        FFTCONV_CUDA_CHECK_LAUNCH();
      }
      break;
    }
    case Pass::accgrad: {
      const int64_t K = p.f * taps;
      Block b = plan_blocks(p, P, K + p.fo, 0, budget);
      ts.scratch.reserve(std::size_t(b.ns * b.np * (K + p.fo)) * sizeof(double));
      double* col = reinterpret_cast<double*>(ts.scratch.base());
      double* gt = col + b.ns * b.np * K;
      const int64_t step = b.ns;
      bool first = true;
      for (int64_t s0 = 0; s0 < p.S; s0 += step)
        for (int64_t p0 = 0; p0 < P; p0 += b.np) {
          Block c{s0, std::min(step, p.S - s0), p0, std::min(b.np, P - p0), 0, 0};
          const int64_t L = c.ns * c.np;  // the reduction length of this block
          c.q_stride = L, c.s_stride = c.np;
          unroll_input<<<grid_for(c.ns * K * c.np), kBlock, 0, st>>>(g, input, c, col);
          FFTCONV_CUDA_CHECK_LAUNCH();
          grad_rows<<<grid_for(p.fo * L), kBlock, 0, st>>>(g, grad_output, c, gt);
          FFTCONV_CUDA_CHECK_LAUNCH();
          // dW^T (K × fo) (+)= X (K × L) · gt^T (L × fo).
          FFTCONV_CUBLAS_CHECK(cublasDgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, int(K), int(p.fo), int(L), &one, col,
                                           int(L), gt, int(L), first ? &zero : &one, result, int(K)));
          first = false;
        }
      break;
    }
  }
  FFTCONV_CUDA_CHECK(cudaStreamSynchronize(st));
}

std::vector<double> direct64_pass(const ConvProblem& p, Pass pass, const float* input, const float* weight,
                                  const float* grad_output, std::size_t scratch_limit) {
  p.validate();
  const DeviceBuffer x = upload(pass == Pass::bprop ? nullptr : input, std::size_t(p.input_elems()));
  const DeviceBuffer w = upload(pass == Pass::accgrad ? nullptr : weight, std::size_t(p.weight_elems()));
  const DeviceBuffer g = upload(pass == Pass::fprop ? nullptr : grad_output, std::size_t(p.output_elems()));
  const int64_t n = p.result_elems(pass);
  DeviceBuffer out(std::size_t(n) * sizeof(double));
  direct64_pass_device(p, pass, x.as<const float>(), w.as<const float>(), g.as<const float>(), out.as<double>(),
                       nullptr, scratch_limit);
  std::vector<double> host(static_cast<std::size_t>(n));
  FFTCONV_CUDA_CHECK(cudaMemcpy(host.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

bool cuda_device_available() { return cuda_device_support().ok; }

}  // namespace fftconv
