// The Hopper 3xTF32 complex GEMM (see wgmma_3xtf32.hpp, Note [warpgroup 3xtf32]).
#include "gpu/gemm/wgmma_3xtf32.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <string>

#include "common/errors.hpp"
#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/arch/reg_reconfig.h"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/dependent_launch.cuh"
#include "gpu/runtime/launch_shape.hpp"

namespace fftconv::products::wgmma3x {

// Note [warpgroup 3xtf32]
// A complex product C = L·R^T (L rows×K, R cols×K, both complex) as two real tensor-core GEMMs on
// the same right operand. R is laid out as a real matrix R~ of 2·cols rows whose row 2c holds
// Re R(c, :) and row 2c+1 holds Im R(c, :); then P = Re L · R~^T and Q = Im L · R~^T give
//   Re C(r, c) = P(r, 2c) − Q(r, 2c+1),   Im C(r, c) = P(r, 2c+1) + Q(r, 2c),
// and the two columns 2c, 2c+1 of a warpgroup accumulator sit in one thread, so the combination
// costs no data movement. Each fp32 value x is split as x = big + small (big: x with its 13 low
// bits cleared, small: x − big rounded to TF32), and each real product is big·big + small·big +
// big·small: 6 warpgroup MMAs per 8-deep slice of K, the 12 TF32 products a complex 3xTF32 GEMM
// needs. A CTA of three warpgroups computes 128 rows × 64 complex columns (Note [split tail wave]):
//   - Two MMA warpgroups of 64 rows each hold L in registers, in the MMAs' A-fragment layout: each
//     thread copies exactly the values its fragments hold with cp.async into its own column of a
//     ring 3 slices ahead, and splits them in place once its MMAs of the slice before are done.
//   - A producer warpgroup copies R's raw 16-deep slices the same way and splits each into R~'s
//     swizzled K-major shared memory (TF32 MMAs read their B operand from there), in a ring of 4
//     stages handed over by mbarriers: "full" when a stage is split, "empty" when every MMA warp
//     has read it. The MMA warpgroups meet only there, never at a CTA-wide barrier, so one splits
//     while the other's MMAs run. The producer gives back registers (setmaxnreg) to the MMA
//     warpgroups' 128 accumulators a thread.
//   - Raw slices are read in the layout the passes store (either dimension contiguous,
//     conjugated or not).
// Invariant: a thread reads only ring values it copied itself (cp.async.wait_group, no barrier);
// an R~ stage is rewritten only after its "empty" barrier has every MMA warp's arrival for the
// slice it held. Measured (H100, L5 fprop): 1.60× cuBLAS's fp32 CGEMM, against 1.48× with all
// eight warps splitting R~ between CTA-wide barriers.

namespace {

using namespace cute;

constexpr int kRows = 128;        // rows of L per CTA (two consumer warpgroups of 64)
constexpr int kCols = 64;         // complex columns of C per CTA: 128 rows of R~
constexpr int kDepth = 16;        // K per stage: one 64-byte swizzle row of TF32
constexpr int kConsumers = 256;   // the MMA warpgroups
constexpr int kProducers = 128;   // the warpgroup that splits R~
constexpr int kThreads = kConsumers + kProducers;
constexpr int kQuad = 4;          // k per unit of R: one 16-byte chunk
constexpr int kUnits = kCols * kDepth / kQuad / kProducers;  // units of R per producer thread and slice
static_assert(kUnits * kProducers * kQuad == kCols * kDepth, "units of R cover a slice");

using RightLayout = decltype(tile_to_shape(GMMA::Layout_K_SW64_Atom<tfloat32_t>{},
                                           make_shape(Int<2 * kCols>{}, Int<kDepth>{})));
constexpr int kTileFloats = 2 * kCols * kDepth;  // one split part of the R~ tile
constexpr int kStages = 4;                       // split R~ stages between producer and MMAs
constexpr int kAhead = 3;                        // raw slices copied ahead of their use
constexpr int kSlots = kAhead + 1;               // raw slices in each thread's ring
constexpr int kLeftPerThread = kRows * kDepth / kConsumers;  // 8 complex values of L per thread and slice
constexpr int kRightPerThread = kUnits * kQuad;              // 8 complex values of R per producer thread
constexpr size_t kSplitBytes = size_t(kStages) * 2 * kTileFloats * sizeof(float);
constexpr size_t kLeftRingBytes = size_t(kSlots) * kLeftPerThread * kConsumers * sizeof(float2);
constexpr size_t kRightRingBytes = size_t(kSlots) * kRightPerThread * kProducers * sizeof(float2);
constexpr size_t kBarrierBytes = 2 * kStages * sizeof(uint64_t);
constexpr size_t kSmemBytes = kSplitBytes + kLeftRingBytes + kRightRingBytes + kBarrierBytes;
// Registers: the kernel is compiled for 65536 / 384 = 170 a thread; the producer gives back to 56
// and the consumers take 224 (2·128·224 + 128·56 <= 65536), which hold them without spills.
constexpr uint32_t kProducerRegs = 56, kConsumerRegs = 224;
constexpr int kMinSlicesSaved = 4;  // a split tail must save its CTAs this many slices (Note [split tail wave])

// Tiles (or slices) of `tile` covering `extent`.
__host__ __device__ constexpr int tiles_of(int extent, int tile) { return (extent + tile - 1) / tile; }

// cp.async of one complex value (8 bytes), zero-filled when `in` is false.
__device__ __forceinline__ void copy_async(float2* dst, const float2* src, bool in) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(in ? 8 : 0));
}
__device__ __forceinline__ void copy_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void copy_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

using MmaOp = decltype(GMMA::rs_op_selector<tfloat32_t, tfloat32_t, float, Shape<_64, Int<2 * kCols>, _8>,
                                            GMMA::Major::K, GMMA::Major::K>());
using TiledMma = decltype(make_tiled_mma(MmaOp{}, Layout<Shape<_2, _1, _1>>{}));
using LeftShape = Shape<Int<kRows>, Int<kDepth>>;
using AccShape = Shape<Int<kRows>, Int<2 * kCols>>;
using Barrier = cutlass::arch::ClusterBarrier;

// x with the 13 bits TF32 drops cleared (round toward zero: never overflows).
__device__ __forceinline__ float tf32_big(float x) { return __uint_as_float(__float_as_uint(x) & 0xffffe000u); }

// x rounded to the nearest TF32 value.
__device__ __forceinline__ float tf32_round(float x) {
  uint32_t u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
  return __uint_as_float(u);
}

// The 3xTF32 split of x: (big, small), x = big + small to within small's TF32 rounding.
__device__ __forceinline__ float2 tf32_split(float x) {
  const float big = tf32_big(x);
  return make_float2(big, tf32_round(x - big));
}

__device__ __forceinline__ tfloat32_t as_tf32(float x) { return tfloat32_t::bitcast(__float_as_uint(x)); }

// The big and small TF32 parts of 4 values, at one 16-byte chunk of two tiles.
__device__ __forceinline__ void put_split(float* big, float* small, int at, float x0, float x1, float x2, float x3) {
  const float2 s0 = tf32_split(x0), s1 = tf32_split(x1), s2 = tf32_split(x2), s3 = tf32_split(x3);
  *reinterpret_cast<float4*>(big + at) = make_float4(s0.x, s1.x, s2.x, s3.x);
  *reinterpret_cast<float4*>(small + at) = make_float4(s0.y, s1.y, s2.y, s3.y);
}

// Part `which` (0 big, 1 small) of R~'s split stage `stage`, and the same as the MMAs' B view.
__device__ __forceinline__ float* right_part(float* split, int stage, int which) {
  return split + (stage * 2 + which) * kTileFloats;
}
__device__ __forceinline__ auto right_view(float* split, int stage, int which) {
  return make_tensor(make_smem_ptr(reinterpret_cast<tfloat32_t*>(right_part(split, stage, which))), RightLayout{});
}

// One tile of C: its batch, its first row of L and its first column of R.
struct TileAt {
  int64_t q;
  int row0, col0;
};

// What one CTA works on (Note [persistent tiles]): whole tiles tile_base + blockIdx.x + i·gridDim.x
// for i < count, each over all of K; or, in a cluster that splits K, one tile and its part `part`
// of a.split parts of the slices, from slice `first`.
template <bool Split>
struct CtaWork {
  int count = 1, part = 0, first = 0, stages;
  __device__ explicit CtaWork(const Args& a) {
    stages = tiles_of(a.depth, kDepth);
    if constexpr (Split) {
      part = int(blockIdx.x % a.split);
      first = part * stages / a.split;
      stages = (part + 1) * stages / a.split - first;
    } else {
      count = int((a.tiles - blockIdx.x + gridDim.x - 1) / gridDim.x);
    }
  }
  __device__ TileAt tile(const Args& a, int i) const {
    const int index = int(a.tile_base) + (Split ? int(blockIdx.x) / a.split : int(blockIdx.x) + i * int(gridDim.x));
    const int per_batch = a.tiles_rows * a.tiles_cols;
    const int q = index / per_batch, tile = index - q * per_batch;
    return {q, (tile % a.tiles_rows) * kRows, (tile / a.tiles_rows) * kCols};
  }
};

// The next slice of a CTA's work to copy: tile i of its tiles, slice s of the tile's, and the ring
// position g of the slice in the CTA's whole sequence (which wraps with the ring, kSlots and
// kStages dividing 2^32).
struct Cursor {
  int i = 0, s = 0;
  uint32_t g = 0;
  __device__ void advance(int stages) {
    ++g;
    if (++s == stages) s = 0, ++i;
  }
};

// A raw ring of kSlots slices of PerThread complex values per thread, each thread in its own column
// (its copies land where only it reads them: cp.async.wait_group, no barrier; a warp's reads are 32
// consecutive 8-byte words).
template <int PerThread, int Threads>
struct RawRing {
  float2* base;
  int t;
  __device__ float2* at(uint32_t slice, int i) const {
    return base + (int(slice % kSlots) * PerThread + i) * Threads + t;
  }
  // Value j < kSlots·PerThread of the thread's column, the ring's slots read as one array.
  __device__ float2* column(int j) const { return base + j * Threads + t; }
};

// The producer warpgroup: copies the raw slices of R, through all of the CTA's tiles in one
// sequence, and splits each into the R~ stage the MMAs read, once the MMAs of the slice kStages
// before have released it.
template <bool RightKContig, bool Split>
__device__ void produce(const Args& a, const CtaWork<Split>& w, float* split, float2* ring_base, Barrier* full,
                        Barrier* empty) {
  const int t = threadIdx.x - kConsumers;
  const RawRing<kRightPerThread, kProducers> ring{ring_base, t};
  const float rsign = a.right.conj ? -1.f : 1.f;
  const auto view = right_view(split, 0, 0);
  // Unit j of thread t: 4 consecutive k of column c of R, rows 2c (real) and 2c+1 (imaginary) of
  // R~. With K contiguous 4 threads copy a column's 16 k; with columns contiguous a warp copies 32
  // consecutive columns at each k.
  int rcol[kUnits], rk[kUnits], at_re[kUnits], at_im[kUnits];
#pragma unroll
  for (int j = 0; j < kUnits; ++j) {
    const int u = t + j * kProducers;
    rcol[j] = RightKContig ? u / (kDepth / kQuad) : u % kCols;
    rk[j] = RightKContig ? u % (kDepth / kQuad) * kQuad : u / kCols * kQuad;
    at_re[j] = int(&view(2 * rcol[j], rk[j]) - &view(0, 0));
    at_im[j] = int(&view(2 * rcol[j] + 1, rk[j]) - &view(0, 0));
  }
  Cursor ahead;  // the next slice to copy
  auto fetch = [&] {
    if (ahead.i < w.count) {
      const TileAt tile = w.tile(a, ahead.i);
      const float2* rbase = a.right.p + tile.q * a.right.s_batch + int64_t(tile.col0) * a.right.s_row;
      const int rcols = a.cols - tile.col0;
      const int k0 = (w.first + ahead.s) * kDepth;
      const bool full_tile = tile.col0 + kCols <= a.cols && k0 + kDepth <= a.depth;
#pragma unroll
      for (int j = 0; j < kUnits; ++j) {
        const float2* rp = rbase + int64_t(rcol[j]) * a.right.s_row + int64_t(k0 + rk[j]) * a.right.s_k;
#pragma unroll
        for (int i = 0; i < kQuad; ++i) {
          const bool in = full_tile || (rcol[j] < rcols && k0 + rk[j] + i < a.depth);
          copy_async(ring.at(ahead.g, j * kQuad + i), in ? rp + i * a.right.s_k : rbase, in);
        }
      }
    }
    copy_commit();
    ahead.advance(w.stages);
  };
  for (int s = 0; s < kAhead; ++s) fetch();
  const int64_t slices = int64_t(w.count) * w.stages;
  uint32_t g = 0;
  for (int64_t n = 0; n < slices; ++n, ++g) {
    const int stage = g % kStages;
    copy_wait<kAhead - 1>();  // slice g has landed
    float2 rv[kRightPerThread];
#pragma unroll
    for (int i = 0; i < kRightPerThread; ++i) rv[i] = *ring.at(g, i);
    fetch();
    if (n >= kStages) empty[stage].wait(((g / kStages) + 1) & 1);  // the MMAs of slice g - kStages are done
    float* big = right_part(split, stage, 0);
    float* small = right_part(split, stage, 1);
#pragma unroll
    for (int j = 0; j < kUnits; ++j) {
      const float2* v = rv + j * kQuad;
      put_split(big, small, at_re[j], v[0].x, v[1].x, v[2].x, v[3].x);
      put_split(big, small, at_im[j], rsign * v[0].y, rsign * v[1].y, rsign * v[2].y, rsign * v[3].y);
    }
    cutlass::arch::fence_view_async_shared();  // the generic-proxy stores, visible to the MMAs
    full[stage].arrive();
  }
}

template <bool RightKContig, bool Split>
__global__ void __launch_bounds__(kThreads, 1) cgemm_kernel(Args a) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  float* split = reinterpret_cast<float*>(smem_raw);
  float2* left_ring = reinterpret_cast<float2*>(smem_raw + kSplitBytes);
  float2* right_ring = reinterpret_cast<float2*>(smem_raw + kSplitBytes + kLeftRingBytes);
  Barrier* full = reinterpret_cast<Barrier*>(smem_raw + kSplitBytes + kLeftRingBytes + kRightRingBytes);
  Barrier* empty = full + kStages;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      full[i].init(kProducers);
      empty[i].init(kConsumers / 32);
    }
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();
  // Launched as programmatic dependents (Note [split tail wave]): a split tail waits for the grid
  // before it and then releases the whole tiles' grid at once; that grid waits at its start, or,
  // after a tail, at its end, so that it completes only after the tail has.
  if constexpr (Split) {
    wait_for_prior_grids();
    release_dependents();
  } else if (!a.after_tail) {
    wait_for_prior_grids();
  }

  const CtaWork<Split> w(a);
  if (threadIdx.x >= kConsumers) {
    cutlass::arch::warpgroup_reg_dealloc<kProducerRegs>();
    produce<RightKContig, Split>(a, w, split, right_ring, full, empty);
    if constexpr (Split) {  // the cluster's two barriers of the reduction below
      cooperative_groups::this_cluster().sync();
      cooperative_groups::this_cluster().sync();
    }
    if (a.after_tail) wait_for_prior_grids();
    return;
  }
  cutlass::arch::warpgroup_reg_alloc<kConsumerRegs>();

  const float lsign = a.left.conj ? -1.f : 1.f;

  TiledMma mma;
  mma.accumulate_ = GMMA::ScaleOut::One;
  auto thr = mma.get_thread_slice(threadIdx.x);

  // L lives in registers, in the MMA's A-fragment layout: each thread copies exactly the (row, k)
  // its fragments hold and splits them there. Four fragments: Re and Im, big and small.
  Tensor lcoord = thr.partition_A(make_identity_tensor(LeftShape{}));  // (MMA, 1, kDepth/8) → (row, k)
  Tensor lrb = thr.partition_fragment_A(
      make_tensor(make_gmem_ptr(static_cast<const tfloat32_t*>(nullptr)), make_layout(LeftShape{}, LayoutRight{})));
  Tensor lrs = make_fragment_like(lrb), lib = make_fragment_like(lrb), lis = make_fragment_like(lrb);
  constexpr int kLeftValues = decltype(size(lrb))::value;
  static_assert(kLeftValues == kLeftPerThread, "a ring slot holds each thread's fragment values of L");

  const RawRing<kLeftPerThread, kConsumers> ring{left_ring, int(threadIdx.x)};
  float2 lv[kLeftValues];
  Cursor ahead;  // the next slice to copy
  auto fetch = [&] {  // issue the copies of the next slice, one commit group per call
    if (ahead.i < w.count) {
      const TileAt tile = w.tile(a, ahead.i);
      const float2* lbase = a.left.p + tile.q * a.left.s_batch + int64_t(tile.row0) * a.left.s_row;
      const int lrows = a.rows - tile.row0;
      const int k0 = (w.first + ahead.s) * kDepth;
      const float2* lp = lbase + int64_t(k0) * a.left.s_k;
      const bool full_tile = tile.row0 + kRows <= a.rows && k0 + kDepth <= a.depth;
#pragma unroll
      for (int i = 0; i < kLeftValues; ++i) {
        const bool in = full_tile || (get<0>(lcoord(i)) < lrows && k0 + get<1>(lcoord(i)) < a.depth);
        const int64_t off = int64_t(get<0>(lcoord(i))) * a.left.s_row + int64_t(get<1>(lcoord(i))) * a.left.s_k;
        copy_async(ring.at(ahead.g, i), in ? lp + off : lbase, in);
      }
    }
    copy_commit();
    ahead.advance(w.stages);
  };
  auto load = [&](uint32_t g) {  // slice g from its slot into registers (its copies have landed)
#pragma unroll
    for (int i = 0; i < kLeftValues; ++i) lv[i] = *ring.at(g, i);
  };
  auto split_left = [&] {
#pragma unroll
    for (int i = 0; i < kLeftValues; ++i) {
      const float2 re = tf32_split(lv[i].x), im = tf32_split(lsign * lv[i].y);
      lrb(i) = as_tf32(re.x), lrs(i) = as_tf32(re.y);
      lib(i) = as_tf32(im.x), lis(i) = as_tf32(im.y);
    }
  };

  Tensor acc_p = partition_fragment_C(mma, AccShape{});
  Tensor acc_q = partition_fragment_C(mma, AccShape{});
  // The registers the MMAs read and write stay where they are across the asynchronous region.
  auto fence_operands = [&] {
    warpgroup_fence_operand(acc_p);
    warpgroup_fence_operand(acc_q);
    warpgroup_fence_operand(lrb);
    warpgroup_fence_operand(lrs);
    warpgroup_fence_operand(lib);
    warpgroup_fence_operand(lis);
  };
  // Accumulator values 2j and 2j+1 of a thread are columns 2c and 2c+1 of one row (the GMMA
  // accumulator layout), i.e. the real and imaginary column of complex column c.
  Tensor coord = thr.partition_C(make_identity_tensor(AccShape{}));

  // Slice g's MMAs run while slice g+kAhead of L is copied and slice g+1 is read from its slot;
  // L's part goes into the fragments once the MMAs that read them are done. The warpgroups meet
  // only at the producer's barriers, so one splits while the other's MMAs run. The sequence runs
  // on through the CTA's tiles: the copies of a tile's first slices are in flight, and the
  // producer splits them, while the tile before stores its part of C.
  for (int s = 0; s < kAhead; ++s) fetch();
  const int64_t slices = int64_t(w.count) * w.stages;
  if (slices > 0) {
    copy_wait<kAhead - 1>();
    load(0);
    split_left();
  }
  uint32_t g = 0;
  int64_t n = 0;
  for (int i = 0; i < w.count; ++i) {
    clear(acc_p);
    clear(acc_q);
    for (int s = 0; s < w.stages; ++s, ++g, ++n) {
      const int stage = g % kStages;
      full[stage].wait((g / kStages) & 1);
      Tensor rb = thr.make_fragment_B(thr.partition_B(right_view(split, stage, 0)));
      Tensor rs = thr.make_fragment_B(thr.partition_B(right_view(split, stage, 1)));
      fence_operands();
      warpgroup_arrive();
#pragma unroll
      for (int kb = 0; kb < size<2>(lrb); ++kb) {
        cute::gemm(mma, lrs(_, _, kb), rb(_, _, kb), acc_p);
        cute::gemm(mma, lrb(_, _, kb), rs(_, _, kb), acc_p);
        cute::gemm(mma, lrb(_, _, kb), rb(_, _, kb), acc_p);
        cute::gemm(mma, lis(_, _, kb), rb(_, _, kb), acc_q);
        cute::gemm(mma, lib(_, _, kb), rs(_, _, kb), acc_q);
        cute::gemm(mma, lib(_, _, kb), rb(_, _, kb), acc_q);
      }
      warpgroup_commit_batch();
      fetch();
      const bool next = n + 1 < slices;
      if (next) {
        copy_wait<kAhead - 1>();  // slice g+1 has landed
        load(g + 1);
      }
      warpgroup_wait<0>();
      fence_operands();
      __syncwarp();
      if (threadIdx.x % 32 == 0) empty[stage].arrive();  // this warp's MMAs no longer read the stage
      if (next) split_left();
    }

    const TileAt tile = w.tile(a, i);
    float2* cbase = a.c + tile.q * a.c_batch;
    if constexpr (Split) {
      // Value j of the thread's part of C at its place, added to what is there when a.accumulate.
      auto store = [&](int j, float2 v) {
        const int r = tile.row0 + get<0>(coord(2 * j)), c = tile.col0 + get<1>(coord(2 * j)) / 2;
        if (r >= a.rows || c >= a.cols) return;
        float2* out = cbase + int64_t(r) * a.c_row + int64_t(c) * a.c_col;
        if (a.accumulate) {
          const float2 old = *out;
          v.x += old.x, v.y += old.y;
        }
        *out = v;
      };
      // The cluster's CTAs hold partial sums over their parts of K. Each writes its own into its
      // ring column; then CTA p adds up the p-th of every thread's values over the parts, in part
      // order (deterministic), through distributed shared memory, and stores them. The second
      // barrier keeps each CTA's shared memory until the others have read it.
      constexpr int kValues = decltype(size(acc_p))::value / 2;  // complex values of C a thread holds
      static_assert(kValues == kSlots * kLeftPerThread && kValues % kMaxSplit == 0, "ring columns hold C's parts");
      auto cluster = cooperative_groups::this_cluster();
      copy_wait<0>();
#pragma unroll
      for (int j = 0; j < kValues; ++j)
        *ring.column(j) = make_float2(acc_p(2 * j) - acc_q(2 * j + 1), acc_p(2 * j + 1) + acc_q(2 * j));
      cluster.sync();
      const int share = kValues / a.split;
      for (int j = w.part * share; j < (w.part + 1) * share; ++j) {
        float2 v = make_float2(0.f, 0.f);
        for (int p = 0; p < a.split; ++p) {
          const float2 x = *cluster.map_shared_rank(ring.column(j), p);
          v.x += x.x, v.y += x.y;
        }
        store(j, v);
      }
      cluster.sync();
    } else {
      // The store, unrolled over the accumulator: written through a per-value function, this
      // epilogue took 51 more IMADs (SASS), and a variant that combined all values before storing
      // ran 5-10% slower.
#pragma unroll
      for (int j = 0; j < size(acc_p); j += 2) {
        const int r = tile.row0 + get<0>(coord(j)), c = tile.col0 + get<1>(coord(j)) / 2;
        if (r >= a.rows || c >= a.cols) continue;
        float2 v = make_float2(acc_p(j) - acc_q(j + 1), acc_p(j + 1) + acc_q(j));
        float2* out = cbase + int64_t(r) * a.c_row + int64_t(c) * a.c_col;
        if (a.accumulate) {
          const float2 old = *out;
          v.x += old.x, v.y += old.y;
        }
        *out = v;
      }
    }
  }
  if (!Split && a.after_tail) wait_for_prior_grids();
}

// The kernel for a layout of R, whole tiles or clusters that split K.
const void* kernel_for(bool right_k_contig, bool split) {
  return right_k_contig ? (split ? reinterpret_cast<const void*>(&cgemm_kernel<true, true>)
                                 : reinterpret_cast<const void*>(&cgemm_kernel<true, false>))
                        : (split ? reinterpret_cast<const void*>(&cgemm_kernel<false, true>)
                                 : reinterpret_cast<const void*>(&cgemm_kernel<false, false>));
}

// The waves of tail_split on the current device, computed once per device with the kernels'
// shared memory limits set: the four kernels differ only in how they read R, so the whole-tile
// kernel and the split one of either layout have the same resources.
const int* device_waves() {
  struct Waves {
    int n[kMaxSplit + 1] = {};
  };
  return once_per_device<Waves>([](int) {
           for (const bool k : {true, false})
             for (const bool split : {true, false}) prepare_kernel(kernel_for(k, split), int(kSmemBytes));
           constexpr int64_t kEndless = int64_t(1) << 40;  // more work than a wave: grid_blocks gives the wave
           Waves w;
           w.n[1] = grid_blocks(kernel_for(true, false), kThreads, int(kSmemBytes), kEndless);
           for (int s = 2; s <= kMaxSplit; s *= 2)
             w.n[s] = grid_blocks(kernel_for(true, true), kThreads, int(kSmemBytes), kEndless, s) / s;
           return w;
         }).n;
}

// Launches a grid of `units` clusters of a.split CTAs over tiles [a.tile_base, a.tile_base + a.tiles), as a
// programmatic dependent of the grid before it (Note [dependent launch]).
void launch(const Args& a, int64_t units, cudaStream_t stream) {
  const LaunchConfig cfg(dim3(unsigned(units * a.split)), dim3(kThreads), kSmemBytes, stream, true, a.split);
  void* args[] = {const_cast<Args*>(&a)};
  FFTCONV_CUDA_CHECK(cudaLaunchKernelExC(&cfg.config, kernel_for(a.right.s_k == 1, a.split > 1), args));
}

// Padded tile area of an orientation: the work the CTAs do.
int64_t padded_area(int rows, int cols) {
  return int64_t(tiles_of(rows, kRows)) * kRows * tiles_of(cols, kCols) * kCols;
}

}  // namespace

void cgemm(Args a, cudaStream_t stream, const TailSplit* how) {
  if (a.batch == 0 || a.rows == 0 || a.cols == 0) return;
  // C^T = R·L^T: the same product with the sides exchanged, chosen when it pads less.
  if (padded_area(a.cols, a.rows) < padded_area(a.rows, a.cols)) {
    std::swap(a.left, a.right);
    std::swap(a.rows, a.cols);
    std::swap(a.c_row, a.c_col);
  }
  a.tiles_rows = tiles_of(a.rows, kRows);
  a.tiles_cols = tiles_of(a.cols, kCols);
  const int64_t tiles = int64_t(a.tiles_rows) * a.tiles_cols * a.batch;
  if (tiles > int64_t(0x7fffffff))
    throw Unsupported("products: math=3xtf32 runs at most 2^31-1 tiles per call, got " + std::to_string(tiles));
  // The last, partial wave's tiles in clusters that split K, then the whole waves of one CTA a tile
  // (Note [split tail wave]).
  const int* waves = device_waves();  // (also sets the kernels' shared memory limits)
  const TailSplit t = how ? *how : tail_split(tiles, tiles_of(a.depth, kDepth), waves);
  if (t.whole < tiles) {
    Args tail = a;
    tail.tile_base = t.whole, tail.tiles = tiles - t.whole, tail.split = t.split;
    launch(tail, tail.tiles, stream);
  }
  if (t.whole > 0) {  // at most one wave of CTAs, each through its share of the tiles (Note [persistent tiles])
    a.after_tail = t.whole < tiles;
    a.tiles = t.whole;
    launch(a, std::min<int64_t>(t.whole, t.ctas > 0 ? t.ctas : std::max(waves[1], 1)), stream);
  }
}

// Note [persistent tiles]
// The whole tiles run on at most one wave of CTAs, CTA b through tiles b, b + G, b + 2G, … of the
// grid's G, in one sequence of slices of K: the rings, the R~ stages and their barriers run on
// across tiles, so while a tile's accumulators are stored, the copies of the next tile's first
// kAhead slices are in flight and the producer splits up to kStages of them. One CTA a tile paid
// the load latency of its first slices, and an idle producer while its accumulators were stored,
// in every tile: the shallower K, the larger that share.
// Invariant: a CTA's slices are copied, split and consumed in one order, slice g of the sequence in
// ring slot g mod kSlots and stage g mod kStages; accumulators are cleared only after the MMAs of a
// tile's last slice have completed and its values are stored. Measured (H200, one run, against one
// CTA a tile): large_15 accGrad's products (K = 32) 0.125 -> 0.104 ms, L3's (K = 128) 4% faster,
// L5's (K = 384) unchanged.

// Note [split tail wave]
// A CTA of the kernel fills an SM (one resident a multiprocessor), so a launch of T tiles takes
// ceil(T / 132) waves on the H100 at the time of a full one: L5's fprop products (672 tiles, 5.09
// waves) took as long at 111 to 132 frequencies as at 112. The whole waves run one CTA a tile; the
// tiles of the last, partial wave run first, in clusters of s CTAs (s = 8, 4 or 2: the largest whose
// clusters all fit in one wave), each CTA on its s-th of K, and CTA p of a cluster adds up the p-th
// of the tile over the parts through distributed shared memory and stores it. Both grids are
// programmatic dependents (Note [dependent launch]): the clusters wait for the grid before them,
// then release the whole tiles' grid at once, whose CTAs take the SMs the clusters leave free and
// wait for the clusters only before they exit. Launched one after the other instead, the split
// cost about 10 us, as much as 6 slices of K, and did not pay at K = 128. A tail is split where
// it saves its CTAs at least kMinSlicesSaved slices; at K = 128, clusters of 2 measured within
// -0.5% and +2% of the whole tail, clusters of 4 or 8 from +3% (L3) to -9% (L4).
// Invariant: every element of C is stored once, by one CTA, with K summed in an order that
// depends only on the shape. Measured (H100, L5 fprop products, 672 tiles): 0.221 -> 0.195 ms.
TailSplit tail_split(int64_t tiles, int stages, const int waves[kMaxSplit + 1]) {
  const int64_t wave = waves[1];
  if (wave <= 0 || tiles % wave == 0) return {tiles, 1};
  const int64_t tail = tiles % wave;
  for (int s = kMaxSplit; s >= 2; s /= 2)
    if (tail <= waves[s] && tail * s <= wave && stages * (s - 1) >= kMinSlicesSaved * s) return {tiles - tail, s};
  return {tiles, 1};
}

}  // namespace fftconv::products::wgmma3x
