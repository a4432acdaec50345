// Host-side timing helpers shared by the CLI and benchmarks: repeat a callable, report min/median.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace fftconv {

struct Timing {
  double min_ms = 0, median_ms = 0;
  int repeats = 0;
};

// How a CUDA call is timed (run_plan, bench fft; every mode: an event pair around each timed sample).
enum class GpuTimer {
  calls,   // each execute() timed alone and synchronized before the next: the device waits for the host
           // to queue every launch, so launch latency counts (a floor of several µs per kernel)
  stream,  // executes queued back to back (one synchronization per batch of about 2 ms): the GPU time
           // of a stream of calls, the host's launch cost hidden wherever the device is the slower side
  graph,   // one execute() captured into a CUDA graph and its replays queued back to back: GPU time
           // with the shortest launch gaps; a plan that cannot be captured falls back to `stream`
};
GpuTimer parse_gpu_timer(const std::string& s);  // "calls" | "stream" | "graph", else InvalidArgument
const char* to_string(GpuTimer t);

Timing summarize(std::vector<double> ms);
// Runs fn `warmup` times untimed, then `repeat` times timed with a steady clock.
Timing time_host(const std::function<void()>& fn, int repeat, int warmup = 1);

}  // namespace fftconv
