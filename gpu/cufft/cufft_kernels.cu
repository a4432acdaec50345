// Element-wise kernels of the cuFFT/cuBLAS pipeline (see cufft_kernels.cuh). Grid-stride loops
// with 64-bit indices, so any tensor that fits in memory is covered by a bounded grid.
#include <cmath>

#include "common/padding.hpp"
#include "gpu/cufft/cufft_kernels.cuh"
#include "gpu/runtime/cuda_check.hpp"

namespace fftconv::gpu_kernels {
namespace {

__global__ void write_params_kernel(cufft_cb::Params* dst_a, cufft_cb::Params a, cufft_cb::Params* dst_b,
                                    cufft_cb::Params b, cufft_cb::Params* dst_c, cufft_cb::Params c) {
  if (dst_a) *dst_a = a;
  if (dst_b) *dst_b = b;
  if (dst_c) *dst_c = c;
}

constexpr int kThreads = 256;
unsigned blocks_for(int64_t n) { return grid_stride_blocks(n, kThreads); }

// Element-wise plane kernels run on a 2-D grid: blockIdx.x (and threads) over the elements of one
// plane with 32-bit index arithmetic, blockIdx.y (grid-stride) over planes. A flat 64-bit index
// needs two 64-bit divisions per element, which made these copies run at a fifth of the memory
// bandwidth on the H100.
constexpr int kPlaneThreads = 128;
constexpr unsigned kMaxPlaneBlocksY = 65535;

void check_plane_size(int64_t plane_floats, const char* what) {
  if (plane_floats > int64_t(0x7fffffff))
    throw Unsupported(std::string(what) + ": FFT plane of " + std::to_string(plane_floats) +
                      " floats exceeds the kernel's 32-bit plane indexing");
}

dim3 plane_grid(int64_t plane_elems, int64_t planes) {
  const int64_t x = (plane_elems + kPlaneThreads - 1) / kPlaneThreads;
  const int64_t y = planes < int64_t(kMaxPlaneBlocksY) ? planes : int64_t(kMaxPlaneBlocksY);
  return dim3(static_cast<unsigned>(x < 1 ? 1 : x), static_cast<unsigned>(y < 1 ? 1 : y));
}

__global__ void embed_kernel(const float* __restrict__ src, int64_t planes, int h, int w, int ph, int pw, bool mirror,
                             float* __restrict__ dst, int nh, int ld) {
  const int plane = nh * ld, e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= plane) return;
  const int y = e / ld, x = e - y * ld;
  const int hp = h + 2 * ph, wp = w + 2 * pw;
  int sy = -1, sx = -1;
  const Padding mode = mirror ? Padding::mirror : Padding::zero;
  if (y < hp && x < wp) sy = int(padded_source(y, h, ph, mode)), sx = int(padded_source(x, w, pw, mode));
  const bool inside = sy >= 0 && sx >= 0;
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y)
    dst[p * plane + e] = inside ? src[(p * h + sy) * w + sx] : 0.0f;
}

constexpr int kTile = 32, kRowsPerPass = 8;

__global__ void transpose_kernel(const cuComplex* __restrict__ in, int64_t rows, int64_t cols, int64_t in_ld,
                                 cuComplex* __restrict__ out, int64_t out_ld) {
  __shared__ cuComplex tile[kTile][kTile + 1];
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t c0 = int64_t(blockIdx.x) * kTile;
  for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {
    const int64_t r0 = rt * kTile;
    for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
      const int64_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[k][threadIdx.x] = in[r * in_ld + c];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kRowsPerPass) {
      const int64_t c = c0 + k, r = r0 + threadIdx.x;
      if (r < rows && c < cols) out[c * out_ld + r] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

__global__ void clip_kernel(const float* __restrict__ src, int nh, int ld, int64_t planes, ClipSpec s,
                            float* __restrict__ dst) {
  const int out_w = int(s.out_w), plane_out = int(s.out_h) * out_w, e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= plane_out) return;
  const int r = e / out_w, c = e - r * out_w;
  // The (at most 3x3) source positions of this output element, the same for every plane.
  int offsets[9], count = 0;
  if (!s.mirror_fold) {
    offsets[count++] = (r + int(s.off_h)) * ld + (c + int(s.off_w));
  } else {
    int64_t rows[3], cols[3];
    const int nr = padded_positions(r, s.out_h, s.ph, Padding::mirror, rows),
              nc = padded_positions(c, s.out_w, s.pw, Padding::mirror, cols);
    for (int a = 0; a < nr; ++a)
      for (int b = 0; b < nc; ++b) offsets[count++] = int(rows[a]) * ld + int(cols[b]);
  }
  const int64_t plane_in = int64_t(nh) * ld;
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const float* plane = src + p * plane_in;
    float v = 0.0f;
    for (int k = 0; k < count; ++k) v += plane[offsets[k]];
    dst[p * plane_out + e] = v * s.scale;
  }
}

__global__ void pointer_kernel(const cuComplex* a, int64_t sa, const cuComplex* b, int64_t sb, cuComplex* c,
                               int64_t sc, int64_t n, cuComplex** ptrs) {
  for (int64_t q = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; q < n; q += int64_t(gridDim.x) * blockDim.x) {
    ptrs[q] = const_cast<cuComplex*>(a) + q * sa;
    ptrs[n + q] = const_cast<cuComplex*>(b) + q * sb;
    ptrs[2 * n + q] = c + q * sc;
  }
}

}  // namespace


void embed_planes(const float* src, int64_t planes, int64_t h, int64_t w, int64_t ph, int64_t pw, bool mirror,
                  float* dst, FftLayout layout, cudaStream_t stream) {
  const int64_t total = planes * layout.plane_floats();
  if (total == 0) return;
  check_plane_size(layout.plane_floats(), "embed_planes");
  embed_kernel<<<plane_grid(layout.plane_floats(), planes), kPlaneThreads, 0, stream>>>(
      src, planes, int(h), int(w), int(ph), int(pw), mirror, dst, int(layout.nh), int(layout.ld));
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void transpose_complex(const cuComplex* in, int64_t rows, int64_t cols, cuComplex* out, cudaStream_t stream,
                       int64_t in_ld, int64_t out_ld) {
  if (rows == 0 || cols == 0) return;
  const int64_t col_tiles = (cols + kTile - 1) / kTile, row_tiles = (rows + kTile - 1) / kTile;
  if (col_tiles > int64_t(0x7fffffff)) throw Unsupported("transpose_complex: cols " + std::to_string(cols) + " too large");
  const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(row_tiles < 65535 ? row_tiles : 65535));
  transpose_kernel<<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(in, rows, cols, in_ld > 0 ? in_ld : cols, out,
                                                                     out_ld > 0 ? out_ld : rows);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void clip_planes(const float* src, FftLayout layout, int64_t planes, const ClipSpec& spec, float* dst,
                 cudaStream_t stream) {
  const int64_t plane_out = spec.out_h * spec.out_w;
  if (planes == 0 || plane_out == 0) return;
  check_plane_size(layout.plane_floats(), "clip_planes");
  clip_kernel<<<plane_grid(plane_out, planes), kPlaneThreads, 0, stream>>>(src, int(layout.nh), int(layout.ld), planes,
                                                                           spec, dst);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

void fill_pointer_arrays(const cuComplex* a, int64_t stride_a, const cuComplex* b, int64_t stride_b, cuComplex* c,
                         int64_t stride_c, int64_t n, cuComplex** ptrs, cudaStream_t stream) {
  if (n == 0) return;
  pointer_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, stride_a, b, stride_b, c, stride_c, n, ptrs);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

cufft_cb::Params padded_load_params(const float* src, int64_t h, int64_t w, int64_t ph, int64_t pw, bool mirror,
                                    const FftLayout& layout) {
  cufft_cb::Params q;
  q.src = src, q.h = int32_t(h), q.w = int32_t(w), q.ph = int32_t(ph), q.pw = int32_t(pw), q.mirror = mirror ? 1 : 0;
  q.plane = FastDiv::make(uint32_t(layout.plane_floats()));
  q.row = FastDiv::make(uint32_t(layout.ld));
  return q;
}

cufft_cb::Params clipped_store_params(float* dst, const ClipSpec& clip, float scale, const FftLayout& layout) {
  cufft_cb::Params c;
  c.plane = FastDiv::make(uint32_t(layout.plane_floats()));
  c.row = FastDiv::make(uint32_t(layout.ld));
  c.dst = dst, c.scale = scale;
  c.out_h = int32_t(clip.out_h), c.out_w = int32_t(clip.out_w), c.off_h = int32_t(clip.off_h), c.off_w = int32_t(clip.off_w);
  return c;
}

void write_callback_params(cufft_cb::Params* dst_a, const cufft_cb::Params& a, cufft_cb::Params* dst_b,
                           const cufft_cb::Params& b, cufft_cb::Params* dst_c, const cufft_cb::Params& c,
                           cudaStream_t stream) {
  if (!dst_a && !dst_b && !dst_c) return;
  write_params_kernel<<<1, 1, 0, stream>>>(dst_a, a, dst_b, b, dst_c, c);
  FFTCONV_CUDA_CHECK_LAUNCH();
}

}  // namespace fftconv::gpu_kernels
