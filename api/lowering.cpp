// The lowered backend and plan (see lowering.hpp) and the host mover.
#include "api/lowering.hpp"

#include <array>
#include <mutex>
#include <vector>

#include "common/errors.hpp"

namespace fftconv {

namespace {

// Note [stride choice]
// Polyphase computes only the outputs that are kept and, in a Fourier basis of about the padded
// input over the stride, transforms sh·sw times fewer output values than subsampling does, with
// the same multiply-adds per frequency; so it is the default. Subsampling is chosen when it keeps
// the groups native and polyphase would not (a depthwise layer stays an elementwise product in a
// backend that computes one, while polyphase makes each group sh·sw channels wide and so runs the
// groups one by one); PlanOptions::extra "stride" pins either.
}  // namespace

LoweringMap choose_lowering(const Backend& inner, const ConvProblem& p, Pass pass, DType dtype,
                            std::string_view stride, std::string* why) {
  auto native = [&](StrideLowering s) {
    return p.g > 1 && inner.supports(make_lowering(p, s, true).inner, pass, dtype).ok;
  };
  auto with = [&](StrideLowering s, const std::string& reason) {
    if (why) *why = reason;
    return make_lowering(p, s, native(s));
  };
  if (p.sh == 1 && p.sw == 1) return with(StrideLowering::none, "");
  if (stride == "polyphase" || stride == "subsample")
    return with(parse_stride_lowering(stride), "stride treatment pinned by --opt stride=" + std::string(stride));
  if (stride != "auto" && !stride.empty()) parse_stride_lowering(stride);  // throws naming the value
  if (native(StrideLowering::subsample) && !native(StrideLowering::polyphase))
    return with(StrideLowering::subsample, "subsample chosen: it keeps the " + std::to_string(p.g) +
                                               " groups in one native run, polyphase would not (Note [stride choice])");
  return with(StrideLowering::polyphase, "polyphase chosen: no discarded outputs (Note [stride choice])");
}

namespace {

std::string stride_option(const PlanOptions& o) {
  auto it = o.extra.find("stride");
  return it == o.extra.end() ? "auto" : it->second;
}

// The options the inner backend sees: the lowering's own key removed.
PlanOptions inner_options(PlanOptions o) {
  o.extra.erase("stride");
  return o;
}

class LoweredPlan final : public Plan {
 public:
  LoweredPlan(LoweringMap m, Pass pass, std::string name, std::unique_ptr<Plan> inner,
              std::unique_ptr<LoweringMover> mover, std::string why)
      : m_(std::move(m)), pass_(pass), name_(std::move(name)), inner_(std::move(inner)), mover_(std::move(mover)),
        why_(std::move(why)) {}

  std::size_t workspace_bytes() const override {
    const std::size_t e = sizeof(float);  // of the plan's float32 execution; float64 doubles it
    std::size_t extra = 0;  // x' or gradInput', w' or gradWeight', I's output or gradOutput
    if (!m_.input_identity()) extra += std::size_t(m_.input_elems());
    if (!m_.weight_identity()) extra += std::size_t(m_.weight_elems());
    if (!m_.output_identity()) extra += std::size_t(m_.output_elems());
    return inner_->workspace_bytes() + extra * e;
  }

  void execute(const Args& a) const override {
    require_operands(a, m_.outer, pass_, name_);
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t es = a.dtype == DType::f32 ? sizeof(float) : sizeof(double);
    auto at = [&](const void* base, int64_t elems) {
      return static_cast<const char*>(base) + std::size_t(elems) * es;
    };
    auto moved = [&](LoweringStep s, int slot, const void* src) -> const void* {
      void* dst = mover_->scratch(slot, std::size_t(step_elems(m_, s)) * es);
      mover_->step(s, m_, src, nullptr, dst, a.dtype, a.stream);
      return dst;
    };
    auto run = [&](const void* x, const void* w, const void* g, void* out, int64_t (LoweringMap::*result_run)(int64_t) const) {
      for (int64_t r = 0; r < m_.runs; ++r) {
        Args in;
        in.input = x ? at(x, m_.input_run(r)) : nullptr;
        in.weight = w ? at(w, m_.weight_run(r)) : nullptr;
        in.grad_output = g ? at(g, m_.output_run(r)) : nullptr;
        in.result = const_cast<char*>(at(out, (m_.*result_run)(r)));
        in.dtype = a.dtype;
        in.stream = a.stream;
        inner_->execute(in);
      }
    };
    mover_->begin(a.stream);
    switch (pass_) {
      case Pass::fprop: {
        const void* x = m_.input_identity() ? a.input : moved(LoweringStep::input, 0, a.input);
        const void* w = m_.weight_identity() ? a.weight : moved(LoweringStep::weight, 1, a.weight);
        void* y = m_.output_identity() ? a.result : mover_->scratch(2, std::size_t(m_.output_elems()) * es);
        run(x, w, nullptr, y, &LoweringMap::output_run);
        // In place when the map is the identity (each element reads only itself).
        if (!m_.output_identity() || m_.outer.bias)
          mover_->step(LoweringStep::output, m_, y, m_.outer.bias ? a.bias : nullptr, a.result, a.dtype, a.stream);
        break;
      }
      case Pass::bprop: {
        const void* g = m_.output_identity() ? a.grad_output : moved(LoweringStep::grad_output, 2, a.grad_output);
        const void* w = m_.weight_identity() ? a.weight : moved(LoweringStep::weight, 1, a.weight);
        void* gx = m_.input_identity() ? a.result : mover_->scratch(0, std::size_t(m_.input_elems()) * es);
        run(nullptr, w, g, gx, &LoweringMap::input_run);
        if (!m_.input_identity()) mover_->step(LoweringStep::input_grad, m_, gx, nullptr, a.result, a.dtype, a.stream);
        break;
      }
      case Pass::accgrad: {
        const void* x = m_.input_identity() ? a.input : moved(LoweringStep::input, 0, a.input);
        const void* g = m_.output_identity() ? a.grad_output : moved(LoweringStep::grad_output, 2, a.grad_output);
        void* gw = m_.weight_identity() ? a.result : mover_->scratch(1, std::size_t(m_.weight_elems()) * es);
        run(x, nullptr, g, gw, &LoweringMap::weight_run);
        if (!m_.weight_identity())
          mover_->step(LoweringStep::weight_grad, m_, gw, nullptr, a.result, a.dtype, a.stream);
        if (m_.outer.bias) mover_->grad_bias(m_, a.grad_output, a.grad_bias, a.dtype, a.stream);
        break;
      }
    }
    mover_->end(a.stream);
  }

  std::string describe() const override {
    return inner_->describe() + "; " + m_.summary() + (why_.empty() ? "" : "; " + why_);
  }
  std::string tile_json() const override { return inner_->tile_json(); }
  StepTimes last_breakdown() const override { return inner_->last_breakdown(); }
  ProductInfo last_products() const override { return inner_->last_products(); }

 private:
  LoweringMap m_;
  Pass pass_;
  std::string name_;
  std::unique_ptr<Plan> inner_;
  std::unique_ptr<LoweringMover> mover_;
  std::string why_;
  mutable std::mutex mutex_;  // the mover's scratch serves one execution at a time
};

class LoweredBackend final : public Backend {
 public:
  LoweredBackend(std::shared_ptr<const Backend> inner, LoweringMoverFactory movers)
      : inner_(std::move(inner)), movers_(std::move(movers)) {}
  std::string_view name() const override { return inner_->name(); }
  Location location() const override { return inner_->location(); }
  Support available() const override { return inner_->available(); }
  std::string_view summary() const override { return inner_->summary(); }
  // The inner backend's keys and the lowering's own: stride=auto|polyphase|subsample.
  std::vector<std::string_view> option_keys() const override {
    std::vector<std::string_view> keys = inner_->option_keys();
    keys.push_back("stride");
    return keys;
  }

  Support supports(const ConvProblem& p, Pass pass, DType dtype) const override {
    if (Support s = problem_support(p); !s.ok || p.is_dense()) return s.ok ? inner_->supports(p, pass, dtype) : s;
    const LoweringMap m = choose_lowering(*inner_, p, pass, dtype, "auto");
    Support s = inner_->supports(m.inner, pass, dtype);
    if (!s.ok) s.reason = "the lowered problem " + m.inner.to_string() + ": " + s.reason;
    return s;
  }

  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const override {
    p.validate();
    check_option_keys(*this, opts);
    if (p.is_dense()) return inner_->plan(p, pass, inner_options(opts));
    std::string why;
    LoweringMap m = choose_lowering(*inner_, p, pass, opts.dtype, stride_option(opts), &why);
    const PlanOptions io = inner_options(opts);
    std::unique_ptr<Plan> inner;
    try {
      inner = inner_->plan(m.inner, pass, io);
    } catch (const Unsupported& e) {
      if (m.runs > 1 || m.outer.g == 1) throw;
      // Native groups the backend cannot plan with these options (a tiled depthwise request):
      // the groups run one by one through its dense plan.
      why += std::string(why.empty() ? "" : "; ") + "groups run one by one: " + e.what();
      m = make_lowering(p, m.stride, false);
      inner = inner_->plan(m.inner, pass, io);
    }
    return std::make_unique<LoweredPlan>(std::move(m), pass, std::string(name()), std::move(inner), movers_(), why);
  }

 private:
  std::shared_ptr<const Backend> inner_;
  LoweringMoverFactory movers_;
};

template <class T>
void host_step(LoweringStep step, const LoweringMap& m, const T* src, const T* bias, T* dst) {
  const int64_t n = step_elems(m, step);
  const LoweringDivisors<PlainDiv> d = plain_divisors(m);
#pragma omp parallel for schedule(static) if (n > (1 << 14))
  for (int64_t e = 0; e < n; ++e) {
    switch (step) {
      case LoweringStep::input: dst[e] = lowered_input(m, d, src, e); break;
      case LoweringStep::weight: dst[e] = lowered_weight(m, src, e); break;
      case LoweringStep::output: dst[e] = lowered_output(m, src, bias, e); break;
      case LoweringStep::grad_output: dst[e] = lowered_grad_output(m, src, e); break;
      case LoweringStep::input_grad: dst[e] = lowered_input_grad(m, d, src, e); break;
      case LoweringStep::weight_grad: dst[e] = lowered_weight_grad(m, src, e); break;
    }
  }
}

template <class T>
void host_grad_bias(const LoweringMap& m, const T* g, T* gb) {
  const int64_t plane = m.oh * m.ow;
#pragma omp parallel for schedule(static)
  for (int64_t o = 0; o < m.outer.fo; ++o) {
    double acc = 0;
    for (int64_t s = 0; s < m.outer.S; ++s) {
      const T* src = g + (s * m.outer.fo + o) * plane;
      for (int64_t e = 0; e < plane; ++e) acc += double(src[e]);
    }
    gb[o] = T(acc);
  }
}

class HostMover final : public LoweringMover {
 public:
  void* scratch(int slot, std::size_t bytes) override {
    std::vector<double>& b = buffers_.at(std::size_t(slot));
    const std::size_t n = (bytes + sizeof(double) - 1) / sizeof(double);
    if (b.size() < n) b.assign(n, 0.0);
    return b.data();
  }
  void step(LoweringStep s, const LoweringMap& m, const void* src, const void* bias, void* dst, DType d,
            void*) override {
    if (d == DType::f32)
      host_step(s, m, static_cast<const float*>(src), static_cast<const float*>(bias), static_cast<float*>(dst));
    else
      host_step(s, m, static_cast<const double*>(src), static_cast<const double*>(bias), static_cast<double*>(dst));
  }
  void grad_bias(const LoweringMap& m, const void* g, void* gb, DType d, void*) override {
    if (d == DType::f32) host_grad_bias(m, static_cast<const float*>(g), static_cast<float*>(gb));
    else host_grad_bias(m, static_cast<const double*>(g), static_cast<double*>(gb));
  }

 private:
  std::array<std::vector<double>, 6> buffers_;
};

}  // namespace

std::shared_ptr<const Backend> make_lowered_backend(std::shared_ptr<const Backend> inner, LoweringMoverFactory movers) {
  return std::make_shared<LoweredBackend>(std::move(inner), std::move(movers));
}

std::unique_ptr<LoweringMover> make_host_lowering_mover() { return std::make_unique<HostMover>(); }

}  // namespace fftconv
