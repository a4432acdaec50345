// fbfft: batched real-to-complex / complex-to-real FFTs of small power-of-two (and 2-D even 7-smooth) sizes computed in
// registers with warp shuffles, with implicit zero padding (clipped loads) and a clipped inverse.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/fft_size.hpp"
#include "gpu/fft/shape_1d.hpp"

namespace fftconv::fbfft {

// Memory order of a batch of half spectra, each n_h × (n_w/2+1) complex (n_h = 1 for 1-D):
//   standard:   [plane][kh][kw]                       (cuFFT / FFTW R2C order)
//   transposed: [plane][kw][kh]                       (the paper's order; same as standard in 1-D)
//   freq_major: [kh][kw][plane], plane stride 1, frequency stride ld_batch (>= batch): the
//               layout of a batched CGEMM over frequencies.
enum class Layout { standard, transposed, freq_major };
const char* to_string(Layout l);

// Which kernel family computes a transform:
//   shuffle:   one transform spread over up to 32 lanes of a warp, data exchanged with warp shuffles
//              (the paper's fbfft; every size);
//   1-D: registers (n = 4..32: one thread per pair of planes) and fourstep (n = 64..256: the
//              four-step split over 8 and n/8 lanes), every layout (Note [1-D register kernels]);
//   registers: whole transforms in registers: one thread per plane at sides 4 and 8 (Note [one-thread
//              2-D kernels]); elsewhere one thread per row pair and per column (four lanes at 64 and 128
//              points), the transposition through shared memory (sides 2..64, 128; Note [register 2-D
//              kernels]);
//   lanes:     the 2-D register kernels with four lanes per 1-D transform, for small batches where
//              the registers family is latency-bound (sides 16 and 32, every layout; Note [lane-split
//              small batches]); never chosen by automatic, timed by the fbfft convolution plan;
//   fourstep:  shared-memory exchange between threads: sides 32, 64 and 128 (square or not) split
//              N = R1 x 8 over lanes, one plane per block (Note [four-step 2-D kernels]; in the
//              freq_major layout clusters of blocks exchange their planes' spectra, Note [four-step
//              freq_major clusters]), and 16x16 with four lanes per plane (Note [16x16 four-lane
//              kernels]); every layout, but 16x16 in the standard and transposed layouts only;
//   stockham:  mixed-radix (4, 2, 3, 5, 7) Stockham stages in shared memory with runtime sizes: every
//              7-smooth size, 2-D sides 2..128 (rectangles and odd sides included) and 1-D 2..256,
//              every layout (Note [stockham kernels]); automatic takes it for the sizes no other
//              family runs;
//   automatic: the family measured fastest for the size, layout and direction (see find_launcher).
enum class Kernel { automatic, shuffle, registers, fourstep, lanes, stockham };
const char* to_string(Kernel k);

// Element offset of frequency (kh, kw) of `plane` in a layout (nw2 = n_w/2+1).
__host__ __device__ inline int64_t freq_offset(Layout l, int64_t plane, int kh, int kw, int n_h, int nw2,
                                               int64_t ld_batch) {
  switch (l) {
    case Layout::transposed: return (plane * nw2 + kw) * n_h + kh;
    case Layout::freq_major: return (static_cast<int64_t>(kh) * nw2 + kw) * ld_batch + plane;
    default: return (plane * n_h + kh) * nw2 + kw;
  }
}

// Forward R2C, unnormalized, sign -1: for each plane b < batch,
//   X[b][kh][kw] = sum_{y<n_h, x<n_w} xpad(y, x) exp(-2 pi i (kh y / n_h + kw x / n_w)),  kw <= n_w/2,
// where xpad(y, x) = input[b*in_plane_stride + (y-off_h)*in_ld + (x-off_w)] when
// 0 <= y-off_h < in_h and 0 <= x-off_w < in_w, else 0 (the plane sits at (off_h, off_w); parts of it
// beyond the transform are ignored). 1-D transforms have n_h = 1 (then off_h must be 0, row 0 is read).
struct ForwardArgs {
  int64_t batch = 0;
  int n_h = 1, n_w = 0;
  const float* input = nullptr;
  int64_t in_h = 0, in_w = 0, in_ld = 0, in_plane_stride = 0;
  int64_t off_h = 0, off_w = 0;
  float2* output = nullptr;
  Layout layout = Layout::standard;
  int64_t ld_batch = 0;  // freq_major frequency stride; 0 means batch
  Kernel kernel = Kernel::automatic;
  // Block shape of the 1-D register / four-step kernels (experiments; shape_1d.hpp); none: the
  // measured automatic shape (Note [1-D block shapes]).
  std::optional<Shape1d> shape_1d;
  // Launch as a programmatic dependent launch (gpu/runtime/dependent_launch.cuh, Note [dependent launch]):
  // the kernel's launch and start-up overlap the end of the kernel before it on the stream; its
  // blocks wait for that kernel to complete before they touch memory, so results are the same.
  // The reference kernels ignore it.
  bool dependent_launch = true;
};

// Inverse C2R, sign +1, times `scale` (1/(n_h n_w) normalizes): for each plane b,
//   x(y, x) = scale * sum_{kh < n_h} sum_{kw <= n_w/2} c_kw Re(X[b][kh][kw] exp(2 pi i (kh y/n_h + kw x/n_w)))
// with c_kw = 1 for kw = 0 and kw = n_w/2, 2 otherwise (the real part of the inverse of the
// Hermitian extension; for the spectrum of a real plane this is the exact inverse times n_h n_w).
// Only the window [out_off_h, out_off_h+out_h) × [out_off_w, out_off_w+out_w) of the n_h×n_w
// result is written, to output[b*out_plane_stride + (y-out_off_h)*out_ld + (x-out_off_w)].
struct InverseArgs {
  int64_t batch = 0;
  int n_h = 1, n_w = 0;
  const float2* input = nullptr;
  Layout layout = Layout::standard;
  int64_t ld_batch = 0;  // freq_major frequency stride; 0 means batch
  float* output = nullptr;
  int64_t out_h = 0, out_w = 0, out_off_h = 0, out_off_w = 0, out_ld = 0, out_plane_stride = 0;
  float scale = 1.f;
  Kernel kernel = Kernel::automatic;
  std::optional<Shape1d> shape_1d;  // as in ForwardArgs
  bool dependent_launch = true;     // as in ForwardArgs
  // inverse_window() only: a 3×3 or 5×5 window by its exact-size instance (true) or by the padded
  // bound 4 or 8 (false); which is faster depends on the batch (Note [window bounds]).
  bool window_exact = true;
  // inverse_window() only: lanes per plane (1, 4, 8 or 16), 0 = chosen from the batch and the SM
  // count (Note [pruned inverse to small windows]); the fbfft plan times them all.
  int window_split = 0;
};

// Sizes with a kernel: 1-D (n_h = 1) n_w in 2..256 (shuffle), 4..32 (registers), 64..256
// (fourstep); 2-D n_h, n_w in 2..64, and 128×128 (shuffle and register families), 2-D n_h, n_w in
// {32, 64, 128} (four-step family; in the freq_major layout launched as thread-block clusters) and
// 16×16 (four-step family, not in the freq_major layout); the squares of kSmoothSides2d (register
// family); every other 7-smooth size, 2-D sides 2..128 and 1-D 2..256 (Stockham family, which also
// runs the powers of two when asked for by name). A power-of-two 2-D size with a side of 128 and the
// other below 32 has no kernel.
bool supported(int n_h, int n_w, Kernel kernel = Kernel::automatic, Layout layout = Layout::standard);
// "automatic" (or "auto"), "shuffle", "registers", "fourstep", "lanes" or "stockham"; throws
// InvalidArgument naming `field`.
Kernel parse_kernel(std::string_view s, const std::string& field);
// The family that runs a size, layout and direction under a request (automatic resolved); throws
// like forward().
Kernel resolve_kernel(int n_h, int n_w, Kernel requested, Layout layout = Layout::standard, bool inverse = false);
// Largest supported side for 2-D transforms.
inline constexpr int kMaxSide2d = 128;
// The non-power-of-two 2-D sizes: squares of these even 7-smooth sides, by the register family in
// every layout (Note [smooth register FFT]; above 32 with two or four lanes per 1-D transform, Note
// [lane-split register FFT]): every even 7-smooth side up to 128 whose lanes hold at most 32 points
// (not 70, 90, 98, 126). A convolution's basis can then hold a 13x13 input in 14x14 (112
// frequencies) instead of 16x16 (144), a 46x46 one in 48x48 (1,200) instead of 64x64 (2,112).
inline constexpr int kSmoothSides2d[] = {6,  10, 12, 14, 18, 20, 24, 28, 30, 36, 40,  42,  48,
                                         50, 54, 56, 60, 72, 80, 84, 96, 100, 108, 112, 120};
// kSmoothSides2d is exactly the sides 2..128 that fbfft_smooth_side (common/fft_size.hpp, read by
// host code) names, in ascending order.
constexpr bool smooth_sides_agree() {
  int i = 0;
  const int count = int(sizeof(kSmoothSides2d) / sizeof(kSmoothSides2d[0]));
  for (int n = 2; n <= 128; ++n) {
    const bool listed = i < count && kSmoothSides2d[i] == n;
    if (listed != fbfft_smooth_side(n)) return false;
    i += listed;
  }
  return i == count;
}
static_assert(smooth_sides_agree(), "kSmoothSides2d must list the sides of fbfft_smooth_side");
// The index of side n in kSmoothSides2d, or -1 when n is not one of them.
constexpr int smooth_side_index(int n) {
  for (int i = 0; i < int(sizeof(kSmoothSides2d) / sizeof(kSmoothSides2d[0])); ++i)
    if (kSmoothSides2d[i] == n) return i;
  return -1;
}

// Throw InvalidArgument naming the field when the arguments are inconsistent (sizes, strides,
// offsets, null pointers with batch > 0, shape_1d.pairs not 0, 4, 8, 16 or 32, shape_1d.groups not 0, 2, 4 or 8) or Unsupported for a size without a kernel.
void validate(const ForwardArgs& a);
void validate(const InverseArgs& a);

// The transforms (asynchronous on `stream`), by the family `kernel` asks for or the automatic choice.
void forward(const ForwardArgs& a, cudaStream_t stream = nullptr);
void inverse(const InverseArgs& a, cudaStream_t stream = nullptr);

// The forward of small input windows (in_h, in_w <= kMaxWindow, 12) in the freq_major layout, as a
// direct DFT of the window (Note [pruned forward of small windows]): same contract as forward(),
// any n_h <= 256 and 2 <= n_w <= 256 (not only powers of two: the cufft backend's smooth bases use
// it too); for convolution weights. window_supported() says
// whether it applies; forward_window() throws Unsupported when it does not.
inline constexpr int kMaxWindow = 12;
inline constexpr int kMaxWindowSide = 256;
bool window_supported(const ForwardArgs& a);
void forward_window(const ForwardArgs& a, cudaStream_t stream = nullptr);
// The inverse to small output windows (out_h, out_w <= kMaxWindow) from the freq_major layout, as a
// direct DFT at the window's points (Note [pruned inverse to small windows]); same contract as
// inverse(); for accGrad's weight gradient.
bool window_supported(const InverseArgs& a);
void inverse_window(const InverseArgs& a, cudaStream_t stream = nullptr);
// The lanes per plane inverse_window() has instances for (InverseArgs::window_split, besides 0).
inline constexpr int kWindowSplits[] = {1, 4, 8, 16};
// The lanes per plane inverse_window() runs `a` with: a.window_split, or when 0 the automatic choice.
int inverse_window_split(const InverseArgs& a);

// A depthwise pass in one kernel (Note [fused depthwise transforms]): for each plane b < batch, the
// forward of `in`'s window (as forward() with in.layout standard), times the kernel spectrum of
// channel b % channels (conjugated when conj), then the inverse to `out`'s window (as inverse()).
// The kernel spectra are `channels` planes of n × (n/2+1) in the standard layout (forward() of the
// kernels). Square sides of kDepthwiseSides only; in.batch, out.batch, in.output and out.input are
// not read (batch is the batch, the spectra stay in shared memory).
struct DepthwiseArgs {
  int64_t batch = 0;
  ForwardArgs in;
  InverseArgs out;
  const float2* kernel = nullptr;
  int64_t channels = 1;
  bool conj = false;
  bool dependent_launch = true;  // as in ForwardArgs
};
// The sides of the fused depthwise kernels: the powers of two 8..64 and the smooth sides from 8
// (kSmoothSides2d), every register 2-D square up to 120.
inline constexpr int kDepthwiseSides[] = {8,  10, 12, 14, 16, 18, 20, 24, 28, 30,  32,  36,  40,  42,
                                          48, 50, 54, 56, 60, 64, 72, 80, 84, 96, 100, 108, 112, 120};
constexpr int depthwise_side_index(int n) {
  for (int i = 0; i < int(sizeof(kDepthwiseSides) / sizeof(kDepthwiseSides[0])); ++i)
    if (kDepthwiseSides[i] == n) return i;
  return -1;
}
// The smallest side of kDepthwiseSides >= n, or 0 when n > 120.
int depthwise_side(int64_t n);
// Throws InvalidArgument naming the field for inconsistent arguments (as validate() of in and out,
// n_h != n_w, a side not in kDepthwiseSides, a null kernel, channels < 1, in.layout not standard).
void validate(const DepthwiseArgs& a);
void depthwise(const DepthwiseArgs& a, cudaStream_t stream = nullptr);
// accGrad's product of a depthwise layer: out[c][f] = sum_s x[s*C + c][f] * conj(g[s*C + c][f]) for
// c < C and the F frequencies of a plane (standard layout, planes contiguous).
void depthwise_weight_products(const float2* x, const float2* g, int64_t images, int64_t channels, int64_t freqs,
                               float2* out, cudaStream_t stream = nullptr);

// One axis of a tile grid (tiling/tile_plan.hpp AxisTiling): tile t keeps the output rows
// [origin + t*step, origin + t*step + min(step, extent - t*step)) and reads the padded input rows from
// the same origin, k - 1 more.
struct TileAxis {
  int64_t origin = 0, extent = 0, step = 0, count = 0;
};

// A tiled fprop (overlap-save, zero padding, dense stride-1) in one kernel per pass (Note [fused
// tiles]): for each item (tile t of image s, item = t*S + s), the forward of the tile's read window of
// every input channel, the products with the kernel spectra summed over the input channels, the
// inverse of each output channel and the store of its kept window into the output; the spectra stay
// in shared memory. The kernel spectra are fo*f planes n × (n/2+1) in the standard layout, plane
// j*f + i (forward() of the fo×f×kh×kw weights on the n×n basis); they are read coalesced, by every
// block (L2-resident where they fit).
struct FusedTilesArgs {
  int n = 0;                     // the tile basis n×n, a side of kFusedTileSides
  const float* input = nullptr;  // S×f×h×w
  int64_t S = 0, f = 0, h = 0, w = 0, ph = 0, pw = 0, kh = 0, kw = 0;
  const float2* kernel = nullptr;  // the kernel spectra
  int64_t fo = 0;
  float* output = nullptr;  // S×fo×out_h×out_w
  int64_t out_h = 0, out_w = 0;
  TileAxis rows, cols;
  int tiles_per_block = 0;  // items per block: 1, 2 or 4; 0 = fused_tiles_per_block(n, f)
  bool dependent_launch = true;  // as in ForwardArgs
};
inline constexpr int kFusedTileSides[] = {16, 32};
// The most bytes the input spectra of one block's tiles take in shared memory (Note [fused tiles]).
inline constexpr int64_t kFusedSpectraBudget = 156 * 1024;
// Bytes of one half spectrum in the fused kernel's shared memory (odd plane stride), 0 for a side
// without a fused kernel.
int64_t fused_tiles_plane_bytes(int n);
// Why (n, f) has no fused kernel ("" when it has one): n not in kFusedTileSides, or f half spectra
// above kFusedSpectraBudget.
std::string fused_tiles_unsupported(int n, int64_t f);
// The automatic items per block: the most of 4, 2, 1 whose block fits two to a multiprocessor, else 1.
int fused_tiles_per_block(int n, int64_t f);
// Dynamic shared memory of a block (Note [fused tiles]).
int64_t fused_tiles_smem_bytes(int n, int64_t f, int tiles_per_block);
// Throws InvalidArgument naming the field for inconsistent arguments (sizes, tile axes whose read
// window exceeds n, null pointers, tiles_per_block not 0, 1, 2 or 4) or Unsupported (with
// fused_tiles_unsupported's reason).
void validate(const FusedTilesArgs& a);
void fused_tiles_fprop(const FusedTilesArgs& a, cudaStream_t stream = nullptr);
// Registers, local memory and static shared memory of the kernel of side n (for reports).
std::string fused_tiles_attributes(int n);

// Direct-DFT twins with the same contract (one thread per output element, double accumulation),
// for tests; any n_h, n_w >= 1 (not only powers of two).
void forward_reference(const ForwardArgs& a, cudaStream_t stream = nullptr);
void inverse_reference(const InverseArgs& a, cudaStream_t stream = nullptr);

// Registers / spills / shared memory of the kernel for one size (for reports): "regs=.. lmem=..";
// `shape` selects the 1-D register / four-step instance (at its largest block; none: the automatic one);
// `batch` (>= 1), the instance and block size that a batch of whole contiguous planes launches, where
// they depend on it (the 8x8 and 16x16 four-lane kernels; none: the instance of 16,384 planes at the
// largest block).
std::string kernel_attributes(int n_h, int n_w, bool inverse, Kernel kernel = Kernel::automatic,
                              Layout layout = Layout::standard, const std::optional<Shape1d>& shape = std::nullopt,
                              std::optional<int64_t> batch = std::nullopt);

}  // namespace fftconv::fbfft
