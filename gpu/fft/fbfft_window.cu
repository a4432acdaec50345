// fbfft transforms of small windows (at most kMaxWindow × kMaxWindow) as direct DFTs, in the
// freq_major layout: the forward of small input windows (Note [pruned forward of small windows]) and
// the inverse to small output windows (Note [pruned inverse to small windows]).
#include <algorithm>
#include <string>
#include <iterator>
#include <type_traits>
#include <utility>

#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/reg_fft.cuh"
#include "gpu/fft/warp_fft.cuh"

namespace fftconv::fbfft {
namespace {

// Note [pruned forward of small windows]
// A convolution's weights are kh×kw planes (3×3 in the paper's experiment) padded to the n_h×n_w
// basis: a full FFT reads almost nothing and computes mostly on zeros, and its cost is that of any
// transform of the basis (at S=128, 64×64, 16,384 weight planes took 0.5 ms of the fbfft fprop's
// 1.9 ms). Here each thread owns one plane and evaluates the DFT of its window directly, separably:
// for each kw, R[y] = sum_x w[y][x] W_nw^(kw (x + off_w)) (K×K terms), then for each kh of the
// block's rows X[kh][kw] = sum_y R[y] W_nh^(kh (y + off_h)) (K terms), with the powers of
// W_N = exp(-2 pi i / N) from a table in shared memory (all lanes read the same entry). Consecutive
// threads own consecutive planes, so every store of a warp is one 256-byte run of a frequency row
// of the freq_major layout: the kernel is bound by writing the spectra, which any forward must do.
// Blocks split the kw columns, then the kh rows, when the batch alone would leave SMs idle. Window points that fall
// outside the transform are ignored, as in forward(). The sides need not be powers of two (the
// cufft backend's 13-point bases): twiddle indices are reduced modulo n_h and n_w, incrementally in
// the kh loop (Note [window twiddle indices]).

// Note [window twiddle indices]
// The exponent of W_N in a term is (k j) mod N for a frequency k and a point j. Per frequency
// column kw the K indices (kw (x + off_w)) mod n_w are computed once (K remainders); along the kh
// loop each row's index (kh (y + off_h)) mod n_h advances by (step (y + off_h)) mod n_h with one
// conditional subtraction instead of a remainder, and the inverse walks its kh sum the same way.
// Tables of W_nh and W_nw (n_h + n_w entries, at most 256 each) sit in shared memory.

// Note [large windows]
// Up to 8×8 a thread keeps its window in registers (K = 2, 3, 4, 5, 8). Windows of 9..12 per side (the
// 9×9 and 11×11 kernels of L1-L3) take K = 12: the forward stages each thread's window in shared
// memory as [point][thread] (every read of a warp is conflict-free) with 64 threads per block
// (37 KB), and the inverse evaluates its outputs in two passes of K/2 rows each (reading the spectra
// twice) so that its accumulators stay in registers.
constexpr int kWindowThreads = 128;
constexpr int kStagedThreads = 64;  // forward blocks with a staged (K = 12) window

template <int K>
constexpr bool kStagedWindow = K > 8;

// Fills table[0 .. n_h) with W_nh^m and table[n_h .. n_h + n_w) with W_nw^m (block-wide).
__device__ void window_tables(float2* table, int n_h, int n_w) {
  for (int m = threadIdx.x; m < n_h + n_w; m += blockDim.x)
    table[m] = m < n_h ? detail::twiddle(2 * m, n_h) : detail::twiddle(2 * (m - n_h), n_w);
}

// Twiddle-index walker along a frequency axis of size n: index = (k j) mod n for k = k0, k0 + step, ...
struct IndexWalk {
  int index = 0, advance = 0, n = 1;
  IndexWalk() = default;
  __device__ IndexWalk(int k0, int step, int j, int n_) : n(n_) {
    const int jm = j % n;
    index = (k0 % n) * jm % n;
    advance = (step % n) * jm % n;
  }
  __device__ void next() {
    index += advance;
    if (index >= n) index -= n;
  }
};

template <int K>
__global__ void __launch_bounds__(kWindowThreads) forward_window_kernel(ForwardArgs a, int rows_per_block, int cols_per_block) {
  extern __shared__ float2 table[];  // W_nh^m, then W_nw^m; staged windows after them (Note [large windows])
  window_tables(table, a.n_h, a.n_w);
  wait_for_prior_grids();  // Note [dependent launch]
  const float2* table_w = table + a.n_h;
  const int nw2 = a.n_w / 2 + 1;
  const int64_t plane = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool live = plane < a.batch;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  constexpr bool kStaged = kStagedWindow<K>;
  float wr[kStaged ? 1 : K][kStaged ? 1 : K];
  float* staged = reinterpret_cast<float*>(table + a.n_h + a.n_w) + threadIdx.x;  // [point][thread]
  const float* src = a.input + (live ? plane : 0) * a.in_plane_stride;
  auto load = [&](int y, int x) {
    const bool inside = live && y < a.in_h && x < a.in_w && y + a.off_h < a.n_h && x + a.off_w < a.n_w;
    return inside ? __ldg(src + y * a.in_ld + x) : 0.f;
  };
  if constexpr (kStaged) {
#pragma unroll 4
    for (int i = 0; i < K * K; ++i) staged[i * blockDim.x] = load(i / K, i % K);  // not all in flight at once
  } else {
    detail::static_for<K>([&](auto y) { detail::static_for<K>([&](auto x) { wr[y][x] = load(y, x); }); });
  }
  __syncthreads();
  auto w = [&](int y, int x) -> float {
    // volatile: read per use; hoisted out of the kw loop, the K*K values would fill the registers
    if constexpr (kStaged) return static_cast<volatile const float*>(staged)[(y * K + x) * blockDim.x];
    else return wr[y][x];
  };
  const int kh0 = blockIdx.y * rows_per_block, kh1 = min(a.n_h, kh0 + rows_per_block);
  const int kw0 = blockIdx.z * cols_per_block, kw1 = min(nw2, kw0 + cols_per_block);
  float2* out = a.output + plane;
#pragma unroll 1
  for (int kw = kw0; kw < kw1; ++kw) {
    float2 r[K] = {};
    if constexpr (kStaged) {  // one window column at a time, read from shared memory
#pragma unroll 1
      for (int x = 0; x < K; ++x) {
        const float2 t = table_w[(kw * (x + static_cast<int>(a.off_w))) % a.n_w];
        detail::static_for<K>([&](auto y) {
          const float v = w(y, x);
          r[y].x += v * t.x;
          r[y].y += v * t.y;
        });
      }
    } else {
      float2 tw[K];
      detail::static_for<K>([&](auto x) { tw[x] = table_w[(kw * (x + static_cast<int>(a.off_w))) % a.n_w]; });
      detail::static_for<K>([&](auto y) {
        detail::static_for<K>([&](auto x) {
          const float v = w(y, x);
          r[y].x += v * tw[x].x;
          r[y].y += v * tw[x].y;
        });
      });
    }
    IndexWalk idx[K];
    detail::static_for<K>([&](auto y) { idx[y] = IndexWalk(kh0, 1, y + static_cast<int>(a.off_h), a.n_h); });
#pragma unroll 2
    for (int kh = kh0; kh < kh1; ++kh) {
      float2 acc = make_float2(0.f, 0.f);
      detail::static_for<K>([&](auto y) {
        const float2 t = table[idx[y].index];
        idx[y].next();
        acc.x += r[y].x * t.x - r[y].y * t.y;
        acc.y += r[y].x * t.y + r[y].y * t.x;
      });
      if (live) out[(static_cast<int64_t>(kh) * nw2 + kw) * ldb] = acc;
    }
  }
}

template <int K>
void launch_window(const ForwardArgs& a, cudaStream_t stream) {
  constexpr int threads = kStagedWindow<K> ? kStagedThreads : kWindowThreads;
  const int64_t plane_blocks = (a.batch + threads - 1) / threads;
  // Split the columns kw until there are about four blocks per SM (or one column per block), then
  // the rows kh. A column split costs nothing extra; a row split recomputes the window's column
  // sums R[y] in each block. (S = 16 in the paper's grid: 256 weight planes of 16x16 made 32
  // blocks of one row each, 5.8 us on the H100, the longer of fprop's two forked transforms after
  // Note [lane-split small batches]; split by columns 4.4 us, and 32x32 7.6 -> 4.9 us.)
  const int64_t want = 4 * static_cast<int64_t>(detail::sm_count());
  const int nw2 = a.n_w / 2 + 1;
  const int col_splits = static_cast<int>(std::clamp<int64_t>((want + plane_blocks - 1) / plane_blocks, 1, nw2));
  const int cols = (nw2 + col_splits - 1) / col_splits;
  const int64_t col_blocks = (nw2 + cols - 1) / cols;
  const int splits =
      static_cast<int>(std::clamp<int64_t>((want + plane_blocks * col_blocks - 1) / (plane_blocks * col_blocks), 1, a.n_h));
  const int rows = (a.n_h + splits - 1) / splits;
  const dim3 grid(static_cast<unsigned>(plane_blocks), static_cast<unsigned>((a.n_h + rows - 1) / rows),
                  static_cast<unsigned>(col_blocks));
  const std::size_t smem =
      (a.n_h + a.n_w) * sizeof(float2) + (kStagedWindow<K> ? std::size_t(K) * K * threads * sizeof(float) : 0);
  detail::launch_kernel(forward_window_kernel<K>, grid, threads, static_cast<int>(smem), stream, 1, a, rows, cols);
}

// Note [pruned inverse to small windows]
// accGrad keeps only a kh×kw window of each inverse (the weight gradient), so for windows up to
// kMaxWindow × kMaxWindow the inverse is evaluated there directly from the half spectrum:
//   out[y][x] = scale Re( sum_kh sum_{kw <= n_w/2} c_kw X[kh][kw] W_nh^-(kh (y + off_h)) W_nw^-(kw (x + off_w)) ),
// c_kw = 1 at kw = 0 and n_w/2, else 2: the C2R contract (columns 0 and n_w/2 projected on their
// Hermitian parts) in closed form. A block owns 32 consecutive planes (one per lane, so every warp
// load is a 256-byte run of a frequency row) and its kWindowWarps warps split the kw columns; per
// column a lane sums over kh into K values B[y], then adds c_kw Re(B[y] W_nw^-(kw (x + off_w))) to
// its K×K outputs; the warps' partial sums are added in a fixed order in shared memory, so the
// result does not depend on scheduling. It reads the spectra once and computes K + K×K terms per
// value; whether it beats the full inverse on a small batch (few blocks) is for the caller to time.
// For small batches (fewer blocks than SMs) the lanes of a warp split each plane's kh sum
// (Split lanes per plane, 32 / Split planes per block, Split times the blocks); the Split partial
// sums B[y] are added with a fixed butterfly of shuffles, so the result is still deterministic.
// The default (InverseArgs::window_split = 0) is Split = 4 while that keeps half of the SMs busy,
// else 16; the best split also depends on the plane size, so the fbfft plan times Split = 1, 4, 8
// and 16 (1,024 planes of 64x64 on an H100: 37.1 us at Split = 4, 17.8 us at 16).
constexpr int kWindowWarps = 8;

// Outputs of a pass reduced per round of the warps' partial sums: a divisor of n, at most 16.
constexpr int reduce_chunk(int n) {
  int d = n < 16 ? n : 16;
  while (n % d != 0) --d;
  return d;
}
static_assert(reduce_chunk(9) == 9 && reduce_chunk(25) == 5 && reduce_chunk(64) == 16 && reduce_chunk(72) == 12);

template <int K, int Split>
__device__ __forceinline__ void inverse_window_body(const InverseArgs& a) {
  constexpr int kPlanes = 32 / Split;               // planes per block (and per warp)
  constexpr int R = kStagedWindow<K> ? K / 2 : K;   // output rows per pass (Note [large windows])
  constexpr int kChunk = reduce_chunk(R * K);       // outputs reduced per round
  __shared__ float2 table[512];                     // W_nh^m, then W_nw^m (Note [window twiddle indices])
  __shared__ float part[kWindowWarps][kChunk][33];  // per warp, per output of the round, per lane
  window_tables(table, a.n_h, a.n_w);
  wait_for_prior_grids();  // Note [dependent launch]
  __syncthreads();
  const float2* table_w = table + a.n_h;
  const int nw2 = a.n_w / 2 + 1;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int slot = lane % kPlanes, share = lane / kPlanes;  // plane of the block, share of its kh sum
  const int64_t plane = static_cast<int64_t>(blockIdx.x) * kPlanes + slot;
  const bool live = plane < a.batch;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  const float2* in = a.input + (live ? plane : 0);
#pragma unroll 1
  for (int y0 = 0; y0 < a.out_h; y0 += R) {  // the same for every thread of the block
    float acc[R][K] = {};
#pragma unroll 1
    for (int kw = warp; kw < nw2; kw += kWindowWarps) {
      float2 b[R] = {};
      IndexWalk idx[R];
      detail::static_for<R>([&](auto y) {
        idx[y] = IndexWalk(share, Split, y0 + y + static_cast<int>(a.out_off_h), a.n_h);
      });
#pragma unroll 4
      for (int kh = share; kh < a.n_h; kh += Split) {
        const float2 v = live ? __ldcs(in + (static_cast<int64_t>(kh) * nw2 + kw) * ldb) : make_float2(0.f, 0.f);
        detail::static_for<R>([&](auto y) {
          const float2 t = table[idx[y].index];  // conj: W^-
          idx[y].next();
          b[y].x += v.x * t.x + v.y * t.y;
          b[y].y += v.y * t.x - v.x * t.y;
        });
      }
      if constexpr (Split > 1)
        for (int o = kPlanes; o < 32; o <<= 1)
          detail::static_for<R>([&](auto y) {
            b[y].x += __shfl_xor_sync(0xffffffffu, b[y].x, o);
            b[y].y += __shfl_xor_sync(0xffffffffu, b[y].y, o);
          });
      const float c = (kw == 0 || 2 * kw == a.n_w) ? 1.f : 2.f;
      detail::static_for<K>([&](auto x) {
        const float2 t = table_w[(kw * (x + static_cast<int>(a.out_off_w))) % a.n_w];
        detail::static_for<R>([&](auto y) { acc[y][x] += c * (b[y].x * t.x + b[y].y * t.y); });  // Re(b conj(t))
      });
    }
    // The warps' partial sums, kChunk outputs per round; warp w adds up outputs w, w + kWindowWarps, ..
    // of the round; lanes of the first share store (the others hold the same sums).
    detail::static_for<R * K / kChunk>([&](auto round) {
      detail::static_for<kChunk>([&](auto i) {
        constexpr int o = round * kChunk + i;
        part[warp][i][lane] = acc[o / K][o % K];
      });
      __syncthreads();
      for (int i = warp; i < kChunk; i += kWindowWarps) {
        float sum = 0.f;
        for (int w = 0; w < kWindowWarps; ++w) sum += part[w][i][lane];
        const int o = round * kChunk + i, y = y0 + o / K, x = o % K;
        if (live && share == 0 && y < a.out_h && x < a.out_w)
          a.output[plane * a.out_plane_stride + y * a.out_ld + x] = sum * a.scale;
      }
      __syncthreads();
    });
  }
}

// Up to K = 4 the blocks are held to 64 registers, four per SM: the exact 3×3 instance otherwise
// took 74 and three blocks per SM, and at 4,096 planes (512 blocks, one wave of four per SM) ran in
// two waves, 1.5× slower than the padded bound (H100, Note [window bounds]). The larger instances
// keep the compiler's own register choice (a cap spills them).
template <int K, int Split>
__global__ void __launch_bounds__(32 * kWindowWarps, 4) inverse_window_kernel_small(InverseArgs a) {
  inverse_window_body<K, Split>(a);
}
template <int K, int Split>
__global__ void __launch_bounds__(32 * kWindowWarps) inverse_window_kernel(InverseArgs a) {
  inverse_window_body<K, Split>(a);
}

}  // namespace

int inverse_window_split(const InverseArgs& a) {
  if (a.window_split != 0) return a.window_split;
  const int64_t sms = detail::sm_count();
  if ((a.batch + 31) / 32 >= sms) return 1;     // one plane per lane fills the SMs
  if ((a.batch + 7) / 8 >= sms / 2) return 4;   // four lanes per plane: at least half of the SMs busy
  return 16;  // sixteen lanes per plane (S = 16 in the paper's grid: 256 planes, 128 blocks instead of 32)
}

namespace {

template <int K>
void launch_inverse_window(const InverseArgs& a, cudaStream_t stream) {
  auto launch = [&](auto split) {
    constexpr int kPlanes = 32 / decltype(split)::value;  // planes per block
    const auto blocks = static_cast<unsigned>((a.batch + kPlanes - 1) / kPlanes);
    if constexpr (K <= 4)
      detail::launch_kernel(inverse_window_kernel_small<K, decltype(split)::value>, blocks, 32 * kWindowWarps, 0, stream, 1, a);
    else
      detail::launch_kernel(inverse_window_kernel<K, decltype(split)::value>, blocks, 32 * kWindowWarps, 0, stream, 1, a);
  };
  const int split = inverse_window_split(a);  // one of kWindowSplits (validate)
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((split == kWindowSplits[I] ? launch(std::integral_constant<int, kWindowSplits[I]>{}) : void()), ...);
  }(std::make_index_sequence<std::size(kWindowSplits)>{});
}

}  // namespace

namespace {

// The layout and sizes both pruned transforms take: freq_major, a window of at most kMaxWindow ×
// kMaxWindow and sides n_h in 1..256, n_w in 2..256 (any sizes: Note [window twiddle indices]).
bool window_shape_ok(Layout layout, int n_h, int n_w, int64_t win_h, int64_t win_w) {
  return layout == Layout::freq_major && win_h <= kMaxWindow && win_w <= kMaxWindow && n_h >= 1 && n_w >= 2 &&
         n_h <= kMaxWindowSide && n_w <= kMaxWindowSide;
}

// Throws Unsupported for `fn` when window_shape_ok fails; the window's fields are named.
void require_window_shape(const char* fn, const char* window, const char* fh, const char* fw, Layout layout, int n_h,
                          int n_w, int64_t win_h, int64_t win_w) {
  if (window_shape_ok(layout, n_h, n_w, win_h, win_w)) return;
  throw Unsupported(std::string("fbfft: ") + fn + " needs the freq_major layout, " + window + " of at most " +
                    std::to_string(kMaxWindow) + "x" + std::to_string(kMaxWindow) + " (" + fh + "=" +
                    std::to_string(win_h) + ", " + fw + "=" + std::to_string(win_w) +
                    ") and sizes n_h <= 256, 2 <= n_w <= 256 (n_h=" + std::to_string(n_h) + ", n_w=" + std::to_string(n_w) + ")");
}

// Note [window bounds]
// f(std::integral_constant<int, K>) with K = 2, 3, 4, 5, 8 or 12, the smallest bound of a window
// side k; with exact = false the odd bounds 3 and 5 are padded to 4 and 8. The exact instances do
// the common 3×3 and 5×5 kernels without the (4/3)^2 = 1.8 times the arithmetic of the padded bound
// (the forward of 3×3 weights on the paper's grid: 0.88× the time). The instances up to K = 4 are
// held to 64 registers (at 74 the exact inverse ran three blocks per SM instead of four and two
// waves at 4,096 planes). The forward always takes the exact bound; the fbfft plan still times the
// inverse both ways (InverseArgs::window_exact; Note [fbfft transform tuning]), a cheap guard on
// other GPUs.
template <class F>
void with_window_bound(int64_t k, bool exact, F&& f) {
  if (k <= 2)
    f(std::integral_constant<int, 2>{});
  else if (k == 3 && exact)
    f(std::integral_constant<int, 3>{});
  else if (k == 5 && exact)
    f(std::integral_constant<int, 5>{});
  else if (k <= 4)
    f(std::integral_constant<int, 4>{});
  else if (k <= 8)
    f(std::integral_constant<int, 8>{});
  else
    f(std::integral_constant<int, 12>{});
}

}  // namespace

bool window_supported(const ForwardArgs& a) { return window_shape_ok(a.layout, a.n_h, a.n_w, a.in_h, a.in_w); }

void forward_window(const ForwardArgs& a, cudaStream_t stream) {
  validate(a);
  require_window_shape("forward_window", "a window", "in_h", "in_w", a.layout, a.n_h, a.n_w, a.in_h, a.in_w);
  if (a.batch == 0) return;
  with_window_bound(std::max(a.in_h, a.in_w), true, [&](auto k) { launch_window<decltype(k)::value>(a, stream); });
}

bool window_supported(const InverseArgs& a) { return window_shape_ok(a.layout, a.n_h, a.n_w, a.out_h, a.out_w); }

void inverse_window(const InverseArgs& a, cudaStream_t stream) {
  validate(a);
  require_window_shape("inverse_window", "an output window", "out_h", "out_w", a.layout, a.n_h, a.n_w, a.out_h, a.out_w);
  if (a.batch == 0) return;
  with_window_bound(std::max(a.out_h, a.out_w), a.window_exact, [&](auto k) { launch_inverse_window<decltype(k)::value>(a, stream); });
}

}  // namespace fftconv::fbfft
