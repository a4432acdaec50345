// Host timing helpers (see timing.hpp).
#include "validation/timing.hpp"

#include "common/errors.hpp"

namespace fftconv {

GpuTimer parse_gpu_timer(const std::string& s) {
  if (s == "calls") return GpuTimer::calls;
  if (s == "stream") return GpuTimer::stream;
  if (s == "graph") return GpuTimer::graph;
  throw InvalidArgument("timer: must be calls, stream or graph, got '" + s + "'");
}

const char* to_string(GpuTimer t) {
  switch (t) {
    case GpuTimer::calls: return "calls";
    case GpuTimer::stream: return "stream";
    case GpuTimer::graph: return "graph";
  }
  return "?";
}

Timing summarize(std::vector<double> ms) {
  Timing t;
  t.repeats = int(ms.size());
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  t.min_ms = ms.front();
  const std::size_t n = ms.size();
  t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  return t;
}

Timing time_host(const std::function<void()>& fn, int repeat, int warmup) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return summarize(ms);
}

}  // namespace fftconv
