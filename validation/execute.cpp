// Host/device execution of a plan on PassData, and the GPU reference rung (see execute.hpp).
#include "validation/execute.hpp"

#include <chrono>
#include <string>

#include "common/errors.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/reference/direct64.hpp"
#endif

namespace fftconv {

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

double execute_on_device(const Plan& plan, const Args& a) {
#ifdef FFTCONV_HAVE_CUDA
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  plan.execute(a);
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  return ms_since(t0);
#else
  (void)plan; (void)a;
  throw Unsupported("execute on a device: this build has no CUDA");
#endif
}

double execute_pass(const Backend& b, const Plan& plan, PassData& d) {
  if (b.location() == Location::host) {
    const auto t0 = std::chrono::steady_clock::now();
    plan.execute(d.args());
    return ms_since(t0);
  }
#ifdef FFTCONV_HAVE_CUDA
  const DeviceBuffer x = upload(d.input), w = upload(d.weight), g = upload(d.grad_output), bias = upload(d.bias);
  DeviceBuffer out = upload(d.result);  // NaN-poisoned: unwritten elements stay NaN
  const Args a = d.args_at(x.as<const float>(), w.as<const float>(), g.as<const float>(), bias.as<const float>(),
                           out.as<float>());
  const double ms = execute_on_device(plan, a);
  FFTCONV_CUDA_CHECK(cudaMemcpy(d.result.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
  return ms;
#else
  throw Unsupported(std::string(b.name()) + ": a CUDA backend in a build without CUDA");
#endif
}

bool gpu_reference_available() {
#ifdef FFTCONV_HAVE_CUDA
  return cuda_device_available();
#else
  return false;
#endif
}

std::vector<double> gpu_reference(const ConvProblem& p, Pass pass, const PassData& d) {
#ifdef FFTCONV_HAVE_CUDA
  if (!cuda_device_available()) throw Unsupported("check gpu64: no CUDA device");
  if (!p.is_dense())
    throw Unsupported("check gpu64: direct64 computes the dense problem only, not " + p.to_string());
  auto ptr = [](const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); };
  return direct64_pass(p, pass, ptr(d.input), ptr(d.weight), ptr(d.grad_output));
#else
  (void)p; (void)pass; (void)d;
  throw Unsupported("check gpu64: this build has no CUDA");
#endif
}

std::string select_device_for_rank(int local_rank) {
#ifdef FFTCONV_HAVE_CUDA
  int n = 0;
  if (local_rank < 0 || cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    return {};
  }
  FFTCONV_CUDA_CHECK(cudaSetDevice(local_rank % n));
  return "LOCAL_RANK " + std::to_string(local_rank) + " -> device " + std::to_string(local_rank % n);
#else
  (void)local_rank;
  return {};
#endif
}

}  // namespace fftconv
