// GPU timing of the layer benchmark: a callable timed rep by rep with CUDA events on one stream
// after warm-up, summarized as median and min (DESIGN.md, Benchmarks). CUDA builds only.
#pragma once
#include <functional>

namespace fftconv {

struct GpuTiming {
  double median_ms = 0, min_ms = 0;
  int repeat = 0;
};

// Calls fn(i) for i in [0, warmup) untimed, then for i in [warmup, warmup + repeat) each between two
// events recorded on `stream` (a cudaStream_t); fn must enqueue its work on that stream.
GpuTiming time_gpu(const std::function<void(int)>& fn, int warmup, int repeat, void* stream);

}  // namespace fftconv
