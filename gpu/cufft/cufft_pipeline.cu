// CufftPipeline (see cufft_pipeline.hpp): the Table 1 pipeline on cuFFT + cuBLAS for one configuration.
//
// Note [frequency-major products]
// R2C writes each operand as [plane][freq] with F = Nh*(Nw/2+1) frequencies; one transposition makes it
// [freq][plane], where plane = outer*inner (e.g. input: s*f + i). Read column-major per frequency, the
// block of plane-major data is an inner×outer matrix, so every product is one GEMM with unit-stride
// leading dimensions, and the conjugations of the passes' formulas are cuBLAS op flags:
//   fprop:   Y(fo×S)  = W(f×fo)^H · X(f×S)          (Y[s,j] = sum_i X[s,i] conj(W[j,i]))
//   bprop:   Gp(f×S)  = W(f×fo)   · G(fo×S)         (Gp[s,i] = sum_j G[s,j] W[j,i])
//   accgrad: GW(f×fo) = X(f×S)    · G(fo×S)^H       (GW[j,i] = sum_s conj(G[s,j]) X[s,i])
// The result comes out [freq][outer][inner], is transposed back to [plane][freq] and inverted.
// With SpectrumLayout::direct the transposes disappear: cuFFT's advanced layout (stride = planes,
// distance 1) makes R2C write [freq][plane] and C2R read it, at the price of strided FFT stores.

// Note [cufft callbacks]
// The paper's Table 1 pads with copies because cuFFT could not pad; today's cuFFT links user device
// functions into its kernels (LTO callbacks, cufftXtSetJITCallback): a load callback supplies each
// input element, a store callback receives each output element. With EdgeMode::callback the R2C of an
// operand loads straight from the unpadded tensor (zeros or reflection at the offsets of the padded
// basis; PAD disappears) and the C2R of the result stores only the kept window, scaled (CLIP
// disappears); with SpectrumLayout::gather the C2R loads the products' [freq][plane] layout itself
// (TRANS C disappears). The transforms stay in place on the FFT scratch buffer, which is only their
// nominal input/output. (A store callback writing [freq][plane] from the R2C is slower: its scattered
// 8-byte stores cost more than R2C + transposition; docs/design-notes.md.)
// Callbacks see element offsets into the plan's logical arrays; the pipeline requires them < 2^32 and
// divides them by the plane and row sizes with precomputed multipliers (cufft_callbacks.hpp, whose index
// maps the host tests compare with the copy kernels). cuFFT takes each callback's parameter address at
// plan time, so every plan with callbacks owns one device block of cufft_cb::Params, which a one-thread
// kernel rewrites on the run's stream (tensor pointers change between runs and chunks).
// Linking the callbacks makes plan creation slower (tens to hundreds of ms per plan), so the untuned
// heuristic keeps copies and the autotuner times callbacks only on pipelines that take long enough.

// Note [pruned weight transforms]
// The weight side of every pass is a kh×kw window in an nh×nw basis (L5: 3×3 in 13×13, 147,456 planes,
// three times the input's): Table 1 pads it, runs a full R2C and transposes (accGrad: transposes back,
// runs a full C2R and keeps kh×kw of the nh×nw points). With WeightTransform::dft the forward is fbfft's
// pruned DFT of the window, written straight in the products' [freq][plane] layout, and accGrad's
// inverse is evaluated at the window's points only, reading that layout (fbfft_window.cu, whose twiddle
// indices take any basis up to 256). The same sums, so the tuner times it as one more variant.

// Note [cufft tiles]
// A tiled plan (tiling/tile_plan.hpp, Note [tile geometry]) runs as the same pipeline with the
// (image, tile) items in place of the samples: PAD becomes a gather of each item's window into the
// FFT layout (zeros around it, padding through padded_source), the weight is transformed once on the
// tile basis, the products are the same GEMMs with n (or k, accgrad) = items, and CLIP becomes a
// scatter of the kept output tiles (fprop) or a deterministic fold of the kept g_pad windows onto the
// zeroed gradInput (bprop, Note [bprop tile fold]); accgrad reduces over items in the frequency
// domain and clips once. Chunks hold at most the plan's tiles_in_flight items.
// With batch chunks, fprop/bprop transform the weight once and loop over chunks of samples; accgrad
// accumulates the chunks in the frequency domain (beta = 1 after the first chunk).
// A tiled plan exists to save memory: it hands cuBLAS kCublasWorkspaceSmall, not the 32 MiB an
// untiled plan keeps, and its products (one GEMM per frequency of the tile basis, over the items of a
// chunk) ran at the same speed with it. Invariant: a tiled pipeline's workspace holds its buffers,
// cuFFT's work area and 1 MiB for cuBLAS. rect_k9 (large set), H100: 80.9 -> 49.9 MiB, 1/9.9 of untiled.
#include "gpu/cufft/cufft_pipeline.hpp"
#include "gpu/gemm/products.hpp"

#include <cufftXt.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <sstream>

#include "common/errors.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/cufft/cufft_callbacks.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/cufft/cufft_kernels.cuh"
#include "gpu/tiles/tile_kernels.cuh"

namespace fftconv {

std::string_view to_string(GemmStrategy g) {
  switch (g) {
    case GemmStrategy::batched: return "batched";
    case GemmStrategy::strided: return "strided";
    case GemmStrategy::loop: return "loop";
    case GemmStrategy::gemm3m: return "3m";
  }
  return "?";
}

GemmStrategy parse_gemm_strategy(std::string_view s) {
  if (s == "batched") return GemmStrategy::batched;
  if (s == "strided") return GemmStrategy::strided;
  if (s == "loop") return GemmStrategy::loop;
  if (s == "3m") return GemmStrategy::gemm3m;
  throw InvalidArgument("extra[\"gemm\"]: unknown CGEMM strategy '" + std::string(s) +
                        "' (expected batched, strided, loop or 3m)");
}

std::string_view to_string(SpectrumLayout l) {
  switch (l) {
    case SpectrumLayout::transposed: return "transposed";
    case SpectrumLayout::direct: return "direct";
    case SpectrumLayout::gather: return "gather";
  }
  return "?";
}

SpectrumLayout parse_spectrum_layout(std::string_view s) {
  if (s == "transposed") return SpectrumLayout::transposed;
  if (s == "direct") return SpectrumLayout::direct;
  if (s == "gather") return SpectrumLayout::gather;
  throw InvalidArgument("extra[\"layout\"]: unknown spectrum layout '" + std::string(s) +
                        "' (expected transposed, direct or gather)");
}

std::string_view to_string(EdgeMode e) { return e == EdgeMode::callback ? "callback" : "copy"; }

EdgeMode parse_edge_mode(std::string_view s) {
  if (s == "copy") return EdgeMode::copy;
  if (s == "callback") return EdgeMode::callback;
  throw InvalidArgument("extra[\"edges\"]: unknown edge mode '" + std::string(s) + "' (expected copy or callback)");
}

std::string_view to_string(WeightTransform w) { return w == WeightTransform::dft ? "dft" : "fft"; }

WeightTransform parse_weight_transform(std::string_view s) {
  if (s == "fft") return WeightTransform::fft;
  if (s == "dft") return WeightTransform::dft;
  throw InvalidArgument("extra[\"weights\"]: unknown weight transform '" + std::string(s) + "' (expected fft or dft)");
}

bool weight_dft_supported(const ConvProblem& p, int64_t nh, int64_t nw, std::string* why) {
  // fbfft's window kernels own the limits; the forward and inverse windows share them.
  fbfft::ForwardArgs w;
  w.layout = fbfft::Layout::freq_major, w.in_h = p.kh, w.in_w = p.kw;
  const bool fits_int = nh <= INT_MAX && nw <= INT_MAX;
  if (fits_int) w.n_h = int(nh), w.n_w = int(nw);
  const bool ok = fits_int && fbfft::window_supported(w);
  if (!ok && why)
    *why = "cufft: weights=dft needs a kernel of at most " + std::to_string(fbfft::kMaxWindow) + "x" +
           std::to_string(fbfft::kMaxWindow) + " (kh=" + std::to_string(p.kh) + ", kw=" + std::to_string(p.kw) +
           ") and a basis of at most " + std::to_string(fbfft::kMaxWindowSide) + " per side, width >= 2 (basis " +
           std::to_string(nh) + "x" + std::to_string(nw) + ")";
  return ok;
}

std::string PipelineConfig::to_string() const {
  return "basis " + std::to_string(nh) + "x" + std::to_string(nw) + ", gemm " + std::string(fftconv::to_string(gemm)) +
         ", layout " + std::string(fftconv::to_string(layout)) + ", edges " + std::string(fftconv::to_string(edges)) +
         (weights == WeightTransform::dft ? ", weights dft" : "") + ", math " + std::string(fftconv::to_string(math)) +
         ", chunk " + std::to_string(chunk) + (weight_batch > 0 ? ", weight batch " + std::to_string(weight_batch) : "") +
         ", cublas workspace " + std::to_string(cublas_workspace);
}

// ---------------------------------------------------------------------------------------------
// Operand roles per pass (Note [frequency-major products]).

namespace {

struct Operand {
  const float* src = nullptr;
  int64_t planes_per_sample = 0;  // batched operands: planes per sample; others: total planes
  bool batched = true;
  int64_t h = 0, w = 0, ph = 0, pw = 0;
  bool mirror = false;
  tile_kernels::GatherRect rect = tile_kernels::GatherRect::padded_read;  // tiled: the window it reads
  tile_kernels::SourceGrid grid() const {
    return {src, h, w, ph, pw, mirror ? Padding::mirror : Padding::zero, planes_per_sample};
  }
};

struct Roles {
  Operand a, b;
  int64_t c_planes_per_sample = 0;  // fprop/bprop: per sample; accgrad: total (fo*f)
  bool c_batched = true;
  gpu_kernels::ClipSpec clip;
};

Roles roles(const ConvProblem& p, Pass pass, const Args* args) {
  auto ptr = [&](const void* q) { return args ? static_cast<const float*>(q) : nullptr; };
  const bool mirror = p.padding == Padding::mirror;
  Roles r;
  const Operand input{args ? ptr(args->input) : nullptr, p.f, true, p.h, p.w, p.ph, p.pw, mirror};
  const Operand weight{args ? ptr(args->weight) : nullptr, p.fo * p.f, false, p.kh, p.kw, 0, 0, false};
  const Operand grad{args ? ptr(args->grad_output) : nullptr, p.fo, true, p.out_h(), p.out_w(), 0, 0, false,
                     pass == Pass::bprop ? tile_kernels::GatherRect::grad_full : tile_kernels::GatherRect::grad_window};
  switch (pass) {
    case Pass::fprop:
      r.a = input, r.b = weight, r.c_planes_per_sample = p.fo;
      r.clip.out_h = p.out_h(), r.clip.out_w = p.out_w();
      break;
    case Pass::bprop:
      r.a = grad, r.b = weight, r.c_planes_per_sample = p.f;
      r.clip.out_h = p.h, r.clip.out_w = p.w;
      if (mirror) r.clip.mirror_fold = true, r.clip.ph = p.ph, r.clip.pw = p.pw;
      else r.clip.off_h = p.ph, r.clip.off_w = p.pw;
      break;
    case Pass::accgrad:
      r.a = input, r.b = grad, r.c_planes_per_sample = p.fo * p.f, r.c_batched = false;
      r.clip.out_h = p.kh, r.clip.out_w = p.kw;
      break;
  }
  return r;
}

int64_t planes_of(const Operand& o, int64_t sc) { return o.batched ? o.planes_per_sample * sc : o.planes_per_sample; }

// The first float of units s0.. of an untiled operand (a batched tensor's chunk; otherwise, and for
// tiles, which gather from the whole tensor, its start).
const float* chunk_source(const Operand& o, int64_t s0, bool tiled) {
  return o.src + (o.batched && !tiled ? s0 * o.planes_per_sample * o.h * o.w : 0);
}

// Where the untiled result planes of units s0.. start (accgrad: its one result, reduced over units).
float* chunk_result(void* result, const Roles& r, Pass pass, int64_t s0) {
  return static_cast<float*>(result) +
         (pass == Pass::accgrad ? 0 : s0 * r.c_planes_per_sample * r.clip.out_h * r.clip.out_w);
}

// The alignment cuFFT needs of the data it reads (misaligned pointers fail with CUFFT_INVALID_VALUE).
constexpr std::uintptr_t kFftAlignment = 16;

int to_int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw Unsupported(std::string("cufft: ") + what + " = " + std::to_string(v) + " exceeds the int range of cuBLAS");
  return static_cast<int>(v);
}

std::size_t complex_bytes(int64_t planes, int64_t freqs) {
  return static_cast<std::size_t>(checked_mul(checked_mul(planes, freqs, "cufft buffer"), 8, "cufft buffer"));
}

// Planes of the buffers that chunks of `chunk_sizes` units need (batched: the largest chunk transform).
struct BufferPlanes {
  int64_t batched = 0, a = 0, b = 0, c = 0;
};
BufferPlanes buffer_planes(const Roles& r, const std::vector<int64_t>& chunk_sizes) {
  BufferPlanes m;
  for (int64_t sc : chunk_sizes) {
    const int64_t pa = planes_of(r.a, sc), pb = planes_of(r.b, sc);
    const int64_t pc = r.c_batched ? r.c_planes_per_sample * sc : r.c_planes_per_sample;
    m.batched = std::max({m.batched, pa, r.b.batched ? pb : 0, r.c_batched ? pc : 0});
    m.a = std::max(m.a, pa), m.b = std::max(m.b, pb), m.c = std::max(m.c, pc);
  }
  return m;
}

// The weight side's planes (fprop/bprop: B's, accgrad: C's) and the automatic batch of their
// transforms (Note [weight-side batches]).
int64_t weight_side_planes(const Roles& r, Pass pass) {
  return pass == Pass::accgrad ? r.c_planes_per_sample : r.b.planes_per_sample;
}
int64_t automatic_weight_batch(int64_t planes, int64_t batched, int64_t freqs) {
  const int64_t bound = std::max(batched, int64_t(kWeightBatchBytes / complex_bytes(1, freqs)));
  return std::min(planes, std::max<int64_t>(bound, 1));
}

}  // namespace

std::size_t CufftPipeline::untiled_buffer_bytes(const ConvProblem& p, Pass pass, int64_t nh, int64_t nw) {
  const Roles r = roles(p, pass, nullptr);
  const int64_t freqs = checked_mul(nh, nw / 2 + 1, "cufft frequencies");
  const BufferPlanes m = buffer_planes(r, {p.S});
  const int64_t wb = automatic_weight_batch(weight_side_planes(r, pass), m.batched, freqs);
  ArenaCursor cur;
  for (int64_t planes : {std::max(m.batched, wb), m.a, m.b, m.c}) cur.take(complex_bytes(planes, freqs));
  cur.take(kCublasWorkspaceLarge);
  return cur.used();
}

// ---------------------------------------------------------------------------------------------
// Construction: plans for every batch count the chunks need, sizes of every buffer.

CufftPipeline::CufftPipeline(const ConvProblem& p, Pass pass, const PipelineConfig& cfg, const TilePlan* tiles)
    : p_(p), pass_(pass), cfg_(cfg) {
  p_.validate();
  tiled_ = tiles != nullptr && tiles->tiled;
  if (tiled_) {
    tiles_ = *tiles;
    if (tiles_.pass != pass || tiles_.problem.to_string() != p.to_string())
      throw InvalidArgument("cufft: the tile plan was made for another problem or pass");
    if (cfg_.nh != tiles_.fft_h || cfg_.nw != tiles_.fft_w)
      throw InvalidArgument("cufft: basis " + std::to_string(cfg_.nh) + "x" + std::to_string(cfg_.nw) +
                            " differs from the tile basis " + std::to_string(tiles_.fft_h) + "x" +
                            std::to_string(tiles_.fft_w));
    if (pass == Pass::accgrad && tiles_.reduction != AccgradReduction::frequency)
      throw Unsupported("cufft: tiled accgrad reduces in the frequency domain only (accgrad_reduction=" +
                        std::string(to_string(tiles_.reduction)) + " requested)");
  } else if (cfg_.nh < p.wrapped_h() || cfg_.nw < p.wrapped_w()) {
    throw InvalidArgument("cufft: basis " + std::to_string(cfg_.nh) + "x" + std::to_string(cfg_.nw) +
                          " is smaller than the circular extent " + std::to_string(p.wrapped_h()) + "x" +
                          std::to_string(p.wrapped_w()) + " (Note [wrapped padding])");
  }
  if (cfg_.math == ProductMath::automatic)
    throw InvalidArgument("cufft: the pipeline's math must be resolved (fp32, 3xtf32 or tf32)");
  if (cfg_.math != ProductMath::fp32 && cfg_.gemm != GemmStrategy::strided)
    throw Unsupported("cufft: math=" + std::string(to_string(cfg_.math)) + " runs the strided CGEMM only (gemm=" +
                      std::string(to_string(cfg_.gemm)) + " requested)");
  units_ = tiled_ ? tiles_.item_count() : p.S;
  if (cfg_.chunk < 1 || cfg_.chunk > units_)
    throw InvalidArgument("cufft: chunk " + std::to_string(cfg_.chunk) + " not in [1, " +
                          std::to_string(units_) + (tiled_ ? "] (image, tile) items" : "] samples"));
  fw_ = cfg_.nw / 2 + 1;
  ld_ = 2 * fw_;
  freqs_ = checked_mul(cfg_.nh, fw_, "cufft frequencies");

  const Roles r = roles(p_, pass_, nullptr);
  weight_dft_ = cfg_.weights == WeightTransform::dft;
  if (weight_dft_) {
    if (tiled_)
      throw InvalidArgument("cufft: weights=dft runs untiled plans only (extra[\"weights\"]=dft with a tile plan)");
    if (std::string why; !weight_dft_supported(p_, cfg_.nh, cfg_.nw, &why)) throw Unsupported(why);
  }
  // The role whose cuFFT transform the pruned DFT replaces (Note [pruned weight transforms]).
  const bool dft_b = weight_dft_ && pass_ != Pass::accgrad, dft_c = weight_dft_ && pass_ == Pass::accgrad;
  if (dft_b) fork_ = std::make_unique<StreamFork>();
  edge_callbacks_ = cfg_.edges == EdgeMode::callback;
  if (edge_callbacks_ && tiled_)
    throw InvalidArgument("cufft: edges=callback pads and clips untiled plans only (tiles are gathered and scattered)");
  clip_callback_ = edge_callbacks_ && !r.clip.mirror_fold && !dft_c;
  gather_callback_ = cfg_.layout == SpectrumLayout::gather && !dft_c;
  auto fills_basis = [&](const Operand& o) {
    return !tiled_ && o.h == cfg_.nh && o.w == cfg_.nw && o.ph == 0 && o.pw == 0;
  };
  in_place_a_ = fills_basis(r.a), in_place_b_ = fills_basis(r.b);
  if (cfg_.weight_batch < 0)
    throw InvalidArgument("cufft: weight_batch " + std::to_string(cfg_.weight_batch) + " must be >= 0 (0: automatic)");
  std::vector<int64_t> chunk_sizes{cfg_.chunk};
  if (units_ % cfg_.chunk != 0) chunk_sizes.push_back(units_ % cfg_.chunk);
  const BufferPlanes m = buffer_planes(r, chunk_sizes);
  for (int64_t sc : chunk_sizes) {
    make_fft_plan(planes_of(r.a, sc), kOperandA);
    if (r.b.batched) make_fft_plan(planes_of(r.b, sc), kOperandB);
    if (r.c_batched) make_fft_plan(r.c_planes_per_sample * sc, kResult);
  }
  // The weight side's transforms (Note [weight-side batches]).
  weight_planes_ = dft_b || dft_c ? 0 : weight_side_planes(r, pass_);
  if (weight_planes_ > 0) {
    weight_batch_ = cfg_.weight_batch > 0 ? std::min(cfg_.weight_batch, weight_planes_)
                                          : automatic_weight_batch(weight_planes_, m.batched, freqs_);
    if (weight_split() && pass_ == Pass::accgrad) gather_callback_ = clip_callback_ = false;
    make_fft_plan(weight_batch_, weight_role());
    if (weight_planes_ % weight_batch_ != 0) make_fft_plan(weight_planes_ % weight_batch_, weight_role());
  }
  scratch_bytes_ = complex_bytes(std::max(m.batched, weight_batch_), freqs_);
  a_bytes_ = complex_bytes(m.a, freqs_);
  b_bytes_ = complex_bytes(m.b, freqs_);
  c_bytes_ = complex_bytes(m.c, freqs_);
  ptr_bytes_ = cfg_.gemm == GemmStrategy::batched ? static_cast<std::size_t>(3 * freqs_) * sizeof(void*) : 0;
  ArenaCursor cur;
  for (std::size_t b : {scratch_bytes_, a_bytes_, b_bytes_, c_bytes_, ptr_bytes_, fft_work_bytes_,
                        cfg_.cublas_workspace})
    cur.take(b);
  workspace_bytes_ = cur.used();

  FFTCONV_CUBLAS_CHECK(cublasCreate(&blas_));
  FFTCONV_CUBLAS_CHECK(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));  // strict fp32: no TF32
  FFTCONV_CUBLAS_CHECK(cublasSetPointerMode(blas_, CUBLAS_POINTER_MODE_HOST));
}

CufftPipeline::~CufftPipeline() {
  if (blas_) cublasDestroy(blas_);
}  // (the cuFFT plans go back to the pool: Note [cuFFT plan pool])

void CufftPipeline::make_fft_plan(int64_t batch, Role role) {
  if (fft_plans_.count({batch, role})) return;
  const bool inverse = role == kResult;
  // Weight-side batches are transposed by the kernel (Note [weight-side batches]).
  const bool split = role == weight_role() && weight_split();
  const bool in_place = !inverse && reads_in_place(role) && !split;  // dense input planes, out-of-place transform
  const bool load_cb = inverse ? gather_callback_ : edge_callbacks_ && !in_place;
  const bool store_cb = inverse && clip_callback_;
  if (load_cb || store_cb) {  // callbacks see 32-bit offsets into the plan's logical arrays
    const int64_t real = checked_mul(batch, cfg_.nh * ld_, "cufft callback offsets");
    const int64_t spectra = checked_mul(batch, freqs_, "cufft callback offsets");
    if (std::max(real, spectra) > int64_t(UINT32_MAX))
      throw Unsupported("cufft: cuFFT callbacks index " + std::to_string(std::max(real, spectra)) +
                        " elements of one transform batch; the limit is 2^32 (use edges=copy, another layout or a "
                        "smaller chunk)");
  }
  const long long real_dist = cfg_.nh * ld_, complex_dist = freqs_;
  // The spectra: [plane][freq] (transposed and gather layouts: stride 1, distance F), or
  // frequency-major [freq][plane] (direct layout: stride = batch, distance 1).
  const bool direct = cfg_.layout == SpectrumLayout::direct && !split;
  const long long cstride = direct ? batch : 1, cdist = direct ? 1 : complex_dist;
  cufft_pool::Key key;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&key.device));
  key.role = role, key.inverse = inverse, key.nh = cfg_.nh, key.nw = cfg_.nw, key.batch = batch;
  key.load = !load_cb ? cufft_pool::Load::none : inverse ? cufft_pool::Load::freq_major : cufft_pool::Load::padded;
  key.store = store_cb ? cufft_pool::Store::clipped : cufft_pool::Store::none;
  if (!inverse) {
    key.in_embed_w = in_place ? cfg_.nw : ld_, key.in_stride = 1, key.in_dist = in_place ? cfg_.nh * cfg_.nw : real_dist;
    key.out_embed_w = fw_, key.out_stride = cstride, key.out_dist = cdist;
  } else {
    key.in_embed_w = fw_, key.in_stride = cstride, key.in_dist = cdist;
    key.out_embed_w = ld_, key.out_stride = 1, key.out_dist = real_dist;
  }
  cufft_pool::Lease lease = cufft_pool::obtain(key);
  fft_work_bytes_ = std::max(fft_work_bytes_, lease.work_bytes());
  fft_plans_.emplace(std::pair<int64_t, int>{batch, role}, std::move(lease));
}

cufftHandle CufftPipeline::fft_plan(int64_t batch, Role role) const {
  auto it = fft_plans_.find({batch, role});
  if (it == fft_plans_.end())
    throw Error("cufft: internal: no cuFFT plan for batch " + std::to_string(batch));  // planned in the ctor
  return it->second.handle();
}

cufft_cb::Params* CufftPipeline::params_block(int64_t batch, Role role) const {
  auto it = fft_plans_.find({batch, role});
  return it == fft_plans_.end() ? nullptr : it->second.params();
}

std::string CufftPipeline::edges_summary() const {
  const char* names[2] = {pass_ == Pass::bprop ? "gradOutput" : "input", pass_ == Pass::accgrad ? "gradOutput" : "weight"};
  std::string out;
  for (int k = 0; k < 2; ++k) {
    const Role role = k == 0 ? kOperandA : kOperandB;
    out += std::string(k ? ", " : "") + names[k] +
           (role == kOperandB && weight_dft_ && pass_ != Pass::accgrad
                ? " transformed by the direct DFT of its window into the frequency-major layout on a second stream beside "
                  "the other operand's transform (on one stream under --breakdown)"
            : reads_in_place(role) ? " read in place (it fills the basis)"
            : tiled_ && (role == kOperandA || pass_ == Pass::accgrad) ? " gathered per tile"
            : edge_callbacks_ ? " padded by the R2C load callback"
                              : " padded by a copy");
  }
  if (weight_split())  // Note [weight-side batches]
    out += std::string(", ") + (pass_ == Pass::accgrad ? "weight gradient" : "weight") + " transformed in batches of " +
           std::to_string(weight_batch_) + " of its " + std::to_string(weight_planes_) + " planes";
  if (weight_dft_ && pass_ == Pass::accgrad)
    return out + ", weight gradient evaluated at its window from the frequency-major products (no C2R)";
  out += gather_callback_ ? ", products read frequency-major by the C2R load callback" : "";
  out += clip_callback_ ? ", result clipped by the C2R store callback" : tiled_ ? "" : ", result clipped by a kernel";
  return out;
}

std::string CufftPipeline::workspace_summary() const {
  std::ostringstream os;
  os << workspace_bytes_ << " bytes (FFT scratch " << scratch_bytes_ << ", A^T " << a_bytes_ << ", B^T " << b_bytes_
     << ", C^T " << c_bytes_;
  if (ptr_bytes_) os << ", pointer arrays " << ptr_bytes_;
  os << ", cuFFT work area " << fft_work_bytes_ << ", cuBLAS workspace " << cfg_.cublas_workspace << ")";
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Callback parameters (Note [cufft callbacks])

void CufftPipeline::write_callback_params(const Args& args, int64_t s0, int64_t sc, void* spectra_c,
                                          cudaStream_t stream) const {
  const Roles r = roles(p_, pass_, &args);
  const gpu_kernels::FftLayout layout{cfg_.nh, cfg_.nw, ld_};
  auto operand = [&](const Operand& o) {
    return gpu_kernels::padded_load_params(chunk_source(o, s0, tiled_), o.h, o.w, o.ph, o.pw, o.mirror, layout);
  };
  cufft_cb::Params c = gpu_kernels::clipped_store_params(chunk_result(args.result, r, pass_, s0), r.clip,
                                                         inverse_scale(), layout);
  c.spectra = static_cast<float*>(spectra_c);
  c.planes = uint32_t(r.c_batched ? r.c_planes_per_sample * sc : r.c_planes_per_sample);
  c.freq = FastDiv::make(uint32_t(freqs_));
  cufft_cb::Params* da = params_block(planes_of(r.a, sc), kOperandA);
  cufft_cb::Params* db = params_block(planes_of(r.b, sc), kOperandB);
  cufft_cb::Params* dc = params_block(c.planes, kResult);
  gpu_kernels::write_callback_params(da, operand(r.a), db, operand(r.b), dc, c, stream);
}

// ---------------------------------------------------------------------------------------------
// Execution

// One execution (run()): the workspace carved into its buffers, the plans bound to the stream, and
// the steps of the pipeline, in the order run() calls them.
class CufftPipeline::Execution {
 public:
  Execution(const CufftPipeline& pl, const Args& args, cudaStream_t stream, void* workspace, StepTimer* timer)
      : pl_(pl), p_(pl.p_), cfg_(pl.cfg_), args_(args), stream_(stream), timer_(timer),
        r_(roles(pl.p_, pl.pass_, &args)), layout_{cfg_.nh, cfg_.nw, pl.ld_} {
    ArenaCursor cur(static_cast<char*>(workspace));
    scratch_ = static_cast<cuComplex*>(cur.take(pl.scratch_bytes_));
    at_ = static_cast<cuComplex*>(cur.take(pl.a_bytes_));
    bt_ = static_cast<cuComplex*>(cur.take(pl.b_bytes_));
    ct_ = static_cast<cuComplex*>(cur.take(pl.c_bytes_));
    ptrs_ = static_cast<cuComplex**>(cur.take(pl.ptr_bytes_));
    void* fft_work = cur.take(pl.fft_work_bytes_);
    void* blas_work = cur.take(cfg_.cublas_workspace);
    scratch_real_ = reinterpret_cast<float*>(scratch_);
    for (auto& [key, plan] : pl.fft_plans_) {
      FFTCONV_CUFFT_CHECK(cufftSetStream(plan.handle(), stream));
      FFTCONV_CUFFT_CHECK(cufftSetWorkArea(plan.handle(), fft_work));
    }
    FFTCONV_CUBLAS_CHECK(cublasSetStream(pl.blas_, stream));  // resets the workspace: set it after
    FFTCONV_CUBLAS_CHECK(cublasSetWorkspace(pl.blas_, blas_work, cfg_.cublas_workspace));
    if (pl.tiled_) {
      const TilePlan& t = pl.tiles_;
      rows_ = {t.rows.origin, t.rows.extent, t.rows.step, t.rows.count};
      cols_ = {t.cols.origin, t.cols.extent, t.cols.step, t.cols.count};
    }
    clip_ = r_.clip;
    clip_.scale = pl.inverse_scale();
    pb_fixed_ = r_.b.batched ? 0 : planes_of(r_.b, 0);
    // The pruned weight DFT runs beside operand A's transform on the fork's stream, joined before the
    // first CGEMM (Note [forked transforms]); not with the breakdown, which times the steps one by one.
    forked_ = pl.fork_ && !timer;
  }

  // Operand B when it is not batched (the weights): transformed once, before the chunks.
  void weights() {
    if (r_.b.batched) return;
    params(0, std::min(cfg_.chunk, pl_.units_));
    if (!pl_.weight_dft_ && !pl_.weight_split())
      return forward(r_.b, kOperandB, 0, 0, pb_fixed_, bt_, "PAD B", "FFT B", "TRANS B");
    if (!pl_.weight_dft_) {  // Note [weight-side batches]
      const Operand& w = r_.b;
      for (int64_t j0 = 0; j0 < pb_fixed_; j0 += pl_.weight_batch_) {
        const int64_t n = std::min(pl_.weight_batch_, pb_fixed_ - j0);
        const float* src = w.src + j0 * w.h * w.w;
        if (pl_.edge_callbacks_) {  // the batch's load callback reads from its first plane
          step("CALLBACK ARGS", [&] {
            gpu_kernels::write_callback_params(nullptr, {}, pl_.params_block(n, kOperandB),
                                               gpu_kernels::padded_load_params(src, w.h, w.w, 0, 0, false, layout_),
                                               nullptr, {}, stream_);
          });
        } else {
          step("PAD B", [&] {
            gpu_kernels::embed_planes(src, n, w.h, w.w, 0, 0, false, scratch_real_, layout_, stream_);
          });
        }
        step("FFT B", [&] { FFTCONV_CUFFT_CHECK(cufftExecR2C(pl_.fft_plan(n, kOperandB), scratch_real_, scratch_)); });
        step("TRANS B", [&] {
          gpu_kernels::transpose_complex(scratch_, n, pl_.freqs_, bt_ + j0, stream_, 0, pb_fixed_);
        });
      }
      return;
    }
    fbfft::ForwardArgs w;  // Note [pruned weight transforms]
    w.batch = pb_fixed_, w.n_h = int(cfg_.nh), w.n_w = int(cfg_.nw);
    w.input = r_.b.src, w.in_h = p_.kh, w.in_w = p_.kw, w.in_ld = p_.kw, w.in_plane_stride = p_.kh * p_.kw;
    w.output = reinterpret_cast<float2*>(bt_), w.layout = fbfft::Layout::freq_major;
    const cudaStream_t ws = forked_ ? pl_.fork_->fork(stream_) : stream_;
    step("DFT B", [&] { fbfft::forward_window(w, ws); });
  }

  // Units s0 .. s0+chunk: operand A (and a batched B) transformed, the products, and for fprop and
  // bprop the chunk's result.
  void chunk(int64_t s0) {
    const bool tiled = pl_.tiled_;
    const int64_t sc = std::min(cfg_.chunk, pl_.units_ - s0);
    const int64_t pa = planes_of(r_.a, sc);
    if (s0 > 0 || r_.b.batched) params(s0, sc);  // (the first chunk's were written with B's)
    forward(r_.a, kOperandA, s0, sc, pa, at_, tiled ? "GATHER A" : "PAD A", "FFT A", "TRANS A");
    if (r_.b.batched)
      forward(r_.b, kOperandB, s0, sc, planes_of(r_.b, sc), bt_, tiled ? "GATHER B" : "PAD B", "FFT B", "TRANS B");
    if (forked_ && s0 == 0) pl_.fork_->join(stream_);
    products(s0, sc, pa);
    if (pl_.pass_ != Pass::accgrad) inverse(r_.c_planes_per_sample * sc, s0, sc);
  }

  // accGrad's result, from the products accumulated over every chunk.
  void accgrad_result() {
    if (!pl_.weight_dft_ && !pl_.weight_split()) return inverse(r_.c_planes_per_sample, 0, 0);
    if (!pl_.weight_dft_) {  // Note [weight-side batches]
      const int64_t planes = r_.c_planes_per_sample, kept = clip_.out_h * clip_.out_w;
      for (int64_t j0 = 0; j0 < planes; j0 += pl_.weight_batch_) {
        const int64_t n = std::min(pl_.weight_batch_, planes - j0);
        step("TRANS C", [&] { gpu_kernels::transpose_complex(ct_ + j0, pl_.freqs_, n, scratch_, stream_, planes, 0); });
        step("IFFT C", [&] { FFTCONV_CUFFT_CHECK(cufftExecC2R(pl_.fft_plan(n, kResult), scratch_, scratch_real_)); });
        step("CLIP C", [&] {
          gpu_kernels::clip_planes(scratch_real_, layout_, n, clip_, static_cast<float*>(args_.result) + j0 * kept,
                                   stream_);
        });
      }
      return;
    }
    fbfft::InverseArgs g;  // Note [pruned weight transforms]
    g.batch = r_.c_planes_per_sample, g.n_h = int(cfg_.nh), g.n_w = int(cfg_.nw);
    g.input = reinterpret_cast<const float2*>(ct_), g.layout = fbfft::Layout::freq_major;
    g.output = static_cast<float*>(args_.result), g.out_h = p_.kh, g.out_w = p_.kw, g.out_ld = p_.kw;
    g.out_plane_stride = p_.kh * p_.kw, g.scale = pl_.inverse_scale();
    step("IDFT C", [&] { fbfft::inverse_window(g, stream_); });
  }

 private:
  template <class Fn>
  void step(const char* name, Fn&& fn) { timed_step(timer_, name, stream_, fn); }

  // The callbacks' parameters for units s0 .. s0+sc, where there are callbacks.
  void params(int64_t s0, int64_t sc) {
    if (pl_.edge_callbacks_ || pl_.gather_callback_)
      step("CALLBACK ARGS", [&] { pl_.write_callback_params(args_, s0, sc, ct_, stream_); });
  }

  // Pad (tiled: gather; callbacks: inside the R2C), R2C and transpose one operand (units s0 .. s0+sc)
  // into `dst` ([freq][plane]).
  void forward(const Operand& o, Role role, int64_t s0, int64_t sc, int64_t planes, cuComplex* dst,
               const char* pad_name, const char* fft_name, const char* trans_name) {
    const bool tiled = pl_.tiled_, direct = cfg_.layout == SpectrumLayout::direct;
    if (tiled && o.batched) {
      const tile_kernels::PlaneLayout fft_planes{pl_.ld_, cfg_.nh * pl_.ld_, 0, 0, 1.0f};
      step(pad_name, [&] {
        tile_kernels::gather_tiles(o.grid(), o.rect, p_.kh, p_.kw, rows_, cols_, p_.S, s0, sc, cfg_.nh, cfg_.nw,
                                   scratch_real_, fft_planes, stream_);
      });
    }
    const float* src = chunk_source(o, s0, tiled);
    // The R2C input: the tensor itself (it fills the basis; an out-of-place R2C leaves its input
    // intact), the nominal scratch (load callback), or the padded copy.
    float* fft_in = scratch_real_;
    if (pl_.reads_in_place(role)) {
      fft_in = const_cast<float*>(src);
      if (reinterpret_cast<std::uintptr_t>(src) % kFftAlignment != 0) {
        // cuFFT rejects misaligned data (a chunk's or a caller's offset): stage the planes in an
        // aligned buffer that is free until the R2C has read it.
        fft_in = direct ? scratch_real_ : reinterpret_cast<float*>(dst);
        step(pad_name, [&] {
          FFTCONV_CUDA_CHECK(cudaMemcpyAsync(fft_in, src, std::size_t(planes * o.h * o.w) * sizeof(float),
                                             cudaMemcpyDeviceToDevice, stream_));
        });
      }
    } else if (!(tiled && o.batched) && !pl_.edge_callbacks_) {
      step(pad_name, [&] {
        gpu_kernels::embed_planes(src, planes, o.h, o.w, o.ph, o.pw, o.mirror, scratch_real_, layout_, stream_);
      });
    }
    const cufftHandle plan = pl_.fft_plan(planes, role);
    if (direct) {  // cuFFT writes [freq][plane] straight into dst
      step(fft_name, [&] { FFTCONV_CUFFT_CHECK(cufftExecR2C(plan, fft_in, dst)); });
      return;
    }
    step(fft_name, [&] { FFTCONV_CUFFT_CHECK(cufftExecR2C(plan, fft_in, scratch_)); });
    step(trans_name, [&] { gpu_kernels::transpose_complex(scratch_, planes, pl_.freqs_, dst, stream_); });
  }

  // One product per frequency (Note [frequency-major products]); A/B below are cuBLAS operands.
  void products(int64_t s0, int64_t sc, int64_t pa) {
    cublasOperation_t opa = CUBLAS_OP_N, opb = CUBLAS_OP_N;
    int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, sa = 0, sb = 0, scs = 0;
    const cuComplex *ga = nullptr, *gb = nullptr;
    float beta_re = 0.0f;
    switch (pl_.pass_) {
      case Pass::fprop:  // Y = W^H X
        opa = CUBLAS_OP_C, m = p_.fo, n = sc, k = p_.f, ga = bt_, lda = p_.f, sa = pb_fixed_, gb = at_, ldb = p_.f,
        sb = pa, ldc = p_.fo, scs = sc * p_.fo;
        break;
      case Pass::bprop:  // Gp = W G
        m = p_.f, n = sc, k = p_.fo, ga = bt_, lda = p_.f, sa = pb_fixed_, gb = at_, ldb = p_.fo, sb = pa, ldc = p_.f,
        scs = sc * p_.f;
        break;
      case Pass::accgrad:  // GW = X G^H, accumulated over chunks
        opb = CUBLAS_OP_C, m = p_.f, n = p_.fo, k = sc, ga = at_, lda = p_.f, sa = pa, gb = bt_, ldb = p_.fo,
        sb = sc * p_.fo, ldc = p_.f, scs = p_.fo * p_.f, beta_re = s0 == 0 ? 0.0f : 1.0f;
        break;
    }
    const cuComplex alpha = make_cuComplex(1.0f, 0.0f), beta = make_cuComplex(beta_re, 0.0f);
    const int64_t freqs = pl_.freqs_;
    const int im = to_int(m, "m"), in = to_int(n, "n"), ik = to_int(k, "k"), ilda = to_int(lda, "lda"),
              ildb = to_int(ldb, "ldb"), ildc = to_int(ldc, "ldc"), count = to_int(freqs, "frequencies");
    const cublasHandle_t blas = pl_.blas_;
    cuComplex* ct = ct_;
    step("CGEMM", [&] {
      switch (cfg_.gemm) {
        case GemmStrategy::strided: {
          products::StridedBatch g;
          g.opa = opa, g.opb = opb, g.m = m, g.n = n, g.k = k, g.a = ga, g.lda = lda, g.stride_a = sa, g.b = gb,
          g.ldb = ldb, g.stride_b = sb, g.c = ct, g.ldc = ldc, g.stride_c = scs, g.batch = freqs,
          g.accumulate = beta_re != 0.0f;
          products::cgemm(blas, cfg_.math, g);
          break;
        }
        case GemmStrategy::gemm3m:
          FFTCONV_CUBLAS_CHECK(cublasCgemm3mStridedBatched(blas, opa, opb, im, in, ik, &alpha, ga, ilda, sa, gb,
                                                           ildb, sb, &beta, ct, ildc, scs, count));
          break;
        case GemmStrategy::batched:
          gpu_kernels::fill_pointer_arrays(ga, sa, gb, sb, ct, scs, freqs, ptrs_, stream_);
          FFTCONV_CUBLAS_CHECK(cublasCgemmBatched(blas, opa, opb, im, in, ik, &alpha, ptrs_, ilda, ptrs_ + freqs,
                                                  ildb, &beta, ptrs_ + 2 * freqs, ildc, count));
          break;
        case GemmStrategy::loop:
          for (int64_t q = 0; q < freqs; ++q)
            FFTCONV_CUBLAS_CHECK(cublasCgemm(blas, opa, opb, im, in, ik, &alpha, ga + q * sa, ilda, gb + q * sb, ildb,
                                             &beta, ct + q * scs, ildc));
          break;
      }
    });
  }

  // Transpose back, C2R, and clip `planes` result planes into the result (tiled fprop/bprop: scatter
  // or fold the kept windows of units s0 .. s0+sc into it).
  void inverse(int64_t planes, int64_t s0, int64_t sc) {
    const cufftHandle plan = pl_.fft_plan(planes, kResult);
    if (cfg_.layout == SpectrumLayout::direct) {  // C2R reads [freq][plane] from ct (and may overwrite it: it is consumed)
      step("IFFT C", [&] { FFTCONV_CUFFT_CHECK(cufftExecC2R(plan, ct_, scratch_real_)); });
    } else if (pl_.gather_callback_) {  // C2R loads [freq][plane] from ct; scratch is its nominal input
      step("IFFT C", [&] { FFTCONV_CUFFT_CHECK(cufftExecC2R(plan, scratch_, scratch_real_)); });
    } else {
      step("TRANS C", [&] { gpu_kernels::transpose_complex(ct_, pl_.freqs_, planes, scratch_, stream_); });
      step("IFFT C", [&] { FFTCONV_CUFFT_CHECK(cufftExecC2R(plan, scratch_, scratch_real_)); });
    }
    if (pl_.clip_callback_) return;  // the C2R stored the kept window itself
    auto* result = static_cast<float*>(args_.result);
    const int64_t ld = pl_.ld_;
    if (pl_.tiled_ && pl_.pass_ == Pass::fprop) {
      step("SCATTER C", [&] {
        tile_kernels::scatter_tiles(scratch_real_, {ld, cfg_.nh * ld, 0, 0, clip_.scale}, rows_, cols_, p_.S, p_.fo, s0,
                                    sc, result, p_.out_h(), p_.out_w(), stream_);
      });
    } else if (pl_.tiled_ && pl_.pass_ == Pass::bprop) {
      step("FOLD C", [&] {
        tile_kernels::fold_tiles(scratch_real_, {ld, cfg_.nh * ld, p_.kh - 1, p_.kw - 1, clip_.scale}, rows_, cols_, p_,
                                 s0, sc, result, stream_);
      });
    } else {
      float* dst = chunk_result(args_.result, r_, pl_.pass_, s0);
      step("CLIP C", [&] { gpu_kernels::clip_planes(scratch_real_, layout_, planes, clip_, dst, stream_); });
    }
  }

  const CufftPipeline& pl_;
  const ConvProblem& p_;
  const PipelineConfig& cfg_;
  const Args& args_;
  cudaStream_t stream_;
  StepTimer* timer_;
  const Roles r_;
  const gpu_kernels::FftLayout layout_;
  cuComplex *scratch_ = nullptr, *at_ = nullptr, *bt_ = nullptr, *ct_ = nullptr;
  cuComplex** ptrs_ = nullptr;
  float* scratch_real_ = nullptr;
  tile_kernels::AxisGeom rows_, cols_;  // tiled: the tile grid
  gpu_kernels::ClipSpec clip_;
  int64_t pb_fixed_ = 0;  // planes of a B that is not batched
  bool forked_ = false;
};

void CufftPipeline::run(const Args& args, cudaStream_t stream, void* workspace, StepTimer* timer) const {
  Execution e(*this, args, stream, workspace, timer);
  e.weights();
  if (tiled_ && pass_ == Pass::bprop)  // the tiles' folds accumulate onto it
    FFTCONV_CUDA_CHECK(cudaMemsetAsync(args.result, 0, std::size_t(p_.input_elems()) * sizeof(float), stream));
  for (int64_t s0 = 0; s0 < units_; s0 += cfg_.chunk) e.chunk(s0);
  if (pass_ == Pass::accgrad) e.accgrad_result();
}

}  // namespace fftconv
