// Element-wise kernels shared by the GPU convolution backends (fbfft, cufft): mirror padding of input
// planes, the bprop padding adjoint (fold), and the gather / scatter / fold of tile windows for the
// shared planner's tiled plans (tiling/tile_plan.hpp), into or out of any plane layout.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "common/problem.hpp"

namespace fftconv::tile_kernels {

// One axis of a tile grid as the kernels see it (tiling/tile_plan.hpp AxisTiling): tile t covers
// [origin + t*step, origin + t*step + min(step, extent - t*step)).
struct AxisGeom {
  int64_t origin = 0, extent = 0, step = 0, count = 0;
};

// A source grid read through a padding rule: padded coordinate y reads row
// padded_source(y, n_h, p_h, mode) (common/padding.hpp), zero when that is -1.
// gradOutput is read as {oh, ow, 0, 0, zero}: plain bounds, zeros outside.
struct SourceGrid {
  const float* data = nullptr;
  int64_t n_h = 0, n_w = 0, p_h = 0, p_w = 0;
  Padding mode = Padding::zero;
  int64_t channels = 0;  // planes per image: the source plane of (image s, channel c) is s*channels + c
};

// dst[q][y][x] (planes×hp×wp) = padded plane q of src (planes×h×w), padded by (ph, pw) with `mode`.
void pad_planes(const float* src, int64_t planes, int64_t h, int64_t w, int64_t ph, int64_t pw, Padding mode,
                float* dst, cudaStream_t stream);

// dst plane q (h×w) = P^T of the padded-grid plane q of src (dense hp×wp): every padded position
// adds onto the element it was read from (Note [bprop padding adjoint]). One thread per dst element,
// at most 9 terms in a fixed order: deterministic, no atomics. Overwrites dst.
void fold_planes(const float* src, int64_t planes, const ConvProblem& p, float* dst, cudaStream_t stream);

// Where tile planes sit in a buffer: plane q starts at q*plane_stride floats, its rows are row_stride
// apart, and the tile's values start at (off_h, off_w) inside it; values read from it are multiplied
// by scale. dense(h, w) is the packed h×w layout (fbfft); cufft uses its FFT layout (ld = 2(n_w/2+1)).
struct PlaneLayout {
  int64_t row_stride = 0, plane_stride = 0, off_h = 0, off_w = 0;
  float scale = 1.0f;
  static PlaneLayout dense(int64_t h, int64_t w) { return {w, h * w, 0, 0, 1.0f}; }
};

// Which rectangle of a tile a gather reads (Note [tile geometry]):
//   padded_read:  [win.y0, +win.h+kh-1) × ... in padded-input coordinates (fprop, accgrad input)
//   grad_full:    [win.y0-(kh-1), +win.h+kh-1) × ... in gradOutput coordinates (bprop)
//   grad_window:  the window itself in gradOutput coordinates (accgrad gradOutput)
enum class GatherRect { padded_read, grad_full, grad_window };

// For local items q < items (item = item0 + q = t*S + s, tile-major) and channels c: the
// first fft_h rows of plane (q*channels + c) of dst (layout `dst_layout`, row_stride >= fft_w; its
// offset and scale are ignored) hold the tile's rectangle at (0, 0) and zeros elsewhere, written in
// full (row_stride floats per row, so cuFFT's in-place row padding is initialized too).
void gather_tiles(const SourceGrid& src, GatherRect rect, int64_t kh, int64_t kw, AxisGeom rows, AxisGeom cols,
                  int64_t S, int64_t item0, int64_t items, int64_t fft_h, int64_t fft_w, float* dst,
                  PlaneLayout dst_layout, cudaStream_t stream);

// fprop: src planes (q*channels + j) (layout `src_layout`) hold the step_h×step_w (rows.step ×
// cols.step) output tile of item0+q; stores scale × the window of each into out (S×channels×out_h×out_w).
void scatter_tiles(const float* src, PlaneLayout src_layout, AxisGeom rows, AxisGeom cols, int64_t S,
                   int64_t channels, int64_t item0, int64_t items, float* out, int64_t out_h, int64_t out_w,
                   cudaStream_t stream);

// bprop: src planes (q*f + i) (layout `src_layout`) hold the step_h×step_w padded-grid g_pad window
// of item0+q (values multiplied by the layout's scale).
// gradInput[s][i][r][c] += sum of the values of this chunk's tiles at padded positions whose
// source (padding rule of p) is (r, c). gradInput must be zeroed before the first chunk. One thread
// per gradInput element of the chunk's footprint (tiling/tile_plan.hpp bprop_fold_footprint), so that
// the chunks together visit gradInput about once: deterministic, no atomics.
void fold_tiles(const float* src, PlaneLayout src_layout, AxisGeom rows, AxisGeom cols, const ConvProblem& p,
                int64_t item0, int64_t items, float* grad_input, cudaStream_t stream);

}  // namespace fftconv::tile_kernels
