// tile=auto on a GPU backend, measured (Note [measured tile choice]): the untiled plan and the shared
// planner's cheapest tiled candidates, each built in full and timed on the device; the fastest wins.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/backend.hpp"
#include "tiling/planner.hpp"

namespace fftconv {

// Note [measured tile choice]
// The planner's cost model (tiling/cost_model.hpp) is fitted to the CPU backend: flop and byte
// charges and an 8 MiB cache. On the H100 its tiled choices on the paper's grid ran 1.1–2.6× slower
// than the untiled plan of the same backend (16×16 tiles at x = 27, S = 16–64), because a
// GPU pass is a handful of launches whose cost barely grows with the batch, while tiles add
// transforms, halo re-reads and CGEMM frequencies. So with autotune on, a GPU backend answers
// tile=auto by measurement: its untiled plan (when it has one) and the planner's kMeasuredTiles
// cheapest feasible tiled candidates it can run (Note [timed tile candidates]) are each built in full (with their own tuning) and
// run on uniform random operands as a CUDA graph (GPU time, as `bench conv` and `run --timer graph` time
// a pass; call by call when the plan cannot be captured, e.g. with breakdown), median of 5, one
// candidate at a time (only the fastest so far is kept, so at most two plans' workspaces are held
// at once); the fastest wins, and its describe() ends with the times. Without autotune, or when the
// operands do not fit in device memory, the planner's choice stands (noted in describe()).
inline constexpr int kMeasuredTiles = 2;

struct PlanCandidate {
  std::string label;                           // "none", "16x16", "14x14"
  std::function<std::unique_ptr<Plan>()> make;  // builds the plan (may throw Unsupported)
};

// The tiled candidates of `c` worth timing: timed_tile_candidates(c, runnable, kMeasuredTiles).
std::vector<const Candidate*> cheapest_tiled(const TilingChoice& c,
                                             const std::function<bool(const Candidate&)>& runnable);

// Builds and times every candidate (above) and returns the fastest, whose describe() appends
// "; <what> measured: <label> <ms> ms, ..., fastest <label>". A candidate whose make() throws
// Unsupported or OutOfMemory is listed as skipped. `fallback` (the planner's own choice) is built
// instead when the operands cannot be allocated. Throws Unsupported when no candidate can be built.
// `what` names the choice: "tile=auto", or the fbfft backend's "basis" (Note [smooth register FFT]).
// The winner's label is remembered for the process under (backend, p, pass, what, options_key(opts),
// the device): a later call with the same key builds that candidate alone.
std::unique_ptr<Plan> fastest_plan(std::string_view backend, const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                   std::vector<PlanCandidate> cands,
                                   const std::function<std::unique_ptr<Plan>()>& fallback,
                                   const std::string& what = "tile=auto");

}  // namespace fftconv
