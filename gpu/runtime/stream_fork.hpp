// StreamFork: a plan's second stream, for one branch of work that does not depend on what the
// caller's stream does meanwhile (Note [forked transforms]).
#pragma once

#include <cuda_runtime.h>

#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_stream.hpp"

namespace fftconv {

// Note [forked transforms]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// The two forward transforms in front of a CGEMM do not depend on each other (fprop: weights and
// input; bprop: weights and gradOutput; accGrad: input and gradOutput). Queued on one stream they
// run one after the other, and on small problems each kernel fills only part of the GPU (a 16×16
// transform of 256 planes is 64 warps on 132 SMs), so the pipeline's time is the sum of kernel
// latencies. StreamFork puts one of them on a second stream: fork() records an event on the
// caller's stream that the side stream waits for (so the branch sees everything queued before it),
// join() records an event on the side stream that the caller's stream waits for (so the CGEMM, and
// the plan's completion event, come after it). Under graph capture the side stream joins the
// capture through the forked event, and the graph gets two parallel branches. The branch must not
// touch a buffer that the caller's stream uses between fork() and join().
// Whether it pays depends on the problem: accGrad's two alike forwards gain (1.10× in geometric
// mean on the paper's grid), while fprop/bprop's pruned weight DFT and input transform can slow
// each other down (0.69–0.71× at S = 32 with a 16×16 basis). So with fork=auto (the default) an
// fbfft accGrad plan forks, and an autotuned fprop/bprop plan times its whole pass both ways (the
// median of 9 graph replays each) and forks only when that is at least 8% faster
// (FbfftConvPlan::tune_fork says why the margin); extra["fork"]=on|off pins it. cufft forks its
// pruned weight DFT (weights=dft, fprop/bprop) and its tuner times that variant with the fork.
class StreamFork {
 public:
  // On the current device. Throws CudaError.
  StreamFork() { FFTCONV_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking)); }
  ~StreamFork() {
    if (side_) {
      cudaStreamSynchronize(side_);
      cudaStreamDestroy(side_);
    }
  }
  StreamFork(const StreamFork&) = delete;
  StreamFork& operator=(const StreamFork&) = delete;

  // The side stream, ordered after everything queued on `main` so far.
  cudaStream_t fork(cudaStream_t main) const {
    FFTCONV_CUDA_CHECK(cudaEventRecord(forked_.get(), main));
    FFTCONV_CUDA_CHECK(cudaStreamWaitEvent(side_, forked_.get(), 0));
    return side_;
  }
  // `main` waits for everything queued on the side stream so far.
  void join(cudaStream_t main) const {
    FFTCONV_CUDA_CHECK(cudaEventRecord(joined_.get(), side_));
    FFTCONV_CUDA_CHECK(cudaStreamWaitEvent(main, joined_.get(), 0));
  }

 private:
  CudaEvent forked_ = CudaEvent::create(), joined_ = CudaEvent::create();
  cudaStream_t side_ = nullptr;
};

}  // namespace fftconv
