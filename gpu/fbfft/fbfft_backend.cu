// The `fbfft` convolution backend. For now it answers honestly that its pipeline (Table 1 with
// fbfft transforms, implicit padding and a cuBLAS CGEMM) is not implemented; the transforms it
// will use are in gpu/fbfft/fbfft.hpp and are tested and benchmarked on their own.
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "common/errors.hpp"
#include "gpu/backends.hpp"

namespace fftconv {
namespace {

class FbfftBackend final : public Backend {
 public:
  std::string_view name() const override { return "fbfft"; }
  Location location() const override { return Location::cuda; }
  std::string_view summary() const override {
    return "warp-shuffle FFTs of power-of-two sizes with implicit padding (convolution pipeline not yet "
           "implemented; transforms: fftconv bench fft)";
  }

  Support available() const override {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return {false, std::string("no usable CUDA device: ") + cudaGetErrorString(e)};
    }
    if (n == 0) return {false, "no CUDA device"};
    return {};
  }

  Support supports(const ConvProblem& p, Pass pass, DType dtype) const override {
    (void)p;
    (void)pass;
    if (dtype != DType::f32) return {false, "fbfft computes in fp32 only (dtype=f64 requested)"};
    return {false, "the fbfft convolution pipeline is not implemented yet (only its transforms are)"};
  }

  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const override {
    (void)opts;
    p.validate();
    throw Unsupported("fbfft: cannot plan " + std::string(to_string(pass)) + " for " + p.to_string() +
                      ": " + supports(p, pass, DType::f32).reason);
  }
};

}  // namespace

std::shared_ptr<const Backend> make_fbfft_backend() { return std::make_shared<const FbfftBackend>(); }

}  // namespace fftconv
