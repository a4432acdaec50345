// Element-wise kernels around the cuFFT/cuBLAS pipeline (paper Table 1): padding/embedding of real
// planes into the FFT buffer, complex transposition to and from frequency-major layout, and the
// final clip (crop, or mirror-padding fold for bprop) with the 1/(Nh*Nw) scale.
#pragma once
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/cufft/cufft_callbacks.hpp"

namespace fftconv::gpu_kernels {

// The layout of a real plane inside a cuFFT in-place R2C buffer: nh rows of ld floats each
// (ld = 2*(nw/2+1)), planes dist = nh*ld floats apart.
struct FftLayout {
  int64_t nh = 0, nw = 0, ld = 0;
  int64_t plane_floats() const { return nh * ld; }
};

// dst plane p (FftLayout) = the source plane p (h×w, dense) placed at the top-left after padding by
// (ph, pw) on each side (zeros, or reflection when mirror), then zeros up to the full nh×ld plane.
// Writes every float of the `planes` destination planes.
void embed_planes(const float* src, int64_t planes, int64_t h, int64_t w, int64_t ph, int64_t pw, bool mirror,
                  float* dst, FftLayout layout, cudaStream_t stream);

// out[c][r] = in[r][c] for a rows×cols complex matrix (tiled through shared memory). Rows of `in` are
// in_ld apart and rows of `out` out_ld apart (0: dense, cols and rows), so either side may be a block
// of columns of a wider matrix.
void transpose_complex(const cuComplex* in, int64_t rows, int64_t cols, cuComplex* out, cudaStream_t stream,
                       int64_t in_ld = 0, int64_t out_ld = 0);

// How the clip reads the padded result plane back into the user tensor.
struct ClipSpec {
  int64_t out_h = 0, out_w = 0;  // the written plane (dense, out_h×out_w)
  int64_t off_h = 0, off_w = 0;  // crop origin inside the FFT plane (zero padding / plain crop)
  // Mirror fold (bprop, mirror padding): out[r][c] = sum of plane[i][j] over padded (i, j) in
  // [0, out_h+2ph)×[0, out_w+2pw) whose reflected source is (r, c). off_h/off_w are ignored.
  bool mirror_fold = false;
  int64_t ph = 0, pw = 0;
  float scale = 1.0f;
};

// dst plane p (dense out_h×out_w) = scale * (crop or fold of src plane p in FftLayout).
void clip_planes(const float* src, FftLayout layout, int64_t planes, const ClipSpec& spec, float* dst,
                 cudaStream_t stream);

// ptrs[0*n + q] = a + q*stride_a, ptrs[1*n + q] = b + q*stride_b, ptrs[2*n + q] = c + q*stride_c
// (pointer arrays for cublasCgemmBatched).
void fill_pointer_arrays(const cuComplex* a, int64_t stride_a, const cuComplex* b, int64_t stride_b, cuComplex* c,
                         int64_t stride_c, int64_t n, cuComplex** ptrs, cudaStream_t stream);

// Callback parameter blocks for planes in `layout` (Note [cufft callbacks]): the padding load of
// dense h×w source planes placed at (ph, pw) (the map of embed_planes), and the clipping store of
// clip's window, times `scale`, into dense dst planes (the map of clip_planes without the fold).
cufft_cb::Params padded_load_params(const float* src, int64_t h, int64_t w, int64_t ph, int64_t pw, bool mirror,
                                    const FftLayout& layout);
cufft_cb::Params clipped_store_params(float* dst, const ClipSpec& clip, float scale, const FftLayout& layout);

// *dst_a = a, *dst_b = b, *dst_c = c on `stream` (a null destination is skipped): the parameter
// blocks of cuFFT plans with callbacks (Note [cufft callbacks]), rewritten in stream order.
void write_callback_params(cufft_cb::Params* dst_a, const cufft_cb::Params& a, cufft_cb::Params* dst_b,
                           const cufft_cb::Params& b, cufft_cb::Params* dst_c, const cufft_cb::Params& c,
                           cudaStream_t stream);

}  // namespace fftconv::gpu_kernels
