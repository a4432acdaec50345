// Depthwise convolution on cuFFT (see cufft_depthwise.hpp): pad -> R2C in place -> pointwise
// product per (image, channel) -> C2R in place -> clip.
#include "gpu/cufft/cufft_depthwise.hpp"

#include <cufft.h>

#include <mutex>
#include <sstream>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "gpu/cufft/cufft_kernels.cuh"
#include "gpu/runtime/cuda_args.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/device_arena.hpp"

namespace fftconv {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxGridY = 65535;

// a[p][q] *= w[p % C][q] (conjugated when conj), p over planes, q over the F frequencies of a plane.
__global__ void multiply_by_channel(float2* __restrict__ a, const float2* __restrict__ w, int64_t planes, int64_t C,
                                    int F, bool conj) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= F) return;
  for (int64_t p = blockIdx.y; p < planes; p += gridDim.y) {
    const float2 x = a[p * F + q], k = w[(p % C) * F + q];
    const float ki = conj ? -k.y : k.y;
    a[p * F + q] = make_float2(x.x * k.x - x.y * ki, x.x * ki + x.y * k.x);
  }
}

// out[c][q] = sum_s x[s*C + c][q] * conj(g[s*C + c][q]).
__global__ void sum_products_over_images(const float2* __restrict__ x, const float2* __restrict__ g, int64_t S,
                                         int64_t C, int F, float2* __restrict__ out) {
  const int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= F) return;
  for (int64_t c = blockIdx.y; c < C; c += gridDim.y) {
    float re = 0.f, im = 0.f;
    for (int64_t s = 0; s < S; ++s) {
      const int64_t i = (s * C + c) * F + q;
      const float2 a = x[i], b = g[i];
      re += a.x * b.x + a.y * b.y;
      im += a.y * b.x - a.x * b.y;
    }
    out[c * F + q] = make_float2(re, im);
  }
}

dim3 plane_grid(int F, int64_t planes) {
  return dim3(unsigned((F + kThreads - 1) / kThreads), unsigned(std::min<int64_t>(std::max<int64_t>(planes, 1), kMaxGridY)));
}

// An in-place batched R2C or C2R plan over nh×nw planes in the FftLayout (ld = 2*(nw/2+1)).
class FftPlan {
 public:
  FftPlan(int64_t nh, int64_t nw, int64_t batch, bool forward) {
    long long n[2] = {nh, nw}, real_embed[2] = {nh, 2 * (nw / 2 + 1)}, complex_embed[2] = {nh, nw / 2 + 1};
    const long long real_dist = nh * 2 * (nw / 2 + 1), complex_dist = nh * (nw / 2 + 1);
    FFTCONV_CUFFT_CHECK(cufftCreate(&h_));
    std::size_t work = 0;
    const cufftResult r =
        forward ? cufftMakePlanMany64(h_, 2, n, real_embed, 1, real_dist, complex_embed, 1, complex_dist, CUFFT_R2C,
                                      batch, &work)
                : cufftMakePlanMany64(h_, 2, n, complex_embed, 1, complex_dist, real_embed, 1, real_dist, CUFFT_C2R,
                                      batch, &work);
    if (r != CUFFT_SUCCESS) {
      cufftDestroy(h_);
      FFTCONV_CUFFT_CHECK(r);
    }
  }
  ~FftPlan() { cufftDestroy(h_); }
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
  cufftHandle get() const { return h_; }

 private:
  cufftHandle h_ = 0;
};

class DepthwisePlan final : public Plan {
 public:
  DepthwisePlan(const ConvProblem& p, Pass pass, const PlanOptions& opts) : p_(p), pass_(pass) {
    nh_ = opts.basis_h > 0 ? opts.basis_h : next_smooth7(p.padded_h());
    nw_ = opts.basis_w > 0 ? opts.basis_w : next_smooth7(p.padded_w());
    if (nh_ < p.padded_h() || nw_ < p.padded_w())
      throw InvalidArgument("basis: " + std::to_string(nh_) + "x" + std::to_string(nw_) +
                            " is smaller than the padded input " + std::to_string(p.padded_h()) + "x" +
                            std::to_string(p.padded_w()));
    layout_ = {nh_, nw_, 2 * (nw_ / 2 + 1)};
    F_ = nh_ * (nw_ / 2 + 1);
    if (F_ > int64_t(0x7fffffff)) throw Unsupported("cufft depthwise: basis too large");
    const int64_t C = p.f, planes = p.S * C;
    // Buffers: A holds S*C planes (input spectra, in place to the result), B the C kernel planes
    // (accgrad: the S*C gradOutput planes, and the C result planes in A's head after the sum).
    a_planes_ = planes;
    b_planes_ = pass == Pass::accgrad ? planes : C;
    r_planes_ = pass == Pass::accgrad ? C : planes;
    const std::size_t plane_bytes = std::size_t(layout_.plane_floats()) * sizeof(float);
    a_bytes_ = std::size_t(checked_mul(a_planes_, int64_t(plane_bytes), "cufft depthwise workspace"));
    b_bytes_ = std::size_t(checked_mul(b_planes_, int64_t(plane_bytes), "cufft depthwise workspace"));
    c_bytes_ = pass == Pass::accgrad ? std::size_t(C) * plane_bytes : 0;
    FFTCONV_CUDA_CHECK(cudaGetDevice(&device_));
    fwd_a_ = std::make_unique<FftPlan>(nh_, nw_, a_planes_, true);
    fwd_b_ = std::make_unique<FftPlan>(nh_, nw_, b_planes_, true);
    inv_ = std::make_unique<FftPlan>(nh_, nw_, r_planes_, false);
    arena_.reserve(a_bytes_ + b_bytes_ + c_bytes_);
  }

  std::size_t workspace_bytes() const override { return a_bytes_ + b_bytes_ + c_bytes_; }

  std::pair<int64_t, int64_t> fourier_basis() const override { return {nh_, nw_}; }

  std::string describe() const override {
    std::ostringstream s;
    s << "cufft depthwise " << to_string(pass_) << " " << p_.to_string() << ": basis " << nh_ << "x" << nw_ << " ("
      << F_ << " frequencies), " << p_.f << " channels, pad -> R2C in place -> "
      << (pass_ == Pass::accgrad ? "X conj(G) summed over the " + std::to_string(p_.S) + " images per channel"
                                 : std::string(pass_ == Pass::fprop ? "X conj(W)" : "G W") + " per (image, channel)")
      << " -> C2R in place -> " << (pass_ == Pass::bprop && p_.padding == Padding::mirror ? "fold" : "clip")
      << " (Note [depthwise products]); workspace " << workspace_bytes() << " bytes";
    return s.str();
  }

  void execute(const Args& a) const override {
    require_cuda_args(a, pass_, "cufft", device_);
    std::lock_guard<std::mutex> lock(mutex_);
    const auto st = static_cast<cudaStream_t>(a.stream);
    for (const auto* plan : {fwd_a_.get(), fwd_b_.get(), inv_.get()})
      FFTCONV_CUFFT_CHECK(cufftSetStream(plan->get(), st));
    float* A = reinterpret_cast<float*>(arena_.base());
    float* B = reinterpret_cast<float*>(arena_.base() + a_bytes_);
    const ConvProblem& p = p_;
    const bool mirror = p.padding == Padding::mirror;
    const float scale = float(1.0 / (double(nh_) * double(nw_)));
    auto r2c = [&](const FftPlan& plan, float* buf) {
      FFTCONV_CUFFT_CHECK(cufftExecR2C(plan.get(), buf, reinterpret_cast<cufftComplex*>(buf)));
    };
    auto c2r = [&](float* buf) {
      FFTCONV_CUFFT_CHECK(cufftExecC2R(inv_->get(), reinterpret_cast<cufftComplex*>(buf), buf));
    };
    auto multiply = [&](bool conj) {
      multiply_by_channel<<<plane_grid(int(F_), a_planes_), kThreads, 0, st>>>(
          reinterpret_cast<float2*>(A), reinterpret_cast<const float2*>(B), a_planes_, p.f, int(F_), conj);
      FFTCONV_CUDA_CHECK_LAUNCH();
    };
    gpu_kernels::ClipSpec clip;
    clip.scale = scale;
    switch (pass_) {
      case Pass::fprop:
        gpu_kernels::embed_planes(static_cast<const float*>(a.input), a_planes_, p.h, p.w, p.ph, p.pw, mirror, A,
                                  layout_, st);
        gpu_kernels::embed_planes(static_cast<const float*>(a.weight), p.f, p.kh, p.kw, 0, 0, false, B, layout_, st);
        r2c(*fwd_a_, A), r2c(*fwd_b_, B);
        multiply(true);
        c2r(A);
        clip.out_h = p.out_h(), clip.out_w = p.out_w();
        gpu_kernels::clip_planes(A, layout_, r_planes_, clip, static_cast<float*>(a.result), st);
        break;
      case Pass::bprop:
        gpu_kernels::embed_planes(static_cast<const float*>(a.grad_output), a_planes_, p.out_h(), p.out_w(), 0, 0,
                                  false, A, layout_, st);
        gpu_kernels::embed_planes(static_cast<const float*>(a.weight), p.f, p.kh, p.kw, 0, 0, false, B, layout_, st);
        r2c(*fwd_a_, A), r2c(*fwd_b_, B);
        multiply(false);
        c2r(A);
        clip.out_h = p.h, clip.out_w = p.w;
        clip.off_h = p.ph, clip.off_w = p.pw;
        clip.mirror_fold = mirror, clip.ph = p.ph, clip.pw = p.pw;
        gpu_kernels::clip_planes(A, layout_, r_planes_, clip, static_cast<float*>(a.result), st);
        break;
      case Pass::accgrad: {
        float* R = reinterpret_cast<float*>(arena_.base() + a_bytes_ + b_bytes_);
        gpu_kernels::embed_planes(static_cast<const float*>(a.input), a_planes_, p.h, p.w, p.ph, p.pw, mirror, A,
                                  layout_, st);
        gpu_kernels::embed_planes(static_cast<const float*>(a.grad_output), b_planes_, p.out_h(), p.out_w(), 0, 0,
                                  false, B, layout_, st);
        r2c(*fwd_a_, A), r2c(*fwd_a_, B);  // both hold S*C planes
        sum_products_over_images<<<plane_grid(int(F_), p.f), kThreads, 0, st>>>(
            reinterpret_cast<const float2*>(A), reinterpret_cast<const float2*>(B), p.S, p.f, int(F_),
            reinterpret_cast<float2*>(R));
        FFTCONV_CUDA_CHECK_LAUNCH();
        c2r(R);
        clip.out_h = p.kh, clip.out_w = p.kw;
        gpu_kernels::clip_planes(R, layout_, r_planes_, clip, static_cast<float*>(a.result), st);
        break;
      }
    }
  }

 private:
  ConvProblem p_;
  Pass pass_;
  int64_t nh_ = 0, nw_ = 0, F_ = 0;
  gpu_kernels::FftLayout layout_;
  int64_t a_planes_ = 0, b_planes_ = 0, r_planes_ = 0;
  std::size_t a_bytes_ = 0, b_bytes_ = 0, c_bytes_ = 0;
  int device_ = 0;
  std::unique_ptr<FftPlan> fwd_a_, fwd_b_, inv_;
  mutable DeviceArena arena_;
  mutable std::mutex mutex_;
};

}  // namespace

bool depthwise_native(const ConvProblem& p) {
  return p.g > 1 && p.g == p.f && p.g == p.fo && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && !p.bias &&
         p.padding != Padding::circular;
}

std::unique_ptr<Plan> make_cufft_depthwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) {
  if (!depthwise_native(p))
    throw Unsupported("cufft depthwise: needs groups = f = fo, stride 1, no dilation, no bias, zero or mirror padding (" +
                      p.to_string() + ")");
  return std::make_unique<DepthwisePlan>(p, pass, opts);
}

}  // namespace fftconv
