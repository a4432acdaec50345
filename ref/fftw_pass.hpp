// How each pass maps onto the frequency-product engine (M, R, N, conjugations, plane loaders and
// stores), shared by the untiled and tiled fftw plans.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>
#include <type_traits>
#include <utility>

#include "common/backend.hpp"
#include "common/errors.hpp"
#include "common/padding.hpp"
#include "common/spare_slot.hpp"
#include "ref/fftw_engine.hpp"
#include "ref/parallel.hpp"

namespace fftconv {

// C[M][N] = opA(A[M][R]) * opB(B[R][N]) per frequency.
struct PassShape {
  int64_t M = 0, R = 0, N = 0;
  bool conj_a = false, conj_b = false;
  // Untiled: rows of A and B that can be nonzero, rows of C that are kept (Note [row-pruned transforms]).
  int64_t rows_a = 0, rows_b = 0, rows_c = 0;
  const char* formula = "";
};
PassShape pass_shape(const ConvProblem& p, Pass pass);

struct BasisChoice {
  int64_t nh = 0, nw = 0;
  double cost = 0;
  int64_t candidates = 0;  // how many bases were weighed
  std::string range;       // "12x12 ... 128x128": the first and last of them
  std::string table;       // every candidate with its estimated cost (long: 361 of them for L1)
};
// Cheapest smooth basis >= need_h×need_w by the flop estimate (or the pinned opts.basis_h/w).
BasisChoice choose_basis(int64_t need_h, int64_t need_w, const PassShape& sh, const PlanOptions& o);

// The fftw backend's option keys: fftw_planner, fftw_cgemm and the tiling planner's.
const std::vector<std::string_view>& fftw_option_keys();

// The engine options of a plan: extra fftw_planner=measure|estimate (default measure) and
// fftw_cgemm=auto|eigen (default auto: the AVX-512 kernel in float where built, Note [frequency
// CGEMM]), threads from opts.threads. Throws InvalidArgument naming the key for another value, or
// naming fftw and its keys for a key not in fftw_option_keys().
EngineOptions engine_options(const PlanOptions& o);

std::size_t touched_bytes(const ConvProblem& p, DType d);
// Workspace budget of a plan: opts.workspace_limit, else Note [fftw workspace budget], never below
// `minimum` (the engine's smallest chunk, so that a basis the caller pinned plans without a limit).
std::size_t default_budget(const ConvProblem& p, const PlanOptions& o, std::size_t minimum);

// The untiled plan (`--tile none`, ref/fftw_backend.cpp); `note` is appended to its describe().
std::unique_ptr<Plan> make_fftw_untiled_plan(const ConvProblem& p, Pass pass, const PlanOptions& o,
                                             std::string note = "");
// Tiled plan over the shared planner's TilePlan (ref/fftw_tiled.cpp); when the planner keeps the
// problem untiled, exactly the plan make_fftw_untiled_plan() makes (Note [auto's untiled candidate]).
std::unique_ptr<Plan> make_fftw_tiled_plan(const ConvProblem& p, Pass pass, const PlanOptions& o);

// The columns [lo, hi) of a window starting at c0 that map to source columns c0 + x - pad inside
// [0, n): copied as one contiguous run per row (the rest is padding or outside).
struct InsideSpan {
  int64_t lo = 0, hi = 0;
};
inline InsideSpan inside_span(int64_t c0, int64_t ww, int64_t n, int64_t pad) {
  const int64_t lo = std::clamp<int64_t>(pad - c0, 0, ww);
  return {lo, std::clamp<int64_t>(pad + n - c0, lo, ww)};
}

// Copies the window [r0, r0+wh) × [c0, c0+ww) of the PADDED plane of `src` (h×w, padding rule of p)
// into the top-left of dst (row stride ld), which the caller has zeroed: zero padding leaves the
// padding columns alone, mirror padding fills them through padded_source().
template <class T>
void load_padded_window(const ConvProblem& p, const T* src, int64_t r0, int64_t c0, int64_t wh, int64_t ww, T* dst,
                        int64_t ld) {
  const int64_t hp = p.padded_h(), wp = p.padded_w();
  const InsideSpan in = inside_span(c0, ww, p.w, p.pw);
  const bool mirror = p.padding == Padding::mirror;
  for (int64_t y = 0; y < wh; ++y) {
    const int64_t i = r0 + y;
    if (i < 0 || i >= hp) continue;
    const int64_t r = padded_source(i, p.h, p.ph, p.padding);
    if (r < 0) continue;
    const T* run = src + r * p.w + (c0 - p.pw + in.lo);
    std::copy(run, run + (in.hi - in.lo), dst + y * ld + in.lo);
    if (!mirror) continue;
    for (int64_t x = 0; x < ww; ++x) {
      if (x == in.lo) x = in.hi;
      const int64_t j = c0 + x;
      if (x >= ww || j < 0 || j >= wp) continue;
      dst[y * ld + x] = src[r * p.w + padded_source(j, p.w, p.pw, p.padding)];
    }
  }
}

// Copies the window [r0, r0+wh) × [c0, c0+ww) of a rows×cols plane into the zeroed dst; zeros outside.
template <class T>
void load_window(const T* src, int64_t rows, int64_t cols, int64_t r0, int64_t c0, int64_t wh, int64_t ww, T* dst,
                 int64_t ld) {
  const InsideSpan in = inside_span(c0, ww, cols, 0);
  for (int64_t y = std::max<int64_t>(0, -r0); y < std::min(wh, rows - r0); ++y) {
    const T* run = src + (r0 + y) * cols + (c0 + in.lo);
    std::copy(run, run + (in.hi - in.lo), dst + y * ld + in.lo);
  }
}

// Note [operand scaling]
// A plane's spectrum sums all its values, so FFT convolution overflows long before the
// convolution itself: float32 inputs near 1e35 whose true outputs were below FLT_MAX came out
// infinite. So a float32 pass whose inverse transforms produce a non-finite value runs again with
// each operand tensor multiplied by the power of two that brings its largest magnitude into
// [0.5, 1), and the result by the inverse of both: exact in binary floating point (up to underflow
// of values far below the largest). Runs without overflow pay only a finiteness check of the
// inverse planes, already in cache; a separate pass over the operands to scale every run cost
// 0.9 ms (2 threads) for the input and weight of L2, S=8, several percent of its 16-25 ms.
// Non-finite inputs also come out non-finite and cost the second run.
//
// The exponent e with max|x| = m * 2^e, m in [0.5, 1), over the n values at x; 0 when the largest
// is 0 or not finite. Clamped to [-100, 100] so that 2^-e stays a normal float.
template <class T>
int magnitude_exponent(const T* x, int64_t n, int threads) {
  // The largest |x| as a bit pattern: for non-negative floats the integer order is the value order,
  // and the integer maximum vectorizes (a NaN pattern sorts above infinity and disables scaling).
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr U kMagnitude = ~(U(1) << (8 * sizeof(T) - 1));
  constexpr int64_t kBlock = int64_t(1) << 16;
  U bits = 0;
  ParallelErrors errors("fftw operand scaling");  // Note [exceptions in parallel regions]
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : bits) if (n > kBlock)
  for (int64_t b = 0; b < n; b += kBlock)
    errors.run([&] {
      U m = 0;
      for (int64_t i = b; i < std::min(n, b + kBlock); ++i) {
        U u;
        std::memcpy(&u, x + i, sizeof u);
        m = std::max(m, U(u & kMagnitude));
      }
      bits = std::max(bits, m);
    });
  errors.rethrow();
  T largest;
  std::memcpy(&largest, &bits, sizeof largest);
  if (!(largest > 0) || !std::isfinite(largest)) return 0;
  int e = 0;
  std::frexp(largest, &e);
  return std::clamp(e, -100, 100);
}

// The scaling state of one execution: the exponents of the operands A and B (0 on the first run)
// and whether an inverse transform produced a non-finite value.
struct OperandScaling {
  int ea = 0, eb = 0;
  std::atomic<bool> nonfinite{false};
  template <class T>
  void apply(ProductSpec<T>& spec) {
    if constexpr (!std::is_same_v<T, float>) return;  // float64's range needs no help
    spec.scale_a = std::ldexp(T(1), -ea);
    spec.scale_b = std::ldexp(T(1), -eb);
    spec.c_exp = ea + eb;
    spec.saw_nonfinite = &nonfinite;
  }
};

// Runs run_once(scaling) (which builds the product specs, calls scaling.apply() on each and runs
// them) and, for float32 when that produced non-finite values, again with the pass's operands A and
// B scaled: x and w (fprop), g and w (bprop), g and x (accgrad). With prepared weight spectra
// (b_exponent set: they hold the spectra of w·2^-b_exponent), B keeps that exponent and only A is
// scaled on the second run.
template <class T, class Run>
void run_scaled(const Run& run_once, const ConvProblem& p, Pass pass, const T* x, const T* w, const T* g,
                int threads, const int* b_exponent = nullptr) {
  OperandScaling scaling;
  if (b_exponent) scaling.eb = *b_exponent;
  run_once(scaling);
  if constexpr (std::is_same_v<T, float>) {
    if (!scaling.nonfinite.load()) return;
    scaling.ea = pass == Pass::fprop ? magnitude_exponent(x, p.input_elems(), threads)
                                     : magnitude_exponent(g, p.output_elems(), threads);
    if (b_exponent) {
      if (scaling.ea == 0) return;  // A already at scale 1: the same result again
    } else {
      scaling.eb = pass == Pass::accgrad ? magnitude_exponent(x, p.input_elems(), threads)
                                         : magnitude_exponent(w, p.weight_elems(), threads);
      if (scaling.ea == 0 && scaling.eb == 0) return;  // already at scale 1: the same result again
    }
    scaling.nonfinite = false;
    run_once(scaling);
  }
}

// Note [prepared weight spectra]
// fprop and bprop of an fftw plan read the same weight spectra: fprop as B[i][j] = conj(W[j][i]),
// bprop as B[j][i] = W[j][i]. Plan::prepare_weights() transforms them once, in fprop's
// frequency-major layout, in panels of kPreparedPanel output channels ([freq][f][panel] each),
// without conjugation and with every weight scaled by 2^-exponent (its largest magnitude in
// [0.5, 1), Note [operand scaling]: the spectra stay finite for any finite weights, and a power of
// two changes no rounding). The spectra are written once and then streamed from memory by every
// pass, so their layout sets the pace: in a panel each frequency's f×panel matrix is one contiguous
// run, which the product kernel (Note [frequency CGEMM]) reads front to back, one or two column
// blocks wide. fprop reads a panel per N chunk and conjugates it as before; bprop reads a run of
// whole panels per R chunk, as many as keep one frequency's transposed part within 256 KiB, and
// transposes each frequency's part into a per-thread buffer for the same kernel, so that its
// products run over K of several panels rather than accumulating C panel by panel. Both skip the
// f·fo weight transforms. The basis matters too: the untiled plan's 14×14 spectra of L5 take
// 132 MB, 8×8 tiles' 47 MB (the tiled plan prepares them in its tile's basis, and bprop in tiles of
// the same size reads them). fprop + bprop of L5 at S = 2, 2 threads, 8×8 tiles: 1.60× faster than
// two independent calls (`bench/results/cpu/step.json`, a 2-core EPYC VM, where the weight
// transforms a call skips take about 18 of a 23 ms fprop; an earlier VM of the same kind took about
// 6 of 11 ms for them and gave 1.28×).
// The spectra depend only on the basis, the weight shape and the element type, which their key()
// names: tiled and untiled plans of one basis read the same spectra.
// The memory of the last prepared spectra a plan made, once they are released: a training step
// prepares spectra of the same size every step (132 MB at L5).
template <class T>
using SpectraPool = SpareSlot<LargeBuffer<std::complex<T>>>;

template <class T>
struct FftwWeightSpectra final : PreparedWeights {
  ~FftwWeightSpectra() override {
    if (pool) pool->give(std::move(spectra));
  }
  std::shared_ptr<SpectraPool<T>> pool;  // where the memory goes back
  std::string key_;
  int exponent = 0;                     // the spectra are those of weight·2^-exponent (float32)
  int64_t chunk = 0;                    // output channels per chunk (prepared_weights_chunk())
  LargeBuffer<std::complex<T>> spectra; // chunks of [freq][f][chunk] (ProductSpec::b_spectra)
  std::string key() const override { return key_; }
  std::size_t bytes() const override { return spectra.size() * sizeof(std::complex<T>); }
};

// Output channels per panel of prepared spectra (Note [prepared weight spectra]): two of the
// product kernel's 8-column blocks.
inline constexpr int64_t kPreparedPanel = 16;

// Output channels per chunk of prepared spectra in a basis of nfreq frequencies: a panel, or fewer
// where a panel would exceed 8 MiB, so that preparing it transposes into a cache-sized region as a
// plain run does (one frequency-major buffer over all of L5's 132 MB took longer than its transforms).
template <class T>
int64_t prepared_weights_chunk(const ConvProblem& p, int64_t nfreq) {
  const int64_t per_channel = nfreq * p.f * int64_t(sizeof(std::complex<T>));
  return std::clamp<int64_t>(std::min((int64_t(8) << 20) / per_channel, kPreparedPanel), 1, p.fo);
}

// The key() of the spectra a plan in basis nh×nw reads for p's weights.
template <class T>
std::string fftw_weights_key(const ConvProblem& p, int64_t nh, int64_t nw) {
  return "fftw weight spectra " + std::to_string(nh) + "x" + std::to_string(nw) + " of " + std::to_string(p.fo) + "x" +
         std::to_string(p.f) + "x" + std::to_string(p.kh) + "x" + std::to_string(p.kw) + " " +
         (std::is_same_v<T, float> ? "float32" : "float64");
}

// The weight operand of fprop: B[i][j] = W[j][i] on the top-left of the basis (kh rows).
template <class T>
void weight_spec(const ConvProblem& p, const T* weight, int64_t ld, ProductSpec<T>& spec) {
  const int64_t w_plane = p.kh * p.kw;
  spec.R = p.f, spec.N = p.fo, spec.b_rows = p.kh;
  spec.load_b = [=, &p](int64_t i, int64_t j, T* d) {
    load_window(weight + (j * p.f + i) * w_plane, p.kh, p.kw, 0, 0, p.kh, p.kw, d, ld);
  };
}

// The prepared weight spectra of p's weights in eng's basis (Note [prepared weight spectra]).
template <class T>
std::shared_ptr<FftwWeightSpectra<T>> prepare_fftw_weights(const FreqEngine<T>& eng, const ConvProblem& p,
                                                           const T* weight, std::shared_ptr<SpectraPool<T>> pool) {
  auto out = std::make_shared<FftwWeightSpectra<T>>();
  out->spectra = pool->take();
  out->pool = std::move(pool);
  out->key_ = fftw_weights_key<T>(p, eng.nh(), eng.nw());
  out->chunk = prepared_weights_chunk<T>(p, eng.nfreq());
  const std::size_t n = std::size_t(eng.nfreq()) * std::size_t(p.f * p.fo);
  out->spectra.allocate(n, "fftw: prepared weight spectra");
  ProductSpec<T> spec;
  weight_spec(p, weight, eng.nw(), spec);
  spec.b_chunk = out->chunk;
  if constexpr (std::is_same_v<T, float>) {
    out->exponent = magnitude_exponent(weight, p.weight_elems(), eng.threads());
    spec.scale_b = std::ldexp(T(1), -out->exponent);
  }
  eng.transform_b(spec, out->spectra.data());
  return out;
}

// Points spec's B at the prepared spectra, when given: fprop reads their chunks as stored, bprop
// transposed (Note [prepared weight spectra]).
template <class T>
void read_prepared(ProductSpec<T>& spec, Pass pass, const FftwWeightSpectra<T>* prepared) {
  if (!prepared) return;
  spec.b_spectra = prepared->spectra.data();
  spec.b_transposed = pass == Pass::bprop;
  spec.b_chunk = prepared->chunk;
}

// What the untiled and tiled fftw plans share: the problem, pass and options, the engine (made by
// the derived constructor), the step timings, and prepared weights (Note [prepared weight
// spectra]). A derived plan runs one checked execution in run(args, spectra or null).
template <class T>
class FftwPlanBase : public Plan {
 public:
  void execute(const Args& a) const override { checked_run(a, nullptr); }
  std::shared_ptr<const PreparedWeights> prepare_weights(const void* weight, void*) const override {
    if (pass_ == Pass::accgrad) throw Unsupported("fftw: accgrad reads no weights to prepare");
    if (!weight) throw InvalidArgument("prepare_weights: weight is null");
    return prepare_fftw_weights<T>(*engine_, p_, static_cast<const T*>(weight), pool_);
  }
  void execute_with(const Args& a, const PreparedWeights& prepared) const override {
    if (pass_ == Pass::accgrad) throw Unsupported("fftw: accgrad reads no weights to prepare");
    const auto* w = dynamic_cast<const FftwWeightSpectra<T>*>(&prepared);
    const std::string want = fftw_weights_key<T>(p_, engine_->nh(), engine_->nw());
    if (!w || w->key() != want)
      throw InvalidArgument("prepared: weights prepared as '" + prepared.key() + "', this plan reads '" + want + "'");
    Args args = a;
    if (!args.weight) args.weight = w->spectra.data();  // not read: the operand checks want a pointer there
    checked_run(args, w);
  }
  StepTimes last_breakdown() const override {
    std::lock_guard<std::mutex> lock(steps_mutex_);
    return steps_;
  }

 protected:
  FftwPlanBase(const ConvProblem& p, Pass pass, const PlanOptions& o) : p_(p), pass_(pass), opts_(o) {}
  // One execution of the plan's pass on checked operands, with B's spectra from `prepared` when set.
  virtual void run(const Args& a, const FftwWeightSpectra<T>* prepared) const = 0;
  // The chunks of a run of M rows on prepared spectra (fprop, bprop): B is not workspace, so the A
  // and C buffers get the budget of the plain run's chunks `plain`, at least.
  ChunkPlan prepared_chunks(int64_t M, const PassShape& sh, std::size_t budget, const ChunkPlan& plain) const {
    return engine_->chunk_prepared(M, sh.R, sh.N, prepared_weights_chunk<T>(p_, engine_->nfreq()), pass_ == Pass::bprop,
                                   std::max(budget, plain.workspace));
  }
  // describe()'s text for the prepared chunks `c` of fprop and bprop ("" for accgrad): "; prepared
  // weights: chunks M <mc>[/<of_M>], R <rc>, N <nc>[, read transposed]" (of_M = 0: no total).
  std::string prepared_text(const ChunkPlan& c, int64_t of_M) const {
    if (pass_ == Pass::accgrad) return "";
    return "; prepared weights: chunks M " + std::to_string(c.mc) + (of_M ? "/" + std::to_string(of_M) : "") +
           ", R " + std::to_string(c.rc) + ", N " + std::to_string(c.nc) + (pass_ == Pass::bprop ? ", read transposed" : "");
  }
  // The step timings of the next execution, when PlanOptions::breakdown asked for them.
  StepTimes* steps_ptr() const {
    if (!opts_.breakdown) return nullptr;
    std::lock_guard<std::mutex> lock(steps_mutex_);
    steps_.clear();
    return &steps_;
  }

  ConvProblem p_;
  Pass pass_;
  PlanOptions opts_;
  std::unique_ptr<FreqEngine<T>> engine_;

 private:
  void checked_run(const Args& a, const FftwWeightSpectra<T>* prepared) const {
    require_operands(a, pass_, "fftw");
    if (a.dtype != opts_.dtype)
      throw InvalidArgument("fftw: args dtype " + std::string(to_string(a.dtype)) + " differs from the plan's " +
                            std::string(to_string(opts_.dtype)));
    run(a, prepared);
  }
  std::shared_ptr<SpectraPool<T>> pool_ = std::make_shared<SpectraPool<T>>();  // prepare_weights()' memory
  mutable std::mutex steps_mutex_;
  mutable StepTimes steps_;
};

// Untiled execution of one pass (Table 1): operands embedded at the top-left of the basis. With
// `prepared` (fprop, bprop), the weight spectra come from there (Note [prepared weight spectra]).
template <class T>
void run_untiled(const FreqEngine<T>& eng, const ChunkPlan& ch, const ConvProblem& p, Pass pass, const T* input,
                 const T* weight, const T* grad_output, T* result, StepTimes* steps = nullptr,
                 const FftwWeightSpectra<T>* prepared = nullptr) {
  const PassShape sh = pass_shape(p, pass);
  const int64_t ld = eng.nw(), oh = p.out_h(), ow = p.out_w();
  const int64_t in_plane = p.h * p.w, w_plane = p.kh * p.kw, o_plane = oh * ow;
  auto load_x = [&](int64_t s, int64_t i, T* d) {
    load_padded_window(p, input + (s * p.f + i) * in_plane, 0, 0, p.padded_h(), p.padded_w(), d, ld);
  };
  auto load_w = [&](int64_t j, int64_t i, T* d) { load_window(weight + (j * p.f + i) * w_plane, p.kh, p.kw, 0, 0, p.kh, p.kw, d, ld); };
  auto load_g = [&](int64_t s, int64_t j, T* d) { load_window(grad_output + (s * p.fo + j) * o_plane, oh, ow, 0, 0, oh, ow, d, ld); };
  auto clip = [&](const T* src, int64_t rows, int64_t cols, T* dst) {
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < cols; ++x) dst[y * cols + x] = src[y * ld + x];
  };
  ProductSpec<T> spec;
  spec.M = sh.M; spec.R = sh.R; spec.N = sh.N; spec.conj_a = sh.conj_a; spec.conj_b = sh.conj_b;
  spec.a_rows = sh.rows_a; spec.b_rows = sh.rows_b; spec.c_rows = sh.rows_c;
  switch (pass) {
    case Pass::fprop:
      spec.load_a = load_x;                                                   // (s, i)
      weight_spec(p, weight, ld, spec);                                       // (i, j) -> W[j][i]
      spec.store_c = [&](int64_t s, int64_t j, const T* c) { clip(c, oh, ow, result + (s * p.fo + j) * o_plane); };
      break;
    case Pass::bprop:
      spec.load_a = load_g;                                                   // (s, j)
      spec.load_b = load_w;                                                   // (j, i)
      spec.store_c = [&](int64_t s, int64_t i, const T* c) { fold_padded_plane(c, ld, result + (s * p.f + i) * in_plane, p); };
      break;
    case Pass::accgrad:
      spec.load_a = [&](int64_t j, int64_t s, T* d) { load_g(s, j, d); };     // (j, s) -> G[s][j]
      spec.load_b = load_x;                                                   // (s, i)
      spec.store_c = [&](int64_t j, int64_t i, const T* c) { clip(c, p.kh, p.kw, result + (j * p.f + i) * w_plane); };
      break;
  }
  read_prepared(spec, pass, prepared);
  run_scaled<T>([&](OperandScaling& scaling) {  // Note [operand scaling]
    scaling.apply(spec);
    eng.run(spec, ch, steps);
  }, p, pass, input, weight, grad_output, eng.threads(), prepared ? &prepared->exponent : nullptr);
}

}  // namespace fftconv
