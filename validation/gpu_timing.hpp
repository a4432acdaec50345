// GPU event timing of the benchmarks (layer benchmark, cuDNN baseline, run_plan): callables queued
// back to back on one stream, an event pair around each, one synchronization at the end; summarized
// as median and min (DESIGN.md, Benchmarks). CUDA builds only.
#pragma once
#include <functional>
#include <vector>

namespace fftconv {

struct GpuTiming {
  double median_ms = 0, min_ms = 0;
  int repeat = 0;
};

// Calls fn(i) for i in [first, first + count), each between two events recorded on `stream` (a
// cudaStream_t), queued back to back with one synchronization at the end; returns each call's ms.
// fn must enqueue its work on that stream.
std::vector<double> event_times(const std::function<void(int)>& fn, int first, int count, void* stream);

// Calls fn(i) for i in [0, warmup) untimed, then for i in [warmup, warmup + repeat) each between two
// events recorded on `stream` (a cudaStream_t); fn must enqueue its work on that stream.
GpuTiming time_gpu(const std::function<void(int)>& fn, int warmup, int repeat, void* stream);

}  // namespace fftconv
