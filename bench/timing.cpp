// Host timing helpers (see timing.hpp).
#include "bench/timing.hpp"

namespace fftconv {

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
