// The autotuners' stopwatch (cufft_tuner.cu, fbfft_conv_plan.cu): CUDA events around a candidate's
// work on a stream: the minimum or the median over a few runs after one untimed run.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

// Times (ms per launch) of `reps` samples of launch(), which queues its work on `stream`, after
// one untimed run (first-launch costs, caches). A candidate that takes under 0.1 ms is timed as up
// to 32 launches queued back to back between one event pair (time per launch): a single
// synchronized launch would measure the host's launch latency, a floor of several µs per kernel
// that hides the differences between small candidates.
template <class Launch>
std::vector<double> sample_times_ms(cudaStream_t stream, int reps, Launch&& launch) {
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (start) cudaEventDestroy(start);
      if (stop) cudaEventDestroy(stop);
    }
  } ev;
  FFTCONV_CUDA_CHECK(cudaEventCreate(&ev.start));
  FFTCONV_CUDA_CHECK(cudaEventCreate(&ev.stop));
  launch();
  auto sample = [&](int k) {
    FFTCONV_CUDA_CHECK(cudaEventRecord(ev.start, stream));
    for (int i = 0; i < k; ++i) launch();
    FFTCONV_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    FFTCONV_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float ms = 0.0f;
    FFTCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    return double(ms) / k;
  };
  const double first = sample(1);
  const int k = first < 0.1 ? int(std::clamp(std::ceil(0.1 / std::max(first, 1e-4)), 1.0, 32.0)) : 1;
  std::vector<double> t;
  if (k == 1) t.push_back(first);
  while (int(t.size()) < std::max(reps, 1)) t.push_back(sample(k));
  return t;
}

// The minimum of sample_times_ms: the candidate's best case (the transforms' families).
template <class Launch>
double min_time_ms(cudaStream_t stream, int reps, Launch&& launch) {
  const std::vector<double> t = sample_times_ms(stream, reps, launch);
  return *std::min_element(t.begin(), t.end());
}

// The median of sample_times_ms: the typical case, for candidates whose time is not one number
// (two streams whose kernels meet in different orders: Note [forked transforms]).
template <class Launch>
double median_time_ms(cudaStream_t stream, int reps, Launch&& launch) {
  std::vector<double> t = sample_times_ms(stream, reps, launch);
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

}  // namespace fftconv
