// The GPU backends' bound on tiles in flight (Note [device in-flight rule]): how many (image, tile)
// items one chunk of a tiled plan takes on a device, where every chunk pays its launches again.
#pragma once
#include <cstdint>

#include "common/backend.hpp"
#include "tiling/cost_model.hpp"
#include "tiling/planner.hpp"
#include "tiling/tile_plan.hpp"

namespace fftconv {

// Note [device in-flight rule]
// The GPU backends' automatic bound (device_in_flight below), instead of the planner's CPU rule: a GPU runs each step of a chunk
// as one launch over all its items (the per-frequency CGEMMs get one row per item), and every chunk
// pays its launches again, so the CPU rule's 32-256 items leave it many small chunks. The device rule
// takes as many items as keep the workspace model within the budget
//   min(kDeviceInFlightBytes, max(share × the untiled plan's workspace model, the CPU rule's, kDeviceInFlightFloorBytes)),
// at least the CPU rule's count, at most every item. A tiled plan's purpose on a GPU is to save memory;
// the share is what each backend's chunks afford. fbfft's get slower at every smaller count, so its
// share is 1: no more scratch than the untiled plan unless the CPU rule already took it. cufft's
// chunks run from 13% faster to 4% slower down to an eighth of the untiled scratch (H100, the large
// set's fprop), so its share is 1/8 (kCufftUntiledShare) of its own untiled pipeline's buffers on its
// smallest basis (a 13-smooth size, up to 4x fewer points than the model's power of two: 520 or 1024).
// Under the floor, 64 MiB (0.08% of an 80 GB H100), a second chunk saves nothing that matters and
// costs its launches again (measured on an H100, S = 16, x = 64, 16x16 and 32x32 tiles: two chunks
// 1.10-1.30x slower than one over the three passes of both GPU backends).
inline constexpr double kDeviceInFlightBytes = double(1 << 30);
inline constexpr double kDeviceInFlightFloorBytes = double(64 << 20);
inline constexpr double kCufftUntiledShare = 1.0 / 8.0;

// A backend's budget for its tiled chunks against its untiled plan (above).
struct InFlightBudget {
  double untiled_share = 1.0;  // of the untiled plan's workspace
  double untiled_bytes = 0;    // that workspace, from the backend; 0: the workspace model of the untiled
                               // plan on the next size of the tiling policy
};

// A GPU backend's tiled plan: `t` (a plan of the planner, at the CPU rule) with the device in-flight
// rule (above) when opts leaves tiles_in_flight automatic (absent or 0), bounded by
// opts.workspace_limit through the workspace model (at least one item); `t` itself when it is
// untiled or the bound is pinned. The untiled plan of the budget is on the basis choose_untiled()
// would take without basis pins (the next size of opts' policy at or above the padded input). The backend still fits
// its chunk to the limit with its own buffer sizes.
// `budget` says which untiled plan and what share of it (fbfft: the default; cufft: kCufftUntiledShare).
TilePlan device_in_flight(const TilePlan& t, const PlanOptions& opts, const InFlightBudget& budget = {});
// The tiled plan of candidate `k` (tiled, from choose()/plan_tiling() of p and pass) under the device
// rule: device_in_flight of its basis, reduction and in-flight count.
TilePlan device_tile_plan(const ConvProblem& p, Pass pass, const Candidate& k, const PlanOptions& opts,
                          const InFlightBudget& budget = {});

}  // namespace fftconv
