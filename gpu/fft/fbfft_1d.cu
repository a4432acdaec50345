// fbfft 1-D kernels (n = 2..256): two real sequences of the batch packed into one complex warp FFT,
// split by Hermitian symmetry with one shuffle; clipped loads (forward) and clipped stores (inverse).
#include <array>
#include <utility>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/kernel_loop.cuh"
#include "gpu/fft/warp_fft.cuh"

namespace fftconv::fbfft::detail {
namespace {

// Each group of G lanes handles planes (2j, 2j+1) as z = x_{2j} + i x_{2j+1}; the loop over pairs is
// warp-uniform so every lane reaches every shuffle.
template <int LW>
__global__ void __launch_bounds__(kThreads) forward_1d_kernel(ForwardArgs a) {
  using Fft = WarpFft<(1 << LW)>;
  constexpr int kN = 1 << LW, kHalf = kN / 2, kG = Fft::kG, kR = Fft::kR;
  const int lane = threadIdx.x & 31;
  Fft fft;
  fft.init(lane % kG);
  wait_for_prior_grids();  // Note [dependent launch]
  const int64_t pairs = (a.batch + 1) / 2;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  for (const auto [j0, group_pairs] : warp_groups<kThreads>(pairs, Fft::kGroupsPerWarp)) {
    const int64_t pa = 2 * (j0 + lane / kG);
    const bool has_a = pa < a.batch, has_b = pa + 1 < a.batch;
    float2 v[kR];
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const int64_t xx = r * kG + fft.p_ - a.off_w;
      const bool inside = xx >= 0 && xx < a.in_w;
      v[r].x = (has_a && inside) ? __ldg(a.input + pa * a.in_plane_stride + xx) : 0.f;
      v[r].y = (has_b && inside) ? __ldg(a.input + (pa + 1) * a.in_plane_stride + xx) : 0.f;
    }
    fft.forward(v);
    float2 o[kR];
    fft.partner(v, o);
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const int k = fft.freq(r);
      if (k <= kHalf) {
        if (has_a) a.output[freq_offset(a.layout, pa, 0, k, 1, kHalf + 1, ldb)] = unpack_a(v[r], o[r]);
        if (has_b) a.output[freq_offset(a.layout, pa + 1, 0, k, 1, kHalf + 1, ldb)] = unpack_b(v[r], o[r]);
      }
    }
  }
}

// Lane (r, p) gathers Z[k] = A[k] + i B[k] at k = freq(r) from the half spectra (conjugate mirror
// for k > n/2, real parts only at 0 and n/2), runs the DIT inverse, and stores the window.
template <int LW>
__global__ void __launch_bounds__(kThreads) inverse_1d_kernel(InverseArgs a) {
  using Fft = WarpFft<(1 << LW)>;
  constexpr int kN = 1 << LW, kHalf = kN / 2, kG = Fft::kG, kR = Fft::kR;
  const int lane = threadIdx.x & 31;
  Fft fft;
  fft.init(lane % kG);
  wait_for_prior_grids();  // Note [dependent launch]
  const int64_t pairs = (a.batch + 1) / 2;
  const int64_t ldb = a.ld_batch ? a.ld_batch : a.batch;
  for (const auto [j0, group_pairs] : warp_groups<kThreads>(pairs, Fft::kGroupsPerWarp)) {
    const int64_t pa = 2 * (j0 + lane / kG);
    const bool has_a = pa < a.batch, has_b = pa + 1 < a.batch;
    float2 v[kR];
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const int k = fft.freq(r);
      const int kk = k <= kHalf ? k : kN - k;
      float2 za = has_a ? a.input[freq_offset(a.layout, pa, 0, kk, 1, kHalf + 1, ldb)] : make_float2(0.f, 0.f);
      float2 zb = has_b ? a.input[freq_offset(a.layout, pa + 1, 0, kk, 1, kHalf + 1, ldb)] : make_float2(0.f, 0.f);
      if (kk == 0 || kk == kHalf) {
        za.y = 0.f;
        zb.y = 0.f;
      } else if (k > kHalf) {
        za.y = -za.y;
        zb.y = -zb.y;
      }
      v[r] = pack_ab(za, zb);
    }
    fft.inverse(v);
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const int64_t ox = r * kG + fft.p_ - a.out_off_w;
      if (ox >= 0 && ox < a.out_w) {
        if (has_a) a.output[pa * a.out_plane_stride + ox] = v[r].x * a.scale;
        if (has_b) a.output[(pa + 1) * a.out_plane_stride + ox] = v[r].y * a.scale;
      }
    }
  }
}

// Launches a 1-D kernel of size 2^LW (forward or inverse) over a.batch planes, in pairs.
template <int LW, class Args>
void launch_1d(void (*kernel)(Args), const Args& a, cudaStream_t stream) {
  constexpr int kGroups = WarpFft<(1 << LW)>::kGroupsPerWarp * (kThreads / 32);  // pairs per block
  const int64_t work = ((a.batch + 1) / 2 + kGroups - 1) / kGroups;
  const int blocks = grid_blocks(reinterpret_cast<const void*>(kernel), kThreads, 0, work);
  launch_kernel(kernel, blocks, kThreads, 0, stream, 1, a);
}

template <int LW>
void launch_forward(const ForwardArgs& a, cudaStream_t stream) { launch_1d<LW>(forward_1d_kernel<LW>, a, stream); }
template <int LW>
void launch_inverse(const InverseArgs& a, cudaStream_t stream) { launch_1d<LW>(inverse_1d_kernel<LW>, a, stream); }

template <int LW>
const void* forward_kernel() { return reinterpret_cast<const void*>(forward_1d_kernel<LW>); }
template <int LW>
const void* inverse_kernel() { return reinterpret_cast<const void*>(inverse_1d_kernel<LW>); }

template <int LW>
constexpr Launcher make_launcher() {
  if constexpr (LW == 0) {
    return Launcher{};
  } else {
    return Launcher{&launch_forward<LW>, &launch_inverse<LW>, &forward_kernel<LW>, &inverse_kernel<LW>, 0};
  }
}

template <std::size_t... I>
constexpr std::array<Launcher, sizeof...(I)> make_table(std::index_sequence<I...>) {
  return {make_launcher<static_cast<int>(I)>()...};
}

constexpr auto kTable1d = make_table(std::make_index_sequence<kMaxLog1d + 1>{});

}  // namespace

const Launcher* launchers_1d() { return kTable1d.data(); }

}  // namespace fftconv::fbfft::detail
