// The planner's cost model: flops of transforms and frequency-domain products, memory traffic and
// workspace of a TilePlan, as plain numbers (a model for ranking candidates, not a timing claim).
#pragma once
#include <cstdint>

#include "tiling/tile_plan.hpp"

namespace fftconv {

// Note [cost model]
// cost = transform flops + pointwise (CGEMM) flops + extra flops + traffic bytes · per-byte charge.
// The per-byte charge depends on whether one batch's working set (the plan's workspace at its
// tiles in flight) stays in cache: kFlopsPerCachedByte when it fits kCacheBytes, rising towards
// kFlopsPerDramByte as the fraction 1 - kCacheBytes / workspace that cannot stay cached grows.
// This is what makes small tiles win on CPUs (and on GPUs, with shared memory in place of the
// cache): the flop counts alone favour one large transform. The constants are rough; the
// benchmark reports predicted against measured ratios.
inline constexpr double kCacheBytes = 8.0 * 1024 * 1024;
inline constexpr double kFlopsPerCachedByte = 0.5;
inline constexpr double kFlopsPerDramByte = 4.0;

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
