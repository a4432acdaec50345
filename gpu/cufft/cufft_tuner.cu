// Choosing a cufft configuration (see cufft_tuner.hpp). The autotuner times candidates on synthetic
// operands of the plan's own shapes (never on user buffers), on a private stream, with CUDA events:
// first the bases (with strided CGEMM, or the pinned strategy), then every CGEMM strategy on the best
// basis. cublasCgemm3m is accepted only when its result matches the standard CGEMM's within
// kGemm3mTolerance. Winners go to the TuneCache.
#include "gpu/cufft/cufft_tuner.hpp"
#include "gpu/gemm/products.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <sstream>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "gpu/runtime/choice_cache.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/cufft/cufft_tune_cache.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "gpu/runtime/fill_kernels.cuh"
#include "gpu/runtime/tuning_timer.hpp"
#include "tiling/planner.hpp"

namespace fftconv {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTimedReps = 3;          // timed runs per candidate (after one warm-up); the min counts
// The tune cache's key suffix of a tuning cut short by its deadline (Note [tuning budget]).
constexpr std::string_view kBudgetKey = "|budget";
constexpr std::size_t kMaxTimedBases = 8;  // L5 (13x13 needed): 16 pairs of 13..16

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", ms);
  return buf;
}

// Equal-sized chunks of the batch, largest first: S, ceil(S/2), ceil(S/4), ..., 1.
std::vector<int64_t> chunk_candidates(int64_t S) {
  std::vector<int64_t> out;
  for (int64_t k = 1;; k *= 2) {
    const int64_t c = (S + k - 1) / k;
    if (out.empty() || out.back() != c) out.push_back(c);
    if (c == 1) break;
  }
  return out;
}

// The cuBLAS workspaces a pipeline may take, preferred first: a tiled one takes the small one only
// (Note [cufft tiles]).
std::span<const std::size_t> cublas_workspaces(bool tiled) {
  static constexpr std::size_t kSizes[] = {kCublasWorkspaceLarge, kCublasWorkspaceSmall};
  return tiled ? std::span(kSizes).subspan(1) : std::span(kSizes);
}

// The largest chunk (then the smaller cuBLAS workspace) whose pipeline fits `limit` (0 = any).
// Returns nullptr when even a chunk of 1 does not fit; *smallest gets the least workspace seen.
// Tiled (tiles != nullptr): chunks of (image, tile) items, at most the plan's tiles_in_flight.
std::unique_ptr<CufftPipeline> fit(const ConvProblem& p, Pass pass, int64_t nh, int64_t nw, GemmStrategy gemm,
                                   SpectrumLayout layout, EdgeMode edges, WeightTransform weights, std::size_t limit,
                                   std::size_t* smallest, const TilePlan* tiles,
                                   ProductMath math = ProductMath::fp32) {
  const int64_t units = tiles ? std::min(tiles->item_count(), tiles->tiles_in_flight) : p.S;
  for (int64_t chunk : chunk_candidates(units)) {
    for (std::size_t blas_ws : cublas_workspaces(tiles != nullptr)) {
      PipelineConfig cfg{nh, nw, gemm, chunk, blas_ws, layout, edges, weights, math};
      auto pl = std::make_unique<CufftPipeline>(p, pass, cfg, tiles);
      if (limit == 0 || pl->workspace_bytes() <= limit) return pl;
      if (smallest) *smallest = std::min(*smallest, pl->workspace_bytes());
    }
  }
  return nullptr;
}

const TilePlan* tiles(const CufftPins& pins) { return pins.tiles ? &*pins.tiles : nullptr; }

[[noreturn]] void throw_no_fit(const ConvProblem& p, Pass pass, std::size_t limit, std::size_t smallest) {
  throw Unsupported("cufft: workspace_limit " + std::to_string(limit) + " bytes is below the smallest workspace " +
                    std::to_string(smallest) + " bytes of any basis at batch chunk 1 for " + p.to_string() + " " +
                    std::string(to_string(pass)) + " (a tiled plan, tile=auto or a smaller tile, needs less)");
}

// Basis pairs to consider, ranked by a flop model (FFTs of all planes + the complex products).
std::vector<std::pair<int64_t, int64_t>> basis_candidates(const ConvProblem& p, Pass pass, const CufftPins& pins) {
  if (pins.tiles) return {{pins.tiles->fft_h, pins.tiles->fft_w}};
  // From the circular extent up (Note [wrapped padding]: zero padding needs n + p per side, not n + 2p).
  const auto hs = pins.nh ? std::vector<int64_t>{pins.nh} : smooth_candidates(p.wrapped_h(), pins.max_prime);
  const auto ws = pins.nw ? std::vector<int64_t>{pins.nw} : smooth_candidates(p.wrapped_w(), pins.max_prime);
  const double planes = pass == Pass::fprop   ? double(p.S * p.f + p.fo * p.f + p.S * p.fo)
                        : pass == Pass::bprop ? double(p.S * p.fo + p.fo * p.f + p.S * p.f)
                                              : double(p.S * p.f + p.S * p.fo + p.fo * p.f);
  std::vector<std::pair<double, std::pair<int64_t, int64_t>>> ranked;
  for (int64_t nh : hs)
    for (int64_t nw : ws) {
      const double cost = planes * rfft2_flops(nh, nw) + 8.0 * double(nh) * double(nw / 2 + 1) * p.madds();
      ranked.push_back({cost, {nh, nw}});
    }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& r : ranked) out.push_back(r.second);
  return out;
}

// Synthetic operands and results of the full problem, and a private stream, for timing.
struct TuningBench {
  DeviceBuffer input, weight, grad, result, result2;
  DeviceArena arena;
  cudaStream_t stream = nullptr;
  Args args;
  int64_t result_elems = 0;

  TuningBench(const ConvProblem& p, Pass pass) {
    FFTCONV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    auto make = [&](DeviceBuffer& b, int64_t elems, uint64_t seed) {
      b.allocate(std::size_t(elems) * sizeof(float));
      gpu_kernels::fill_uniform(b.as<float>(), elems, seed, stream);
    };
    if (pass != Pass::bprop) make(input, p.input_elems(), 1);
    if (pass != Pass::accgrad) make(weight, p.weight_elems(), 2);
    if (pass != Pass::fprop) make(grad, p.output_elems(), 3);
    result_elems = p.result_elems(pass);
    result.allocate(std::size_t(result_elems) * sizeof(float));
    result2.allocate(std::size_t(result_elems) * sizeof(float));
    args.input = input.get(), args.weight = weight.get(), args.grad_output = grad.get();
    args.result = result.get();
    args.stream = stream;
  }
  ~TuningBench() {
    if (stream) {
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    }
  }

  // Min time (ms) over kTimedReps runs after one warm-up, writing into `out`; one timed run only when
  // it takes longer than cutoff_ms.
  double time(const CufftPipeline& pl, void* out, double cutoff_ms = std::numeric_limits<double>::infinity()) {
    arena.reserve(pl.workspace_bytes());
    Args a = args;
    a.result = out;
    return min_time_ms(stream, kTimedReps, [&] { pl.run(a, stream, arena.base(), nullptr); }, cutoff_ms);
  }

  // ||result2 - result|| / ||result|| in double.
  double rel_diff() {
    DeviceBuffer sums(2 * sizeof(double));
    FFTCONV_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, 2 * sizeof(double), stream));
    gpu_kernels::diff_norms(result2.as<float>(), result.as<float>(), result_elems, sums.as<double>(), stream);
    double h[2] = {0, 0};
    FFTCONV_CUDA_CHECK(cudaMemcpyAsync(h, sums.get(), sizeof h, cudaMemcpyDeviceToHost, stream));
    FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!std::isfinite(h[0]) || !std::isfinite(h[1])) return std::numeric_limits<double>::infinity();
    return h[1] > 0 ? std::sqrt(h[0] / h[1]) : std::sqrt(h[0]);
  }
};

std::string cache_key(const ConvProblem& p, Pass pass, const PlanOptions& opts, const CufftPins& pins) {
  std::ostringstream os;
  os << "v4|" << current_device_name() << "|" << p.to_string() << "|" << to_string(pass)
     << "|limit=" << opts.workspace_limit << "|basis=" << pins.nh << "x" << pins.nw
     << "|gemm=" << (pins.gemm ? to_string(*pins.gemm) : "auto")
     << "|layout=" << (pins.layout ? to_string(*pins.layout) : "auto")
     << "|edges=" << (pins.edges ? to_string(*pins.edges) : "auto")
     << "|weights=" << (pins.weights ? to_string(*pins.weights) : "auto") << "|max_prime=" << pins.max_prime
     << "|tiles=" << (pins.tiles ? pins.tiles->summary() : "none")
     << "|math=" << (pins.math ? to_string(*pins.math) : "auto");
  return os.str();
}

// The cached record as a pipeline, or nullptr when it no longer applies (problem sizes, limit).
// A tiled record takes the tiled workspace whatever it recorded (Note [cufft tiles]).
std::unique_ptr<CufftPipeline> from_record(const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                           const TuneRecord& r, const TilePlan* tiles) {
  try {
    if (!tiles && (r.nh < p.wrapped_h() || r.nw < p.wrapped_w() || r.chunk < 1 || r.chunk > p.S)) return nullptr;
    const std::size_t blas_ws = tiles ? cublas_workspaces(true).front() : r.cublas_workspace;
    auto pl = std::make_unique<CufftPipeline>(p, pass,
                                              PipelineConfig{r.nh, r.nw, parse_gemm_strategy(r.gemm), r.chunk,
                                                             blas_ws, parse_spectrum_layout(r.layout),
                                                             parse_edge_mode(r.edges), parse_weight_transform(r.weights),
                                                             parse_product_math(r.math)},
                                              tiles);
    if (opts.workspace_limit && pl->workspace_bytes() > opts.workspace_limit) return nullptr;
    return pl;
  } catch (const InvalidArgument&) {
    return nullptr;
  }
}

CufftChoice heuristic(const ConvProblem& p, Pass pass, const PlanOptions& opts, const CufftPins& pins) {
  auto bases = basis_candidates(p, pass, pins);
  std::stable_sort(bases.begin(), bases.end(),
                   [](const auto& a, const auto& b) { return a.first * a.second < b.first * b.second; });
  const GemmStrategy gemm = pins.gemm.value_or(GemmStrategy::strided);
  const SpectrumLayout layout = pins.layout.value_or(SpectrumLayout::transposed);
  const EdgeMode edges = pins.edges.value_or(EdgeMode::copy);
  const WeightTransform weights = pins.weights.value_or(WeightTransform::fft);
  std::size_t smallest = std::numeric_limits<std::size_t>::max();
  for (const auto& [nh, nw] : bases) {
    const int64_t units = pins.tiles ? std::min(pins.tiles->item_count(), pins.tiles->tiles_in_flight) : p.S;
    const ProductMath math =
        pins.math.value_or(gemm == GemmStrategy::strided
                               ? products::model_choice(products::pass_product(p, pass, units, nh * (nw / 2 + 1)))
                               : ProductMath::fp32);
    if (auto pl = fit(p, pass, nh, nw, gemm, layout, edges, weights, opts.workspace_limit, &smallest, tiles(pins), math))
      return {std::move(pl), "heuristic (autotune off): smallest " + std::to_string(pins.max_prime) +
                                 "-smooth basis that fits, " + std::string(to_string(gemm)) + " CGEMM" +
                                 (pins.gemm ? " (pinned)" : "") + ", math " + std::string(to_string(math)) +
                                 (pins.math ? " (pinned)" : " (model)")};
  }
  throw_no_fit(p, pass, opts.workspace_limit, smallest);
}

// The autotuner's stages on one (problem, pass): the candidate bases with the first CGEMM, the
// other CGEMM strategies on the winning basis, then the spectrum layouts, the callbacks and the
// pruned weight transforms on the winner; a candidate replaces the winner only when it is faster.
// `why_` collects every timing for describe(). Only the winner's configuration is kept: each
// candidate's cuFFT plans go back to the pool once it is timed (Note [cuFFT plan pool]), so a later
// candidate with the winner's transforms (another CGEMM, layout, weight transform or product math)
// takes them instead of linking its callbacks again, and the winner is remade from the pool at the end.
class Autotune {
 public:
  Autotune(const ConvProblem& p, Pass pass, const PlanOptions& opts, const CufftPins& pins)
      : p_(p), pass_(pass), opts_(opts), pins_(pins), first_gemm_(pins.gemm.value_or(GemmStrategy::strided)),
        first_layout_(pins.layout.value_or(SpectrumLayout::transposed)),
        first_edges_(pins.edges.value_or(EdgeMode::copy)), first_weights_(pins.weights.value_or(WeightTransform::fft)),
        first_math_(pins.math.value_or(ProductMath::fp32)), bound_ms_(opts.tune_bound_ms), bench_(p, pass) {}

  CufftChoice run() {
    staged(&Autotune::time_bases);
    if (over_bound(kTuneBoundFactor)) return stopped(kTuneBoundFactor);
    if (!pins_.gemm && first_math_ == ProductMath::fp32) staged(&Autotune::time_gemms);
    if (over_bound(kTuneBoundLateFactor)) return stopped(kTuneBoundLateFactor);
    staged(&Autotune::time_variants);
    if (!pins_.math) staged(&Autotune::time_math);
    why_ << "; winner " << best_->to_string() << " at " << fmt_ms(best_ms_);
    const PipelineConfig& c = *best_;
    TuneRecord rec{c.nh, c.nw, std::string(to_string(c.gemm)), c.chunk, c.cublas_workspace,
                   std::string(to_string(c.layout)), std::string(to_string(c.edges)), std::string(to_string(c.weights)),
                   std::string(to_string(c.math)), best_ms_};
    const std::string key = cache_key(p_, pass_, opts_, pins_);
    // Note [tuning budget]
    TuneCache::instance().store(budget_cut_ ? key + std::string(kBudgetKey) : key, rec, opts_.tune_cache);
    return {winner(), why_.str()};
  }

 private:
  // Keeps pl's configuration when it is faster than the winner.
  // A candidate slower than this on its first timed run is timed no further (kTuningCutoff).
  double cutoff() const { return kTuningCutoff * best_ms_; }
  // The best so far cannot come near the plan `auto` timed before (Note [tuning bound]).
  bool over_bound(double factor) const { return bound_ms_ > 0 && best_ms_ > factor * bound_ms_; }
  // The best so far, not cached: the tuning stopped at the bound.
  CufftChoice stopped(double factor) {
    why_ << "; " << kTuningStopped << fmt_ms(best_ms_) << " is more than " << factor << "x the " << fmt_ms(bound_ms_)
         << " of a plan timed before (Note [tuning bound])";
    return {winner(), why_.str()};
  }
  // Whether a candidate links cuFFT callbacks (its plans cost far more wall time to make): the
  // kind out_of_budget() and spent() keep apart.
  static bool links_callbacks(EdgeMode edges, SpectrumLayout layout) {
    return edges == EdgeMode::callback || layout == SpectrumLayout::gather;
  }
  // Whether the deadline leaves too little time for one more candidate, judged by the wall time of
  // the last one of its kind (Note [tuning budget]). Says so for the rest of the tuning.
  bool out_of_budget(bool callback) {
    if (!opts_.tune_deadline) return false;
    const double cost_ms = callback ? last_callback_ms_ : last_cost_ms_;
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double, std::milli>(cost_ms));
    if (end <= *opts_.tune_deadline) return false;
    budget_cut_ = true;
    return true;
  }
  // Records the wall time of a candidate that began at t0.
  void spent(Clock::time_point t0, bool callback) {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    (callback ? last_callback_ms_ : last_cost_ms_) = ms;
  }
  // Runs one stage and appends its wall time, planning (cuFFT plans, callback linking) included.
  void staged(void (Autotune::*stage)()) {
    const auto t0 = std::chrono::steady_clock::now();
    (this->*stage)();
    char buf[32];
    std::snprintf(buf, sizeof buf, " [%.2f s]",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    why_ << buf;
  }
  void offer(const CufftPipeline& pl, double ms) {
    if (ms < best_ms_) best_ms_ = ms, best_ = pl.config();
  }
  // The winner remade: its plans come from the pool (no linking).
  std::unique_ptr<CufftPipeline> winner() const {
    return std::make_unique<CufftPipeline>(p_, pass_, *best_, tiles(pins_));
  }

  // Stage 1: the best-ranked bases with the first CGEMM, layout and edges. Throws CudaError when
  // every basis failed, Unsupported when none fits the workspace limit.
  void time_bases() {
    auto bases = basis_candidates(p_, pass_, pins_);
    if (bases.size() > kMaxTimedBases) bases.resize(kMaxTimedBases);
    std::size_t smallest = std::numeric_limits<std::size_t>::max();
    why_ << "autotuned: bases {";
    bool first = true;
    std::string last_failure;
    for (std::size_t b = 0; b < bases.size(); ++b) {
      const auto [nh, nw] = bases[b];
      if (best_ && out_of_budget(false)) {  // Note [tuning budget]
        why_ << ", " << bases.size() - b << " more: " << kTuningBudgetSpent;
        break;
      }
      std::unique_ptr<CufftPipeline> pl;
      double ms = 0;
      const auto t0 = Clock::now();
      try {  // a library refusing one candidate must not sink the others
        pl = fit(p_, pass_, nh, nw, first_gemm_, first_layout_, first_edges_, first_weights_, opts_.workspace_limit,
                 &smallest, tiles(pins_), first_math_);
        if (!pl) continue;
        ms = bench_.time(*pl, bench_.result.get(), cutoff());
        spent(t0, links_callbacks(first_edges_, first_layout_));
      } catch (const CudaError& e) {
        last_failure = e.what();
        why_ << (first ? "" : ", ") << nh << "x" << nw << ": failed (" << e.what() << ")";
        first = false;
        continue;
      }
      why_ << (first ? "" : ", ") << nh << "x" << nw << ": " << fmt_ms(ms);
      first = false;
      timed_.push_back({ms, {nh, nw}});
      offer(*pl, ms);
      if (over_bound(kTuneBoundFactor)) break;  // Note [tuning bound]
    }
    if (!best_ && !last_failure.empty()) throw CudaError("cufft: every candidate basis failed; last: " + last_failure);
    if (!best_) throw_no_fit(p_, pass_, opts_.workspace_limit, smallest);
    why_ << "} with " << to_string(first_gemm_) << " CGEMM";
  }

  // Stage 2: the other CGEMM strategies on the winning basis; 3m only within kGemm3mTolerance of the
  // standard CGEMM's result.
  void time_gemms() {
    why_ << "; CGEMM {strided: " << fmt_ms(best_ms_);
    if (out_of_budget(false)) {
      why_ << ", the others: " << kTuningBudgetSpent << "}";
      return;
    }
    // Reference result of the standard CGEMM on the chosen basis, for the 3m accuracy check.
    bench_.time(*winner(), bench_.result.get());
    const int64_t nh = best_->nh, nw = best_->nw;
    for (GemmStrategy g : kAllGemmStrategies) {
      if (g == GemmStrategy::strided) continue;
      if (out_of_budget(false)) {
        why_ << ", " << to_string(g) << ": " << kTuningBudgetSpent;
        continue;
      }
      if (g == GemmStrategy::loop) {  // its launches alone would exceed the cutoff (kLoopLaunchFloorMs)
        const int64_t units = pins_.tiles ? pins_.tiles->item_count() : p_.S;
        const int64_t launches = nh * (nw / 2 + 1) * ((units + best_->chunk - 1) / best_->chunk);
        const double floor_ms = double(launches) * kLoopLaunchFloorMs;
        if (floor_ms > cutoff()) {
          why_ << ", loop: not timed (" << launches << " launches, at least " << fmt_ms(floor_ms) << ")";
          continue;
        }
      }
      std::unique_ptr<CufftPipeline> pl;
      double ms = 0;
      const auto t0 = Clock::now();
      try {
        pl = fit(p_, pass_, nh, nw, g, first_layout_, first_edges_, first_weights_, opts_.workspace_limit, nullptr,
                 tiles(pins_));
        if (!pl) {
          why_ << ", " << to_string(g) << ": does not fit";
          continue;
        }
        ms = bench_.time(*pl, bench_.result2.get(), cutoff());
        spent(t0, false);
      } catch (const CudaError& e) {
        why_ << ", " << to_string(g) << ": failed (" << e.what() << ")";
        continue;
      }
      why_ << ", " << to_string(g) << ": " << fmt_ms(ms);
      if (g == GemmStrategy::gemm3m) {
        const double diff = bench_.rel_diff();
        char buf[64];
        std::snprintf(buf, sizeof buf, " (rel diff %.2g vs strided", diff);
        why_ << buf << (diff <= kGemm3mTolerance ? ", accepted)" : ", rejected)");
        if (!(diff <= kGemm3mTolerance)) continue;
      }
      offer(*pl, ms);
    }
    why_ << "}";
  }

  // One variant of the winner (the same products, so no accuracy check): another layout, edge mode,
  // basis (nh, nw > 0) or weight transform.
  void try_variant(const std::string& what, SpectrumLayout layout, EdgeMode edges, int64_t nh = 0, int64_t nw = 0,
                   std::optional<WeightTransform> weights = std::nullopt) {
    const PipelineConfig c = *best_;
    const bool callback = links_callbacks(edges, layout);
    if (out_of_budget(callback)) {
      why_ << ", " << what << ": " << kTuningBudgetSpent;
      return;
    }
    const auto t0 = Clock::now();
    try {
      auto pl = fit(p_, pass_, nh ? nh : c.nh, nw ? nw : c.nw, c.gemm, layout, edges, weights.value_or(c.weights),
                    opts_.workspace_limit, nullptr, tiles(pins_), c.math);
      if (!pl) {
        why_ << ", " << what << ": does not fit";
        return;
      }
      const double ms = bench_.time(*pl, bench_.result2.get(), cutoff());
      spent(t0, callback);
      why_ << ", " << what << ": " << fmt_ms(ms);
      offer(*pl, ms);
    } catch (const Error& e) {  // cuFFT refusing a callback plan, 32-bit callback offsets exceeded, no DFT
      why_ << ", " << what << ": failed (" << e.what() << ")";
    }
  }

  // Stage 3: the callback variants and the other spectrum layouts on the winning basis and CGEMM,
  // then the pruned weight transforms (Note [pruned weight transforms]) on the winner.
  void time_variants() {
    const bool callbacks = best_ms_ >= kCallbackMinMs;
    why_ << "; variants {" << to_string(first_layout_) << "/" << to_string(first_edges_) << ": " << fmt_ms(best_ms_);
    if (!pins_.edges && !pins_.tiles && callbacks) {
      // cuFFT's callback kernels differ by size more than its plain ones (L5: 1.11 ms with callbacks on
      // the 14x14 basis that wins with copies, less on 14x15), so the fastest bases of the first stage
      // are all timed with callbacks.
      std::stable_sort(timed_.begin(), timed_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      if (timed_.size() > kCallbackBases) timed_.resize(kCallbackBases);
      for (const auto& [ms, basis] : timed_)
        try_variant("edges callback " + std::to_string(basis.first) + "x" + std::to_string(basis.second), first_layout_,
                    EdgeMode::callback, basis.first, basis.second);
    }
    if (!pins_.layout) {
      const EdgeMode e = best_->edges;
      if (e == EdgeMode::callback && best_ms_ >= kDirectCallbackMaxMs)
        why_ << ", direct/callback: not timed (at or above " << fmt_ms(kDirectCallbackMaxMs) << ")";
      else
        try_variant(e == EdgeMode::callback ? "direct/callback" : "direct/copy", SpectrumLayout::direct, e);
      if (callbacks)
        try_variant(e == EdgeMode::callback ? "gather/callback" : "gather/copy", SpectrumLayout::gather, e);
    }
    if (!pins_.weights && !pins_.tiles && best_->weights == WeightTransform::fft &&
        weight_dft_supported(p_, best_->nh, best_->nw))
      try_variant("weights dft", best_->layout, best_->edges, 0, 0, WeightTransform::dft);
    why_ << "}";
    if (!callbacks && (!pins_.edges || !pins_.layout))
      why_ << " (callback variants not timed: under " << kCallbackMinMs << " ms)";
  }

  // Stage 4: the 3xtf32 products (Note [product precision]) on the winner, kept when within
  // kGemm3mTolerance of the fp32 products' result and faster by products::kTensorCoreMargin.
  void time_math() {
    const PipelineConfig c = *best_;
    if (out_of_budget(false)) {
      why_ << "; math {3xtf32: " << kTuningBudgetSpent << "}";
      return;
    }
    try {
      bench_.time(*winner(), bench_.result.get());  // the winner's fp32 result, the reference
      auto pl = fit(p_, pass_, c.nh, c.nw, GemmStrategy::strided, c.layout, c.edges, c.weights, opts_.workspace_limit,
                    nullptr, tiles(pins_), ProductMath::tf32x3);
      if (!pl) {
        why_ << "; math {3xtf32: does not fit}";
        return;
      }
      const double ms = bench_.time(*pl, bench_.result2.get(), cutoff());
      const double diff = bench_.rel_diff();
      char buf[128];
      const bool faster = ms <= products::kTensorCoreMargin * best_ms_;
      std::snprintf(buf, sizeof buf, "; math {fp32: %s, 3xtf32: %s (rel diff %.2g vs fp32, %s)}", fmt_ms(best_ms_).c_str(),
                    fmt_ms(ms).c_str(), diff,
                    diff > kGemm3mTolerance ? "rejected" : faster ? "accepted" : "not faster by the margin");
      why_ << buf;
      if (diff <= kGemm3mTolerance && faster) offer(*pl, ms);
    } catch (const Error& e) {
      why_ << "; math {3xtf32: failed (" << e.what() << ")}";
    }
  }

  const ConvProblem& p_;
  Pass pass_;
  const PlanOptions& opts_;
  const CufftPins& pins_;
  const GemmStrategy first_gemm_;
  const SpectrumLayout first_layout_;
  const EdgeMode first_edges_;
  const WeightTransform first_weights_;
  const ProductMath first_math_;
  const double bound_ms_;  // PlanOptions::tune_bound_ms
  TuningBench bench_;
  std::ostringstream why_;
  std::optional<PipelineConfig> best_;  // the winner so far
  double best_ms_ = std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, std::pair<int64_t, int64_t>>> timed_;  // (ms, basis) of the first stage
  // Note [tuning budget]: the wall time of the last candidate without and with callbacks, and
  // whether the deadline left any out.
  double last_cost_ms_ = 0, last_callback_ms_ = kCallbackPlanMs;
  bool budget_cut_ = false;
};

CufftChoice autotune(const ConvProblem& p, Pass pass, const PlanOptions& opts, const CufftPins& pins) {
  return Autotune(p, pass, opts, pins).run();
}

}  // namespace

const std::vector<std::string_view>& cufft_option_keys() {
  static const std::vector<std::string_view> keys =
      with_tiling_option_keys({"gemm", "layout", "edges", "weights", "max_prime", "naive"});
  return keys;
}

CufftPins read_cufft_pins(const ConvProblem& p, const PlanOptions& opts) {
  check_option_keys("cufft", opts.extra, cufft_option_keys());
  CufftPins pins;
  if (opts.basis_h < 0 || (opts.basis_h > 0 && opts.basis_h < p.wrapped_h()))
    throw InvalidArgument("basis_h: " + std::to_string(opts.basis_h) +
                          " must be 0 (choose) or >= the circular extent's height " + std::to_string(p.wrapped_h()) +
                          " (Note [wrapped padding])");
  if (opts.basis_w < 0 || (opts.basis_w > 0 && opts.basis_w < p.wrapped_w()))
    throw InvalidArgument("basis_w: " + std::to_string(opts.basis_w) +
                          " must be 0 (choose) or >= the circular extent's width " + std::to_string(p.wrapped_w()) +
                          " (Note [wrapped padding])");
  pins.nh = opts.basis_h;
  pins.nw = opts.basis_w;
  for (const auto& [key, value] : opts.extra) {
    if (key == "gemm") pins.gemm = parse_gemm_strategy(value);
    else if (key == "layout") pins.layout = parse_spectrum_layout(value);
    else if (key == "edges") pins.edges = parse_edge_mode(value);
    else if (key == "weights") pins.weights = parse_weight_transform(value);  // CufftPipeline checks dft's limits
    else if (key == "max_prime") {
      if (value != "2" && value != "3" && value != "5" && value != "7" && value != "11" && value != "13")
        throw InvalidArgument("extra[\"max_prime\"]: expected 2, 3, 5, 7, 11 or 13, got '" + value + "'");
      pins.max_prime = std::stoi(value);
    }
    else if (key == "naive") {
      if (value != "0" && value != "1")
        throw InvalidArgument("extra[\"naive\"]: expected 0 or 1, got '" + value + "'");
      pins.naive = value == "1";
    }  // else a tiling key, read by the planner
  }
  if (opts.math != ProductMath::automatic) pins.math = opts.math;
  if (pins.math && *pins.math != ProductMath::fp32 && pins.gemm && *pins.gemm != GemmStrategy::strided)
    throw Unsupported("cufft: math=" + std::string(to_string(*pins.math)) + " runs the strided CGEMM only (gemm=" +
                      std::string(to_string(*pins.gemm)) + " pinned)");
  return pins;
}

CufftChoice choose_cufft_config(const ConvProblem& p, Pass pass, const PlanOptions& opts, const CufftPins& pins) {
  const bool fully_pinned = (pins.tiles || (pins.nh && pins.nw)) && pins.gemm && pins.layout && (pins.tiles || pins.edges);
  if (fully_pinned || !opts.autotune) {
    CufftChoice c = heuristic(p, pass, opts, pins);
    if (fully_pinned) c.why = "pinned basis and CGEMM";
    return c;
  }
  const std::string key = cache_key(p, pass, opts, pins);
  // A tuning in full, else, for a planner with a deadline, one cut short by it (Note [tuning budget]).
  for (const std::string& k : {key, opts.tune_deadline ? key + std::string(kBudgetKey) : std::string()}) {
    if (k.empty()) continue;
    if (auto rec = TuneCache::instance().find(k, opts.tune_cache))
      if (auto pl = from_record(p, pass, opts, *rec, tiles(pins)))
        return {std::move(pl), std::string(k == key ? "autotuned earlier" : "autotuned earlier within a tuning budget") +
                                   " (tune cache" + (opts.tune_cache.empty() ? "" : " " + opts.tune_cache) + "), then " +
                                   fmt_ms(rec->ms)};
  }
  return autotune(p, pass, opts, pins);
}

CufftChoice naive_cufft_config(const ConvProblem& p, Pass pass, const PlanOptions& opts) {
  std::size_t smallest = std::numeric_limits<std::size_t>::max();
  auto pl = fit(p, pass, next_pow2(p.padded_h()), next_pow2(p.padded_w()), GemmStrategy::loop,
                SpectrumLayout::transposed, EdgeMode::copy, WeightTransform::fft, opts.workspace_limit, &smallest,
                nullptr);
  if (!pl) throw_no_fit(p, pass, opts.workspace_limit, smallest);
  return {std::move(pl),
          "naive: power-of-two basis, one cublasCgemm per frequency, buffers and cuFFT plans made and freed in "
          "every execute()"};
}

}  // namespace fftconv
