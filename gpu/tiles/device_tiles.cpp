// The device in-flight rule (see device_tiles.hpp).
#include "gpu/tiles/device_tiles.hpp"

#include <algorithm>
#include <cmath>

namespace fftconv {

TilePlan device_in_flight(const TilePlan& t, const PlanOptions& opts, const InFlightBudget& in) {
  const TilingOptions o = tiling_options(opts);
  if (!t.tiled || o.tiles_in_flight > 0) return t;
  const ConvProblem& p = t.problem;
  const double untiled =
      in.untiled_bytes > 0
          ? in.untiled_bytes
          : make_untiled_plan(p, t.pass, untiled_side(p, true, 0, o.policy), untiled_side(p, false, 0, o.policy), p.S)
                .cost.workspace_bytes;
  const double budget = std::min(
      kDeviceInFlightBytes, std::max({in.untiled_share * untiled, t.cost.workspace_bytes, kDeviceInFlightFloorBytes}));
  const WorkspaceModel ws = workspace_model(t);
  double b = std::max(std::floor((budget - ws.fixed) / ws.per_item), double(t.tiles_in_flight));
  if (o.workspace_limit > 0) b = std::min(b, std::max(1.0, std::floor((double(o.workspace_limit) - ws.fixed) / ws.per_item)));
  b = std::min(b, double(t.item_count()));
  return make_tiled_plan(t.problem, t.pass, t.fft_h, t.fft_w, int64_t(b), t.reduction);
}

TilePlan device_tile_plan(const ConvProblem& p, Pass pass, const Candidate& k, const PlanOptions& opts,
                          const InFlightBudget& budget) {
  return device_in_flight(make_tiled_plan(p, pass, k.fft_h, k.fft_w, k.tiles_in_flight, k.reduction), opts, budget);
}

}  // namespace fftconv
