// Depthwise convolution on fbfft (see fbfft_depthwise.hpp).
#include "gpu/fbfft/fbfft_depthwise.hpp"

#include <algorithm>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "gpu/fbfft/fbfft_conv_plan.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/runtime/cuda_args.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "gpu/tiles/measured_tile.hpp"

namespace fftconv::fbfft_conv {
namespace {

int64_t extent(const ConvProblem& p) { return std::max(p.wrapped_h(), p.wrapped_w()); }

// Dense planes of h×w floats, their window of a basis at (off_h, off_w).
struct Window {
  const float* data;
  int64_t h, w, off_h, off_w;
};

class DepthwisePlan final : public Plan {
 public:
  DepthwisePlan(const ConvProblem& p, Pass pass, int n, bool dependent)
      : p_(p), pass_(pass), n_(n), dependent_(dependent) {
    F_ = int64_t(n) * (n / 2 + 1);
    const int64_t C = p.f, planes = p.S * C;
    const std::size_t plane_bytes = std::size_t(F_) * sizeof(float2);
    // fprop, bprop: the C kernel spectra. accGrad: the input and gradOutput spectra, and the C
    // products.
    const int64_t spectra = pass == Pass::accgrad ? checked_mul(planes, 2, "fbfft depthwise workspace") + C : C;
    bytes_ = std::size_t(checked_mul(spectra, int64_t(plane_bytes), "fbfft depthwise workspace"));
    FFTCONV_CUDA_CHECK(cudaGetDevice(&device_));
    arena_.reserve(bytes_);
  }

  std::size_t workspace_bytes() const override { return bytes_; }
  std::pair<int64_t, int64_t> fourier_basis() const override { return {n_, n_}; }

  std::string describe() const override {
    std::ostringstream s;
    s << "fbfft depthwise " << to_string(pass_) << " " << p_.to_string() << ": basis " << n_ << "x" << n_ << " (" << F_
      << " frequencies), " << p_.f << " channels, ";
    if (pass_ == Pass::accgrad)
      s << "forward of both operands -> X conj(G) summed over the " << p_.S << " images per channel -> inverse to the "
        << p_.kh << "x" << p_.kw << " window";
    else
      s << "kernel spectra, then one fused kernel per pass: forward of each plane, "
        << (pass_ == Pass::fprop ? "X conj(W)" : "G W") << ", inverse to the window, the spectra in shared memory";
    s << " (Note [fused depthwise transforms]); workspace " << bytes_ << " bytes";
    return s.str();
  }

  void execute(const Args& a) const override {
    require_cuda_args(a, pass_, "fbfft", device_);
    std::lock_guard<std::mutex> lock(mutex_);
    const auto st = static_cast<cudaStream_t>(a.stream);
    const ConvProblem& p = p_;
    const int64_t planes = p.S * p.f;
    float2* spectra = reinterpret_cast<float2*>(arena_.base());
    const Window input{static_cast<const float*>(a.input), p.h, p.w, p.ph, p.pw};
    const Window grad{static_cast<const float*>(a.grad_output), p.out_h(), p.out_w(), 0, 0};
    const Window weight{static_cast<const float*>(a.weight), p.kh, p.kw, 0, 0};
    if (pass_ == Pass::accgrad) {
      float2 *x = spectra, *g = spectra + planes * F_, *r = spectra + 2 * planes * F_;
      fbfft::forward(forward_args(input, planes, x), st);
      fbfft::forward(forward_args(grad, planes, g), st);
      fbfft::depthwise_weight_products(x, g, p.S, p.f, F_, r, st);
      fbfft::InverseArgs v = inverse_args(static_cast<float*>(a.result), p.kh, p.kw, 0, 0);
      v.batch = p.f, v.input = r, v.layout = fbfft::Layout::standard;
      fbfft::inverse(v, st);
      return;
    }
    fbfft::forward(forward_args(weight, p.f, spectra), st);
    fbfft::DepthwiseArgs d;
    d.batch = planes;
    d.kernel = spectra, d.channels = p.f, d.conj = pass_ == Pass::fprop;
    d.dependent_launch = dependent_;
    if (pass_ == Pass::fprop) {
      d.in = forward_args(input, planes, nullptr);
      d.out = inverse_args(static_cast<float*>(a.result), p.out_h(), p.out_w(), 0, 0);
    } else {
      d.in = forward_args(grad, planes, nullptr);
      d.out = inverse_args(static_cast<float*>(a.result), p.h, p.w, p.ph, p.pw);
    }
    fbfft::depthwise(d, st);
  }

 private:
  fbfft::ForwardArgs forward_args(const Window& src, int64_t batch, float2* dst) const {
    fbfft::ForwardArgs f;
    f.batch = batch, f.n_h = n_, f.n_w = n_;
    f.input = src.data, f.in_h = src.h, f.in_w = src.w, f.in_ld = src.w, f.in_plane_stride = src.h * src.w;
    f.off_h = src.off_h, f.off_w = src.off_w;
    f.output = dst, f.layout = fbfft::Layout::standard;
    f.dependent_launch = dependent_;
    return f;
  }
  fbfft::InverseArgs inverse_args(float* dst, int64_t h, int64_t w, int64_t off_h, int64_t off_w) const {
    fbfft::InverseArgs v;
    v.n_h = n_, v.n_w = n_;
    v.output = dst, v.out_h = h, v.out_w = w, v.out_off_h = off_h, v.out_off_w = off_w;
    v.out_ld = w, v.out_plane_stride = h * w;
    v.scale = float(1.0 / (double(n_) * double(n_)));
    v.dependent_launch = dependent_;
    return v;
  }

  ConvProblem p_;
  Pass pass_;
  int n_ = 0;
  bool dependent_ = true;
  int64_t F_ = 0;
  std::size_t bytes_ = 0;
  int device_ = 0;
  mutable DeviceArena arena_;
  mutable std::mutex mutex_;
};

}  // namespace

Support depthwise_support(const ConvProblem& p) {
  if (Support s = problem_support(p); !s.ok) return s;
  if (!is_depthwise(p)) return {false, "not a depthwise problem (groups = f = fo, stride 1, no dilation, no bias)"};
  if (p.padding != Padding::zero)
    return {false, "fbfft's depthwise transforms pad with zeros only (pad=" + std::string(to_string(p.padding)) + ")"};
  if (fbfft::depthwise_side(extent(p)) == 0)
    return {false, "the circular extent " + std::to_string(p.wrapped_h()) + "x" + std::to_string(p.wrapped_w()) +
                       " exceeds the largest fused depthwise side 120"};
  return {};
}

std::unique_ptr<Plan> make_depthwise_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) {
  const std::string what = "fbfft depthwise: cannot plan " + std::string(to_string(pass)) + " for " + p.to_string();
  if (Support s = depthwise_support(p); !s.ok) throw Unsupported(what + ": " + s.reason);
  const Options o = Options::parse(opts.extra);
  if (o.kernel != fbfft::Kernel::automatic && o.kernel != fbfft::Kernel::registers)
    throw Unsupported(what + ": the fused depthwise kernels are register kernels (kernel=" +
                      std::string(fbfft::to_string(o.kernel)) + ")");
  if (opts.tile.kind == TileSpec::Kind::fixed)
    throw Unsupported(what + ": a depthwise problem runs untiled (tile=" + opts.tile.to_string() + ")");
  const int64_t need = extent(p);
  auto make = [=, dependent = o.dependent](int n) -> std::unique_ptr<Plan> {
    return std::make_unique<DepthwisePlan>(p, pass, n, dependent);
  };
  if (opts.basis_h > 0 || opts.basis_w > 0) {
    const int64_t n = std::max(opts.basis_h, opts.basis_w);
    if (opts.basis_h != opts.basis_w || fbfft::depthwise_side_index(int(std::min<int64_t>(n, 1 << 20))) < 0 || n < need)
      throw Unsupported(what + ": basis " + std::to_string(opts.basis_h) + "x" + std::to_string(opts.basis_w) +
                        " must be a square of a side of fbfft::kDepthwiseSides (8..120) >= the circular extent " +
                        std::to_string(need));
    return make(int(n));
  }
  const int first = fbfft::depthwise_side(need);  // > 0: depthwise_support
  if (!opts.autotune) return make(first);
  // The next power of two when it has a kernel (smooth sides above 32 run at about half the
  // bandwidth of the powers of two, Note [fbfft smooth tiles]), else the next side (0: none).
  const int pow2 = int(next_pow2(first));
  const int second = pow2 != first && fbfft::depthwise_side_index(pow2) >= 0 ? pow2 : fbfft::depthwise_side(first + 1);
  std::vector<PlanCandidate> cands;
  for (int n : {first, second})
    if (n > 0) cands.push_back({std::to_string(n) + "x" + std::to_string(n), [=] { return make(n); }});
  return fastest_plan("fbfft", p, pass, opts, std::move(cands), [=] { return make(first); }, "depthwise basis");
}

}  // namespace fftconv::fbfft_conv
