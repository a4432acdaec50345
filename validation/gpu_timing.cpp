// GPU event timing of the benchmarks (see gpu_timing.hpp).
#include "validation/gpu_timing.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include <exception>
#include <vector>

#include "validation/timing.hpp"
#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

std::vector<double> event_times(const std::function<void(int)>& fn, int first, int count, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  std::vector<cudaEvent_t> events(2 * size_t(count), nullptr);
  struct Cleanup {
    std::vector<cudaEvent_t>& e;
    ~Cleanup() {
      for (cudaEvent_t x : e)
        if (x) cudaEventDestroy(x);
    }
  } cleanup{events};
  for (auto& e : events) FFTCONV_CUDA_CHECK(cudaEventCreate(&e));
  for (int r = 0; r < count; ++r) {
    FFTCONV_CUDA_CHECK(cudaEventRecord(events[2 * r], stream));
    fn(first + r);
    FFTCONV_CUDA_CHECK(cudaEventRecord(events[2 * r + 1], stream));
  }
  std::vector<double> ms(static_cast<size_t>(count));
  if (count == 0) return ms;
  FFTCONV_CUDA_CHECK(cudaEventSynchronize(events.back()));
  for (int r = 0; r < count; ++r) {
    float x = 0;
    FFTCONV_CUDA_CHECK(cudaEventElapsedTime(&x, events[2 * r], events[2 * r + 1]));
    ms[size_t(r)] = x;
  }
  return ms;
}

GpuTiming time_gpu(const std::function<void(int)>& fn, int warmup, int repeat, void* stream_ptr) {
  for (int i = 0; i < warmup; ++i) fn(i);
  GpuTiming t;
  if (repeat <= 0) {
    FFTCONV_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_ptr)));
    return t;
  }
  const Timing s = summarize(event_times(fn, warmup, repeat, stream_ptr));
  t.repeat = s.repeats;
  t.min_ms = s.min_ms;
  t.median_ms = s.median_ms;
  return t;
}

}  // namespace fftconv
#endif
