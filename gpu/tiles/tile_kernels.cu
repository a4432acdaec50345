// Element-wise kernels shared by the GPU backends (see tile_kernels.cuh): grid-stride loops, one
// thread per written element, 64-bit indices, no atomics.
#include "common/padding.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/tiles/tile_kernels.cuh"
#include "tiling/tile_plan.hpp"

namespace fftconv::tile_kernels {
namespace {

constexpr int kBlock = 256;
constexpr int64_t kMaxBlocks = 1 << 16;

unsigned blocks_for(int64_t n) { return grid_stride_blocks(n, kBlock, kMaxBlocks); }

// The padding geometry of a problem as plain fields (ConvProblem's members are host-only).
struct PadGeom {
  int64_t h, w, ph, pw;
  Padding mode;
};

PadGeom pad_geom(const ConvProblem& p) { return {p.h, p.w, p.ph, p.pw, p.padding}; }

// Start and length of tile `t` of an axis.
__device__ inline int64_t tile_start(const AxisGeom& a, int64_t t) { return a.origin + t * a.step; }
__device__ inline int64_t tile_length(const AxisGeom& a, int64_t t) {
  const int64_t rest = a.extent - t * a.step;
  return rest < a.step ? rest : a.step;
}

__global__ void pad_kernel(const float* src, int64_t planes, PadGeom g, float* dst) {
  const int64_t hp = g.h + 2 * g.ph, wp = g.w + 2 * g.pw, n = planes * hp * wp;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t x = e % wp, y = (e / wp) % hp, q = e / (wp * hp);
    const int64_t sy = padded_source(y, g.h, g.ph, g.mode), sx = padded_source(x, g.w, g.pw, g.mode);
    dst[e] = (sy < 0 || sx < 0) ? 0.f : src[(q * g.h + sy) * g.w + sx];
  }
}

__global__ void fold_kernel(const float* src, int64_t planes, PadGeom g, float* dst) {
  const int64_t wp = g.w + 2 * g.pw, hp = g.h + 2 * g.ph, n = planes * g.h * g.w;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = e % g.w, r = (e / g.w) % g.h, q = e / (g.w * g.h);
    int64_t ys[3], xs[3];
    const int ny = padded_positions(r, g.h, g.ph, g.mode, ys), nx = padded_positions(c, g.w, g.pw, g.mode, xs);
    const float* plane = src + q * hp * wp;
    float acc = 0.f;
    for (int a = 0; a < ny; ++a)
      for (int b = 0; b < nx; ++b) acc += plane[ys[a] * wp + xs[b]];
    dst[e] = acc;
  }
}

__global__ void gather_kernel(SourceGrid src, GatherRect rect, int64_t kh, int64_t kw, AxisGeom rows, AxisGeom cols,
                              int64_t S, int64_t item0, int64_t items, int64_t fft_h, int64_t fft_w, float* dst,
                              PlaneLayout L) {
  const int64_t row = L.row_stride, n = items * src.channels * fft_h * row;  // whole rows, padding included
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = e % row, a = (e / row) % fft_h, qc = e / (row * fft_h);
    const int64_t c = qc % src.channels, item = item0 + qc / src.channels;
    const int64_t t = item / S, s = item % S, tr = t / cols.count, tc = t % cols.count;
    int64_t y0 = tile_start(rows, tr), x0 = tile_start(cols, tc), rh = tile_length(rows, tr), rw = tile_length(cols, tc);
    if (rect != GatherRect::grad_window) {
      rh += kh - 1;
      rw += kw - 1;
    }
    if (rect == GatherRect::grad_full) {
      y0 -= kh - 1;
      x0 -= kw - 1;
    }
    float v = 0.f;
    if (a < rh && b < rw && b < fft_w) {
      const int64_t sy = padded_source(y0 + a, src.n_h, src.p_h, src.mode);
      const int64_t sx = padded_source(x0 + b, src.n_w, src.p_w, src.mode);
      if (sy >= 0 && sx >= 0) v = src.data[((s * src.channels + c) * src.n_h + sy) * src.n_w + sx];
    }
    dst[qc * L.plane_stride + a * L.row_stride + b] = v;
  }
}

__global__ void scatter_kernel(const float* src, PlaneLayout L, AxisGeom rows, AxisGeom cols, int64_t S,
                               int64_t channels, int64_t item0, int64_t items, float* out, int64_t out_h,
                               int64_t out_w) {
  const int64_t sh = rows.step, sw = cols.step, n = items * channels * sh * sw;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = e % sw, a = (e / sw) % sh, qc = e / (sw * sh);
    const int64_t j = qc % channels, item = item0 + qc / channels;
    const int64_t t = item / S, s = item % S, tr = t / cols.count, tc = t % cols.count;
    if (a >= tile_length(rows, tr) || b >= tile_length(cols, tc)) continue;
    const int64_t y = tile_start(rows, tr) + a, x = tile_start(cols, tc) + b;
    out[((s * channels + j) * out_h + y) * out_w + x] =
        L.scale * src[qc * L.plane_stride + (L.off_h + a) * L.row_stride + L.off_w + b];
  }
}

// One thread per element of the chunk's footprint (images [s0, s0+images) × f planes × rect).
__global__ void fold_tiles_kernel(const float* src, PlaneLayout L, AxisGeom rows, AxisGeom cols, PadGeom g, int64_t S,
                                  int64_t f, int64_t item0, int64_t items, int64_t s0, int64_t images, Window rect,
                                  float* grad_input) {
  const int64_t n = images * f * rect.h * rect.w;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = rect.x0 + e % rect.w, r = rect.y0 + (e / rect.w) % rect.h, si = e / (rect.w * rect.h);
    const int64_t i = si % f, s = s0 + si / f;
    int64_t ys[3], xs[3];
    const int ny = padded_positions(r, g.h, g.ph, g.mode, ys), nx = padded_positions(c, g.w, g.pw, g.mode, xs);
    float acc = 0.f;
    bool hit = false;
    for (int a = 0; a < ny; ++a) {
      const int64_t yr = ys[a] - rows.origin;
      if (yr < 0 || yr >= rows.extent) continue;  // outside the tiled region (cannot happen; defensive)
      const int64_t tr = yr / rows.step;
      for (int b = 0; b < nx; ++b) {
        const int64_t xr = xs[b] - cols.origin;
        if (xr < 0 || xr >= cols.extent) continue;
        const int64_t tc = xr / cols.step;
        const int64_t q = (tr * cols.count + tc) * S + s - item0;
        if (q < 0 || q >= items) continue;  // that tile is in another chunk
        acc += src[(q * f + i) * L.plane_stride + (L.off_h + yr - tr * rows.step) * L.row_stride + L.off_w + xr -
                   tc * cols.step];
        hit = true;
      }
    }
    if (hit) grad_input[((s * f + i) * g.h + r) * g.w + c] += L.scale * acc;
  }
}

}  // namespace

void pad_planes(const float* src, int64_t planes, int64_t h, int64_t w, int64_t ph, int64_t pw, Padding mode,
                float* dst, cudaStream_t stream) {
  const int64_t n = planes * (h + 2 * ph) * (w + 2 * pw);
  if (n == 0) return;
  pad_kernel<<<blocks_for(n), kBlock, 0, stream>>>(src, planes, PadGeom{h, w, ph, pw, mode}, dst);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void fold_planes(const float* src, int64_t planes, const ConvProblem& p, float* dst, cudaStream_t stream) {
  const int64_t n = planes * p.h * p.w;
  if (n == 0) return;
  fold_kernel<<<blocks_for(n), kBlock, 0, stream>>>(src, planes, pad_geom(p), dst);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void gather_tiles(const SourceGrid& src, GatherRect rect, int64_t kh, int64_t kw, AxisGeom rows, AxisGeom cols,
                  int64_t S, int64_t item0, int64_t items, int64_t fft_h, int64_t fft_w, float* dst,
                  PlaneLayout dst_layout, cudaStream_t stream) {
  const int64_t n = items * src.channels * fft_h * dst_layout.row_stride;
  if (n == 0) return;
  if (dst_layout.row_stride < fft_w) throw InvalidArgument("gather_tiles: row stride below the tile width");
  gather_kernel<<<blocks_for(n), kBlock, 0, stream>>>(src, rect, kh, kw, rows, cols, S, item0, items, fft_h, fft_w,
                                                      dst, dst_layout);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void scatter_tiles(const float* src, PlaneLayout src_layout, AxisGeom rows, AxisGeom cols, int64_t S,
                   int64_t channels, int64_t item0, int64_t items, float* out, int64_t out_h, int64_t out_w,
                   cudaStream_t stream) {
  const int64_t n = items * channels * rows.step * cols.step;
  if (n == 0) return;
  scatter_kernel<<<blocks_for(n), kBlock, 0, stream>>>(src, src_layout, rows, cols, S, channels, item0, items, out,
                                                       out_h, out_w);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void fold_tiles(const float* src, PlaneLayout src_layout, AxisGeom rows, AxisGeom cols, const ConvProblem& p,
                int64_t item0, int64_t items, float* grad_input, cudaStream_t stream) {
  if (items == 0) return;
  const auto axis = [](const AxisGeom& a) { return AxisTiling{a.origin, a.extent, 0, 0, a.step, a.count}; };
  const FoldFootprint fp = bprop_fold_footprint(p, axis(rows), axis(cols), item0, items);
  const int64_t n = fp.images * p.f * fp.rect.area();
  if (n == 0) return;
  fold_tiles_kernel<<<blocks_for(n), kBlock, 0, stream>>>(src, src_layout, rows, cols, pad_geom(p), p.S, p.f, item0,
                                                          items, fp.s0, fp.images, fp.rect, grad_input);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

}  // namespace fftconv::tile_kernels
