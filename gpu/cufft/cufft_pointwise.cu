// The pointwise plan of the cufft backend (see cufft_pointwise.hpp): strided batched SGEMMs on the
// NCHW planes, and accGrad's per-image partials summed by SGEMV.
#include "gpu/cufft/cufft_pointwise.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <sstream>
#include <vector>

#include "common/errors.hpp"
#include "gpu/gemm/products.hpp"
#include "gpu/runtime/cuda_args.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "gpu/runtime/device_arena.hpp"

namespace fftconv {
namespace {

int as_int(int64_t v, const char* what) {
  if (v < 0 || v > int64_t(INT_MAX))
    throw Unsupported("cufft pointwise: " + std::string(what) + " = " + std::to_string(v) + " exceeds cuBLAS's int range");
  return int(v);
}

constexpr std::size_t kDefaultPartialBytes = std::size_t(256) << 20;

class PointwisePlan final : public Plan {
 public:
  PointwisePlan(const ConvProblem& p, Pass pass, const PlanOptions& opts) : p_(p), pass_(pass) {
    hw_ = as_int(p.h * p.w, "h*w");
    (void)as_int(p.f * p.fo, "f*fo");
    (void)as_int(p.S, "S");
    if (pass == Pass::accgrad && p.S > 1) {
      // Images per batched partial product: as many as the workspace limit holds (one needs none:
      // its products accumulate into the result).
      const std::size_t per_image = std::size_t(p.f * p.fo) * sizeof(float);
      const std::size_t budget = opts.workspace_limit ? opts.workspace_limit : kDefaultPartialBytes;
      chunk_ = std::clamp<int64_t>(int64_t(budget / per_image), 1, p.S);
      workspace_ = chunk_ > 1 ? std::size_t(chunk_) * per_image : 0;
    }
    FFTCONV_CUDA_CHECK(cudaGetDevice(&device_));
    if (chunk_ > 1) {
      ones_ = upload(std::vector<float>(std::size_t(chunk_), 1.0f));
      arena_.reserve(workspace_);
    }
    FFTCONV_CUBLAS_CHECK(cublasCreate(&handle_));
  }
  ~PointwisePlan() override {
    if (handle_) cublasDestroy(handle_);
  }

  std::size_t workspace_bytes() const override { return workspace_; }
  std::pair<int64_t, int64_t> fourier_basis() const override { return {1, 1}; }

  std::string describe() const override {
    std::ostringstream s;
    s << "cufft pointwise " << to_string(pass_) << " " << p_.to_string()
      << ": basis 1x1 (a 1x1 kernel's spectrum is one matrix at every frequency, so the transforms cancel; Note "
         "[pointwise basis]), cublasSgemmStridedBatched in fp32 over the "
      << p_.S << " images, ";
    switch (pass_) {
      case Pass::fprop: s << "Y[s] = W X[s] (m=h*w=" << hw_ << ", n=fo, k=f)"; break;
      case Pass::bprop: s << "gX[s] = W^T G[s] (m=h*w=" << hw_ << ", n=f, k=fo)"; break;
      case Pass::accgrad:
        s << "gW = sum over s of G[s] X[s]^T (m=f, n=fo, k=h*w=" << hw_ << ")";
        if (chunk_ > 1) s << ", per-image partials in chunks of " << chunk_ << " summed by cublasSgemv";
        break;
    }
    s << "; workspace " << workspace_ << " bytes";
    return s.str();
  }

  ProductInfo last_products() const override {
    const double flops = 2.0 * double(p_.S) * double(hw_) * double(p_.f) * double(p_.fo);
    return {flops, "fp32", products::peak_tflops(ProductMath::fp32)};
  }

  void execute(const Args& a) const override {
    require_cuda_args(a, pass_, "cufft", device_);
    std::lock_guard<std::mutex> lock(mutex_);
    const auto stream = static_cast<cudaStream_t>(a.stream);
    const bool capturing = stream_capturing(stream);
    fence_.enter(stream, capturing);  // a previous execute() may still use the partials on another stream
    FFTCONV_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    const ConvProblem& p = p_;
    const int S = int(p.S), f = int(p.f), fo = int(p.fo), hw = hw_;
    const long long x_img = (long long)f * hw, g_img = (long long)fo * hw;
    const float one = 1.0f, zero = 0.0f;
    const auto* x = static_cast<const float*>(a.input);
    const auto* w = static_cast<const float*>(a.weight);
    const auto* g = static_cast<const float*>(a.grad_output);
    auto* r = static_cast<float*>(a.result);
    // Column-major views of the NCHW planes: X[s] is hw×f (ld hw), G[s] hw×fo, W (fo×f row-major) f×fo (ld f).
    switch (pass_) {
      case Pass::fprop:  // Y[s] (hw×fo) = X[s] (hw×f) · W (f×fo)
        FFTCONV_CUBLAS_CHECK(cublasSgemmStridedBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, hw, fo, f, &one, x, hw, x_img,
                                                       w, f, 0, &zero, r, hw, g_img, S));
        break;
      case Pass::bprop:  // gX[s] (hw×f) = G[s] (hw×fo) · Wᵀ (fo×f)
        FFTCONV_CUBLAS_CHECK(cublasSgemmStridedBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_T, hw, f, fo, &one, g, hw, g_img,
                                                       w, f, 0, &zero, r, hw, x_img, S));
        break;
      case Pass::accgrad: {  // gW (f×fo column-major = fo×f row-major) = Σ_s X[s]ᵀ (f×hw) · G[s] (hw×fo)
        if (chunk_ <= 1) {
          for (int s = 0; s < S; ++s)
            FFTCONV_CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, f, fo, hw, &one, x + s * x_img, hw,
                                             g + s * g_img, hw, s == 0 ? &zero : &one, r, f));
          break;
        }
        auto* partial = reinterpret_cast<float*>(arena_.base());
        const long long wsz = (long long)f * fo;
        for (int s0 = 0; s0 < S; s0 += int(chunk_)) {
          const int sc = std::min(int(chunk_), S - s0);
          FFTCONV_CUBLAS_CHECK(cublasSgemmStridedBatched(handle_, CUBLAS_OP_T, CUBLAS_OP_N, f, fo, hw, &one,
                                                         x + s0 * x_img, hw, x_img, g + s0 * g_img, hw, g_img, &zero,
                                                         partial, f, wsz, sc));
          FFTCONV_CUBLAS_CHECK(cublasSgemv(handle_, CUBLAS_OP_N, int(wsz), sc, &one, partial, int(wsz),
                                           ones_.as<float>(), 1, s0 == 0 ? &zero : &one, r, 1));
        }
        break;
      }
    }
    fence_.leave(stream, capturing);
  }

 private:
  ConvProblem p_;
  Pass pass_;
  int hw_ = 0;
  int64_t chunk_ = 1;  // accgrad: images per batched partial product
  std::size_t workspace_ = 0;
  int device_ = 0;
  DeviceBuffer ones_;
  cublasHandle_t handle_ = nullptr;
  mutable DeviceArena arena_;
  WorkspaceFence fence_;  // after arena_: destroyed first, it waits for the work queued on the arena
  mutable std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Plan> make_cufft_pointwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) {
  if (!is_pointwise(p))
    throw Unsupported("cufft pointwise: needs a dense problem with a 1x1 kernel and no padding (" + p.to_string() + ")");
  return std::make_unique<PointwisePlan>(p, pass, opts);
}

}  // namespace fftconv
