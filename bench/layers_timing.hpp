// GPU event timing of the benchmarks (layer benchmark, cuDNN baseline, run_plan): callables queued
// back to back on one stream, an event pair around each, one synchronization at the end; summarized
// as median and min (DESIGN.md, Benchmarks). CUDA builds only.
#pragma once
#include <functional>
#include <string>
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

// fn() captured once on `stream` (a cudaStream_t) into an instantiated CUDA graph whose replays
// launch() queues on a stream. When fn throws or the capture or instantiation fails, ok() is false
// and why() says why; the stream is out of capture mode again and the error a failed capture
// leaves behind is cleared. Throws CudaError only when the capture cannot begin.
class GpuGraph {
 public:
  GpuGraph(const std::function<void()>& fn, void* stream);
  ~GpuGraph();
  GpuGraph(const GpuGraph&) = delete;
  GpuGraph& operator=(const GpuGraph&) = delete;
  bool ok() const { return exec_ != nullptr; }
  const std::string& why() const { return why_; }
  void launch(void* stream) const;

 private:
  void* exec_ = nullptr;  // cudaGraphExec_t
  std::string why_;
};

}  // namespace fftconv
