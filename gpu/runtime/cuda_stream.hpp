// CudaStream: a non-blocking CUDA stream owned for a scope (the autotuners' and benchmarks' own
// streams). Destroying it does not wait for its work: the owner synchronizes first where it must.
#pragma once

#include <cuda_runtime.h>

#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

class CudaStream {
 public:
  // On the current device. Throws CudaError.
  CudaStream() { FFTCONV_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (s_) cudaStreamDestroy(s_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace fftconv
