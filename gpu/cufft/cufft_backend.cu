// The `cufft` backend: the three passes through cuFFT + cuBLAS (paper Section 3, Table 1), with the
// configuration chosen by cufft_tuner, a grow-only workspace arena per plan, optional per-step timing,
// and the "naive" variant of the benchmark (extra["naive"]="1").
#include <cuda_runtime.h>

#include <mutex>
#include <sstream>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "gpu/backends.hpp"
#include "gpu/runtime/cuda_args.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "gpu/cufft/cufft_pipeline.hpp"
#include "gpu/cufft/cufft_depthwise.hpp"
#include "gpu/cufft/cufft_pointwise.hpp"
#include "gpu/cufft/cufft_tuner.hpp"
#include "gpu/gemm/products.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "gpu/tiles/device_tiles.hpp"
#include "gpu/tiles/measured_tile.hpp"
#include "tiling/planner.hpp"

namespace fftconv {
namespace {


class CufftPlan final : public Plan {
 public:
  CufftPlan(const ConvProblem& p, Pass pass, const PlanOptions& opts, CufftChoice choice, bool naive)
      : p_(p), pass_(pass), opts_(opts), naive_(naive), why_(std::move(choice.why)) {
    tiled_ = choice.pipeline->tiled();
    if (tiled_) tiles_ = choice.pipeline->tiles();
    units_ = choice.pipeline->units();
    FFTCONV_CUDA_CHECK(cudaGetDevice(&device_));
    workspace_bytes_ = choice.pipeline->workspace_bytes();
    config_ = choice.pipeline->config();
    summary_ = choice.pipeline->workspace_summary();
    edges_ = choice.pipeline->edges_summary();
    product_flops_ = choice.pipeline->product_flops();
    if (!naive_) {
      pipeline_ = std::move(choice.pipeline);
      arena_.reserve(workspace_bytes_);
    }
  }
  std::size_t workspace_bytes() const override { return workspace_bytes_; }
  std::string tile_json() const override { return tiled_ ? tiles_.json(config_.chunk) : "null"; }

  void execute(const Args& a) const override {
    require_cuda_args(a, pass_, "cufft", device_);

    std::lock_guard<std::mutex> lock(mutex_);
    auto stream = static_cast<cudaStream_t>(a.stream);
    const bool capturing = stream_capturing(stream);
    if (capturing && (naive_ || opts_.breakdown))
      throw Unsupported(std::string("cufft: this plan cannot be captured in a CUDA graph (") +
                        (naive_ ? "the naive pipeline makes its buffers and cuFFT plans in every execute()"
                                : "--breakdown synchronizes on its step events") + ")");
    // A previous execute() may still be running on another stream with the same workspace.
    fence_.enter(stream, capturing);
    timer_.reset();
    StepTimer* timer = opts_.breakdown ? &timer_ : nullptr;
    if (naive_) {
      // No reuse at all: plans and every buffer are made and released inside this call.
      CufftPipeline pipeline(p_, pass_, config_);
      DeviceBuffer workspace(pipeline.workspace_bytes());
      pipeline.run(a, stream, workspace.get(), timer);
      FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
    } else {
      pipeline_->run(a, stream, arena_.base(), timer);
    }
    fence_.leave(stream, capturing);
    last_breakdown_ = opts_.breakdown ? timer_.collect() : StepTimes{};
  }

  std::string describe() const override {
    std::ostringstream os;
    os << "cufft " << to_string(pass_) << " " << p_.to_string() << ": ";
    if (tiled_) os << tiles_.summary() << " as the batch (Note [cufft tiles]), ";
    os << config_.to_string() << " (" << edges_ << "); " << why_ << "; workspace " << summary_;
    if (opts_.workspace_limit) os << ", limit " << opts_.workspace_limit;
    if (config_.chunk < units_)
      os << "; " << (tiled_ ? "(image, tile) items" : "batch") << " processed in chunks of " << config_.chunk
         << (pass_ == Pass::accgrad ? " (accumulated in the frequency domain)" : "");
    return os.str();
  }

  StepTimes last_breakdown() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_breakdown_;
  }

  ProductInfo last_products() const override {
    return {product_flops_, std::string(to_string(config_.math)), products::peak_tflops(config_.math)};
  }

 private:
  ConvProblem p_;
  Pass pass_;
  PlanOptions opts_;
  bool naive_;
  bool tiled_ = false;
  TilePlan tiles_;
  int64_t units_ = 0;  // what the chunks split: samples, or (image, tile) items
  std::string why_, summary_, edges_;
  PipelineConfig config_;
  std::size_t workspace_bytes_ = 0;
  double product_flops_ = 0;
  int device_ = 0;
  std::unique_ptr<CufftPipeline> pipeline_;
  DeviceArena arena_;
  WorkspaceFence fence_;  // after arena_: destroyed first, it waits for the work queued on the arena
  mutable std::mutex mutex_;
  mutable StepTimer timer_;
  mutable StepTimes last_breakdown_;
};

class CufftBackend final : public Backend {
 public:
  std::string_view name() const override { return "cufft"; }
  Location location() const override { return Location::cuda; }
  std::string_view summary() const override {
    return "CUDA: cuFFT R2C/C2R + cuBLAS CGEMM per frequency (paper Table 1), autotuned basis, CGEMM strategy and "
           "spectrum layout; untiled or on the planner's tiles";
  }

  Support available() const override { return cuda_device_support(); }

  Support supports(const ConvProblem& p, Pass, DType dtype) const override {
    if (dtype != DType::f32) return {false, "cufft computes in f32 only"};
    if (problem_support(p).ok && is_depthwise(p)) return available();  // Note [depthwise products]
    if (Support s = dense_problem_support(p); !s.ok) return s;
    return available();
  }

  std::vector<std::string_view> option_keys() const override { return cufft_option_keys(); }

  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const override {
    if (problem_support(p).ok && is_depthwise(p)) {  // Note [depthwise products]
      check_option_keys(*this, opts);
      if (opts.tile.kind == TileSpec::Kind::fixed)
        throw Unsupported("cufft: a depthwise problem runs untiled (tile=" + opts.tile.to_string() + ")");
      if (Support s = available(); !s.ok) throw Unsupported("cufft: " + s.reason);
      return make_cufft_depthwise_plan(p, pass, opts);
    }
    require_dense(p, "cufft");
    const CufftPins pins = read_cufft_pins(p, opts);  // before the device: a wrong option is an error anywhere
    if (Support s = available(); !s.ok) throw Unsupported("cufft: " + s.reason);
    if (pointwise_applies(p, opts, pins)) return make_cufft_pointwise_plan(p, pass, opts);  // Note [pointwise basis]
    if (opts.tile.kind != TileSpec::Kind::none) {
      if (pins.naive) throw Unsupported("cufft: the naive variant runs untiled only (tile=" + opts.tile.to_string() + ")");
      const TilingChoice c = plan_tiling(p, pass, frequency_reduction_only(opts, "cufft"));
      if (opts.tile.kind == TileSpec::Kind::automatic && opts.autotune) {  // Note [measured tile choice]
        std::vector<PlanCandidate> cands;
        cands.push_back({"none", [=] { return tuned_plan(p, pass, opts, pins, ""); }});
        const InFlightBudget budget = in_flight_budget(p, pass, pins);
        for (const Candidate* k : cheapest_tiled(c, [](const Candidate&) { return true; })) {
          CufftPins tiled = pins;
          tiled.tiles = device_tile_plan(p, pass, *k, opts, budget);
          cands.push_back({k->label(), [=] { return tuned_plan(p, pass, opts, tiled, ""); }});
        }
        return fastest_plan("cufft", p, pass, opts, std::move(cands), [&] { return planner_plan(p, pass, opts, pins, c); });
      }
      return planner_plan(p, pass, opts, pins, c);
    }
    if (pins.naive) return std::make_unique<CufftPlan>(p, pass, opts, naive_cufft_config(p, pass, opts), true);
    return tuned_plan(p, pass, opts, pins, "");
  }

 private:
  // Note [pointwise basis]: a 1×1 kernel without padding, unless a pin asks for the FFT pipeline
  // (a basis, a fixed tile, tensor-core math or any of the pipeline's options).
  static bool pointwise_applies(const ConvProblem& p, const PlanOptions& opts, const CufftPins& pins) {
    return is_pointwise(p) && opts.basis_h <= 0 && opts.basis_w <= 0 && opts.tile.kind != TileSpec::Kind::fixed &&
           (!pins.math || *pins.math == ProductMath::fp32) && !pins.gemm && !pins.layout && !pins.edges &&
           !pins.weights && !pins.naive && pins.max_prime == kDefaultMaxPrime;
  }
  // Tiled chunks take an eighth of the untiled pipeline's buffers on the smallest basis of the tuner's
  // sizes (Note [device in-flight rule]).
  static InFlightBudget in_flight_budget(const ConvProblem& p, Pass pass, const CufftPins& pins) {
    const int64_t nh = smooth_candidates(p.wrapped_h(), pins.max_prime).front();
    const int64_t nw = smooth_candidates(p.wrapped_w(), pins.max_prime).front();
    return {kCufftUntiledShare, double(CufftPipeline::untiled_buffer_bytes(p, pass, nh, nw))};
  }
  // The autotuned plan of `pins`; `why` goes before the tuner's reasons in describe().
  static std::unique_ptr<Plan> tuned_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                          const CufftPins& pins, const std::string& why) {
    CufftChoice choice = choose_cufft_config(p, pass, opts, pins);
    choice.why = why + choice.why;
    return std::make_unique<CufftPlan>(p, pass, opts, std::move(choice), false);
  }
  // The plan of the planner's choice `c` (tiled or not).
  static std::unique_ptr<Plan> planner_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts, CufftPins pins,
                                            const TilingChoice& c) {
    if (c.plan.tiled) pins.tiles = device_in_flight(c.plan, opts, in_flight_budget(p, pass, pins));
    return tuned_plan(p, pass, opts, pins, "planner: " + c.reason + "; ");
  }
};

}  // namespace

std::shared_ptr<const Backend> make_cufft_backend() { return std::make_shared<CufftBackend>(); }

}  // namespace fftconv
