// The Hopper 3xTF32 complex GEMM (see wgmma_3xtf32.hpp, Note [warpgroup 3xtf32]).
#include "gpu/gemm/wgmma_3xtf32.hpp"

#include <algorithm>
#include <string>

#include "common/errors.hpp"
#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "gpu/runtime/cuda_check.hpp"

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
// needs. A CTA of two warpgroups computes 128 rows × 64 complex columns:
//   - L goes to registers in the MMAs' A-fragment layout (each thread holds exactly the values it
//     loaded, split in place); R~ goes to swizzled K-major shared memory, which TF32 MMAs require
//     of their B operand, split on the way there.
//   - Raw 16-deep slices of both sides are copied with cp.async into a ring 3 slices ahead of the
//     MMAs, each thread into its own column of a slot, in the layout the passes store (either
//     dimension contiguous, conjugated or not). The copies' latency is what kept the MMAs idle when
//     the raw values went through registers one slice ahead (0.3 ms against 0.23 ms at L5).
// Invariant: a thread reads only ring values it copied itself (cp.async.wait_group, no barrier),
// and R~'s two buffers alternate, each rewritten only after a barrier that follows the MMAs that
// read it.

namespace {

using namespace cute;

constexpr int kRows = 128;    // rows of L per CTA (two warpgroups of 64)
constexpr int kCols = 64;     // complex columns of C per CTA: 128 rows of R~
constexpr int kDepth = 16;    // K per stage: one 64-byte swizzle row of TF32
constexpr int kThreads = 256;
constexpr int kQuad = 4;      // k per thread's unit of R: one 16-byte chunk
static_assert(kCols * kDepth / kQuad == kThreads, "one unit of R per thread");

using RightLayout = decltype(tile_to_shape(GMMA::Layout_K_SW64_Atom<tfloat32_t>{},
                                           make_shape(Int<2 * kCols>{}, Int<kDepth>{})));
constexpr int kTileFloats = 2 * kCols * kDepth;  // one split part of the R~ tile
constexpr int kAhead = 3;                        // slices staged ahead of the MMAs
constexpr int kSlots = kAhead + 1;               // raw slices in the ring
constexpr int kLeftPerThread = kRows * kDepth / kThreads;  // 8 complex values of L per thread and slice
constexpr int kRawPerThread = kLeftPerThread + kQuad;
constexpr size_t kSplitBytes = 2 * 2 * kTileFloats * sizeof(float);  // R~ big and small, two stages
constexpr size_t kSmemBytes = kSplitBytes + size_t(kSlots) * kRawPerThread * kThreads * sizeof(float2);

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

template <bool RightKContig>
__global__ void __launch_bounds__(kThreads, 1) cgemm_kernel(Args a) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);

  const int tiles = a.tiles_rows * a.tiles_cols;
  const int64_t q = blockIdx.x / tiles;
  const int tile = blockIdx.x % tiles;
  const int row0 = (tile % a.tiles_rows) * kRows, col0 = (tile / a.tiles_rows) * kCols;
  const float2* lbase = a.left.p + q * a.left.s_batch + int64_t(row0) * a.left.s_row;
  const float2* rbase = a.right.p + q * a.right.s_batch + int64_t(col0) * a.right.s_row;
  const float lsign = a.left.conj ? -1.f : 1.f, rsign = a.right.conj ? -1.f : 1.f;
  const int lrows = a.rows - row0, rcols = a.cols - col0;

  TiledMma mma;
  mma.accumulate_ = GMMA::ScaleOut::One;
  auto thr = mma.get_thread_slice(threadIdx.x);

  // L lives in registers, in the MMA's A-fragment layout: each thread copies exactly the (row, k)
  // its fragments hold, at offsets computed once, and splits them there. Four fragments: Re and
  // Im, big and small.
  Tensor lcoord = thr.partition_A(make_identity_tensor(LeftShape{}));  // (MMA, 1, kDepth/8) → (row, k)
  Tensor lrb = thr.partition_fragment_A(
      make_tensor(make_gmem_ptr(static_cast<const tfloat32_t*>(nullptr)), make_layout(LeftShape{}, LayoutRight{})));
  Tensor lrs = make_fragment_like(lrb), lib = make_fragment_like(lrb), lis = make_fragment_like(lrb);
  constexpr int kLeftValues = decltype(size(lrb))::value;
  int64_t loff[kLeftValues];
#pragma unroll
  for (int i = 0; i < kLeftValues; ++i)
    loff[i] = int64_t(get<0>(lcoord(i))) * a.left.s_row + int64_t(get<1>(lcoord(i))) * a.left.s_k;

  // R~ in shared memory, big and small parts of two stages. Thread t stages 4 consecutive k of one
  // column c of R: rows 2c (real) and 2c+1 (imaginary) of R~. With K contiguous 4 threads copy a
  // column's 16 k; with columns contiguous a warp copies 32 consecutive columns at each k.
  const int rcol = RightKContig ? threadIdx.x / (kDepth / kQuad) : threadIdx.x % kCols;
  const int rk = RightKContig ? threadIdx.x % (kDepth / kQuad) * kQuad : threadIdx.x / kCols * kQuad;
  const int64_t roff = int64_t(rcol) * a.right.s_row + int64_t(rk) * a.right.s_k;
  auto part = [&](int stage, int which) { return smem + (stage * 2 + which) * kTileFloats; };
  auto right_view = [&](int stage, int which) {
    return make_tensor(make_smem_ptr(reinterpret_cast<tfloat32_t*>(part(stage, which))), RightLayout{});
  };
  // Where this thread's chunks sit in a tile, read off the layout the MMA descriptors use.
  const int at_re = int(&right_view(0, 0)(2 * rcol, rk) - &right_view(0, 0)(0, 0));
  const int at_im = int(&right_view(0, 0)(2 * rcol + 1, rk) - &right_view(0, 0)(0, 0));

  static_assert(kLeftValues == kLeftPerThread, "a ring slot holds each thread's fragment values of L");
  float2 lv[kLeftValues];
  float2 rv[kQuad];
  const int stages = tiles_of(a.depth, kDepth);
  // Raw slices in a ring of kSlots: each thread copies the values it will itself read (its
  // fragment values of L, its unit of R) into its own column of the slot, so no barrier is needed
  // between the copy and the read, and a warp's reads are 32 consecutive 8-byte words.
  float2* raw = reinterpret_cast<float2*>(smem_raw + kSplitBytes);
  auto raw_at = [&](int slot, int i) { return raw + (slot * kRawPerThread + i) * kThreads + threadIdx.x; };
  auto fetch = [&](int s) {  // issue the copies of slice s, one commit group per call
    if (s < stages) {
      const int k0 = s * kDepth, slot = s % kSlots;
      const float2* lp = lbase + int64_t(k0) * a.left.s_k;
      const float2* rp = rbase + int64_t(k0) * a.right.s_k + roff;
      const bool full = row0 + kRows <= a.rows && col0 + kCols <= a.cols && k0 + kDepth <= a.depth;
#pragma unroll
      for (int i = 0; i < kLeftValues; ++i) {
        const bool in = full || (get<0>(lcoord(i)) < lrows && k0 + get<1>(lcoord(i)) < a.depth);
        copy_async(raw_at(slot, i), in ? lp + loff[i] : lbase, in);
      }
#pragma unroll
      for (int j = 0; j < kQuad; ++j) {
        const bool in = full || (rcol < rcols && k0 + rk + j < a.depth);
        copy_async(raw_at(slot, kLeftValues + j), in ? rp + j * a.right.s_k : rbase, in);
      }
    }
    copy_commit();
  };
  auto load = [&](int s) {  // slice s from its slot into registers (its copies have landed)
    const int slot = s % kSlots;
#pragma unroll
    for (int i = 0; i < kLeftValues; ++i) lv[i] = *raw_at(slot, i);
#pragma unroll
    for (int j = 0; j < kQuad; ++j) rv[j] = *raw_at(slot, kLeftValues + j);
  };
  auto split_left = [&] {
#pragma unroll
    for (int i = 0; i < kLeftValues; ++i) {
      const float2 re = tf32_split(lv[i].x), im = tf32_split(lsign * lv[i].y);
      lrb(i) = as_tf32(re.x), lrs(i) = as_tf32(re.y);
      lib(i) = as_tf32(im.x), lis(i) = as_tf32(im.y);
    }
  };
  auto store_right = [&](int stage) {
    float* big = part(stage, 0);
    float* small = part(stage, 1);
    put_split(big, small, at_re, rv[0].x, rv[1].x, rv[2].x, rv[3].x);
    put_split(big, small, at_im, rsign * rv[0].y, rsign * rv[1].y, rsign * rv[2].y, rsign * rv[3].y);
    cutlass::arch::fence_view_async_shared();  // the generic-proxy stores, visible to the MMAs
  };

  Tensor acc_p = partition_fragment_C(mma, AccShape{});
  Tensor acc_q = partition_fragment_C(mma, AccShape{});
  clear(acc_p);
  clear(acc_q);
  // The registers the MMAs read and write stay where they are across the asynchronous region.
  auto fence_operands = [&] {
    warpgroup_fence_operand(acc_p);
    warpgroup_fence_operand(acc_q);
    warpgroup_fence_operand(lrb);
    warpgroup_fence_operand(lrs);
    warpgroup_fence_operand(lib);
    warpgroup_fence_operand(lis);
  };

  // Stage s's MMAs run while slice s+kAhead is copied and slice s+1, read from its slot, has R's
  // part split into the other buffer; L's part goes into the fragments once the MMAs that read
  // them are done.
  for (int s = 0; s < kAhead; ++s) fetch(s);
  copy_wait<kAhead - 1>();
  if (stages > 0) {
    load(0);
    split_left();
    store_right(0);
  }
  __syncthreads();
  for (int s = 0; s < stages; ++s) {
    const int b = s & 1;
    Tensor rb = thr.make_fragment_B(thr.partition_B(right_view(b, 0)));
    Tensor rs = thr.make_fragment_B(thr.partition_B(right_view(b, 1)));
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
    fetch(s + kAhead);
    const bool next = s + 1 < stages;
    if (next) {
      copy_wait<kAhead - 1>();  // slice s+1 has landed
      load(s + 1);
      store_right(b ^ 1);
    }
    warpgroup_wait<0>();
    fence_operands();
    if (next) split_left();
    __syncthreads();
  }

  // Accumulator values 2j and 2j+1 of a thread are columns 2c and 2c+1 of one row (the GMMA
  // accumulator layout), i.e. the real and imaginary column of complex column c.
  Tensor coord = thr.partition_C(make_identity_tensor(AccShape{}));
  float2* cbase = a.c + q * a.c_batch;
#pragma unroll
  for (int i = 0; i < size(acc_p); i += 2) {
    const int r = row0 + get<0>(coord(i)), c = col0 + get<1>(coord(i)) / 2;
    if (r >= a.rows || c >= a.cols) continue;
    float2 v = make_float2(acc_p(i) - acc_q(i + 1), acc_p(i + 1) + acc_q(i));
    float2* out = cbase + int64_t(r) * a.c_row + int64_t(c) * a.c_col;
    if (a.accumulate) {
      const float2 old = *out;
      v.x += old.x, v.y += old.y;
    }
    *out = v;
  }
}

template <bool R>
void launch(const Args& a, int64_t blocks, cudaStream_t stream) {
  auto* kernel = &cgemm_kernel<R>;
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes));
  FFTCONV_CUDA_CHECK(attr);
  kernel<<<unsigned(blocks), kThreads, kSmemBytes, stream>>>(a);
  FFTCONV_CUDA_CHECK(cudaGetLastError());
}

// Padded tile area of an orientation: the work the CTAs do.
int64_t padded_area(int rows, int cols) {
  return int64_t(tiles_of(rows, kRows)) * kRows * tiles_of(cols, kCols) * kCols;
}

}  // namespace

void cgemm(Args a, cudaStream_t stream) {
  if (a.batch == 0 || a.rows == 0 || a.cols == 0) return;
  // C^T = R·L^T: the same product with the sides exchanged, chosen when it pads less.
  if (padded_area(a.cols, a.rows) < padded_area(a.rows, a.cols)) {
    std::swap(a.left, a.right);
    std::swap(a.rows, a.cols);
    std::swap(a.c_row, a.c_col);
  }
  a.tiles_rows = tiles_of(a.rows, kRows);
  a.tiles_cols = tiles_of(a.cols, kCols);
  const int64_t blocks = int64_t(a.tiles_rows) * a.tiles_cols * a.batch;
  if (blocks > int64_t(0x7fffffff))
    throw Unsupported("products: math=3xtf32 runs at most 2^31-1 tiles per call, got " + std::to_string(blocks));
  if (a.right.s_k == 1) launch<true>(a, blocks, stream);
  else launch<false>(a, blocks, stream);
}

}  // namespace fftconv::products::wgmma3x
