// A complex GEMM on Hopper's warpgroup tensor-core MMAs with the 3xTF32 split, fp32-accurate
// (Note [warpgroup 3xtf32] in wgmma_3xtf32.cu), batched and strided, for operands in any of the
// layouts the passes store them in. Internal to gpu/gemm; built for sm_90a.
#pragma once
#include <cuda_runtime.h>
#include <vector_types.h>

#include <cstdint>

namespace fftconv::products::wgmma3x {

// One operand as the kernel reads it: element (row, k) of batch q at p[row·s_row + k·s_k + q·s_batch]
// (complex elements), conjugated when `conj`.
struct Side {
  const float2* p = nullptr;
  int64_t s_row = 0, s_k = 0, s_batch = 0;
  bool conj = false;
};

// How the kernel reads its operands (Note [tma operand loads] in wgmma_3xtf32.cu): by the tensor
// memory accelerator where both sides' addresses and strides allow it (`automatic`), or by every
// thread's own cp.async copies (`copies`, which every layout allows).
enum class Loads { automatic, copies };

// C(r, c) (+)= Σ_k L(r, k)·R(c, k) for r < rows, c < cols, in each of `batch` problems; C(r, c) of
// batch q at c[r·c_row + c·c_col + q·c_batch].
struct Args {
  Side left, right;
  float2* c = nullptr;
  int64_t c_row = 0, c_col = 0, c_batch = 0;
  int rows = 0, cols = 0, depth = 0;
  int64_t batch = 0;
  bool accumulate = false;
  Loads loads = Loads::automatic;
  int tiles_rows = 0, tiles_cols = 0;  // set by cgemm
  int64_t tile_base = 0;                // first tile of the launch (set by cgemm)
  int64_t tiles = 0;                    // tiles of the launch (set by cgemm)
  int split = 1;                        // CTAs a tile, each one part of K (set by cgemm)
  bool after_tail = false;              // launched after a split tail that released it (set by cgemm)
};

// How a launch of `tiles` tiles runs them (Note [split tail wave]): tiles [0, whole) on a grid of
// `ctas` CTAs (0: one wave), each through whole tiles in turn (Note [persistent tiles]), the others
// in clusters of `split` CTAs (2, 4 or 8) that share a tile's K.
constexpr int kMaxSplit = 8;
struct TailSplit {
  int64_t whole;
  int split;
  int ctas = 0;
};
// The split for `tiles` tiles of `stages` slices of K, where waves[1] CTAs of the whole-tile kernel
// and waves[s] clusters of s are resident at once.
TailSplit tail_split(int64_t tiles, int stages, const int waves[kMaxSplit + 1]);

// Launches the product on `stream` (the sides are exchanged when C^T = R·L^T pads less), split as
// tail_split says, or as `how` says (tests; `how->whole` counts tiles after any exchange); throws
// Unsupported when the grid would be too large, CudaError on a failed launch.
void cgemm(Args a, cudaStream_t stream, const TailSplit* how = nullptr);

// Whether cgemm(a) reads its operands by TMA (needs the driver; false without a device).
bool loads_by_tma(const Args& a);

}  // namespace fftconv::products::wgmma3x
