// Tiled execution of the fftw backend: runs any tiled TilePlan of the shared planner (tiling/) on the
// frequency-product engine. Work items (image s, tile t) become extra rows M (fprop, bprop) or
// extra reduction terms R (accgrad's reduction form), at most tiles_in_flight at once. fprop and
// bprop read prepared weight spectra in the tile's basis as the untiled plan does in its own (Note
// [prepared weight spectra]): the weights sit at the top-left of the basis in both, so spectra of
// one basis serve either plan.
#include <algorithm>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "ref/fftw_pass.hpp"
#include "ref/parallel.hpp"
#include "tiling/planner.hpp"

namespace fftconv {

namespace {

template <class T>
class FftwTiledPlan final : public FftwPlanBase<T> {
  using Base = FftwPlanBase<T>;
  using Base::engine_, Base::opts_, Base::p_, Base::pass_, Base::steps_ptr;

 public:
  FftwTiledPlan(const ConvProblem& p, Pass pass, const PlanOptions& o, TilingChoice choice)
      : Base(p, pass, o), choice_(std::move(choice)) {
    const TilePlan& tp = choice_.plan;
    engine_ = std::make_unique<FreqEngine<T>>(tp.fft_h, tp.fft_w, engine_options(o));
    const PassShape sh = pass_shape(p, pass);
    const int64_t items = tp.item_count(), flight = tp.tiles_in_flight;
    const std::size_t budget = o.workspace_limit;  // the planner already sized tiles_in_flight to it
    if (pass == Pass::accgrad) {
      const int64_t r = tp.reduction == AccgradReduction::frequency ? items : std::min(items, flight);
      chunks_ = engine_->chunk(sh.M, r, sh.N, budget, 0, flight);
    } else {
      chunks_ = engine_->chunk(items, sh.R, sh.N, budget, flight, 0);
      prepared_chunks_ = this->prepared_chunks(items, sh, budget, chunks_);
    }
    tiles_.reserve(std::size_t(tp.tile_count()));
    for (int64_t t = 0; t < tp.tile_count(); ++t) tiles_.push_back(tp.tile(t));
  }

  std::size_t workspace_bytes() const override {
    const bool fold = pass_ == Pass::bprop && choice_.plan.tiled && choice_.plan.assembly == BpropAssembly::fold_accumulate;
    return std::max(chunks_.workspace, prepared_chunks_.workspace) +
           (fold ? std::size_t(p_.S * p_.f * p_.padded_h() * p_.padded_w()) * sizeof(T) : 0);
  }
  std::pair<int64_t, int64_t> tile_basis() const override { return {choice_.plan.fft_h, choice_.plan.fft_w}; }
  std::string tile_json() const override {
    const TilePlan& tp = choice_.plan;
    std::ostringstream s;
    s << "{\"fft_h\":" << tp.fft_h << ",\"fft_w\":" << tp.fft_w << ",\"out_h\":" << tp.out_tile_h()
      << ",\"out_w\":" << tp.out_tile_w() << ",\"count\":" << tp.tile_count()
      << ",\"tiles_in_flight\":" << tp.tiles_in_flight << "}";
    return s.str();
  }
  std::string describe() const override {
    std::ostringstream s;
    s << "fftw (" << to_string(opts_.dtype) << "): " << choice_.plan.summary();
    if (pass_ == Pass::accgrad) s << ", accgrad reduction in the " << to_string(choice_.plan.reduction) << " domain";
    if (pass_ == Pass::bprop) s << ", bprop " << to_string(choice_.plan.assembly);
    s << "; chunks M " << chunks_.mc << ", R " << chunks_.rc << ", N " << chunks_.nc << ", workspace "
      << chunks_.workspace << " bytes; products " << engine_->products() << this->prepared_text(prepared_chunks_, 0)
      << "; planner: " << choice_.reason;
    return s.str();
  }


 private:
  void run(const Args& a, const FftwWeightSpectra<T>* prepared) const override {
    const auto* input = static_cast<const T*>(a.input);
    const auto* weight = static_cast<const T*>(a.weight);
    const auto* grad_output = static_cast<const T*>(a.grad_output);
    auto* result = static_cast<T*>(a.result);
    run_scaled<T>([&](OperandScaling& scaling) { run_tiled(input, weight, grad_output, result, prepared, scaling); },
                  p_, pass_, input, weight, grad_output, engine_->threads(),  // Note [operand scaling]
                  prepared ? &prepared->exponent : nullptr);
  }

  void run_tiled(const T* input, const T* weight, const T* grad_output, T* result,
                 const FftwWeightSpectra<T>* prepared, OperandScaling& scaling) const {
    const ConvProblem& p = p_;
    const TilePlan& tp = choice_.plan;
    const PassShape sh = pass_shape(p, pass_);
    const int64_t ld = engine_->nw(), oh = p.out_h(), ow = p.out_w(), S = p.S;
    const int64_t in_plane = p.h * p.w, w_plane = p.kh * p.kw, o_plane = oh * ow;
    auto tile_of = [&](int64_t item) -> const Tile& { return tiles_[std::size_t(item / S)]; };
    auto load_w = [&](int64_t j, int64_t i, T* d) { load_window(weight + (j * p.f + i) * w_plane, p.kh, p.kw, 0, 0, p.kh, p.kw, d, ld); };
    auto load_x_tile = [&](int64_t item, int64_t i, T* d) {
      const Window& r = tile_of(item).read;
      load_padded_window(p, input + ((item % S) * p.f + i) * in_plane, r.y0, r.x0, r.h, r.w, d, ld);
    };
    ProductSpec<T> spec;
    // Rows each operand tile can fill and each result tile needs (Note [row-pruned transforms]).
    int64_t read_rows = 0, window_rows = 0, keep_rows = 0;
    for (const Tile& t : tiles_) {
      read_rows = std::max(read_rows, t.read.h);
      window_rows = std::max(window_rows, t.window.h);
      keep_rows = std::max(keep_rows, t.keep.y0 + t.keep.h);
    }
    switch (pass_) {
      case Pass::fprop: spec.a_rows = read_rows; spec.b_rows = p.kh; spec.c_rows = keep_rows; break;
      case Pass::bprop: spec.a_rows = read_rows; spec.b_rows = p.kh; spec.c_rows = keep_rows; break;
      case Pass::accgrad: spec.a_rows = window_rows; spec.b_rows = read_rows; spec.c_rows = p.kh; break;
    }
    spec.conj_a = sh.conj_a;
    spec.conj_b = sh.conj_b;
    scaling.apply(spec);
    read_prepared(spec, pass_, prepared);
    const ChunkPlan& chunks = prepared ? prepared_chunks_ : chunks_;
    spec.R = sh.R;
    spec.N = sh.N;
    switch (pass_) {
      case Pass::fprop:
        spec.M = tp.item_count();
        spec.load_a = load_x_tile;
        spec.load_b = [&](int64_t i, int64_t j, T* d) { load_w(j, i, d); };
        spec.store_c = [&](int64_t item, int64_t j, const T* c) {
          const Window& w = tile_of(item).window;
          T* out = result + ((item % S) * p.fo + j) * o_plane + w.y0 * ow + w.x0;
          for (int64_t y = 0; y < w.h; ++y) std::copy(c + y * ld, c + y * ld + w.w, out + y * ow);
        };
        engine_->run(spec, chunks, steps_ptr());
        return;
      case Pass::bprop: {
        // Note [bprop tile fold]: with mirror padding the tiles' kept values go to a padded-grid
        // buffer (tiles partition it, so no races) and are folded per plane afterwards, in a fixed
        // order, so results are bitwise repeatable.
        const bool fold = tp.assembly == BpropAssembly::fold_accumulate;
        const int64_t hp = p.padded_h(), wp = p.padded_w();
        std::vector<T> gpad = checked_vector<T>(fold ? std::size_t(p.S * p.f * hp * wp) : 0, "fftw bprop fold buffer");
        spec.M = tp.item_count();
        spec.load_a = [&](int64_t item, int64_t j, T* d) {
          const Window& r = tile_of(item).read;
          load_window(grad_output + ((item % S) * p.fo + j) * o_plane, oh, ow, r.y0, r.x0, r.h, r.w, d, ld);
        };
        spec.load_b = load_w;
        spec.store_c = [&, fold](int64_t item, int64_t i, const T* c) {
          const Tile& t = tile_of(item);
          const int64_t plane = (item % S) * p.f + i;
          // The kept rows go to the padded-grid buffer (fold) or straight to gradInput (crop).
          T* dst = fold ? gpad.data() + (plane * hp + t.window.y0) * wp + t.window.x0
                        : result + plane * in_plane + (t.window.y0 - p.ph) * p.w + t.window.x0 - p.pw;
          const int64_t dst_ld = fold ? wp : p.w;
          for (int64_t y = 0; y < t.window.h; ++y) {
            const T* src = c + (t.keep.y0 + y) * ld + t.keep.x0;
            std::copy(src, src + t.window.w, dst + y * dst_ld);
          }
        };
        engine_->run(spec, chunks, steps_ptr());
        if (fold) {
          ParallelErrors errors("fftw bprop fold");  // Note [exceptions in parallel regions]
#pragma omp parallel for num_threads(engine_->threads())
          for (int64_t plane = 0; plane < p.S * p.f; ++plane)
            errors.run([&] { fold_padded_plane(gpad.data() + plane * hp * wp, wp, result + plane * in_plane, p); });
          errors.rethrow();
        }
        return;
      }
      case Pass::accgrad: {
        // The paper's reduction form: gradWeight = sum over items of xpad window ⋆ gradOutput tile.
        auto load_g_tile = [&](int64_t j, int64_t item, T* d) {
          const Window& w = tile_of(item).window;
          load_window(grad_output + ((item % S) * p.fo + j) * o_plane, oh, ow, w.y0, w.x0, w.h, w.w, d, ld);
        };
        auto clip_into = [&](bool add) {
          return [&, add](int64_t j, int64_t i, const T* c) {
            T* out = result + (j * p.f + i) * w_plane;
            for (int64_t u = 0; u < p.kh; ++u)
              for (int64_t v = 0; v < p.kw; ++v) out[u * p.kw + v] = (add ? out[u * p.kw + v] : T(0)) + c[u * ld + v];
          };
        };
        spec.M = sh.M;
        if (tp.reduction == AccgradReduction::frequency) {  // one inverse per (j, i) at the end
          spec.R = tp.item_count();
          spec.load_a = load_g_tile;
          spec.load_b = load_x_tile;
          spec.store_c = clip_into(false);
          engine_->run(spec, chunks_, steps_ptr());
          return;
        }
        // time: groups of items, an inverse per group, kh×kw crops summed in the time domain.
        std::fill(result, result + p.weight_elems(), T(0));
        const int64_t items = tp.item_count(), group = std::min(items, tp.tiles_in_flight);
        for (int64_t g0 = 0; g0 < items; g0 += group) {
          spec.R = std::min(group, items - g0);
          spec.load_a = [&, g0](int64_t j, int64_t r, T* d) { load_g_tile(j, g0 + r, d); };
          spec.load_b = [&, g0](int64_t r, int64_t i, T* d) { load_x_tile(g0 + r, i, d); };
          spec.store_c = clip_into(true);
          engine_->run(spec, chunks_, steps_ptr());
        }
        return;
      }
    }
  }

  TilingChoice choice_;
  std::vector<Tile> tiles_;
  ChunkPlan chunks_, prepared_chunks_;
};

}  // namespace

// Note [auto's untiled candidate]
// The planner's untiled candidate must be the plan `--tile none` runs: the fftw basis of
// choose_basis() (7-smooth, by the flop estimate), not the next size of the tile policy. With the
// power-of-two one, S=4,f=8,fo=8,n=130,k=63 fprop planned none(256x256) for --tile auto and ran
// 89-111 ms where --tile none (135x135) takes 4.5-5.4 ms. So the basis is pinned for the planner,
// and when it keeps the problem untiled the untiled fftw plan itself is returned.
std::unique_ptr<Plan> make_fftw_tiled_plan(const ConvProblem& p, Pass pass, const PlanOptions& o) {
  PlanOptions pinned = o;
  const BasisChoice untiled = choose_basis(p.wrapped_h(), p.wrapped_w(), pass_shape(p, pass), o);
  pinned.basis_h = untiled.nh;
  pinned.basis_w = untiled.nw;
  TilingChoice c = plan_tiling(p, pass, pinned);
  if (!c.plan.tiled) return make_fftw_untiled_plan(p, pass, o, "; tile " + o.tile.to_string() + ": " + c.reason);
  if (o.dtype == DType::f32) return std::make_unique<FftwTiledPlan<float>>(p, pass, o, std::move(c));
  return std::make_unique<FftwTiledPlan<double>>(p, pass, o, std::move(c));
}

}  // namespace fftconv
