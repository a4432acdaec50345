// The Hopper 3xTF32 complex GEMM (see wgmma_3xtf32.hpp, Note [warpgroup 3xtf32]).
#include "gpu/gemm/wgmma_3xtf32.hpp"

#include <cooperative_groups.h>
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/errors.hpp"
#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/arch/reg_reconfig.h"
#include "gpu/runtime/cp_async.cuh"
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
// costs no data movement (a conjugated L negates Q: the sign is applied there). Each fp32 value x
// is split as x = big + small (big: x with its 13 low bits cleared, small: x − big in TF32), and
// each real product is big·big + small·big + big·small: 6 warpgroup MMAs per 8-deep slice of K, the
// 12 TF32 products of a complex 3xTF32 GEMM. A CTA of three warpgroups computes 128 rows × 64
// complex columns (Note [split tail wave]):
//   - Two MMA warpgroups of 64 rows each hold L in registers, in the MMAs' A-fragment layout: each
//     thread copies exactly the values its fragments hold with cp.async into its own column of a
//     ring 3 slices ahead, and splits them in place once its MMAs of the slice before are done.
//   - A producer warpgroup copies R's raw 16-deep slices the same way and splits each into R~'s
//     swizzled K-major shared memory (TF32 MMAs read their B operand from there), in a ring of 4
//     stages handed over by mbarriers: "full" when a stage is split, "empty" when every MMA warp
//     has read it. The MMA warpgroups meet only there, never at a CTA-wide barrier, so one splits
//     while the other's MMAs run; the producer's registers go to their accumulators (setmaxnreg).
//   - Raw slices are read in the layout the passes store (either dimension contiguous,
//     conjugated or not), by TMA where the layout allows it (Note [tma operand loads]).
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
// TMA loads (Note [tma operand loads]): each MMA warp's 16 rows of L and the producer's slice of R,
// in the raw rings' place (the same bytes), with one transaction barrier per slot.
constexpr int kConsumerWarps = kConsumers / 32;
constexpr int kWarpRows = 16;  // rows of L a warp's fragments of the m64 MMAs hold
constexpr uint32_t kLeftBoxBytes = kWarpRows * kDepth * sizeof(float2);
constexpr uint32_t kRightBoxBytes = kCols * kDepth * sizeof(float2);
static_assert(kConsumerWarps * kSlots * kLeftBoxBytes == kLeftRingBytes && kSlots * kRightBoxBytes == kRightRingBytes,
              "the TMA slots fill the raw rings");
constexpr size_t kBarrierBytes = (2 * kStages + (kConsumerWarps + 1) * kSlots) * sizeof(uint64_t);
constexpr size_t kSmemBytes = kSplitBytes + kLeftRingBytes + kRightRingBytes + kBarrierBytes;
// Registers: the kernel is compiled for 65536 / 384 = 170 a thread; the producer gives back to 56
// and the consumers take 224 (2·128·224 + 128·56 <= 65536), which hold them without spills.
constexpr uint32_t kProducerRegs = 56, kConsumerRegs = 224;
constexpr int kMinSlicesSaved = 12;  // a split tail must save its CTAs this many slices (Note [split tail wave])

// Tiles (or slices) of `tile` covering `extent`.
__host__ __device__ constexpr int tiles_of(int extent, int tile) { return (extent + tile - 1) / tile; }

using MmaOp = decltype(GMMA::rs_op_selector<tfloat32_t, tfloat32_t, float, Shape<_64, Int<2 * kCols>, _8>,
                                            GMMA::Major::K, GMMA::Major::K>());
using TiledMma = decltype(make_tiled_mma(MmaOp{}, Layout<Shape<_2, _1, _1>>{}));
using LeftShape = Shape<Int<kRows>, Int<kDepth>>;
using AccShape = Shape<Int<kRows>, Int<2 * kCols>>;
using Barrier = cutlass::arch::ClusterBarrier;
using TxBarrier = cutlass::arch::ClusterTransactionBarrier;

// Waits for phase `phase` of barrier b. CUTLASS's wait is an asm statement without a "memory" clobber,
// which lets the compiler move ordinary loads and stores of what the barrier guards above it; the
// clobber here keeps them below (this kernel reads TMA slots and writes split stages with plain C++).
template <class B>
__device__ __forceinline__ void wait_phase(B& b, uint32_t phase) {
  b.wait(phase);
  asm volatile("" ::: "memory");
}

// The two sides' tensor maps, kernel parameters (unused by the copies kernels).
struct Maps {
  CUtensorMap left, right;
};

// Byte offset of 8-byte value e (< 16) of line `line` of a TMA box of 128-byte lines written with the
// 128-byte swizzle: the 16-byte chunk's index XOR the line's, mod 8 (slots are 1024-byte aligned).
__device__ __forceinline__ int swizzled(int line, int e) {
  return line * 128 + ((((e >> 1) ^ line) & 7) << 4) + (e & 1) * 8;
}

// A TMA load of the box at (c0, c1, c2) of `map` into dst, completing on `bar`'s transaction count.
__device__ __forceinline__ void tma_load(const CUtensorMap* map, TxBarrier* bar, void* dst, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
          static_cast<unsigned>(__cvta_generic_to_shared(dst))),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar)))
      : "memory");
}

// The producer warpgroup's own barrier and the MMA warpgroups' (named barriers 1 and 2; 0 is
// __syncthreads').
__device__ __forceinline__ void producers_sync() { asm volatile("bar.sync 1, %0;" ::"n"(kProducers) : "memory"); }
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 2, %0;" ::"n"(kConsumers) : "memory"); }

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
  TileAt at{};  // tile at_i's place: computed once a tile, not at every slice
  int at_i = -1;
  template <bool Split>
  __device__ const TileAt& tile(const Args& a, const CtaWork<Split>& w) {
    if (at_i != i) at = w.tile(a, i), at_i = i;
    return at;
  }
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
// before have released it. With Tma, thread 0 loads each slice as one box into ring slot g mod
// kSlots, kSlots slices ahead, once the warpgroup has split the slot's slice before.
template <bool RightKContig, bool Split, bool Tma>
__device__ void produce(const Args& a, const CtaWork<Split>& w, float* split, float2* ring_base, Barrier* full,
                        Barrier* empty, const CUtensorMap* map, TxBarrier* raw_full) {
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
    if (ahead.i < w.count && ahead.s < w.stages) {  // (a cluster CTA's part of K may hold no slice)
      const TileAt& tile = ahead.tile(a, w);
      const int k0 = (w.first + ahead.s) * kDepth;
      if constexpr (Tma) {
        if (t == 0) {
          const int slot = int(ahead.g % kSlots);
          raw_full[slot].arrive_and_expect_tx(kRightBoxBytes);
          tma_load(map, &raw_full[slot], ring_base + slot * (kCols * kDepth), RightKContig ? 2 * k0 : 2 * tile.col0,
                   RightKContig ? tile.col0 : k0, int(tile.q));
        }
      } else {
        const float2* rbase = a.right.p + tile.q * a.right.s_batch + int64_t(tile.col0) * a.right.s_row;
        const int rcols = a.cols - tile.col0;
        const bool full_tile = tile.col0 + kCols <= a.cols && k0 + kDepth <= a.depth;
#pragma unroll
        for (int j = 0; j < kUnits; ++j) {
          const float2* rp = rbase + int64_t(rcol[j]) * a.right.s_row + int64_t(k0 + rk[j]) * a.right.s_k;
#pragma unroll
          for (int i = 0; i < kQuad; ++i) {
            const bool in = full_tile || (rcol[j] < rcols && k0 + rk[j] + i < a.depth);
            cp_async<sizeof(float2)>(ring.at(ahead.g, j * kQuad + i), in ? rp + i * a.right.s_k : rbase, in);
          }
        }
      }
    }
    if constexpr (!Tma) cp_async_commit();
    ahead.advance(w.stages);
  };
  // Slice g's raw values of the thread's units (its slot holds them).
  float2 rv[kRightPerThread];
  auto load = [&](uint32_t g) {
    if constexpr (Tma) {
      // The box: K contiguous, 64 lines of 16 k (swizzled); else 16 lines of 64 columns.
      const char* slot = reinterpret_cast<const char*>(ring_base + (g % kSlots) * (kCols * kDepth));
#pragma unroll
      for (int j = 0; j < kUnits; ++j) {
        float2* v = rv + j * kQuad;
        if constexpr (RightKContig) {
#pragma unroll
          for (int h = 0; h < kQuad; h += 2) {  // two values a 16-byte chunk
            const float4 x = *reinterpret_cast<const float4*>(slot + swizzled(rcol[j], rk[j] + h));
            v[h] = make_float2(x.x, x.y), v[h + 1] = make_float2(x.z, x.w);
          }
        } else {
#pragma unroll
          for (int i = 0; i < kQuad; ++i)
            v[i] = *reinterpret_cast<const float2*>(slot + ((rk[j] + i) * kCols + rcol[j]) * sizeof(float2));
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < kRightPerThread; ++i) rv[i] = *ring.at(g, i);
    }
  };
  for (int s = 0; s < (Tma ? kSlots : kAhead); ++s) fetch();
  const int64_t slices = int64_t(w.count) * w.stages;
  uint32_t g = 0;
  for (int64_t n = 0; n < slices; ++n, ++g) {
    const int stage = g % kStages;
    if constexpr (Tma) {
      wait_phase(raw_full[g % kSlots], (g / kSlots) & 1);
      load(g);
    } else {
      cp_async_wait_group<kAhead - 1>();  // slice g has landed
      load(g);
      fetch();
    }
    if (n >= kStages) wait_phase(empty[stage], ((g / kStages) + 1) & 1);  // slice g - kStages's MMAs are done
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
    if constexpr (Tma) {  // every thread has used what it read from the slot: it takes slice g + kSlots
      producers_sync();
      fetch();
    }
  }
}

// LeftKContig matters only with Tma (the copies read either layout of L alike).
template <bool LeftKContig, bool RightKContig, bool Split, bool Tma>
__global__ void __launch_bounds__(kThreads, 1) cgemm_kernel(Args a, const __grid_constant__ Maps maps) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  float* split = reinterpret_cast<float*>(smem_raw);
  float2* left_ring = reinterpret_cast<float2*>(smem_raw + kSplitBytes);
  float2* right_ring = reinterpret_cast<float2*>(smem_raw + kSplitBytes + kLeftRingBytes);
  Barrier* full = reinterpret_cast<Barrier*>(smem_raw + kSplitBytes + kLeftRingBytes + kRightRingBytes);
  Barrier* empty = full + kStages;
  TxBarrier* left_full = reinterpret_cast<TxBarrier*>(empty + kStages);  // kSlots per MMA warp
  TxBarrier* right_full = left_full + kConsumerWarps * kSlots;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      full[i].init(kProducers);
      empty[i].init(kConsumers / 32);
    }
    if constexpr (Tma)
      for (int i = 0; i < (kConsumerWarps + 1) * kSlots; ++i) left_full[i].init(1);
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
    produce<RightKContig, Split, Tma>(a, w, split, right_ring, full, empty, &maps.right, right_full);
    if constexpr (Split) {  // the cluster's two barriers of the reduction below
      cooperative_groups::this_cluster().sync();
      cooperative_groups::this_cluster().sync();
    }
    if (a.after_tail) wait_for_prior_grids();
    return;
  }
  cutlass::arch::warpgroup_reg_alloc<kConsumerRegs>();

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
  // With Tma, each warp's 16 rows of L come as one box a slice into the warp's own kSlots slots,
  // loaded by its lane 0 kSlots slices ahead, once the warp has split the slot's slice before.
  const int warp = int(threadIdx.x) / 32;
  float2* warp_slots = left_ring + warp * kSlots * (kWarpRows * kDepth);
  TxBarrier* warp_full = left_full + warp * kSlots;
  float2 lv[kLeftValues];
  // Byte offsets of the thread's values in a TMA slot: value i at off0 ^ delta(i), delta(i) the same
  // for every lane (the fragment's rows r, r + 8 and k, k + 4, k + 8, k + 12 differ from value 0's
  // in bits that the swizzle's XOR and the line stride do not mix with the lane's own), so it is
  // taken from thread 0's coordinates and folds to constants; a slice's loads cost no index
  // arithmetic but one XOR each.
  auto slot_offset = [](int r, int k) { return LeftKContig ? swizzled(r, k) : swizzled(k, r); };
  Tensor lcoord0 = mma.get_thread_slice(0).partition_A(make_identity_tensor(LeftShape{}));
  auto delta = [&](int i) {
    return slot_offset(get<0>(lcoord0(i)), get<1>(lcoord0(i))) ^ slot_offset(get<0>(lcoord0(0)), get<1>(lcoord0(0)));
  };
  int off0 = slot_offset(get<0>(lcoord(0)) - warp * kWarpRows, get<1>(lcoord(0)));
  asm volatile("" : "+r"(off0));  // kept in a register, not derived again from the thread index
  Cursor ahead;  // the next slice to copy
  auto fetch = [&] {  // issue the copies of the next slice (one commit group per call) or its TMA load
    if (ahead.i < w.count && ahead.s < w.stages) {  // (a cluster CTA's part of K may hold no slice)
      const TileAt& tile = ahead.tile(a, w);
      const int k0 = (w.first + ahead.s) * kDepth;
      if constexpr (Tma) {
        if (threadIdx.x % 32 == 0) {
          const int slot = int(ahead.g % kSlots), row0 = tile.row0 + warp * kWarpRows;
          warp_full[slot].arrive_and_expect_tx(kLeftBoxBytes);
          tma_load(&maps.left, &warp_full[slot], warp_slots + slot * (kWarpRows * kDepth),
                   LeftKContig ? 2 * k0 : 2 * row0, LeftKContig ? row0 : k0, int(tile.q));
        }
      } else {
        const float2* lbase = a.left.p + tile.q * a.left.s_batch + int64_t(tile.row0) * a.left.s_row;
        const int lrows = a.rows - tile.row0;
        const float2* lp = lbase + int64_t(k0) * a.left.s_k;
        const bool full_tile = tile.row0 + kRows <= a.rows && k0 + kDepth <= a.depth;
#pragma unroll
        for (int i = 0; i < kLeftValues; ++i) {
          const bool in = full_tile || (get<0>(lcoord(i)) < lrows && k0 + get<1>(lcoord(i)) < a.depth);
          const int64_t off = int64_t(get<0>(lcoord(i))) * a.left.s_row + int64_t(get<1>(lcoord(i))) * a.left.s_k;
          cp_async<sizeof(float2)>(ring.at(ahead.g, i), in ? lp + off : lbase, in);
        }
      }
    }
    if constexpr (!Tma) cp_async_commit();
    ahead.advance(w.stages);
  };
  auto load = [&](uint32_t g) {  // slice g from its slot into registers (its copies have landed)
    if constexpr (Tma) {
      // The box: L's K contiguous, 16 lines (rows) of 16 k; else 16 lines (k) of 16 rows; swizzled.
      wait_phase(warp_full[g % kSlots], (g / kSlots) & 1);
      const char* slot = reinterpret_cast<const char*>(warp_slots + (g % kSlots) * (kWarpRows * kDepth));
#pragma unroll
      for (int i = 0; i < kLeftValues; ++i) lv[i] = *reinterpret_cast<const float2*>(slot + (off0 ^ delta(i)));
    } else {
#pragma unroll
      for (int i = 0; i < kLeftValues; ++i) lv[i] = *ring.at(g, i);
    }
  };
  auto split_left = [&] {
#pragma unroll
    for (int i = 0; i < kLeftValues; ++i) {
      const float2 re = tf32_split(lv[i].x), im = tf32_split(lv[i].y);
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
  Tensor coord0 = mma.get_thread_slice(0).partition_C(make_identity_tensor(AccShape{}));
  // The complex value of C at accumulator values j, j + 1 (j even): P + iQ combined as Note
  // [warpgroup 3xtf32] says, with L's conjugation applied to Q here (it negates Q exactly), not to
  // Im L at every slice.
  const float lsign = a.left.conj ? -1.f : 1.f;
  auto c_value = [&](int j) {
    return make_float2(acc_p(j) - lsign * acc_q(j + 1), acc_p(j + 1) + lsign * acc_q(j));
  };
  // Stores v at out, added to what is there when `add` (a.accumulate; a constant where it is known).
  auto put = [](float2* out, float2 v, bool add) {
    if (add) {
      const float2 old = *out;
      v.x += old.x, v.y += old.y;
    }
    *out = v;
  };

  // Slice g's MMAs run while slice g+kAhead of L is copied (g+kSlots by TMA, into the slot slice g
  // held) and slice g+1 is read from its slot;
  // L's part goes into the fragments once the MMAs that read them are done. The warpgroups meet
  // only at the producer's barriers, so one splits while the other's MMAs run. The sequence runs
  // on through the CTA's tiles: the copies of a tile's first slices are in flight, and the
  // producer splits them, while the tile before stores its part of C.
  for (int s = 0; s < (Tma ? kSlots : kAhead); ++s) fetch();
  const int64_t slices = int64_t(w.count) * w.stages;
  if (slices > 0) {
    if constexpr (!Tma) cp_async_wait_group<kAhead - 1>();
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
      wait_phase(full[stage], (g / kStages) & 1);
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
      // With Tma: every lane has split slice g from its slot (the MMAs just issued read the split),
      // so the slot takes slice g + kSlots.
      if constexpr (Tma) __syncwarp();
      fetch();
      const bool next = n + 1 < slices;
      if (next) {
        if constexpr (!Tma) cp_async_wait_group<kAhead - 1>();  // slice g+1 has landed
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
      // Value j of the thread's part of C at its place.
      auto store = [&](int j, float2 v) {
        const int r = tile.row0 + get<0>(coord(2 * j)), c = tile.col0 + get<1>(coord(2 * j)) / 2;
        if (r >= a.rows || c >= a.cols) return;
        put(cbase + int64_t(r) * a.c_row + int64_t(c) * a.c_col, v, a.accumulate);
      };
      // The cluster's CTAs hold partial sums over their parts of K. Each writes its own into its
      // ring column; then CTA p adds up the p-th of every thread's values over the parts, in part
      // order (deterministic), through distributed shared memory, and stores them. The second
      // barrier keeps each CTA's shared memory until the others have read it.
      constexpr int kValues = decltype(size(acc_p))::value / 2;  // complex values of C a thread holds
      static_assert(kValues == kSlots * kLeftPerThread && kValues % kMaxSplit == 0, "ring columns hold C's parts");
      auto cluster = cooperative_groups::this_cluster();
      if constexpr (Tma) {  // the MMA warps' TMA slots overlap the columns: every warp has read its last
        consumers_sync();
      } else {
        cp_async_wait_group<0>();
      }
#pragma unroll
      for (int j = 0; j < kValues; ++j)
        *ring.column(j) = c_value(2 * j);
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
      // Value j of the thread's accumulator lies dr rows and dc complex columns from its value 0, the
      // same for every thread (the accumulator layout puts the thread's own offset in value 0's
      // place): taken from thread 0's coordinates, they fold to constants, and a store costs one
      // address from the thread's first and, in a whole tile, no bounds test. Written with each
      // value's place computed and tested, the store took about 36 instructions a value and the
      // epilogue a quarter of the MMA warps' stall samples at K = 128 (L3, ncu).
      const int r0 = tile.row0 + get<0>(coord(0)), c0 = tile.col0 + get<1>(coord(0)) / 2;
      float2* out0 = cbase + int64_t(r0) * a.c_row + int64_t(c0) * a.c_col;
      const bool whole = tile.row0 + kRows <= a.rows && tile.col0 + kCols <= a.cols;
      auto store_tile = [&](auto whole_tile, auto accumulate) {
#pragma unroll
        for (int j = 0; j < size(acc_p); j += 2) {
          const int dr = get<0>(coord0(j)) - get<0>(coord0(0)), dc = (get<1>(coord0(j)) - get<1>(coord0(0))) / 2;
          if constexpr (!decltype(whole_tile)::value)
            if (r0 + dr >= a.rows || c0 + dc >= a.cols) continue;
          put(out0 + dr * a.c_row + dc * a.c_col, c_value(j), decltype(accumulate)::value);
        }
      };
      if (a.accumulate)
        whole ? store_tile(cute::true_type{}, cute::true_type{}) : store_tile(cute::false_type{}, cute::true_type{});
      else
        whole ? store_tile(cute::true_type{}, cute::false_type{}) : store_tile(cute::false_type{}, cute::false_type{});
    }
  }
  if (!Split && a.after_tail) wait_for_prior_grids();
}

// The kernel for the sides' layouts, whole tiles or clusters that split K, TMA loads or copies.
template <bool Tma, bool LeftK, bool RightK>
const void* kernel_of(bool split) {
  return split ? reinterpret_cast<const void*>(&cgemm_kernel<LeftK, RightK, true, Tma>)
               : reinterpret_cast<const void*>(&cgemm_kernel<LeftK, RightK, false, Tma>);
}
const void* kernel_for(bool tma, bool left_k_contig, bool right_k_contig, bool split) {
  if (!tma) return right_k_contig ? kernel_of<false, false, true>(split) : kernel_of<false, false, false>(split);
  if (left_k_contig) return right_k_contig ? kernel_of<true, true, true>(split) : kernel_of<true, true, false>(split);
  return right_k_contig ? kernel_of<true, false, true>(split) : kernel_of<true, false, false>(split);
}

// The waves of tail_split on the current device, computed once per device with the kernels'
// shared memory limits set: the kernels differ only in how they read L and R, so the whole-tile
// kernel and the split one of any layout have the same resources.
const int* device_waves() {
  struct Waves {
    int n[kMaxSplit + 1] = {};
  };
  return once_per_device<Waves>([](int) {
           for (const bool tma : {true, false})
             for (const bool lk : {true, false})
               for (const bool rk : {true, false})
                 for (const bool split : {true, false})
                   prepare_kernel(kernel_for(tma, lk, rk, split), int(kSmemBytes));
           constexpr int64_t kEndless = int64_t(1) << 40;  // more work than a wave: grid_blocks gives the wave
           Waves w;
           w.n[1] = grid_blocks(kernel_for(false, false, true, false), kThreads, int(kSmemBytes), kEndless);
           for (int s = 2; s <= kMaxSplit; s *= 2)
             w.n[s] = grid_blocks(kernel_for(false, false, true, true), kThreads, int(kSmemBytes), kEndless, s) / s;
           return w;
         }).n;
}

// cuTensorMapEncodeTiled from the driver (no link to libcuda); null where the driver has none.
using EncodeTiled = decltype(&cuTensorMapEncodeTiled);
EncodeTiled encoder() {
  static const EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return EncodeTiled(nullptr);
    }
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

// The tensor map of one side of `extent` rows, read `box` rows a slice (Note [tma operand loads]):
// with K contiguous as floats (2·depth, extent, batch) in boxes of 16 k by `box` lines, else as
// (2·extent, depth, batch) in boxes of `box` rows by 16 lines; 128-byte lines swizzled. False
// where TMA cannot address the side: a base or a stride not a multiple of 16 bytes.
bool encode(CUtensorMap* map, const Side& s, int extent, int depth, int64_t batch, int box) {
  const EncodeTiled fn = encoder();
  const bool k_contig = s.s_k == 1;
  const int64_t pitch = k_contig ? s.s_row : s.s_k;  // complex values between lines
  const int lines_per_batch = k_contig ? extent : depth;
  const uint64_t lines = uint64_t(pitch) * 8,
                 next = batch > 1 ? uint64_t(s.s_batch) * 8 : lines * uint64_t(lines_per_batch);
  auto ok = [](uint64_t bytes) { return bytes > 0 && bytes % 16 == 0 && bytes < (uint64_t(1) << 40); };
  if (!fn || pitch <= 0 || s.s_batch < 0 || reinterpret_cast<uintptr_t>(s.p) % 16 != 0 || !ok(lines) || !ok(next) ||
      batch > int64_t(0x7fffffff))
    return false;
  const cuuint64_t dims[3] = {cuuint64_t(2) * cuuint64_t(k_contig ? depth : extent),
                              cuuint64_t(lines_per_batch), cuuint64_t(batch)};
  const cuuint64_t strides[2] = {lines, next};
  const cuuint32_t boxes[3] = {cuuint32_t(2 * (k_contig ? kDepth : box)), cuuint32_t(k_contig ? box : kDepth), 1};
  const cuuint32_t steps[3] = {1, 1, 1};
  const bool swizzle = boxes[0] * sizeof(float) == 128;
  return fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<float2*>(s.p), dims, strides, boxes, steps,
            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Both sides' tensor maps; false where either side needs the copies.
bool encode_maps(Maps* maps, const Args& a) {
  return a.loads == Loads::automatic && encode(&maps->left, a.left, a.rows, a.depth, a.batch, kWarpRows) &&
         encode(&maps->right, a.right, a.cols, a.depth, a.batch, kCols);
}

// Launches a grid of `units` clusters of a.split CTAs over tiles [a.tile_base, a.tile_base + a.tiles), as a
// programmatic dependent of the grid before it (Note [dependent launch]), with TMA loads when `tma`.
void launch(const Args& a, const Maps& maps, bool tma, int64_t units, cudaStream_t stream) {
  const LaunchConfig cfg(dim3(unsigned(units * a.split)), dim3(kThreads), kSmemBytes, stream, true, a.split);
  void* args[] = {const_cast<Args*>(&a), const_cast<Maps*>(&maps)};
  FFTCONV_CUDA_CHECK(cudaLaunchKernelExC(
      &cfg.config, kernel_for(tma, a.left.s_k == 1, a.right.s_k == 1, a.split > 1), args));
}

// Padded tile area of an orientation: the work the CTAs do.
int64_t padded_area(int rows, int cols) {
  return int64_t(tiles_of(rows, kRows)) * kRows * tiles_of(cols, kCols) * kCols;
}

// C^T = R·L^T: the same product with the sides exchanged, chosen when it pads less.
Args oriented(Args a) {
  if (padded_area(a.cols, a.rows) < padded_area(a.rows, a.cols)) {
    std::swap(a.left, a.right);
    std::swap(a.rows, a.cols);
    std::swap(a.c_row, a.c_col);
  }
  return a;
}

}  // namespace

void cgemm(Args a, cudaStream_t stream, const TailSplit* how) {
  if (a.batch == 0 || a.rows == 0 || a.cols == 0) return;
  a = oriented(a);
  a.tiles_rows = tiles_of(a.rows, kRows);
  a.tiles_cols = tiles_of(a.cols, kCols);
  const int64_t tiles = int64_t(a.tiles_rows) * a.tiles_cols * a.batch;
  if (tiles > int64_t(0x7fffffff))
    throw Unsupported("products: math=3xtf32 runs at most 2^31-1 tiles per call, got " + std::to_string(tiles));
  // The last, partial wave's tiles in clusters that split K, then the whole waves of one CTA a tile
  // (Note [split tail wave]).
  const int* waves = device_waves();  // (also sets the kernels' shared memory limits)
  Maps maps{};
  const bool tma = encode_maps(&maps, a);
  const TailSplit t = how ? *how : tail_split(tiles, tiles_of(a.depth, kDepth), waves);
  if (t.whole < tiles) {
    Args tail = a;
    tail.tile_base = t.whole, tail.tiles = tiles - t.whole, tail.split = t.split;
    launch(tail, maps, tma, tail.tiles, stream);
  }
  if (t.whole > 0) {  // at most one wave of CTAs, each through its share of the tiles (Note [persistent tiles])
    a.after_tail = t.whole < tiles;
    a.tiles = t.whole;
    launch(a, maps, tma, std::min<int64_t>(t.whole, t.ctas > 0 ? t.ctas : std::max(waves[1], 1)), stream);
  }
}

bool loads_by_tma(const Args& a) {
  if (a.batch == 0 || a.rows == 0 || a.cols == 0) return false;
  Maps maps{};
  return encode_maps(&maps, oriented(a));
}

// Note [tma operand loads]
// The raw slices reach shared memory by the tensor memory accelerator where both sides allow it (a
// 16-byte aligned base, line and batch strides in multiples of 16 bytes): each MMA warp's lane 0
// loads its 16 rows of L, and the producer's thread 0 R's 64 columns, as one box a slice into a
// ring of kSlots slots (the copies' rings' bytes), as many slices ahead, completing on a
// transaction barrier per slot; the box's zero fill past the matrix replaces the copies'
// predicates, and a box of 128-byte lines is written swizzled, so that the MMA warps' fragment
// reads and the producer's 16-byte reads of K-contiguous R meet no bank conflict. The copies
// (cp.async, 8 bytes a thread, through L1) spent the load/store pipe that the fragment reads, the
// split stores and the MMAs' operand reads share; they stay for the layouts TMA cannot address
// (Loads::copies).
// Invariant: a slot is loaded again only after every thread that reads it has used the values it
// read (its split depends on them) and then met the others (the warp's __syncwarp, the producer
// warpgroup's named barrier): a shared load issued but not yet returned when the barrier passes
// may see the next box. Plain loads and stores stay after each barrier wait (wait_phase). Both
// paths read the same values into the same split, so they give the same bits. Measured (H100,
// one run): the products 1.11x faster than by copies (geometric mean over L2-L5 and 6 modern
// layers' shapes), L5 fprop 0.195 -> 0.175 ms.

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
// cost about 10 us, as much as 6 slices of K. A tail is split where it saves each of its CTAs at
// least kMinSlicesSaved slices: timed queued behind the call before, as a pass runs its products,
// splits that saved 4 or 6 slices (K = 128: L3, L4, resnet_s2) cost 4-13% against the whole tail,
// and ones that saved 12 to 21 (K = 384: L5) gained 3-10%. With fewer slices than CTAs a cluster
// (K = 96 in clusters of 8) a CTA's part holds none: it loads nothing and adds zeros.
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
