// One CUDA graph captured from a callable: the `graph` timer of `fftconv run`
// and the benchmarks, fbfft's fork timing, and the graph-capture tests. The interface is free of
// CUDA types (a stream is a cudaStream_t passed as void*), so host-only translation units can hold one.
#pragma once
#include <exception>
#include <functional>
#include <string>

namespace fftconv {

// fn() captured once on `stream` (thread-local capture mode) and instantiated; launch() queues a
// replay on a stream. When fn throws, or the capture or the instantiation fails, the stream is out
// of capture mode again, the error a failed capture leaves behind is cleared, ok() is false and
// why() says why; rethrow_if_failed() then rethrows fn's own exception (its type intact) or throws
// CudaError. Throws CudaError only when the capture cannot begin.
class CudaGraph {
 public:
  CudaGraph(const std::function<void()>& fn, void* stream);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  bool ok() const { return exec_ != nullptr; }
  const std::string& why() const { return why_; }
  void rethrow_if_failed() const;
  // Queues one replay on `stream`; throws CudaError when !ok().
  void launch(void* stream) const;

 private:
  void* exec_ = nullptr;  // cudaGraphExec_t
  std::string why_;
  std::exception_ptr error_;  // what fn threw
};

}  // namespace fftconv
