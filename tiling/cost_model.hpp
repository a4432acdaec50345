// The planner's cost model: flops of transforms and frequency-domain products, memory traffic and
// workspace of a TilePlan, as plain numbers (a model for ranking candidates, not a timing claim).
#pragma once
#include <cstdint>

#include "tiling/tile_plan.hpp"

namespace fftconv {

// Note [cost model]
// cost = transform flops + kFlopsPerTransform · transforms + kPointwiseWeight · pointwise (CGEMM)
//        flops + extra flops + traffic bytes · per-byte charge,
// in units of one transform flop. The per-byte charge depends on whether one batch's working set
// (the plan's workspace at its tiles in flight) stays in cache: kFlopsPerCachedByte when it fits
// kCacheBytes, rising towards kFlopsPerDramByte as the fraction 1 - kCacheBytes / workspace that
// cannot stay cached grows. This is what makes small tiles win on CPUs (and on GPUs, with shared
// memory in place of the cache): the flop counts alone favour one large transform.
// Calibration (the fftw backend, 2 OpenMP threads): the four constants below were fitted, by least
// squares on log time with one free overall rate, to the medians of interleaved `fftconv run
// --tile none|16|32|64` timings of S=8,f=16,fo=16,n=128,k=5, S=8,f=16,fo=16,n=256,k=3 (all passes,
// accgrad both reductions) and L1,S=4: 36 configurations, rms error of the predicted time 23%, about
// the host's run-to-run noise. kFlopsPerTransform is the fixed cost of one small transform (a 16×16
// R2C takes 0.37 µs, a 32×32 1.4 µs: 0.1 µs + flops at 20 Gflop/s) plus the per-plane gather and
// transposition set-up; kPointwiseWeight < 1 because the CGEMM runs its flops faster than FFTW runs
// a transform's. The model ranks 32×32 first on those problems, as measured, but charges 8×8 and
// 64×64 tiles and the time-domain accGrad reduction more than they cost with the AVX-512 product
// kernels (docs/results.md); `fftconv bench tiling --candidates` prints the predicted ratio beside
// the measured one, and bench/tools/fit_cost_model.py refits the constants from that output.
inline constexpr double kCacheBytes = 8.0 * 1024 * 1024;
inline constexpr double kFlopsPerTransform = 2800.0;
inline constexpr double kPointwiseWeight = 0.4;
inline constexpr double kFlopsPerCachedByte = 0.25;
inline constexpr double kFlopsPerDramByte = 1.5;

// The cost figures of `plan` (see TileCost and Note [cost model]); uses plan.tiles_in_flight.
TileCost estimate_cost(const TilePlan& plan);
// Workspace bytes of `plan` with `in_flight` items at once: fixed + in_flight · per_item.
struct WorkspaceModel {
  double fixed = 0, per_item = 0;            // all workspace
  double freq_fixed = 0, freq_per_item = 0;  // of which complex frequency buffers
  double at(int64_t in_flight) const { return fixed + double(in_flight) * per_item; }
};
WorkspaceModel workspace_model(const TilePlan& plan);

}  // namespace fftconv
