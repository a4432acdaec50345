// The `auto` backend: one planner over every backend of a location (Note [auto planner]). A cost
// model ranks the backends that support a problem, the few it keeps are planned and timed on
// synthetic operands, and the winner goes to a persistent plan cache.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common/backend.hpp"

namespace fftconv {

// Note [auto planner]
// `auto` is not a backend of its own arithmetic: it returns the plan of the backend that runs the
// problem fastest here. Candidates are the backends at the location that are available and support
// (problem, pass) (direct only when nothing else does). Each gets a model time from
// model_time_ms() (transform and product work over a rate per backend family, memory traffic over
// bandwidth; a tiled candidate at the planner's tiles: Note [tiled model] in auto_plan.cpp);
// candidates within kAutoModelSpread of the best model time are planned (each with its own tuner:
// bases, tiles, product precision) and timed on synthetic operands, interleaved in rounds, each
// candidate's time its fastest run (with the tile=auto twin of a backend that tiles:
// Note [auto's timed candidates] in auto_plan.cpp; on a device the backends with costly tuners are
// planned last, bounded by the plans timed before: Note [tuning bound] in gpu/cufft/cufft_tuner.hpp);
// with autotune off the model's best is planned alone. A candidate that refuses to plan gives way to
// the next in the model's order (Note [auto's fallback] in auto_plan.cpp). The winner is stored in the plan
// cache under (problem, pass, location, device, tile, math, workspace limit, library version), so
// a later plan of the same key builds only the winner's plan.
inline constexpr double kAutoModelSpread = 8.0;
inline constexpr int kAutoMaxTimed = 3;
// On a device the tuners of one (problem, pass) time no candidate they expect to end later than
// this after `auto` began (Note [tuning budget] in gpu/cufft/cufft_tuner.hpp); the timing rounds
// follow. $FFTCONV_TUNE_BUDGET_MS sets another budget, 0 none.
inline constexpr double kAutoTuneBudgetMs = 1500.0;
// kAutoTuneBudgetMs, or $FFTCONV_TUNE_BUDGET_MS when set (0: no deadline). Throws InvalidArgument
// naming the variable when it is not a number of milliseconds >= 0.
double auto_tune_budget_ms();

struct AutoCandidate {
  std::string backend;         // the backend's name, "fftw tile=auto" for its tiled twin
  double model_ms = 0;         // the cost model's estimate
  double measured_ms = -1;     // the fastest of its timed runs, -1 when not timed
  double plan_ms = -1;         // time to build its plan (its own tuning included), -1 when not built
  std::string note;            // why it was not timed, or what failed
};

struct AutoReport {
  std::vector<AutoCandidate> candidates;
  std::string chosen;          // the winning candidate's backend label
  std::string chosen_backend;  // the registry name of its backend ("fftw" for "fftw tile=auto")
  std::string reason;          // one line: how the winner was chosen
  bool from_cache = false;
  double tune_ms = 0;          // wall time of the whole choice (planning and timing included)
  double device_init_ms = 0;   // creating the device's context first, when this call did (not in tune_ms)
  std::string explain() const; // a table of the candidates and the reason
};

// The directory of the persistent plan cache: PlanOptions::tune_cache's directory when it is set
// ("none" keeps the cache in memory), else $FFTCONV_PLAN_CACHE (a directory, or "none"), else
// $XDG_CACHE_HOME/fftconv, else ~/.cache/fftconv. The auto planner's file is auto-plans.json
// there; cufft's tuner writes cufft-tune.json beside it when PlanOptions::tune_cache is empty.
std::string plan_cache_dir(const PlanOptions& opts);

// The model's estimate of one pass of `backend` on (p, pass) in ms, planned with `opts` (its tile
// option; see Note [auto planner]).
double model_time_ms(const Backend& backend, const ConvProblem& p, Pass pass, const PlanOptions& opts = {});

// The `auto` backend of one location over the registry's backends there.
class AutoBackend final : public Backend {
 public:
  AutoBackend(const Registry& registry, Location where) : registry_(registry), where_(where) {}
  std::string_view name() const override { return "auto"; }
  Location location() const override { return where_; }
  Support available() const override;
  Support supports(const ConvProblem& p, Pass pass, DType dtype = DType::f32) const override;
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const override;
  std::string_view summary() const override;
  // plan() and the report of its choice.
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts, AutoReport* report) const;

 private:
  std::vector<const Backend*> candidates(const ConvProblem& p, Pass pass, DType dtype) const;
  const Registry& registry_;
  Location where_;
};

}  // namespace fftconv
