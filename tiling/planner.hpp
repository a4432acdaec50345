// The tiling planner: candidate tile bases from a size policy, their costs (cost_model.hpp),
// choose() = the cheapest candidate under a workspace limit, and explain() = the candidate table.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/backend.hpp"
#include "tiling/tile_plan.hpp"

namespace fftconv {

// Automatic bound on (image, tile) items in flight of a tiled plan: as many as keep the batch
// workspace within kCacheBytes (cost_model.hpp), but at least kMinTilesInFlight (rows of the
// per-frequency CGEMMs) and at most kMaxTilesInFlight. The scratch is then independent of S and
// of the input size.
inline constexpr int64_t kMinTilesInFlight = 32, kMaxTilesInFlight = 256;

struct TilingOptions {
  SizePolicy policy = SizePolicy::pow2;  // candidate tile bases: pow2 8..64 or 7-smooth 8..64
  std::vector<int64_t> sizes;            // explicit candidate sides (overrides policy when non-empty)
  std::size_t workspace_limit = 0;       // bytes, 0 = unlimited
  int64_t tiles_in_flight = 0;           // tiled plans: 0 = automatic (above), else this bound
  std::optional<AccgradReduction> reduction;  // pin accgrad's reduction (else both are candidates)
  int64_t basis_h = 0, basis_w = 0;      // pin the untiled basis (0 = next pow2/smooth >= padded)
};

// Reads tile_sizes, tile_candidates, workspace_limit, basis_h/w and the extras
// "tiles_in_flight" (integer >= 0) and "accgrad_reduction" (frequency|time) of PlanOptions.
// Throws InvalidArgument naming a bad value. Other extra keys are the backend's (not read here).
TilingOptions tiling_options(const PlanOptions& o);

// The PlanOptions::extra keys tiling_options() reads: tiles_in_flight, accgrad_reduction.
const std::vector<std::string_view>& tiling_option_keys();
// `own` followed by tiling_option_keys(): the option keys of a backend that tiles.
std::vector<std::string_view> with_tiling_option_keys(std::vector<std::string_view> own);
// Does b run the planner's tiles (its option keys include the planner's, with_tiling_option_keys)?
bool runs_planner_tiles(const Backend& b);

// The untiled basis side of p's rows (or columns): `pinned` when > 0, else the next size of the
// policy from the circular extent (Note [wrapped padding]).
int64_t untiled_side(const ConvProblem& p, bool rows, int64_t pinned, SizePolicy policy);

// Sides a policy proposes: pow2 {8,16,32,64}; smooth every 2,3,5,7-smooth size in [8, 64].
std::vector<int64_t> policy_sizes(SizePolicy policy);

struct Candidate {
  bool tiled = false;
  int64_t fft_h = 0, fft_w = 0;
  AccgradReduction reduction = AccgradReduction::frequency;  // accgrad only
  int64_t out_h = 0, out_w = 0;   // output tile (tiled), 0 otherwise
  int64_t tiles_h = 1, tiles_w = 1;
  int64_t tiles_in_flight = 0;    // after fitting the workspace limit
  TileCost cost;                  // at tiles_in_flight
  bool feasible = false;          // fits the workspace limit (and the kernel)
  std::string note;               // why not feasible, or "" 
  int64_t count() const { return tiles_h * tiles_w; }
  std::string label() const;      // "none 128x128" | "16x16" | "16x16/time"
};

// The outcome of planning: the chosen plan, every candidate considered, and why.
struct TilingChoice {
  TilePlan plan;
  std::vector<Candidate> candidates;  // in enumeration order; "none" first
  std::size_t chosen = 0;             // index into candidates
  std::string reason;
};

// The cheapest feasible candidate among "none" and the policy's tile bases (square; and h×w
// pairs when the problem is rectangular: hp != wp or kh != kw). Throws InvalidProblem for a bad
// problem, Unsupported when nothing fits the workspace limit.
TilingChoice choose(const ConvProblem& p, Pass pass, const TilingOptions& opts);
// One fixed tile basis (with "none" listed for comparison); Unsupported when it does not fit.
TilingChoice choose_fixed(const ConvProblem& p, Pass pass, int64_t fft_h, int64_t fft_w, const TilingOptions& opts);
// The untiled plan; Unsupported when it does not fit the workspace limit.
TilingChoice choose_untiled(const ConvProblem& p, Pass pass, const TilingOptions& opts);
// Dispatches on opts.tile (none | auto | fixed) with tiling_options(opts).
TilingChoice plan_tiling(const ConvProblem& p, Pass pass, const PlanOptions& opts);

// For backends that reduce tiled accGrad in the frequency domain only (the GPU backends): opts with
// extra["accgrad_reduction"] set to frequency. Throws Unsupported, naming `backend`, when opts asks
// for another reduction.
PlanOptions frequency_reduction_only(const PlanOptions& opts, std::string_view backend);

// Note [timed tile candidates]
// A GPU backend answers tile=auto by timing its untiled plan and a few tiled candidates (Note
// [measured tile choice]), each built in full with its own tuning and run several times, so a
// candidate the model already rules out costs real time (a 32x32 tile under a 31x31 kernel keeps
// 2x2 outputs of its 1,024 points). The timed tiles are the `count` cheapest feasible, runnable
// tiled candidates, cheapest first, less any the model charges more than kTimedCostRatio times the
// cheapest of them. Invariant: the cheapest runnable tiled candidate is always kept, so pruning
// never makes a problem unsupported. On the H100's large problems (`bench tiling --candidates`) the
// tiles the model charged 12-54x the cheapest tile measured 11-60x slower than it.
inline constexpr double kTimedCostRatio = 4.0;
// The pointers point into c.candidates.
std::vector<const Candidate*> timed_tile_candidates(const TilingChoice& c,
                                                    const std::function<bool(const Candidate&)>& runnable,
                                                    std::size_t count);

// The candidate table (sorted by cost, at most max_rows rows, 0 = all) and the reason.
std::string explain(const TilingChoice& c, std::size_t max_rows = 24);

}  // namespace fftconv
