// Depthwise convolution on cuFFT (see cufft_depthwise.hpp): R2C with padding -> pointwise product per
// (image, channel) -> C2R -> clip, the edges and the product in cuFFT callbacks or in kernels of their own.
#include "gpu/cufft/cufft_depthwise.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <sstream>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "gpu/cufft/cufft_callbacks.hpp"
#include "gpu/cufft/cufft_kernels.cuh"
#include "gpu/cufft/cufft_pipeline.hpp"
#include "gpu/cufft/cufft_plan_pool.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/runtime/cuda_args.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "gpu/tiles/measured_tile.hpp"

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

dim3 plane_grid(int F, int64_t planes) {
  return dim3(unsigned((F + kThreads - 1) / kThreads), unsigned(std::min<int64_t>(std::max<int64_t>(planes, 1), kMaxGridY)));
}

// An in-place batched R2C or C2R transform of nh×nw planes in the FftLayout (ld = 2*(nw/2+1)) with
// the given LTO callbacks (Note [cufft callbacks]), from the plan pool (Note [cuFFT plan pool]); its
// callbacks read the lease's own block of cufft_cb::Params, which execute() rewrites on the stream
// before each use.
cufft_pool::Lease fft_plan(int device, int role, int64_t nh, int64_t nw, int64_t batch, bool forward,
                           cufft_pool::Load load = cufft_pool::Load::none,
                           cufft_pool::Store store = cufft_pool::Store::none) {
  cufft_pool::Key key;
  key.device = device, key.role = role, key.load = load, key.store = store, key.inverse = !forward;
  key.nh = nh, key.nw = nw, key.batch = batch;
  const long long ld = 2 * (nw / 2 + 1), fw = nw / 2 + 1;
  key.in_embed_w = forward ? ld : fw, key.in_stride = 1, key.in_dist = nh * key.in_embed_w;
  key.out_embed_w = forward ? fw : ld, key.out_stride = 1, key.out_dist = nh * key.out_embed_w;
  return cufft_pool::obtain(key);
}

class DepthwisePlan final : public Plan {
 public:
  DepthwisePlan(const ConvProblem& p, Pass pass, const PlanOptions& opts) : p_(p), pass_(pass) {
    // The wrapped extent (Note [wrapped padding]): zero padding shares its zeros between the edges.
    nh_ = opts.basis_h > 0 ? opts.basis_h : next_smooth7(p.wrapped_h());
    nw_ = opts.basis_w > 0 ? opts.basis_w : next_smooth7(p.wrapped_w());
    if (nh_ < p.wrapped_h() || nw_ < p.wrapped_w())
      throw InvalidArgument("basis: " + std::to_string(nh_) + "x" + std::to_string(nw_) +
                            " is smaller than the problem's circular extent " + std::to_string(p.wrapped_h()) + "x" +
                            std::to_string(p.wrapped_w()) + " (Note [wrapped padding])");
    layout_ = {nh_, nw_, 2 * (nw_ / 2 + 1)};
    F_ = nh_ * (nw_ / 2 + 1);
    if (F_ > int64_t(0x7fffffff)) throw Unsupported("cufft depthwise: basis too large");
    const int64_t C = p.f, planes = p.S * C;
    // Buffers: A holds S*C planes (input spectra, in place to the result), B the C kernel planes
    // (accgrad: the S*C gradOutput planes, and the C result planes after A and B).
    a_planes_ = planes;
    b_planes_ = pass == Pass::accgrad ? planes : C;
    r_planes_ = pass == Pass::accgrad ? C : planes;
    const std::size_t plane_bytes = std::size_t(layout_.plane_floats()) * sizeof(float);
    a_bytes_ = std::size_t(checked_mul(a_planes_, int64_t(plane_bytes), "cufft depthwise workspace"));
    b_bytes_ = std::size_t(checked_mul(b_planes_, int64_t(plane_bytes), "cufft depthwise workspace"));
    c_bytes_ = pass == Pass::accgrad ? std::size_t(C) * plane_bytes : 0;
    // Callbacks (Note [depthwise products]) unless pinned off; they index 32-bit offsets.
    auto it = opts.extra.find("edges");
    const bool pinned = it != opts.extra.end();
    callbacks_ = !pinned || parse_edge_mode(it->second) == EdgeMode::callback;
    const int64_t indexed = checked_mul(a_planes_, layout_.plane_floats(), "cufft depthwise offsets");
    if (callbacks_ && indexed > int64_t(UINT32_MAX)) {
      if (pinned)
        throw Unsupported("cufft depthwise: edges=callback indexes " + std::to_string(indexed) +
                          " elements of one transform batch; the limit is 2^32 (use edges=copy)");
      callbacks_ = false;
    }
    clip_callback_ = callbacks_ && !(pass == Pass::bprop && p.padding == Padding::mirror);
    FFTCONV_CUDA_CHECK(cudaGetDevice(&device_));
    using cufft_pool::Load, cufft_pool::Store;
    const Load load = callbacks_ ? Load::padded : Load::none;
    const Store product = callbacks_ && pass != Pass::accgrad ? Store::channel_product : Store::none;
    // Roles of their own in the pool's keys (3-5; the pipeline's are 0-2): these transforms run in
    // place, and a plan the pipeline made for its own placement is never handed to them.
    fwd_a_ = fft_plan(device_, 3, nh_, nw_, a_planes_, true, load, product);
    fwd_b_ = fft_plan(device_, 4, nh_, nw_, b_planes_, true, pass == Pass::accgrad ? load : Load::none);
    inv_ = fft_plan(device_, 5, nh_, nw_, r_planes_, false, Load::none, clip_callback_ ? Store::clipped : Store::none);
    work_bytes_ = std::max({fwd_a_.work_bytes(), fwd_b_.work_bytes(), inv_.work_bytes()});
    arena_.reserve(workspace_bytes());
  }

  std::size_t workspace_bytes() const override { return a_bytes_ + b_bytes_ + c_bytes_ + work_bytes_; }

  std::pair<int64_t, int64_t> fourier_basis() const override { return {nh_, nw_}; }

  std::string describe() const override {
    std::ostringstream s;
    const bool fold = pass_ == Pass::bprop && p_.padding == Padding::mirror;
    s << "cufft depthwise " << to_string(pass_) << " " << p_.to_string() << ": basis " << nh_ << "x" << nw_ << " ("
      << F_ << " frequencies), " << p_.f << " channels, "
      << (callbacks_ ? "R2C padding in its load callback" : "pad -> R2C in place") << " -> "
      << (pass_ == Pass::accgrad ? "X conj(G) summed over the " + std::to_string(p_.S) + " images per channel"
                                 : std::string(pass_ == Pass::fprop ? "X conj(W)" : "G W") +
                                       (callbacks_ ? " in the R2C store callback" : " per (image, channel)"))
      << " -> C2R in place -> " << (fold ? "fold" : clip_callback_ ? "clip in the C2R store callback" : "clip")
      << " (edges=" << (callbacks_ ? "callback" : "copy") << ", Note [depthwise products]); workspace "
      << workspace_bytes() << " bytes";
    return s.str();
  }

  void execute(const Args& a) const override {
    require_cuda_args(a, pass_, "cufft", device_);
    std::lock_guard<std::mutex> lock(mutex_);
    const auto st = static_cast<cudaStream_t>(a.stream);
    float* A = reinterpret_cast<float*>(arena_.base());
    float* B = reinterpret_cast<float*>(arena_.base() + a_bytes_);
    float* R = pass_ == Pass::accgrad ? reinterpret_cast<float*>(arena_.base() + a_bytes_ + b_bytes_) : A;
    void* work = arena_.base() + a_bytes_ + b_bytes_ + c_bytes_;
    for (const cufft_pool::Lease* plan : {&fwd_a_, &fwd_b_, &inv_}) {
      FFTCONV_CUFFT_CHECK(cufftSetStream(plan->handle(), st));
      FFTCONV_CUFFT_CHECK(cufftSetWorkArea(plan->handle(), work));
    }
    const ConvProblem& p = p_;
    const bool mirror = p.padding == Padding::mirror;
    gpu_kernels::ClipSpec clip;
    clip.scale = float(1.0 / (double(nh_) * double(nw_)));
    // The operands: A's planes (input or gradOutput), and B's (the weight, or accgrad's gradOutput).
    struct Source {
      const float* data;
      int64_t planes, h, w, ph, pw;
      bool mirror;
    };
    const Source src_a = pass_ == Pass::bprop
                             ? Source{static_cast<const float*>(a.grad_output), a_planes_, p.out_h(), p.out_w(), 0, 0, false}
                             : Source{static_cast<const float*>(a.input), a_planes_, p.h, p.w, p.ph, p.pw, mirror};
    const Source src_b = pass_ == Pass::accgrad
                             ? Source{static_cast<const float*>(a.grad_output), b_planes_, p.out_h(), p.out_w(), 0, 0, false}
                             : Source{static_cast<const float*>(a.weight), b_planes_, p.kh, p.kw, 0, 0, false};
    switch (pass_) {
      case Pass::fprop: clip.out_h = p.out_h(), clip.out_w = p.out_w(); break;
      case Pass::bprop:
        clip.out_h = p.h, clip.out_w = p.w, clip.off_h = p.ph, clip.off_w = p.pw;
        clip.mirror_fold = mirror, clip.ph = p.ph, clip.pw = p.pw;
        break;
      case Pass::accgrad: clip.out_h = p.kh, clip.out_w = p.kw; break;
    }
    const bool b_callback = callbacks_ && pass_ == Pass::accgrad;  // the weight is embedded by a copy
    if (callbacks_) {
      auto load = [&](const Source& o) {
        return gpu_kernels::padded_load_params(o.data, o.h, o.w, o.ph, o.pw, o.mirror, layout_);
      };
      cufft_cb::Params pa = load(src_a);
      pa.kernel = B, pa.channels = FastDiv::make(uint32_t(p.f));
      pa.freq = FastDiv::make(uint32_t(F_)), pa.conj_kernel = pass_ == Pass::fprop;
      const cufft_cb::Params pr = gpu_kernels::clipped_store_params(static_cast<float*>(a.result), clip, clip.scale, layout_);
      gpu_kernels::write_callback_params(fwd_a_.params(), pa, fwd_b_.params(), load(src_b), inv_.params(), pr, st);
    }
    auto embed = [&](const Source& o, float* dst) {
      gpu_kernels::embed_planes(o.data, o.planes, o.h, o.w, o.ph, o.pw, o.mirror, dst, layout_, st);
    };
    auto r2c = [&](const cufft_pool::Lease& plan, float* buf) {
      FFTCONV_CUFFT_CHECK(cufftExecR2C(plan.handle(), buf, reinterpret_cast<cufftComplex*>(buf)));
    };
    // B first: with callbacks, A's R2C multiplies by B's spectra as it stores.
    if (!b_callback) embed(src_b, B);
    r2c(fwd_b_, B);
    if (!callbacks_) embed(src_a, A);
    r2c(fwd_a_, A);
    if (pass_ == Pass::accgrad) {
      fbfft::depthwise_weight_products(reinterpret_cast<const float2*>(A), reinterpret_cast<const float2*>(B), p.S, p.f,
                                       F_, reinterpret_cast<float2*>(R), st);
    } else if (!callbacks_) {
      multiply_by_channel<<<plane_grid(int(F_), a_planes_), kThreads, 0, st>>>(
          reinterpret_cast<float2*>(A), reinterpret_cast<const float2*>(B), a_planes_, p.f, int(F_),
          pass_ == Pass::fprop);
      FFTCONV_CUDA_CHECK_LAUNCH();
    }
    FFTCONV_CUFFT_CHECK(cufftExecC2R(inv_.handle(), reinterpret_cast<cufftComplex*>(R), R));
    if (!clip_callback_) gpu_kernels::clip_planes(R, layout_, r_planes_, clip, static_cast<float*>(a.result), st);
  }

 private:
  ConvProblem p_;
  Pass pass_;
  int64_t nh_ = 0, nw_ = 0, F_ = 0;
  gpu_kernels::FftLayout layout_;
  int64_t a_planes_ = 0, b_planes_ = 0, r_planes_ = 0;
  std::size_t a_bytes_ = 0, b_bytes_ = 0, c_bytes_ = 0, work_bytes_ = 0;  // work: cuFFT's work area
  bool callbacks_ = false, clip_callback_ = false;
  int device_ = 0;
  cufft_pool::Lease fwd_a_, fwd_b_, inv_;
  mutable DeviceArena arena_;
  mutable std::mutex mutex_;
};

}  // namespace

std::unique_ptr<Plan> make_cufft_depthwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) {
  if (!is_depthwise(p))
    throw Unsupported("cufft depthwise: needs groups = f = fo, stride 1, no dilation, no bias, zero or mirror padding (" +
                      p.to_string() + ")");
  // Note [depthwise products]: with autotune and nothing pinned, the two smallest smooth bases of the
  // wrapped extent, each with callbacks and with copies, are timed (fastest_plan).
  if (!opts.autotune || opts.extra.count("edges") || opts.basis_h > 0 || opts.basis_w > 0)
    return std::make_unique<DepthwisePlan>(p, pass, opts);
  const int64_t h1 = next_smooth7(p.wrapped_h()), w1 = next_smooth7(p.wrapped_w());
  std::vector<PlanCandidate> cands;
  for (const auto& [h, w] : {std::pair{h1, w1}, std::pair{next_smooth7(h1 + 1), next_smooth7(w1 + 1)}})
    for (const char* edges : {"callback", "copy"}) {
      PlanOptions o = opts;
      o.basis_h = h, o.basis_w = w, o.extra["edges"] = edges;
      cands.push_back({std::to_string(h) + "x" + std::to_string(w) + " " + edges,
                       [=] { return std::make_unique<DepthwisePlan>(p, pass, o); }});
    }
  return fastest_plan("cufft", p, pass, opts, std::move(cands),
                      [&] { return std::make_unique<DepthwisePlan>(p, pass, opts); }, "depthwise variant");
}

}  // namespace fftconv
