// Host and device homes of a sweep's tensors (see sweep_data.hpp).
#include "validation/sweep_data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/counter_rng.hpp"
#include "common/errors.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/execute.hpp"
#include "validation/reference.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "gpu/reference/direct64.hpp"
#include "gpu/reference/sweep_ops.hpp"
#endif

namespace fftconv {

double AdjointSums::error() const {
  if (!std::isfinite(lhs + mid + rhs)) return std::numeric_limits<double>::infinity();
  if (!(scale > 0)) return 0.0;
  return std::max(std::abs(lhs - mid), std::abs(lhs - rhs)) / scale;
}

namespace {

// The norm a pass's result enters the adjoint scale with (Note [adjoint tolerance]): its own, or,
// where its sums cancel, the norm of n sums of K independent products of operands with the norms
// given (Note [cancellation]), whichever is larger. Squared norms in, a norm out.
double result_scale(double sq_result, int64_t n, int64_t K, double sq_a, int64_t na, double sq_b, int64_t nb) {
  const double independent = std::sqrt(double(n) * double(K) * (sq_a / double(std::max<int64_t>(na, 1))) *
                                       (sq_b / double(std::max<int64_t>(nb, 1))));
  return std::max(std::sqrt(sq_result), independent);
}

// max(|y|·|g|, |x|·|gx|, |w|·|gw|) with each result's norm as result_scale() gives it.
double adjoint_scale(const ConvProblem& p, double sq_x, double sq_w, double sq_g, double sq_y, double sq_gx,
                     double sq_gw) {
  const int64_t nx = p.input_elems(), nw = p.weight_elems(), ng = p.output_elems();
  const double y = result_scale(sq_y, ng, p.reduction_length(Pass::fprop), sq_x, nx, sq_w, nw);
  const double gx = result_scale(sq_gx, nx, p.reduction_length(Pass::bprop), sq_g, ng, sq_w, nw);
  const double gw = result_scale(sq_gw, nw, p.reduction_length(Pass::accgrad), sq_x, nx, sq_g, ng);
  return std::max({y * std::sqrt(sq_g), std::sqrt(sq_x) * gx, std::sqrt(sq_w) * gw});
}

// The seeds of the adjoint check's x, w (as make_pass_data_parallel draws an fprop) and g.
uint64_t adjoint_input_seed(uint64_t seed) { return operand_seeds(seed).input; }
uint64_t adjoint_weight_seed(uint64_t seed) { return operand_seeds(seed).weight; }
uint64_t adjoint_grad_seed(uint64_t seed) { return splitmix64(seed + 1); }
uint64_t adjoint_bias_seed(uint64_t seed) { return operand_seeds(seed).bias; }

// The CPU rungs a sweep asks for by name (gpu64 is handled apart); auto and none are not references.
RefKind host_ref_kind(const std::string& kind) {
  if (kind == "direct") return RefKind::direct;
  if (kind == "fftw64") return RefKind::fftw64;
  throw InvalidArgument("reference: expected direct, fftw64 or gpu64, got '" + kind + "'");
}

class HostSweepData final : public SweepData {
 public:
  const char* where() const override { return "host"; }
  Args poisoned_args() override {
    std::fill(d_.result.begin(), d_.result.end(), std::numeric_limits<float>::quiet_NaN());
    return d_.args();
  }
  void make(const ConvProblem& p, Pass pass, uint64_t seed) override {
    p_ = p, pass_ = pass;
    d_ = make_pass_data_parallel(p, pass, seed);
    ref_.clear();
  }
  void reference(const std::string& kind) override {
    ref_ = kind == "gpu64" ? gpu_reference(p_, pass_, d_) : reference_result(p_, pass_, d_, host_ref_kind(kind));
  }
  double run(const Backend& b, const Plan& plan) override {
    std::fill(d_.result.begin(), d_.result.end(), std::numeric_limits<float>::quiet_NaN());
    return execute_pass(b, plan, d_);
  }
  Verdict judge(int64_t basis_elems, ProductMath products) override {
    return judge_result(p_, pass_, d_, ref_, basis_elems, products);
  }
  AdjointSums adjoint(const Backend& b, const ConvProblem& p, const std::array<const Plan*, 3>& plans,
                      uint64_t seed) override {
    const auto nan = std::numeric_limits<float>::quiet_NaN();
    PassData x, g, a;  // x: input, weight -> output; g: grad_output, weight -> gradInput; a: -> gradWeight
    x.input.resize(std::size_t(p.input_elems()));
    fill_normal_parallel(x.input, adjoint_input_seed(seed));
    x.weight.resize(std::size_t(p.weight_elems()));
    fill_normal_parallel(x.weight, adjoint_weight_seed(seed));
    x.result.assign(std::size_t(p.output_elems()), nan);
    if (p.bias) {
      x.bias.resize(std::size_t(p.fo));
      fill_normal_parallel(x.bias, adjoint_bias_seed(seed));
    }
    g.grad_output.resize(std::size_t(p.output_elems()));
    fill_normal_parallel(g.grad_output, adjoint_grad_seed(seed));
    g.weight = x.weight;
    g.result.assign(std::size_t(p.input_elems()), nan);
    a.input = x.input;
    a.grad_output = g.grad_output;
    a.result.assign(std::size_t(pass_result_elems(p, Pass::accgrad)), nan);  // gradWeight, gradBias
    if (p.bias) a.grad_bias_offset = p.weight_elems();
    AdjointSums s;
    s.ms = execute_pass(b, *plans[0], x) + execute_pass(b, *plans[1], g) + execute_pass(b, *plans[2], a);
    auto sq = [](const std::vector<float>& v) { return dot(v.data(), v.data(), int64_t(v.size())); };
    s.lhs = dot(x.result.data(), g.grad_output.data(), int64_t(x.result.size()));
    if (p.bias) s.lhs -= dot(x.bias.data(), a.result.data() + p.weight_elems(), p.fo);
    a.result.resize(std::size_t(p.weight_elems()));  // gradBias is accounted for in lhs
    s.mid = dot(x.input.data(), g.result.data(), int64_t(x.input.size()));
    s.rhs = dot(x.weight.data(), a.result.data(), int64_t(x.weight.size()));
    s.scale = adjoint_scale(p, sq(x.input), sq(x.weight), sq(g.grad_output), sq(x.result), sq(g.result), sq(a.result));
    return s;
  }

 private:
  ConvProblem p_;
  Pass pass_ = Pass::fprop;
  PassData d_;
  std::vector<double> ref_;
};

#ifdef FFTCONV_HAVE_CUDA

// A grow-only device tensor.
class Slot {
 public:
  template <class T>
  T* get(int64_t elems) {
    arena_.reserve(std::size_t(elems) * sizeof(T));
    return reinterpret_cast<T*>(arena_.base());
  }

 private:
  DeviceArena arena_;
};

double rms_device(const float* x, int64_t n) { return n > 0 ? std::sqrt(dot_device(x, x, n) / double(n)) : 0.0; }

class DeviceSweepData final : public SweepData {
 public:
  const char* where() const override { return "device"; }
  void make(const ConvProblem& p, Pass pass, uint64_t seed) override {
    p_ = p, pass_ = pass;
    x_ = w_ = g_ = b_ = nullptr;
    const OperandSeeds s = operand_seeds(seed);  // the host's seeds (validation/data.hpp)
    if (pass == Pass::fprop && p.bias) fill_normal_device(b_ = bs_.get<float>(p.fo), p.fo, s.bias);
    if (pass != Pass::bprop) fill_normal_device(x_ = xs_.get<float>(p.input_elems()), p.input_elems(), s.input);
    if (pass != Pass::accgrad) fill_normal_device(w_ = ws_.get<float>(p.weight_elems()), p.weight_elems(), s.weight);
    if (pass != Pass::fprop)
      fill_normal_device(g_ = gs_.get<float>(p.output_elems()), p.output_elems(), s.grad_output);
    using Tensor = std::pair<const float*, int64_t>;
    const auto [a, b] = pass_operands<Tensor>(pass, {x_, p.input_elems()}, {w_, p.weight_elems()},
                                              {g_, p.output_elems()});
    rms_ = {rms_device(a.first, a.second), rms_device(b.first, b.second)};
    have_ref_ = false;
  }
  void reference(const std::string& kind) override {
    const int64_t n = pass_result_elems(p_, pass_);
    double* ref = refs_.get<double>(n);
    if (kind == "gpu64") {
      direct64_pass_device(p_, pass_, x_, w_, g_, ref);
    } else {
      PassData d;  // small problems: the CPU rung, on copies of the device operands
      if (x_) d.input = download<float>(x_, std::size_t(p_.input_elems()));
      if (w_) d.weight = download<float>(w_, std::size_t(p_.weight_elems()));
      if (g_) d.grad_output = download<float>(g_, std::size_t(p_.output_elems()));
      if (b_) d.bias = download<float>(b_, std::size_t(p_.fo));
      const std::vector<double> host = reference_result(p_, pass_, d, host_ref_kind(kind));
      FFTCONV_CUDA_CHECK(cudaMemcpy(ref, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice));
    }
    have_ref_ = true;
  }
  double run(const Backend&, const Plan& plan) override {
    const int64_t n = pass_result_elems(p_, pass_);
    out_ = outs_.get<float>(n);
    fill_nan_device(out_, n);
    Args a = args(x_, w_, g_, out_);
    a.bias = b_;
    if (pass_ == Pass::accgrad && p_.bias) a.grad_bias = out_ + p_.weight_elems();
    return execute_on_device(plan, a);
  }
  Verdict judge(int64_t basis_elems, ProductMath products) override {
    if (!have_ref_) throw InvalidArgument("judge: no reference was computed for " + p_.to_string());
    const int64_t n = pass_result_elems(p_, pass_);
    const DeviceErrorSums d = error_sums_device(out_, refs_.get<double>(n), n);
    ErrorSums s;
    s.sq_diff = d.sums[0], s.sq_ref = d.sums[1], s.max_diff = d.sums[2], s.max_ref = d.sums[3];
    s.nonfinite = d.counts[0], s.ref_nonfinite = d.counts[1];
    return judge_stats(p_, pass_, error_stats(s), rms_.first, rms_.second, basis_elems, products);
  }
  AdjointSums adjoint(const Backend&, const ConvProblem& p, const std::array<const Plan*, 3>& plans,
                      uint64_t seed) override {
    const int64_t nx = p.input_elems(), nw = p.weight_elems(), ng = p.output_elems();
    float* x = xs_.get<float>(nx);
    float* w = ws_.get<float>(nw);
    float* g = gs_.get<float>(ng);
    x_ = w_ = g_ = b_ = nullptr;  // the pass operands are overwritten: make() must come first again
    have_ref_ = false;
    fill_normal_device(x, nx, adjoint_input_seed(seed));
    fill_normal_device(w, nw, adjoint_weight_seed(seed));
    fill_normal_device(g, ng, adjoint_grad_seed(seed));
    float* y = outs_.get<float>(ng);
    float* gx = gxs_.get<float>(nx);
    const int64_t nb = p.bias ? p.fo : 0;
    float* gw = gws_.get<float>(nw + nb);  // gradWeight, then gradBias
    float* bias = p.bias ? bs_.get<float>(nb) : nullptr;
    if (bias) fill_normal_device(bias, nb, adjoint_bias_seed(seed));
    fill_nan_device(y, ng), fill_nan_device(gx, nx), fill_nan_device(gw, nw + nb);
    Args fa = args(x, w, nullptr, y), aa = args(x, nullptr, g, gw);
    fa.bias = bias;
    aa.grad_bias = bias ? gw + nw : nullptr;
    AdjointSums s;
    s.ms = execute_on_device(*plans[0], fa) + execute_on_device(*plans[1], args(nullptr, w, g, gx)) +
           execute_on_device(*plans[2], aa);
    s.lhs = dot_device(y, g, ng) - (bias ? dot_device(bias, gw + nw, nb) : 0.0);
    s.mid = dot_device(x, gx, nx);
    s.rhs = dot_device(w, gw, nw);
    auto sq = [](const float* v, int64_t n) { return dot_device(v, v, n); };
    s.scale = adjoint_scale(p, sq(x, nx), sq(w, nw), sq(g, ng), sq(y, ng), sq(gx, nx), sq(gw, nw));
    return s;
  }
  Args poisoned_args() override {
    const int64_t n = p_.result_elems(pass_);
    out_ = outs_.get<float>(n);
    fill_nan_device(out_, n);
    FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
    return args(x_, w_, g_, out_);
  }

 private:
  static Args args(const float* x, const float* w, const float* g, float* out) {
    Args a;
    a.input = x;
    a.weight = w;
    a.grad_output = g;
    a.result = out;
    a.dtype = DType::f32;
    return a;
  }

  ConvProblem p_;
  Pass pass_ = Pass::fprop;
  Slot xs_, ws_, gs_, bs_, outs_, gxs_, gws_, refs_;
  float *x_ = nullptr, *w_ = nullptr, *g_ = nullptr, *b_ = nullptr, *out_ = nullptr;
  std::pair<double, double> rms_{0, 0};
  bool have_ref_ = false;
};

#endif  // FFTCONV_HAVE_CUDA

}  // namespace

std::unique_ptr<SweepData> make_host_sweep_data() { return std::make_unique<HostSweepData>(); }

std::unique_ptr<SweepData> make_device_sweep_data() {
#ifdef FFTCONV_HAVE_CUDA
  if (!gpu_reference_available()) throw Unsupported("device operands: no CUDA device");
  return std::make_unique<DeviceSweepData>();
#else
  throw Unsupported("device operands: this build has no CUDA");
#endif
}

}  // namespace fftconv
