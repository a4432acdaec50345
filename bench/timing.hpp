// Host-side timing helpers shared by the CLI and benchmarks: repeat a callable, report min/median.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace fftconv {

struct Timing {
  double min_ms = 0, median_ms = 0;
  int repeats = 0;
};

Timing summarize(std::vector<double> ms);
// Runs fn `warmup` times untimed, then `repeat` times timed with a steady clock.
Timing time_host(const std::function<void()>& fn, int repeat, int warmup = 1);

}  // namespace fftconv
