// StepTimer (see step_timer.hpp).
#include "gpu/runtime/step_timer.hpp"

#include <algorithm>

#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

StepTimer::~StepTimer() {
  for (cudaEvent_t e : pool_) cudaEventDestroy(e);
}

cudaEvent_t StepTimer::next_event() {
  if (used_ == pool_.size()) {
    cudaEvent_t e;
    FFTCONV_CUDA_CHECK(cudaEventCreate(&e));
    pool_.push_back(e);
  }
  return pool_[used_++];
}

void StepTimer::begin(const char* name, cudaStream_t s) {
  Record r{name, next_event(), next_event()};
  FFTCONV_CUDA_CHECK(cudaEventRecord(r.start, s));
  records_.push_back(r);
}

void StepTimer::end(cudaStream_t s) { FFTCONV_CUDA_CHECK(cudaEventRecord(records_.back().stop, s)); }

StepTimes StepTimer::collect() {
  StepTimes out;
  if (records_.empty()) return out;
  FFTCONV_CUDA_CHECK(cudaEventSynchronize(records_.back().stop));
  for (const Record& r : records_) {
    float ms = 0.0f;
    FFTCONV_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == r.name; });
    if (it == out.end())
      out.emplace_back(r.name, double(ms));
    else
      it->second += double(ms);
  }
  return out;
}

}  // namespace fftconv
