// CudaStream: a non-blocking CUDA stream owned for a scope (the autotuners' and benchmarks' own
// streams). Destroying it does not wait for its work: the owner synchronizes first where it must.
// CudaEvent: an owned event without timing, for ordering work across streams; movable.
// WorkspaceFence: the end of the last execution queued on a plan's workspace.
#pragma once

#include <cuda_runtime.h>

#include <utility>

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

class CudaEvent {
 public:
  CudaEvent() = default;  // no event yet: create() makes one
  static CudaEvent create() {
    CudaEvent e;
    FFTCONV_CUDA_CHECK(cudaEventCreateWithFlags(&e.e_, cudaEventDisableTiming));
    return e;
  }
  ~CudaEvent() {
    if (e_) cudaEventDestroy(e_);
  }
  CudaEvent(CudaEvent&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&& o) noexcept {
    std::swap(e_, o.e_);
    return *this;
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }
  explicit operator bool() const { return e_ != nullptr; }

 private:
  cudaEvent_t e_ = nullptr;
};

// An execution on any stream enters the fence before it touches the workspace (its stream waits
// for the previous execution's work) and leaves it after its last work is queued. Under stream
// capture (stream_capturing()) both do nothing: the graph orders its own nodes. The destructor waits
// for the last execution, so a workspace declared before the fence outlives the work queued on it.
class WorkspaceFence {
 public:
  WorkspaceFence() : e_(CudaEvent::create()) {}
  ~WorkspaceFence() {
    if (e_) cudaEventSynchronize(e_.get());
  }
  WorkspaceFence(const WorkspaceFence&) = delete;
  WorkspaceFence& operator=(const WorkspaceFence&) = delete;
  void enter(cudaStream_t stream, bool capturing) const {
    if (!capturing) FFTCONV_CUDA_CHECK(cudaStreamWaitEvent(stream, e_.get(), 0));
  }
  void leave(cudaStream_t stream, bool capturing) const {
    if (!capturing) FFTCONV_CUDA_CHECK(cudaEventRecord(e_.get(), stream));
  }
  // Blocks the host until the last execution is done (before the workspace is reallocated).
  void wait() const { FFTCONV_CUDA_CHECK(cudaEventSynchronize(e_.get())); }

 private:
  CudaEvent e_;
};

}  // namespace fftconv
