// The autotuners' stopwatch (cufft_tuner.cu, fbfft_conv_plan.cu): CUDA events around a candidate's
// work on a stream, the minimum over a few runs after one untimed run.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>

#include "gpu/cuda_check.hpp"

namespace fftconv {

// Min time (ms) over `reps` runs of launch(), which queues its work on `stream`, after one
// untimed run (first-launch costs, caches).
template <class Launch>
double min_time_ms(cudaStream_t stream, int reps, Launch&& launch) {
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
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < reps; ++r) {
    FFTCONV_CUDA_CHECK(cudaEventRecord(ev.start, stream));
    launch();
    FFTCONV_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    FFTCONV_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float ms = 0.0f;
    FFTCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    best = std::min(best, double(ms));
  }
  return best;
}

}  // namespace fftconv
