// GPU event timing for the layer benchmark (see layers_timing.hpp).
#include "bench/layers_timing.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include <algorithm>
#include <vector>

#include "gpu/cuda_check.hpp"

namespace fftconv {

GpuTiming time_gpu(const std::function<void(int)>& fn, int warmup, int repeat, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  for (int i = 0; i < warmup; ++i) fn(i);
  GpuTiming t;
  if (repeat <= 0) {
    FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
    return t;
  }
  std::vector<cudaEvent_t> events(2 * size_t(repeat), nullptr);
  struct Cleanup {
    std::vector<cudaEvent_t>& e;
    ~Cleanup() {
      for (cudaEvent_t x : e)
        if (x) cudaEventDestroy(x);
    }
  } cleanup{events};
  for (auto& e : events) FFTCONV_CUDA_CHECK(cudaEventCreate(&e));
  for (int r = 0; r < repeat; ++r) {
    FFTCONV_CUDA_CHECK(cudaEventRecord(events[2 * r], stream));
    fn(warmup + r);
    FFTCONV_CUDA_CHECK(cudaEventRecord(events[2 * r + 1], stream));
  }
  FFTCONV_CUDA_CHECK(cudaEventSynchronize(events.back()));
  std::vector<double> ms(static_cast<size_t>(repeat));
  for (int r = 0; r < repeat; ++r) {
    float x = 0;
    FFTCONV_CUDA_CHECK(cudaEventElapsedTime(&x, events[2 * r], events[2 * r + 1]));
    ms[size_t(r)] = x;
  }
  std::sort(ms.begin(), ms.end());
  t.repeat = repeat;
  t.min_ms = ms.front();
  t.median_ms = repeat % 2 ? ms[size_t(repeat / 2)] : 0.5 * (ms[size_t(repeat / 2 - 1)] + ms[size_t(repeat / 2)]);
  return t;
}

}  // namespace fftconv
#endif
