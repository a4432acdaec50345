// Runs a plan on host PassData wherever its backend lives (host, or a CUDA device through
// copies made outside the timed region), timing each execution. Shared by `run`, `validate`, benches.
#pragma once
#include <string>

#include "validation/timing.hpp"
#include "common/backend.hpp"
#include "validation/data.hpp"

namespace fftconv {


struct RunResult {
  Timing time;
  StepTimes breakdown;  // per-step timings of the last repetition, when the plan records them
  std::string timer;    // how it was timed: "host", "calls", "stream", "graph" or "stream (no graph: <why>)"
  // With prepared weights asked for: how the weights were read ("prepared once: ..." when every
  // timed run reused one Plan::prepare_weights() object, else "per call: <why not>"); "" otherwise.
  std::string weights;
  double prepare_ms = -1;  // the one prepare_weights() call (wall clock), -1 when none
};

// Executes `plan` repeat times (after one warm-up) on d's operands and leaves the result in
// d.result. CUDA plans run on device copies and are timed with events as `timer` says; with
// min_ms > 0 they first run untimed for about min_ms / 4 (so that clocks settle on sub-millisecond
// plans) and then repeat until both `repeat` executions and min_ms of measured time are reached (at
// most 100,000). A graph's result is checked against the plain execute()'s (rel_l2 <= 1e-6, all
// finite; CudaError otherwise). Throws Unsupported for a CUDA backend when the library was built
// without CUDA. With prepared_weights, a pass that reads weights (fprop, bprop) of a plan that
// prepares them (Plan::prepare_weights) prepares them once, untimed, and every run (warm-up, timed,
// graph) calls execute_with() on that one object, as repeated inference calls would.
RunResult run_plan(const Backend& b, const Plan& plan, PassData& d, int repeat, double min_ms = 0,
                   GpuTimer timer = GpuTimer::calls, bool prepared_weights = false);

// "host CPU (N OpenMP threads)" or the CUDA device name. threads: PlanOptions::threads of the
// plans run (0 = OpenMP's default), so that N is the team the CPU backends actually use.
std::string device_description(Location loc, int threads = 0);

}  // namespace fftconv
