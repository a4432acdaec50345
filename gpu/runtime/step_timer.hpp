// Per-step timing of a GPU pipeline (PlanOptions::breakdown, `fftconv run --breakdown`): CUDA
// events around each step on the pipeline's stream, summed per step name. Used by the cufft and
// fbfft backends; a timed execution runs its steps one after another on one stream.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "common/backend.hpp"

namespace fftconv {

// Events are pooled across executions; reset() before each one.
class StepTimer {
 public:
  StepTimer() = default;
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;
  ~StepTimer();
  void reset() { records_.clear(); used_ = 0; }
  void begin(const char* name, cudaStream_t s);
  void end(cudaStream_t s);
  // Waits for the last recorded event and sums the times per step name (first-seen order).
  StepTimes collect();

 private:
  cudaEvent_t next_event();
  struct Record { std::string name; cudaEvent_t start, stop; };
  std::vector<cudaEvent_t> pool_;
  std::size_t used_ = 0;
  std::vector<Record> records_;
};

// fn(), which queues its work on `s`, between the events of step `name` when `timer` is not null.
template <class Fn>
void timed_step(StepTimer* timer, const char* name, cudaStream_t s, Fn&& fn) {
  if (timer) timer->begin(name, s);
  fn();
  if (timer) timer->end(s);
}

}  // namespace fftconv
