// run_plan (see run_plan.hpp).
#include "validation/run_plan.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <vector>

#include "common/errors.hpp"
#include "validation/compare.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "validation/gpu_timing.hpp"
#include "gpu/runtime/cuda_graph.hpp"
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

#ifdef FFTCONV_HAVE_CUDA
namespace {
// The timing stream (the graph of a captured execute(), when there is one, is destroyed first).
struct TimingStream {
  cudaStream_t stream = nullptr;
  TimingStream() { check(cudaStreamCreate(&stream), "cudaStreamCreate"); }
  ~TimingStream() { cudaStreamDestroy(stream); }
  TimingStream(const TimingStream&) = delete;
  TimingStream& operator=(const TimingStream&) = delete;
};

std::vector<float> download(const float* p, std::size_t n) {
  std::vector<float> h(n);
  check(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  return h;
}
}  // namespace
#endif

namespace {
// Plan::prepare_weights() of `weight` when asked for and offered (nullptr, with r.weights saying
// why not, otherwise).
std::shared_ptr<const PreparedWeights> prepare(const Plan& plan, const void* weight, void* stream, bool asked,
                                               RunResult& r) {
  if (!asked) return nullptr;
  if (!weight) {
    r.weights = "per call: the pass reads no weights";
    return nullptr;
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    auto w = plan.prepare_weights(weight, stream);
    r.prepare_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    r.weights = "prepared once (" + std::to_string(w->bytes()) + " bytes), reused by every run";
    return w;
  } catch (const Unsupported& e) {
    r.weights = std::string("per call: ") + e.what();
    return nullptr;
  }
}
}  // namespace

RunResult run_plan(const Backend& b, const Plan& plan, PassData& d, int repeat, double min_ms, GpuTimer timer,
                   bool prepared_weights) {
  RunResult r;
  if (b.location() == Location::host) {
    Args a = d.args();
    const auto w = prepare(plan, a.weight, nullptr, prepared_weights, r);
    r.time = time_host([&] { w ? plan.execute_with(a, *w) : plan.execute(a); }, repeat, 1);
    r.breakdown = plan.last_breakdown();
    r.timer = "host";
    return r;
  }
#ifdef FFTCONV_HAVE_CUDA
  DevBuf x(d.input), w(d.weight), g(d.grad_output), bias(d.bias), out(d.result);  // result copied too: NaN poison
  TimingStream st;
  std::unique_ptr<CudaGraph> graph;  // after st: destroyed before the stream
  Args a = d.args_at(x.p, w.p, g.p, bias.p, out.p);
  a.stream = st.stream;
  const auto prepared = prepare(plan, a.weight, st.stream, prepared_weights, r);
  auto call = [&] { prepared ? plan.execute_with(a, *prepared) : plan.execute(a); };
  call();  // warm-up (autotuning happens at plan time or here)
  check(cudaStreamSynchronize(st.stream), "warm-up");
  r.timer = to_string(timer);
  if (timer == GpuTimer::graph) {
    const std::vector<float> plain = download(out.p, out.n);
    graph = std::make_unique<CudaGraph>(call, st.stream);
    if (!graph->ok()) {
      timer = GpuTimer::stream;
      r.timer = "stream (no graph: " + graph->why() + ")";
    } else {  // the replay must compute what execute() computed
      check(cudaMemsetAsync(out.p, 0xff, out.n * sizeof(float), st.stream), "cudaMemsetAsync");  // NaN poison
      graph->launch(st.stream);
      check(cudaStreamSynchronize(st.stream), "graph replay");
      const std::vector<float> replay = download(out.p, out.n);
      const std::vector<double> ref(plain.begin(), plain.end());
      const ErrorStats e = compare(replay.data(), ref.data(), int64_t(ref.size()));
      if (e.nonfinite > 0 || e.rel_l2 > 1e-6)
        throw CudaError("run: the CUDA graph of " + std::string(b.name()) + "'s execute() computes something else (" +
                        (e.nonfinite > 0 ? std::string("non-finite") : "rel_l2 " + std::to_string(e.rel_l2)) + ")");
    }
  }
  auto launch = [&] {
    if (timer == GpuTimer::graph)
      graph->launch(st.stream);
    else
      call();
  };
  // Runs k timed executions (k = 1 and synchronized for `calls`, else back to back) and appends
  // their times; returns their sum.
  std::vector<double> ms;
  auto timed = [&](int k, bool keep) {
    const std::vector<double> t = event_times([&](int) { launch(); }, 0, k, st.stream);
    if (keep) ms.insert(ms.end(), t.begin(), t.end());
    return std::accumulate(t.begin(), t.end(), 0.0);
  };
  // Batches of about 2 ms (from one synchronized run's time, an upper bound), at most 512
  // executions, for the back-to-back modes.
  const double one = timed(1, false);
  const int batch = timer == GpuTimer::calls ? 1 : int(std::clamp(2.0 / std::max(one, 1e-3), 1.0, 512.0));
  constexpr std::size_t kMaxRuns = 100000;
  std::size_t runs = 1;
  for (double warm = one; warm < min_ms / 4 && runs < kMaxRuns; runs += std::size_t(batch)) warm += timed(batch, false);
  double total = 0;
  while ((ms.size() < std::size_t(repeat) || total < min_ms) && ms.size() < kMaxRuns) total += timed(batch, true);
  check(cudaMemcpy(d.result.data(), out.p, out.n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  r.time = summarize(ms);
  r.breakdown = plan.last_breakdown();
  return r;
#else
  (void)timer;
  (void)min_ms;
  throw Unsupported("run: backend '" + std::string(b.name()) + "' needs a CUDA build");
#endif
}

std::string device_description(Location loc, int threads) {
  if (loc == Location::host)
    return "host CPU (" + std::to_string(threads > 0 ? threads : omp_get_max_threads()) + " OpenMP threads)";
#ifdef FFTCONV_HAVE_CUDA
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
#endif
  return "cuda (no device)";
}

}  // namespace fftconv
