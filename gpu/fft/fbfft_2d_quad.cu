// fbfft four-lane kernels (the four-step family's entries at 8x8 and 16x16, standard and transposed
// layouts): four threads per plane, whole 8- or 16-point transforms in registers, the transposition
// through the plane's shared-memory region. See Notes [16x16 four-lane kernels] and [8x8 four-lane
// kernels].
#include <cstdint>
#include <type_traits>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft_dispatch.hpp"
#include "gpu/fft/fourstep.cuh"
#include "gpu/fft/kernel_loop.cuh"

namespace fftconv::fbfft::detail {
namespace {

// Note [16x16 four-lane kernels]
// At 16x16 the row/column register kernels were issue-bound (forward, batch 65,536: 553 warp
// instructions per plane, 61% issue, DRAM 46%) and a plane is too large for one thread (256
// values). Here lane l of a plane's four threads owns rows 4l..4l+3 (two packed row pairs,
// RegFft<16> each) and then columns 2l, 2l+1 (lane 0's first column is the packed pair of the real
// columns 0 and 8). A block has 32 planes; plane q's region holds 76 16-byte groups (76 = 4 mod 8):
// row y (16 floats, or columns 0..7 of its half spectrum as 8 complex values) at group
// 4y + floor(y/4), so the four lanes' rows start in different banks and two planes' regions in
// complementary halves of a 128-byte line: the row reads, the row-spectrum writes and the column
// reads of a quarter-warp (two planes x four lanes) all hit distinct banks. A lane reads and
// writes only its own rows in the row phase (no barrier); __syncwarp separates the phases that
// cross lanes. Outputs are staged in the layout's global order (standard or transposed, one
// inlined copy each) and copied out in 16-byte pieces.
// Loads: whole planes in a grid of one wave (the wholeness checked on the host) take an instance
// that loads them with ld.global.nc into registers (16 or 18 16-byte pieces per thread) and then
// stages them (16,384 planes on an H100: forward 79% -> 87% of the copy bandwidth); grids whose
// blocks loop keep cp.async, where the register loads were 4-6% slower.
struct Quad {
  static constexpr int kN = 16, kNw2 = 9, kPlanes = 32, kThreads = 128;
  static constexpr int kRegion = 76;  // 16-byte groups per plane
  static constexpr int kSmemBytes = kPlanes * kRegion * 16;
  static constexpr int rowg(int y) { return 4 * y + (y >> 2); }
};

__device__ __forceinline__ float4 f4(float2 a, float2 b) { return make_float4(a.x, a.y, b.x, b.y); }

// The packed row pairs of both four-lane kernels (N = 8, 16): rows r0 and r1 of N floats, N/4
// 16-byte groups each, transformed as z = r0 + i r1 by RegFft<N>; a row's half spectrum is kept as
// columns 0..N/2-1 with column 0 holding (X[0], X[N/2]) (both real) as one complex value, N/4 groups.

// Forward: the two rows' half spectra written over them.
template <int N>
__device__ __forceinline__ void row_pair_forward(float4* r0, float4* r1) {
  constexpr int kL = ilog2(N);
  float2 v[N];
  static_for<N / 4>([&](auto g) {
    const float4 x0 = r0[g], x1 = r1[g];
    v[4 * g] = make_float2(x0.x, x1.x);
    v[4 * g + 1] = make_float2(x0.y, x1.y);
    v[4 * g + 2] = make_float2(x0.z, x1.z);
    v[4 * g + 3] = make_float2(x0.w, x1.w);
  });
  RegFft<N>::forward(v);  // v[i] = Z[bitrev(i)]
  float2 s0[N / 2], s1[N / 2];
  static_for<N / 2>([&](auto k) {
    constexpr int ik = bitrev(k, kL), im = bitrev((N - k) % N, kL);
    if constexpr (k == 0) {
      s0[0] = make_float2(v[0].x, v[1].x);  // v[1] = Z[N/2]
      s1[0] = make_float2(v[0].y, v[1].y);
    } else {
      s0[k] = unpack_a(v[ik], v[im]);
      s1[k] = unpack_b(v[ik], v[im]);
    }
  });
  static_for<N / 4>([&](auto g) {
    r0[g] = f4(s0[2 * g], s0[2 * g + 1]);
    r1[g] = f4(s1[2 * g], s1[2 * g + 1]);
  });
}

// Inverse: the two rows' half spectra, Hermitian-extended and packed, replaced by the rows (times scale).
template <int N>
__device__ __forceinline__ void row_pair_inverse(float4* r0, float4* r1, float scale) {
  constexpr int kL = ilog2(N), kHalf = N / 2;
  float2 b0[kHalf], b1[kHalf];
  static_for<N / 4>([&](auto g) {
    const float4 w0 = r0[g], w1 = r1[g];
    b0[2 * g] = make_float2(w0.x, w0.y);
    b0[2 * g + 1] = make_float2(w0.z, w0.w);
    b1[2 * g] = make_float2(w1.x, w1.y);
    b1[2 * g + 1] = make_float2(w1.z, w1.w);
  });
  float2 v[N];
  static_for<N>([&](auto k) {
    float2 za, zb;
    if constexpr (k == 0) {
      za = make_float2(b0[0].x, 0.f);
      zb = make_float2(b1[0].x, 0.f);
    } else if constexpr (k == kHalf) {
      za = make_float2(b0[0].y, 0.f);
      zb = make_float2(b1[0].y, 0.f);
    } else if constexpr (k < kHalf) {
      za = b0[k];
      zb = b1[k];
    } else {
      za = conjf2(b0[N - k]);
      zb = conjf2(b1[N - k]);
    }
    v[k] = swap_ri(pack_ab(za, zb));
  });
  RegFft<N>::forward(v);  // swap(v[i]) = (r0 + i r1)[bitrev(i)]
  static_for<N / 4>([&](auto g) {
    constexpr int x0 = 4 * decltype(g)::value;
    constexpr int i0 = bitrev(x0, kL), i1 = bitrev(x0 + 1, kL), i2 = bitrev(x0 + 2, kL), i3 = bitrev(x0 + 3, kL);
    r0[g] = make_float4(v[i0].y * scale, v[i1].y * scale, v[i2].y * scale, v[i3].y * scale);
    r1[g] = make_float4(v[i0].x * scale, v[i1].x * scale, v[i2].x * scale, v[i3].x * scale);
  });
}

// The inverses' packed column 0 at frequency kh, swapped (both four-lane kernels, N = 8, 16): the
// Hermitian parts (the C2R contract) of the real columns 0 and N/2 of the staged spectrum s as one
// complex column; idx(kh, kw) is where frequency (kh, kw) sits in the layout.
template <int N, class Idx, class Kh>
__device__ __forceinline__ float2 packed_edge_columns(const float2* s, Idx idx, Kh kh) {
  constexpr std::integral_constant<int, (N - Kh::value) % N> km{};
  const float2 a0 = s[idx(kh, 0)], b0 = s[idx(km, 0)];
  const float2 a1 = s[idx(kh, N / 2)], b1 = s[idx(km, N / 2)];
  return swap_ri(pack_ab(unpack_a(a0, b0), unpack_a(a1, b1)));
}

// f(idx) with idx(kh, kw) the float2 index of frequency (kh, kw) in a staged spectrum of N rows and
// Nw2 = N / 2 + 1 columns, in the layout's order: standard kh * Nw2 + kw, transposed kw * N + kh (kh
// a compile-time constant, so the index folds into each access).
template <int N, class F>
__device__ __forceinline__ void with_spectrum_index(bool transposed, F&& f) {
  if (transposed)
    f([](auto kh, int kw) { return kw * N + decltype(kh)::value; });
  else
    f([](auto kh, int kw) { return decltype(kh)::value * (N / 2 + 1) + kw; });
}

// lane (or thread index), as a value that depends on the grid-stride loop's first plane (first >> 62 is 0 for any
// batch that fits in memory), so that neither NVVM nor ptxas hoists the index arithmetic that uses it
// out of the loop, above the first iteration's loads. (An empty asm volatile stops NVVM only: ptxas
// then computed ~50 loop-invariant staging and shared-memory indices ahead of the inverse's loads.)
__device__ __forceinline__ int late_lane(int lane, int64_t first) { return lane + static_cast<int>(first >> 62); }

// Whole: the host found whole planes (whole_planes<16>: the forward's input planes, the inverse's
// output windows, whole, contiguous and 16-byte aligned), moved in 16-byte pieces; otherwise each
// value is moved alone, clipped to its window. RegisterLoads (whole planes only): the block's 32
// planes loaded with ld.global.nc into registers and then staged, for grids of one wave; otherwise
// cp.async (Note [16x16 four-lane kernels]).
template <bool Whole, bool RegisterLoads>
__global__ void __launch_bounds__(Quad::kThreads, 4) forward_quad_kernel(ForwardArgs a) {
  static_assert(Whole || !RegisterLoads, "the register loads move whole planes");
  constexpr int kN = Quad::kN, kR = Quad::kRegion, kP = Quad::kPlanes;
  extern __shared__ __align__(16) float4 sm4[];
  const int t = threadIdx.x, q = t >> 2, l = t & 3;
  wait_for_prior_grids();  // Note [dependent launch]
  const bool transposed = a.layout == Layout::transposed;
  for (const auto [first, planes] : block_groups(a.batch, kP)) {  // Note [uniform plane loops]
    // (0) the input planes (zero outside the windows)
    if (RegisterLoads && planes == kP) {
      const float4* src = reinterpret_cast<const float4*>(a.input + first * (kN * kN));
      float4 v[kP * 64 / Quad::kThreads];
      static_for<kP * 64 / Quad::kThreads>([&](auto j) { v[j] = __ldg(src + t + Quad::kThreads * j); });
      const int tt = late_lane(t, first);
      float4* d = sm4 + (tt >> 6) * kR + Quad::rowg((tt & 63) >> 2) + (tt & 3);
      static_for<kP * 64 / Quad::kThreads>([&](auto j) { d[2 * kR * j] = v[j]; });
    } else if (Whole) {  // 16-byte copies, zero past the last plane of a partial group
      const float4* src = reinterpret_cast<const float4*>(a.input + first * (kN * kN));
      for (int e = t; e < kP * 64; e += Quad::kThreads) {
        const int pq = e >> 6, g = e & 63;
        cp_async<16>(sm4 + pq * kR + Quad::rowg(g >> 2) + (g & 3), pq < planes ? src + e : src, pq < planes);
      }
    } else {
      float* sf = reinterpret_cast<float*>(sm4);
      for (int e = t; e < kP * kN * kN; e += Quad::kThreads) {
        const int pq = e >> 8, y = (e >> 4) & 15, x = e & 15;
        const int64_t yy = y - a.off_h, xx = x - a.off_w;
        const bool inside = pq < planes && yy >= 0 && yy < a.in_h && xx >= 0 && xx < a.in_w;
        cp_async<4>(sf + (pq * kR + Quad::rowg(y)) * 4 + x,
                    inside ? a.input + (first + pq) * a.in_plane_stride + yy * a.in_ld + xx : a.input, inside);
      }
    }
    cp_async_wait_all();
    __syncthreads();
    float4* mine = sm4 + q * kR;
    float4* rows = mine + 17 * l;  // row 4l + r at rows[4 r + g] (rowg(4l + r) = 17 l + 4 r)
    // (1) rows 4l..4l+3: two packed pairs; each row's spectrum columns 0..7 (0: (A[0], A[8])) over it
    static_for<2>([&](auto jj) {
      constexpr int r0 = 2 * decltype(jj)::value;
      row_pair_forward<kN>(rows + 4 * r0, rows + 4 * (r0 + 1));
    });
    __syncwarp();  // the plane's row spectra are written
    // (2) columns 2l, 2l+1
    float2 c0[kN], c1[kN];
    static_for<kN>([&](auto y) {
      const float4 w = mine[Quad::rowg(y) + l];
      c0[y] = make_float2(w.x, w.y);
      c1[y] = make_float2(w.z, w.w);
    });
    RegFft<kN>::forward(c0);
    RegFft<kN>::forward(c1);
    __syncwarp();  // the plane's lanes have read their columns
    float2* o2 = reinterpret_cast<float2*>(mine);
    auto emit = [&](auto idx) {
      static_for<kN>([&](auto kh) {
        constexpr int i = bitrev(kh, 4), im = bitrev((kN - kh) % kN, 4);
        if (l == 0) {
          o2[idx(kh, 0)] = unpack_a(c0[i], c0[im]);
          o2[idx(kh, 8)] = unpack_b(c0[i], c0[im]);
        } else {
          o2[idx(kh, 2 * l)] = c0[i];
        }
        o2[idx(kh, 2 * l + 1)] = c1[i];
      });
    };
    with_spectrum_index<kN>(transposed, emit);
    __syncthreads();
    // (3) the spectra, 144 float2 (72 groups) per plane, contiguous in both layouts
    float2* out = a.output + first * (kN * Quad::kNw2);
    if ((reinterpret_cast<uintptr_t>(out) & 15) == 0) {  // 16-byte stores
      float4* o4 = reinterpret_cast<float4*>(out);
      for (int e = t; e < planes * 72; e += Quad::kThreads) {
        const int pq = e / 72, g = e - pq * 72;
        o4[e] = sm4[pq * kR + g];
      }
    } else {
      const float2* s2 = reinterpret_cast<const float2*>(sm4);
      for (int e = t; e < planes * 144; e += Quad::kThreads) {
        const int pq = e / 144, m = e - pq * 144;
        out[e] = s2[pq * kR * 2 + m];
      }
    }
    __syncthreads();
  }
}

template <bool Whole, bool RegisterLoads>
__global__ void __launch_bounds__(Quad::kThreads, 4) inverse_quad_kernel(InverseArgs a) {
  static_assert(Whole || !RegisterLoads, "the register loads move whole planes");
  constexpr int kN = Quad::kN, kR = Quad::kRegion, kP = Quad::kPlanes;
  extern __shared__ __align__(16) float4 sm4[];
  const int t = threadIdx.x, q = t >> 2, l = t & 3;
  wait_for_prior_grids();  // Note [dependent launch]
  const bool transposed = a.layout == Layout::transposed;
  for (const auto [first, planes] : block_groups(a.batch, kP)) {  // Note [uniform plane loops]
    // (0) the spectra, in their global order, at the start of each region
    const float2* in = a.input + first * (kN * Quad::kNw2);
    if (RegisterLoads && planes == kP) {
      const float4* i4 = reinterpret_cast<const float4*>(in);
      float4 v[kP * 72 / Quad::kThreads];
      static_for<kP * 72 / Quad::kThreads>([&](auto j) { v[j] = __ldg(i4 + t + Quad::kThreads * j); });
      const int tt = late_lane(t, first);
      static_for<kP * 72 / Quad::kThreads>([&](auto j) {
        const int e = tt + Quad::kThreads * j;
        sm4[e + e / 72 * (kR - 72)] = v[j];
      });
    } else if (Whole || (reinterpret_cast<uintptr_t>(in) & 15) == 0) {  // 16-byte copies, zero past the last plane
      const float4* i4 = reinterpret_cast<const float4*>(in);
      for (int e = t; e < kP * 72; e += Quad::kThreads) {
        const int pq = e / 72, g = e - pq * 72;
        cp_async<16>(sm4 + pq * kR + g, pq < planes ? i4 + e : i4, pq < planes);
      }
    } else {
      float2* s2 = reinterpret_cast<float2*>(sm4);
      for (int e = t; e < kP * 144; e += Quad::kThreads) {
        const int pq = e / 144, m = e - pq * 144;
        const bool live = pq < planes;
        cp_async<8>(s2 + pq * kR * 2 + m, live ? in + e : a.input, live);
      }
    }
    cp_async_wait_all();
    __syncthreads();
    float4* mine = sm4 + q * kR;
    const float2* i2 = reinterpret_cast<const float2*>(mine);
    // (1) columns 2l, 2l+1 (lane 0: Hermitian parts of columns 0 and 8, packed), swapped
    float2 c0[kN], c1[kN];
    auto gather = [&](auto idx) {
      static_for<kN>([&](auto kh) {
        if (l == 0)
          c0[kh] = packed_edge_columns<kN>(i2, idx, kh);
        else
          c0[kh] = swap_ri(i2[idx(kh, 2 * l)]);
        c1[kh] = swap_ri(i2[idx(kh, 2 * l + 1)]);
      });
    };
    with_spectrum_index<kN>(transposed, gather);
    RegFft<kN>::forward(c0);  // swap(c[i]) = 16 B[y][c], y = bitrev(i)
    RegFft<kN>::forward(c1);
    __syncwarp();  // the plane's lanes have read their columns
    static_for<kN>([&](auto y) {
      constexpr int i = bitrev(y, 4);
      mine[Quad::rowg(y) + l] = f4(swap_ri(c0[i]), swap_ri(c1[i]));
    });
    __syncwarp();  // the plane's rows are complete
    // (2) rows 4l..4l+3: two packed pairs with the Hermitian extension, written back as real rows
    float4* rows = mine + 17 * l;
    static_for<2>([&](auto jj) {
      constexpr int r0 = 2 * decltype(jj)::value;
      row_pair_inverse<kN>(rows + 4 * r0, rows + 4 * (r0 + 1), a.scale);
    });
    __syncthreads();
    // (3) the output windows
    if (Whole) {  // 16-byte stores
      float4* dst = reinterpret_cast<float4*>(a.output + first * (kN * kN));
      for (int e = t; e < planes * 64; e += Quad::kThreads) {
        const int pq = e >> 6, g = e & 63;
        dst[e] = sm4[pq * kR + Quad::rowg(g >> 2) + (g & 3)];
      }
    } else {
      const float* sf = reinterpret_cast<const float*>(sm4);
      for (int e = t; e < planes * kN * kN; e += Quad::kThreads) {
        const int pq = e >> 8, y = (e >> 4) & 15, x = e & 15;
        const int64_t oy = y - a.out_off_h, ox = x - a.out_off_w;
        if (oy >= 0 && oy < a.out_h && ox >= 0 && ox < a.out_w)
          a.output[(first + pq) * a.out_plane_stride + oy * a.out_ld + ox] = sf[(pq * kR + Quad::rowg(y)) * 4 + x];
      }
    }
    __syncthreads();
  }
}

// Note [8x8 four-lane kernels]
// The one-thread-per-plane kernel (Note [one-thread 2-D kernels]) runs a batch of 16,384 8x8
// planes as 512 one-warp blocks: one warp per scheduler, stalled on its loads and its own dependent
// arithmetic. Four lanes per plane split that work evenly: lane l transforms the packed row pair
// (2l, 2l+1) (RegFft<8>) and then packed column l of the row spectra (column 0 packs the real
// columns 0 and 4 of the half spectrum, as in plane_forward), so the same batch runs four warps per
// scheduler, each a quarter as long. Each warp works alone on eight planes (no block barrier: the
// warps drift apart, so one warp's arithmetic overlaps another's loads): thread t of a warp is lane
// t/8 of plane t%8. Plane q's region is 21 16-byte groups (odd, so the eight planes of a
// quarter-warp fall in distinct banks): row y of the input, and then of the row spectra (the packed
// column 0, columns 1..3), at groups 2y, 2y+1; the spectra are staged in the layout's global order
// (40 float2 per plane) and copied out in 16-byte pieces. The inverse mirrors it (columns first,
// column 0 projected on the Hermitian parts of columns 0 and 4, the C2R contract).
// The memory path decides this kernel's time, not its arithmetic: contiguous whole planes (what
// batched transforms pass) take instances that load with ld.global.nc into registers before any
// other index arithmetic (late_lane keeps ptxas from hoisting the staging indices above the loads),
// and batches of a multiple of eight planes a Full instance without per-plane predicates. The
// stores stay staged and coalesced. Forward at 16,384 planes on an H100: 4.5 us, 70% of the copy
// bandwidth; a copy on this grid whose stores wait for its loads, as an FFT's must, reaches 69%.

struct Quad8 {
  static constexpr int kN = 8, kNw2 = 5, kWarpPlanes = 8;
  static constexpr int kRegion = 21;            // 16-byte groups per plane
  static constexpr int kMaxThreads = 128;       // the launcher takes 64 or 32 for small batches
  static constexpr int smem_bytes(int threads) { return threads / 32 * kWarpPlanes * kRegion * 16; }
  static constexpr int kSpecGroups = kN * kNw2 / 2;  // 20: a plane's spectrum, in 16-byte groups
  static_assert(kRegion == kSpecGroups + 1, "a staged spectrum piece e sits at region + e + e / kSpecGroups");
};

// Contiguous: the input planes whole and contiguous, input and output 16-byte aligned (the host's
// choice, so that this instance has no per-element paths and issues its loads first). Full (with
// Contiguous): the batch a multiple of eight, so that every warp has eight planes and no load or
// store needs a per-plane predicate.
template <bool Contiguous, bool Full = false>
__global__ void __launch_bounds__(Quad8::kMaxThreads) forward_quad8_kernel(ForwardArgs a) {
  static_assert(Contiguous || !Full, "Full is an instance of the contiguous path");
  constexpr int kN = Quad8::kN, kR = Quad8::kRegion, kWP = Quad8::kWarpPlanes, kSG = Quad8::kSpecGroups;
  extern __shared__ __align__(16) float4 sm4[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  wait_for_prior_grids();  // Note [dependent launch]
  float4* region = sm4 + warp * kWP * kR;  // this warp's eight planes
  for (const auto [first, planes] : warp_groups(a.batch, kWP)) {
    // (0) the warp's input planes (zero outside the windows)
    if constexpr (Contiguous) {
      // lane's 16-byte pieces: plane 2i + lane/16, group lane%16 (one base address, immediate
      // offsets), loaded into registers and then staged
      const float4* src = reinterpret_cast<const float4*>(a.input + first * (kN * kN)) + lane;
      float4 v[kWP * 16 / 32];
      static_for<kWP * 16 / 32>([&](auto i) {
        v[i] = Full || 2 * i + (lane >> 4) < planes ? __ldg(src + 32 * i) : make_float4(0.f, 0.f, 0.f, 0.f);
      });
      const int lo = late_lane(lane, first);
      float4* dst = region + (lo >> 4) * kR + (lo & 15);
      static_for<kWP * 16 / 32>([&](auto i) { dst[2 * kR * i] = v[i]; });
    } else {
      float* sf = reinterpret_cast<float*>(region);
      for (int e = lane; e < kWP * kN * kN; e += 32) {
        const int pq = e >> 6, y = (e >> 3) & 7, x = e & 7;
        const int64_t yy = y - a.off_h, xx = x - a.off_w;
        const bool inside = pq < planes && yy >= 0 && yy < a.in_h && xx >= 0 && xx < a.in_w;
        cp_async<4>(sf + pq * kR * 4 + y * kN + x,
                    inside ? a.input + (first + pq) * a.in_plane_stride + yy * a.in_ld + xx : a.input, inside);
      }
    }
    // The rest of the iteration's indices from here on (Note [8x8 four-lane kernels]: loads first).
    const int ln = late_lane(lane, first), q = ln & 7, l = ln >> 3;
    float4* mine = region + q * kR;
    const bool transposed = a.layout == Layout::transposed;
    if constexpr (!Contiguous) cp_async_wait_all();
    __syncwarp();
    // (1) rows 2l, 2l+1 packed; their spectra's columns 0..3 (0: (A[0], A[4])) over them
    row_pair_forward<kN>(mine + 4 * l, mine + 4 * l + 2);
    __syncwarp();  // the planes' row spectra are written
    // (2) column l
    float2 c[kN];
    const float2* m2 = reinterpret_cast<const float2*>(mine);
    static_for<kN>([&](auto y) { c[y] = m2[4 * y + l]; });
    RegFft<kN>::forward(c);  // c[i] = C[bitrev(i)]
    __syncwarp();  // the planes' lanes have read their columns
    float2* o2 = reinterpret_cast<float2*>(mine);
    auto emit = [&](auto idx) {
      static_for<kN>([&](auto kh) {
        constexpr int i = bitrev(kh, 3), im = bitrev((kN - kh) % kN, 3);
        const float2 ua = unpack_a(c[i], c[im]), ub = unpack_b(c[i], c[im]);
        o2[idx(kh, l)] = l == 0 ? ua : c[i];
        if (l == 0) o2[idx(kh, 4)] = ub;
      });
    };
    with_spectrum_index<kN>(transposed, emit);
    __syncwarp();
    // (3) the spectra, 40 float2 (20 groups) per plane, contiguous in both layouts
    float2* out = a.output + first * (kN * Quad8::kNw2);
    if constexpr (Contiguous) {
      float4* o4 = reinterpret_cast<float4*>(out);
      static_for<kWP * kSG / 32>([&](auto i) {
        const unsigned e = ln + 32 * i, pq = e / kSG;  // region + pq * kR + (e - pq * kSG)
        if (Full || pq < static_cast<unsigned>(planes)) o4[e] = region[e + pq];
      });
    } else {
      const float2* s2 = reinterpret_cast<const float2*>(region);
      for (int e = ln; e < planes * 2 * kSG; e += 32) {
        const int pq = e / (2 * kSG), m = e - pq * (2 * kSG);
        out[e] = s2[pq * kR * 2 + m];
      }
    }
    __syncwarp();
  }
}

// Contiguous: the output windows whole and contiguous, input and output 16-byte aligned. Full: as
// in the forward.
template <bool Contiguous, bool Full = false>
__global__ void __launch_bounds__(Quad8::kMaxThreads) inverse_quad8_kernel(InverseArgs a) {
  static_assert(Contiguous || !Full, "Full is an instance of the contiguous path");
  constexpr int kN = Quad8::kN, kR = Quad8::kRegion, kWP = Quad8::kWarpPlanes, kSG = Quad8::kSpecGroups;
  extern __shared__ __align__(16) float4 sm4[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  wait_for_prior_grids();  // Note [dependent launch]
  float4* region = sm4 + warp * kWP * kR;
  for (const auto [first, planes] : warp_groups(a.batch, kWP)) {
    // (0) the warp's spectra, in their global order, at the start of each region
    const float2* in = a.input + first * (kN * Quad8::kNw2);
    if constexpr (Contiguous) {
      // piece e = lane + 32 i of the warp's spectra: plane e / 20, so region + e + e / 20 (kR = 21)
      const float4* src = reinterpret_cast<const float4*>(in) + lane;
      float4 v[kWP * kSG / 32];
      static_for<kWP * kSG / 32>([&](auto i) {
        const bool live = Full || (lane + 32 * i) / kSG < planes;
        v[i] = live ? __ldg(src + 32 * i) : make_float4(0.f, 0.f, 0.f, 0.f);
      });
      const int lo = late_lane(lane, first);
      static_for<kWP * kSG / 32>([&](auto i) {
        const int e = lo + 32 * i;
        region[e + e / kSG] = v[i];
      });
    } else {
      float2* s2 = reinterpret_cast<float2*>(region);
      for (int e = lane; e < kWP * 2 * kSG; e += 32) {
        const int pq = e / (2 * kSG), m = e - pq * (2 * kSG);
        const bool live = pq < planes;
        cp_async<8>(s2 + pq * kR * 2 + m, live ? in + e : a.input, live);
      }
    }
    const int ln = late_lane(lane, first), q = ln & 7, l = ln >> 3;  // (loads first)
    float4* mine = region + q * kR;
    const bool transposed = a.layout == Layout::transposed;
    if constexpr (!Contiguous) cp_async_wait_all();
    __syncwarp();
    // (1) column l, swapped (lane 0: the Hermitian parts of columns 0 and 4, packed)
    const float2* i2 = reinterpret_cast<const float2*>(mine);
    float2 c[kN];
    auto gather = [&](auto idx) {
      static_for<kN>([&](auto kh) {
        if (l == 0)
          c[kh] = packed_edge_columns<kN>(i2, idx, kh);
        else
          c[kh] = swap_ri(i2[idx(kh, l)]);
      });
    };
    with_spectrum_index<kN>(transposed, gather);
    RegFft<kN>::forward(c);  // swap(c[i]) = 8 B[y][l], y = bitrev(i)
    __syncwarp();            // the planes' lanes have read their spectra
    float2* m2 = reinterpret_cast<float2*>(mine);
    static_for<kN>([&](auto y) { m2[4 * y + l] = swap_ri(c[bitrev(y, 3)]); });
    __syncwarp();  // the planes' rows are complete
    // (2) rows 2l, 2l+1: one packed pair with the Hermitian extension, written back as real rows
    row_pair_inverse<kN>(mine + 4 * l, mine + 4 * l + 2, a.scale);
    __syncwarp();
    // (3) the output windows
    if constexpr (Contiguous) {
      float4* dst = reinterpret_cast<float4*>(a.output + first * (kN * kN));
      static_for<kWP * 16 / 32>([&](auto i) {
        const int e = ln + 32 * i, pq = e >> 4, g = e & 15;
        if (Full || pq < planes) dst[e] = region[pq * kR + g];
      });
    } else {
      const float* sf = reinterpret_cast<const float*>(region);
      for (int e = ln; e < planes * kN * kN; e += 32) {
        const int pq = e >> 6, y = (e >> 3) & 7, x = e & 7;
        const int64_t oy = y - a.out_off_h, ox = x - a.out_off_w;
        if (oy >= 0 && oy < a.out_h && ox >= 0 && ox < a.out_w)
          a.output[(first + pq) * a.out_plane_stride + oy * a.out_ld + ox] = sf[pq * kR * 4 + y * kN + x];
      }
    }
    __syncwarp();
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }
// N x N transforms of whole planes: the forward's input planes whole, contiguous and 16-byte
// aligned; the inverse's output windows whole and contiguous, input and output 16-byte aligned.
template <int N>
bool whole_planes(const ForwardArgs& a) {
  return a.off_h == 0 && a.off_w == 0 && a.in_h >= N && a.in_w >= N && a.in_ld == N && a.in_plane_stride == N * N &&
         aligned16(a.input);
}
template <int N>
bool whole_planes(const InverseArgs& a) {
  return a.out_off_h == 0 && a.out_off_w == 0 && a.out_h == N && a.out_w == N && a.out_ld == N &&
         a.out_plane_stride == N * N && aligned16(a.input) && aligned16(a.output);
}
// (the 8x8 forward's contiguous instance also stores 16-byte pieces unconditionally)
bool contiguous8(const ForwardArgs& a) { return whole_planes<8>(a) && aligned16(a.output); }
bool contiguous8(const InverseArgs& a) { return whole_planes<8>(a); }

// Threads per block: 128 (four independent warps), halved down to 32 while the batch would fill
// fewer than four blocks per SM (finer blocks spread a small batch's warps over the SMs; measured
// against eight and two: the same at 16,384, 2% faster than eight at 32,768).
int64_t quad8_blocks(int64_t batch, int threads) {
  const int planes = threads / 32 * Quad8::kWarpPlanes;
  return (batch + planes - 1) / planes;
}
int quad8_threads(int64_t batch) {
  int threads = Quad8::kMaxThreads;
  while (threads > 32 && quad8_blocks(batch, threads) < 4 * static_cast<int64_t>(sm_count())) threads /= 2;
  return threads;
}
template <class Kernel, class Args>
void launch_quad8(Kernel* kernel, const Args& a, cudaStream_t stream) {
  const int threads = quad8_threads(a.batch), smem = Quad8::smem_bytes(threads);
  const int blocks = grid_blocks(reinterpret_cast<const void*>(kernel), threads, smem, quad8_blocks(a.batch, threads));
  launch_kernel(kernel, blocks, threads, smem, stream, 1, a);
}

template <class Kernel, class Args>
void launch_quad(Kernel* kernel, const Args& a, cudaStream_t stream) {
  const void* k = reinterpret_cast<const void*>(kernel);
  const int blocks = grid_blocks(k, Quad::kThreads, Quad::kSmemBytes, (a.batch + Quad::kPlanes - 1) / Quad::kPlanes);
  launch_kernel(kernel, blocks, Quad::kThreads, Quad::kSmemBytes, stream, 1, a);
}

// The grid of the 16x16 register instance for `batch` planes, 0 where it would loop.
int quad16_one_wave(const void* registers, int64_t batch) {
  const int64_t groups = (batch + Quad::kPlanes - 1) / Quad::kPlanes;
  const int blocks = grid_blocks(registers, Quad::kThreads, Quad::kSmemBytes, groups);
  return blocks == groups ? blocks : 0;
}
// Whole planes: the register-load instance where the grid is one wave (every block one group of 32
// planes), the cp.async one otherwise (Note [16x16 four-lane kernels]); other planes (windows,
// strides, offsets, misalignment) the clipped instance.
template <class Args>
void launch_quad16(void (*registers)(Args), void (*async)(Args), void (*clipped)(Args), const Args& a,
                   cudaStream_t stream) {
  if (!whole_planes<Quad::kN>(a)) return launch_quad(clipped, a, stream);
  if (const int blocks = quad16_one_wave(reinterpret_cast<const void*>(registers), a.batch))
    return launch_kernel(registers, blocks, Quad::kThreads, Quad::kSmemBytes, stream, 1, a);
  launch_quad(async, a, stream);
}
void launch_forward(const ForwardArgs& a, cudaStream_t stream) {
  launch_quad16(forward_quad_kernel<true, true>, forward_quad_kernel<true, false>, forward_quad_kernel<false, false>, a,
                stream);
}
void launch_inverse(const InverseArgs& a, cudaStream_t stream) {
  launch_quad16(inverse_quad_kernel<true, true>, inverse_quad_kernel<true, false>, inverse_quad_kernel<false, false>, a,
                stream);
}
// (for reports: the instances that batches of 16,384 whole planes run)
const void* forward_kernel() { return reinterpret_cast<const void*>(forward_quad_kernel<true, true>); }
const void* inverse_kernel() { return reinterpret_cast<const void*>(inverse_quad_kernel<true, true>); }

void batched16(int64_t batch, bool inverse, const void** kernel, int* threads, int* smem_bytes) {
  const void* registers = inverse ? inverse_kernel() : forward_kernel();
  const void* async = inverse ? reinterpret_cast<const void*>(inverse_quad_kernel<true, false>)
                              : reinterpret_cast<const void*>(forward_quad_kernel<true, false>);
  *kernel = quad16_one_wave(registers, batch) ? registers : async;
  *threads = Quad::kThreads;
  *smem_bytes = Quad::kSmemBytes;
}

constexpr Launcher kQuad16{&launch_forward, &launch_inverse, &forward_kernel, &inverse_kernel, Quad::kSmemBytes, Quad::kThreads,
                           nullptr, &batched16};
static_assert(Quad::kSmemBytes <= 48 * 1024, "the quad kernels use at most the default 48 KB of dynamic shared memory");

// Every warp of the batch has eight planes: the whole-warp (Full) instances.
bool full8(int64_t batch) { return batch % Quad8::kWarpPlanes == 0; }
void launch_forward8(const ForwardArgs& a, cudaStream_t stream) {
  if (!contiguous8(a)) return launch_quad8(forward_quad8_kernel<false>, a, stream);
  launch_quad8(full8(a.batch) ? forward_quad8_kernel<true, true> : forward_quad8_kernel<true, false>, a, stream);
}
void launch_inverse8(const InverseArgs& a, cudaStream_t stream) {
  if (!contiguous8(a)) return launch_quad8(inverse_quad8_kernel<false>, a, stream);
  launch_quad8(full8(a.batch) ? inverse_quad8_kernel<true, true> : inverse_quad8_kernel<true, false>, a, stream);
}
// (for reports: the contiguous instances of whole warps, which batched transforms of 8k whole planes run)
const void* forward_kernel8() { return reinterpret_cast<const void*>(forward_quad8_kernel<true, true>); }
const void* inverse_kernel8() { return reinterpret_cast<const void*>(inverse_quad8_kernel<true, true>); }

void batched8(int64_t batch, bool inverse, const void** kernel, int* threads, int* smem_bytes) {
  const bool full = full8(batch);
  if (inverse)
    *kernel = full ? inverse_kernel8() : reinterpret_cast<const void*>(inverse_quad8_kernel<true, false>);
  else
    *kernel = full ? forward_kernel8() : reinterpret_cast<const void*>(forward_quad8_kernel<true, false>);
  *threads = quad8_threads(batch);
  *smem_bytes = Quad8::smem_bytes(*threads);
}

constexpr Launcher kQuad8{&launch_forward8, &launch_inverse8, &forward_kernel8, &inverse_kernel8,
                          Quad8::smem_bytes(Quad8::kMaxThreads), Quad8::kMaxThreads, nullptr, &batched8};

}  // namespace

const Launcher* launcher_2d_quad16() { return &kQuad16; }
const Launcher* launcher_2d_quad8() { return &kQuad8; }

}  // namespace fftconv::fbfft::detail
