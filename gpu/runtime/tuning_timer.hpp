// The autotuners' stopwatch (cufft_tuner.cu, fbfft_conv_plan.cu, auto_plan.cpp): CUDA events around
// a candidate's work on a stream: the minimum or the median over a few runs after one untimed run,
// or single samples that a caller interleaves over its candidates.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

// A pair of CUDA events that times a run of back-to-back launches on a stream (ms per launch).
class LaunchStopwatch {
 public:
  LaunchStopwatch() {
    FFTCONV_CUDA_CHECK(cudaEventCreate(&start_));
    if (const cudaError_t e = cudaEventCreate(&stop_); e != cudaSuccess) {
      cudaEventDestroy(start_);  // the destructor does not run after a throwing constructor
      FFTCONV_CUDA_CHECK(e);
    }
  }
  ~LaunchStopwatch() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  LaunchStopwatch(const LaunchStopwatch&) = delete;
  LaunchStopwatch& operator=(const LaunchStopwatch&) = delete;

  template <class Launch>
  double ms_per_launch(cudaStream_t stream, int k, Launch&& launch) {
    FFTCONV_CUDA_CHECK(cudaEventRecord(start_, stream));
    for (int i = 0; i < k; ++i) launch();
    FFTCONV_CUDA_CHECK(cudaEventRecord(stop_, stream));
    FFTCONV_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    FFTCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return double(ms) / k;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Launches per sample of a candidate whose one launch took `first_ms`: a candidate that takes under
// 0.1 ms is timed as up to 32 launches queued back to back between one event pair (time per
// launch): a single synchronized launch would measure the host's launch latency, a floor of
// several µs per kernel that hides the differences between small candidates.
inline int launches_per_sample(double first_ms) {
  return first_ms < 0.1 ? int(std::clamp(std::ceil(0.1 / std::max(first_ms, 1e-4)), 1.0, 32.0)) : 1;
}

// Times (ms per launch) of `reps` samples of launch(), which queues its work on `stream`, after
// one untimed run (first-launch costs, caches); samples of launches_per_sample() launches. A
// candidate whose first timed run takes longer than `cutoff_ms` (a tuner's multiple of its best so
// far) has lost: that run alone is returned.
template <class Launch>
std::vector<double> sample_times_ms(cudaStream_t stream, int reps, Launch&& launch,
                                    double cutoff_ms = std::numeric_limits<double>::infinity()) {
  LaunchStopwatch watch;
  launch();
  const double first = watch.ms_per_launch(stream, 1, launch);
  if (first > cutoff_ms) return {first};
  const int k = launches_per_sample(first);
  std::vector<double> t;
  if (k == 1) t.push_back(first);
  while (int(t.size()) < std::max(reps, 1)) t.push_back(watch.ms_per_launch(stream, k, launch));
  return t;
}

// The minimum of sample_times_ms: the candidate's best case (the transforms' families).
template <class Launch>
double min_time_ms(cudaStream_t stream, int reps, Launch&& launch,
                   double cutoff_ms = std::numeric_limits<double>::infinity()) {
  const std::vector<double> t = sample_times_ms(stream, reps, launch, cutoff_ms);
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
