// CudaGraph (see cuda_graph.hpp).
#include "gpu/runtime/cuda_graph.hpp"

#include <cuda_runtime.h>

#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"

namespace fftconv {

CudaGraph::CudaGraph(const std::function<void()>& fn, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  FFTCONV_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    fn();
  } catch (const std::exception& e) {
    why_ = e.what();
    error_ = std::current_exception();
  } catch (...) {
    why_ = "unknown exception during capture";
    error_ = std::current_exception();
  }
  cudaGraph_t g = nullptr;
  const cudaError_t ec = cudaStreamEndCapture(stream, &g);  // always: leaves capture mode
  if (why_.empty() && ec != cudaSuccess) why_ = std::string("capture: ") + cudaGetErrorString(ec);
  if (why_.empty()) {
    cudaGraphExec_t exec = nullptr;
    const cudaError_t ei = cudaGraphInstantiate(&exec, g, 0);
    if (ei != cudaSuccess)
      why_ = std::string("instantiate: ") + cudaGetErrorString(ei);
    else
      exec_ = exec;
  }
  if (g) cudaGraphDestroy(g);
  (void)cudaGetLastError();  // a failed capture leaves a non-sticky error behind
}

CudaGraph::~CudaGraph() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
}

void CudaGraph::rethrow_if_failed() const {
  if (error_) std::rethrow_exception(error_);
  if (!ok()) throw CudaError("CUDA graph: " + why_);
}

void CudaGraph::launch(void* stream) const {
  rethrow_if_failed();
  FFTCONV_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), static_cast<cudaStream_t>(stream)));
}

}  // namespace fftconv
