// run_plan (see runner.hpp).
#include "bench/runner.hpp"

#include <omp.h>

#include "common/errors.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace fftconv {

#ifdef FFTCONV_HAVE_CUDA
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(e));
}
struct DevBuf {
  float* p = nullptr;
  std::size_t n = 0;
  explicit DevBuf(const std::vector<float>& host) : n(host.size()) {
    if (n == 0) return;
    if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess) {
      cudaGetLastError();
      throw OutOfMemory("run: cudaMalloc of " + std::to_string(n * sizeof(float)) + " bytes failed", n * sizeof(float));
    }
    check(cudaMemcpy(p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  ~DevBuf() { if (p) cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};
}  // namespace
#endif

RunResult run_plan(const Backend& b, const Plan& plan, PassData& d, int repeat, double min_ms) {
  RunResult r;
  if (b.location() == Location::host) {
    Args a = d.args();
    r.time = time_host([&] { plan.execute(a); }, repeat, 1);
    r.breakdown = plan.last_breakdown();
    return r;
  }
#ifdef FFTCONV_HAVE_CUDA
  DevBuf x(d.input), w(d.weight), g(d.grad_output), out(d.result);  // result copied too: NaN poison
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  Args a;
  a.input = x.p; a.weight = w.p; a.grad_output = g.p; a.result = out.p; a.dtype = DType::f32; a.stream = stream;
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  std::vector<double> ms;
  try {
    plan.execute(a);  // warm-up (autotuning happens at plan time or here)
    check(cudaStreamSynchronize(stream), "warm-up");
    auto timed = [&] {
      check(cudaEventRecord(e0, stream), "cudaEventRecord");
      plan.execute(a);
      check(cudaEventRecord(e1, stream), "cudaEventRecord");
      check(cudaEventSynchronize(e1), "cudaEventSynchronize");
      float t = 0;
      check(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
      return double(t);
    };
    constexpr int kMaxRuns = 100000;
    int runs = 0;
    for (double warm = 0; warm < min_ms / 4 && runs < kMaxRuns; ++runs) warm += timed();
    double total = 0;
    for (int i = 0; (i < repeat || total < min_ms) && i < kMaxRuns; ++i) {
      ms.push_back(timed());
      total += ms.back();
    }
    check(cudaMemcpy(d.result.data(), out.p, out.n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  } catch (...) {
    cudaEventDestroy(e0); cudaEventDestroy(e1); cudaStreamDestroy(stream);
    throw;
  }
  cudaEventDestroy(e0); cudaEventDestroy(e1); cudaStreamDestroy(stream);
  r.time = summarize(ms);
  r.breakdown = plan.last_breakdown();
  return r;
#else
  throw Unsupported("run: backend '" + std::string(b.name()) + "' needs a CUDA build");
#endif
}

std::string device_description(Location loc) {
  if (loc == Location::host) return "host CPU (" + std::to_string(omp_get_max_threads()) + " OpenMP threads)";
#ifdef FFTCONV_HAVE_CUDA
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
#endif
  return "cuda (no device)";
}

}  // namespace fftconv
