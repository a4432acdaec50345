// The fbfft convolution plan (see fbfft_conv_plan.hpp): workspace layout and chunking, the three
// passes untiled and tiled, and Note [fbfft CGEMM without transpositions].
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <sstream>
#include <utility>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "common/spare_slot.hpp"
#include "gpu/runtime/choice_cache.hpp"
#include "gpu/runtime/cuda_args.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/fbfft/fbfft_conv_plan.hpp"
#include "gpu/runtime/cuda_graph.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "gpu/runtime/step_timer.hpp"
#include "gpu/runtime/stream_fork.hpp"
#include "gpu/runtime/tuning_timer.hpp"
#include "gpu/runtime/fill_kernels.cuh"
#include "gpu/fbfft/fbfft_small_products.hpp"
#include "gpu/gemm/products.hpp"
#include "gpu/tiles/tile_kernels.cuh"
#include "tiling/planner.hpp"

namespace fftconv::fbfft_conv {
using namespace tile_kernels;  // AxisGeom, SourceGrid, gather/scatter/fold of tiles, padding kernels

// Note [fbfft CGEMM without transpositions]
// The fbfft forward writes Layout::freq_major: spectrum value (frequency q, plane b) at q*ld + b.
// Planes are numbered as in the NCHW tensors: input plane s*f+i, weight plane j*f+i, gradOutput
// plane s*fo+j. Per frequency q, the block at q*ld read column-major with leading dimension f is
// the f×S matrix Xc(i, s) = X[s][i] (element i + s*f); likewise Wc(i, j) = W[j][i] (f×fo, ld f) and
// Gc(j, s) = G[s][j] (fo×S, ld fo). cuBLAS then needs no transposed copy in any pass:
//   fprop:   Y[s][j] = sum_i X[s][i] conj(W[j][i]) = (Wc^H Xc)(j, s): C fo×S, ldc fo, so Y of (s, j)
//            lands at j + s*fo = output plane s*fo+j.          gemm(C, N, m=fo, n=S, k=f)
//   bprop:   Gp[s][i] = sum_j G[s][j] W[j][i] = (Wc Gc)(i, s): C f×S, ldc f -> gradInput plane s*f+i.
//                                                             gemm(N, N, m=f, n=S, k=fo)
//   accgrad: GW[j][i] = sum_s conj(G[s][j]) X[s][i] = (Xc Gc^H)(i, j): C f×fo, ldc f -> plane j*f+i.
//                                                             gemm(N, C, m=f, n=fo, k=S)
// Worked example, fprop with S=2, f=3, fo=1 at one frequency: X block = [X00 X01 X02 X10 X11 X12]
// (plane s*3+i), Xc = 3×2 with columns (X00,X01,X02) and (X10,X11,X12); W block = [W00 W01 W02],
// Wc = 3×1; Wc^H Xc = 1×2 = (sum_i conj(W0i) X0i, sum_i conj(W0i) X1i) = (Y[0][0], Y[1][0]) at
// planes 0 = 0*1+0 and 1 = 1*1+0 of the output. The inverse reads C freq-major with the same
// plane numbering and writes NCHW planes (or a chunk of them) directly.
// Tiled plans number items as images (item = t*S + s), so the same calls apply with S -> items.

const std::vector<std::string_view>& option_keys() {
  static const std::vector<std::string_view> keys = with_tiling_option_keys({"kernel", "window", "fork", "launch", "fused", "products"});
  return keys;
}

Options Options::parse(const std::map<std::string, std::string>& extra) {
  check_option_keys("fbfft", extra, option_keys());
  Options o;
  for (const auto& [key, value] : extra) {
    if (key == "kernel") {
      o.kernel = fbfft::parse_kernel(value, "extra[\"kernel\"]");
    } else if (key == "window") {
      if (value != "auto" && value != "off")
        throw InvalidArgument("extra[\"window\"]: expected auto or off, got '" + value + "'");
      o.windows = value == "auto";
    } else if (key == "launch") {
      if (value != "dependent" && value != "plain")
        throw InvalidArgument("extra[\"launch\"]: expected dependent or plain, got '" + value + "'");
      o.dependent = value == "dependent";
    } else if (key == "fork") {
      if (value != "auto" && value != "on" && value != "off")
        throw InvalidArgument("extra[\"fork\"]: expected auto, on or off, got '" + value + "'");
      o.fork = value == "on" ? Fork::on : value == "off" ? Fork::off : Fork::automatic;
    } else if (key == "fused") {
      if (value != "auto" && value != "on" && value != "off")
        throw InvalidArgument("extra[\"fused\"]: expected auto, on or off, got '" + value + "'");
      o.fused = value == "on" ? Fused::on : value == "off" ? Fused::off : Fused::automatic;
    } else if (key == "products") {
      if (value != "auto" && value != "gemm" && value != "smallk")
        throw InvalidArgument("extra[\"products\"]: expected auto, gemm or smallk, got '" + value + "'");
      o.products = value == "gemm" ? Products::gemm : value == "smallk" ? Products::smallk : Products::automatic;
    }  // else a tiling key, read by the planner
  }
  return o;
}

namespace {

enum Buf { kSpecW, kSpecA, kSpecB, kSpecC, kRealA, kRealB, kRealC, kBufCount };
using Sizes = std::array<std::size_t, kBufCount>;

const char* kBufNames[kBufCount] = {"weight spectra", "operand spectra A", "operand spectra B", "product spectra",
                                    "real staging A", "real staging B", "real staging C"};


AxisGeom axis_geom(const AxisTiling& a) { return {a.origin, a.extent, a.step, a.count}; }

class FbfftConvPlan final : public Plan {
 public:
  FbfftConvPlan(const ConvProblem& p, Pass pass, const PlanOptions& opts, int n_h, int n_w, const TilePlan* tp,
                std::string why)
      : p_(p), pass_(pass), opts_(opts), n_h_(n_h), n_w_(n_w), why_(std::move(why)) {
    if (!fbfft::supported(n_h_, n_w_, kernel_, fbfft::Layout::freq_major))
      throw Unsupported("fbfft: extra[\"kernel\"]=" + std::string(fbfft::to_string(kernel_)) + " has no kernel for the " +
                        std::to_string(n_h_) + "x" + std::to_string(n_w_) + " basis in the freq_major layout");
    freqs_ = int64_t(n_h_) * (n_w_ / 2 + 1);
    if (tp) {
      tiled_ = true;
      tile_plan_ = *tp;
      rows_ = axis_geom(tp->rows);
      cols_ = axis_geom(tp->cols);
      check_tile_geometry();
    }
    units_ = tiled_ ? tile_plan_.item_count() : p_.S;
    resolve_fused();
    const int64_t max_chunk = tiled_ ? std::min(tile_plan_.tiles_in_flight, units_) : units_;
    choose_chunk(max_chunk);
    FFTCONV_CUDA_CHECK(cudaGetDevice(&device_));
    FFTCONV_CUBLAS_CHECK(cublasCreate(&handle_));
    // Note [forked transforms]: pinned by extra["fork"], else timed (autotune) or accGrad only.
    if (!fused_ &&
        (options_.fork == Fork::on || (options_.fork == Fork::automatic && (opts_.autotune || pass_ == Pass::accgrad)))) {
      try {
        fork_ = std::make_unique<StreamFork>();
      } catch (...) {
        cublasDestroy(handle_);
        throw;
      }
    }
    fwd_kernel_ = inv_kernel_ = kernel_;
    inv_window_ = !fused_ && inverse_window_possible();
    weight_window_ = !fused_ && weight_window_possible();  // the pruned DFT writes freq_major only
    resolve_products();
    const std::string key = tuning_key();
    if (fused_) {
      math_note_ = "fp32 FMA in the fused kernel";  // nothing to tune: one kernel, no CGEMM
    } else if (!(opts_.autotune && recall_tuning(key))) {
      if (opts_.autotune) tune_transforms();
      resolve_math();
      const bool tune_fork = options_.fork == Fork::automatic && pass_ != Pass::accgrad;
      const bool tune_math = opts_.math == ProductMath::automatic && !small_k_pinned();
      const bool tune_products = options_.products == Products::automatic && small_k_;
      if (opts_.autotune && (tune_fork || tune_math || tune_products)) tune_pass(tune_fork, tune_math, tune_products);
      if (opts_.autotune) remember_tuning(key);
    }
    if (small_k_) {
      math_ = ProductMath::fp32;
      math_note_ = "fp32 FMA in the small-K kernel";
    }
  }

  ~FbfftConvPlan() override {
    if (handle_) cublasDestroy(handle_);
  }

  std::size_t workspace_bytes() const override { return workspace_; }

  std::string tile_json() const override { return tiled_ ? tile_plan_.json(chunk_) : "null"; }

  std::string describe() const override {
    std::ostringstream s;
    s << "fbfft " << to_string(pass_) << " " << p_.to_string() << ": basis " << n_h_ << "x" << n_w_ << " ("
      << freqs_ << " frequencies), ";
    if (fused_) describe_fused(s);
    else describe_pipeline(s);
    s << "; workspace " << workspace_ << " bytes";
    if (opts_.workspace_limit) s << " (limit " << opts_.workspace_limit << ")";
    if (!fused_note_.empty()) s << "; " << fused_note_;
    if (!why_.empty()) s << "; " << why_;
    return s.str();
  }

  // describe()'s middle for the unfused pipeline: tiles or padding, transforms, products, chunks.
  void describe_pipeline(std::ostringstream& s) const {
    if (tiled_)
      s << tile_plan_.summary() << ", items (tile-major t*S+s) gathered into " << n_h_ << "x" << n_w_
        << " planes" << (pass_ == Pass::bprop ? ", bprop tiles folded onto gradInput by a deterministic "
                                                "gather kernel per chunk"
                                              : "")
        << (pass_ == Pass::accgrad ? ", accgrad reduced over items in the frequency domain" : "");
    else
      s << "untiled, "
        << (p_.padding == Padding::zero || pass_ == Pass::bprop
                ? "no padded copies (implicit zero padding: the forward reads the unpadded planes at their offset)"
                : "mirror padding materialized by a padding kernel (fbfft loads only zero-pad)")
        << (pass_ == Pass::bprop ? (p_.padding == Padding::zero
                                        ? ", inverse stores the cropped window straight into gradInput"
                                        : ", padded-grid inverse folded onto gradInput (P^T)")
                                 : "");
    s << "; " << family_name(false) << " forward / " << family_name(true) << " inverse transform kernels"
      << (kernel_ != fbfft::Kernel::automatic ? " (pinned)" : "") << (tune_note_.empty() ? "" : " (" + tune_note_ + ")")
      << (dependent_ ? ", launched dependent (Note [dependent launch])" : ", plain launches");
    if (weight_window_) s << "; weight spectra by the pruned DFT of the " << p_.kh << "x" << p_.kw << " window";
    if (inv_window_)
      s << "; result by the pruned inverse to its window" << (inv_window_exact_ ? "" : " (padded bound)") << ", "
        << (inv_window_split_ ? std::to_string(inv_window_split_) : std::string("automatic")) << " lanes per plane";
    if (fork_)
      s << "; " << (pass_ == Pass::accgrad ? "gradOutput" : "weight") << " transform on a second stream beside the "
        << (pass_ == Pass::bprop ? "gradOutput" : "input") << " transform (Note [forked transforms])";
    if (small_k_) {
      const std::string how = small_k_pinned()  ? "pinned"
                              : opts_.autotune ? "timed against the CGEMM"
                                               : "model: f <= " + std::to_string(kMaxSmallK);
      if (pass_ == Pass::fprop)
        s << "; products by the small-K kernel from the freq_major spectra into the standard layout [plane][freq] ("
          << p_.f << " fp32 complex multiply-adds per value";
      else
        s << "; gradOutput spectra by the " << family_name(false, fbfft::Layout::standard)
          << " forward in the standard layout [plane][freq], products by the small-K kernel against the freq_major "
          << (pass_ == Pass::bprop ? "weight spectra into the standard layout (" : "input spectra into the freq_major layout (")
          << (pass_ == Pass::bprop ? p_.fo : chunk_) << " fp32 complex multiply-adds per value";
      s << "; Note [small-K products]; " << how << ")";
      if (pass_ != Pass::accgrad) s << ", inverted by the " << family_name(true, fbfft::Layout::standard) << " inverse";
      s << "; " << chunk_ << " images per chunk of " << units_;
      return;
    }
    s << "; spectra in freq_major layout [freq][plane] consumed in place by the products (math " << to_string(math_)
      << ": " << products::engine(math_, representative_product()) << "; " << math_note_ << ")(";
    switch (pass_) {
      case Pass::fprop: s << "C, N, m=fo, n=" << (tiled_ ? "items" : "images") << ", k=f"; break;
      case Pass::bprop: s << "N, N, m=f, n=" << (tiled_ ? "items" : "images") << ", k=fo"; break;
      case Pass::accgrad: s << "N, C, m=f, n=fo, k=" << (tiled_ ? "items" : "images"); break;
    }
    s << ", batch=" << freqs_ << "), no transpositions; " << chunk_ << " " << (tiled_ ? "items" : "images")
      << " per chunk of " << units_;
  }

  void describe_fused(std::ostringstream& s) const {
    const int nt = fbfft::fused_tiles_per_block(n_h_, p_.f);
    s << tile_plan_.summary() << ", fused (extra[\"fused\"]=" << (options_.fused == Fused::on ? "on" : "auto")
      << "): one kernel per pass forwards the f input tiles of " << nt << " item" << (nt > 1 ? "s" : "")
      << " per block into shared memory, sums X conj(W) over the input channels in registers, inverts each output "
         "channel and stores its kept window straight into the output, no spectra in global memory (Note [fused "
         "tiles]; "
      << fbfft::fused_tiles_smem_bytes(n_h_, p_.f, nt) << " bytes of shared memory per block); weight spectra by the "
      << family_name(false) << " forward in the standard layout [plane][freq], read by every block; products "
      << math_note_;
  }

  // The transforms' family in the spectra's layout, or in `layout` with its automatic family (the
  // small-K products' inverse). describe() must not throw: it is called from reporting code, and a
  // basis without a kernel says so.
  std::string family_name(bool inverse, std::optional<fbfft::Layout> layout = std::nullopt) const {
    try {
      const fbfft::Kernel k = layout ? fbfft::Kernel::automatic : inverse ? inv_kernel_ : fwd_kernel_;
      return fbfft::to_string(fbfft::resolve_kernel(n_h_, n_w_, k, layout.value_or(spectra_layout()), inverse));
    } catch (const std::exception& e) {
      return std::string("no (") + e.what() + ")";
    }
  }

  void execute(const Args& a) const override { run(a, nullptr); }

  std::pair<int64_t, int64_t> fourier_basis() const override { return {n_h_, n_w_}; }
  // A tiled plan's tiles (a bprop planned with them reads the spectra this plan prepares).
  std::pair<int64_t, int64_t> tile_basis() const override {
    return tiled_ ? std::pair<int64_t, int64_t>{n_h_, n_w_} : std::pair<int64_t, int64_t>{0, 0};
  }

  std::shared_ptr<const PreparedWeights> prepare_weights(const void* weight, void* stream) const override {
    if (pass_ == Pass::accgrad) throw Unsupported("fbfft: accgrad reads no weights to prepare");
    if (!weight) throw InvalidArgument("prepare_weights: weight is null");
    const auto st = static_cast<cudaStream_t>(stream);
    auto out = std::make_shared<FbfftWeights>();
    out->key_ = weights_key();
    out->spare = spare_;
    SpareSpectra reuse = spare_->take();  // Note [prepared spectra memory on the device]
    if (reuse.read) FFTCONV_CUDA_CHECK(cudaStreamWaitEvent(st, reuse.read.get(), 0));
    out->spectra = std::move(reuse.buffer), out->read = std::move(reuse.read);
    if (out->spectra.bytes() != sizes_[kSpecW]) out->spectra.allocate(sizes_[kSpecW]);
    std::lock_guard<std::mutex> lock(mutex_);
    timing_ = nullptr;
    transform_weight(static_cast<const float*>(weight), out->spectra.as<float2>(), st);
    FFTCONV_CUDA_CHECK(cudaStreamSynchronize(st));  // the spectra are complete when this returns
    return out;
  }

  void execute_with(const Args& a, const PreparedWeights& prepared) const override {
    const auto* w = dynamic_cast<const FbfftWeights*>(&prepared);
    if (!w || w->key() != weights_key())
      throw InvalidArgument("weights: prepared for '" + prepared.key() + "', this plan reads '" + weights_key() + "'");
    Args args = a;
    if (!args.weight) args.weight = w->spectra.get();  // not read: the checks want an operand there
    run(args, w->spectra.as<float2>());
    w->note_read(static_cast<cudaStream_t>(a.stream));
  }

 private:
  // Note [prepared spectra memory on the device]
  // A training step prepares weight spectra of the same size every step (132 MB at L5), and a
  // cudaMalloc and cudaFree of that size cost more than the weight transform they serve (the free
  // also waits for the whole device). So released spectra go back to the plan's spare slot with an
  // event recorded after the last execute_with() that read them, and the next prepare_weights()
  // takes the memory back after making its stream wait for that event: no allocation, no host
  // wait, and no write before the earlier readers are done. Readers on several streams are
  // chained through the event (each waits for the previous one before recording it). A CUDA graph
  // that captured execute_with() holds the address, not the object: it reads whatever the memory
  // holds when it replays, so the weights must live as long as the graph.
  struct SpareSpectra {
    DeviceBuffer buffer;
    CudaEvent read;  // after the last reader of the buffer: a new owner's stream waits for it
  };
  using SpectraSlot = SpareSlot<SpareSpectra>;
  // Weight spectra made by prepare_weights(): [freq][fo*f] in the plan's basis.
  struct FbfftWeights final : PreparedWeights {
    ~FbfftWeights() override {
      if (spare) spare->give({std::move(spectra), std::move(read)});
    }
    std::string key_;
    DeviceBuffer spectra;
    mutable CudaEvent read;  // after the last execute_with() that read the spectra
    std::shared_ptr<SpectraSlot> spare;
    std::string key() const override { return key_; }
    std::size_t bytes() const override { return spectra.bytes(); }
    mutable std::mutex mutex;  // note_read() from plans on several threads
    void note_read(cudaStream_t stream) const {
      if (stream_capturing(stream)) return;
      std::lock_guard<std::mutex> lock(mutex);
      if (!read) read = CudaEvent::create();
      else FFTCONV_CUDA_CHECK(cudaStreamWaitEvent(stream, read.get(), 0));
      FFTCONV_CUDA_CHECK(cudaEventRecord(read.get(), stream));
    }
  };
  std::string weights_key() const {
    return "fbfft weight spectra " + std::to_string(n_h_) + "x" + std::to_string(n_w_) + " of " +
           std::to_string(p_.fo) + "x" + std::to_string(p_.f) + "x" + std::to_string(p_.kh) + "x" +
           std::to_string(p_.kw) + " in the " + fbfft::to_string(spectra_layout()) + " layout on device " +
           std::to_string(device_);
  }

  void run(const Args& a, const float2* prepared) const {
    require_cuda_args(a, pass_, "fbfft", device_);

    std::lock_guard<std::mutex> lock(mutex_);
    const auto stream = static_cast<cudaStream_t>(a.stream);
    const bool capturing = stream_capturing(stream);
    if (capturing && opts_.breakdown)
      throw Unsupported("fbfft: this plan cannot be captured in a CUDA graph (--breakdown synchronizes on its step events)");
    if (arena_.capacity() < workspace_) {
      if (capturing)
        throw Unsupported("fbfft: the workspace (" + std::to_string(workspace_) +
                          " bytes) is not allocated yet; run execute() once before capturing it in a CUDA graph");
      fence_.wait();  // nothing may still use the old allocation
      arena_.reserve(workspace_);
    }
    // A previous execute() may still be running on another stream with the same workspace.
    fence_.enter(stream, capturing);
    FFTCONV_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    Buffers b = carve(arena_.base());
    prepared_ = prepared;
    if (prepared) b.spec_w = const_cast<float2*>(prepared);  // read only: the weight transform is skipped
    const auto* x = static_cast<const float*>(a.input);
    const auto* w = static_cast<const float*>(a.weight);
    const auto* g = static_cast<const float*>(a.grad_output);
    auto* r = static_cast<float*>(a.result);
    timer_.reset();
    product_flops_ = 0;
    timing_ = opts_.breakdown ? &timer_ : nullptr;  // one stream, step by step (branch())
    try {
      run_pass(x, w, g, r, b, stream);
    } catch (...) {
      timing_ = nullptr;
      prepared_ = nullptr;
      throw;
    }
    timing_ = nullptr;
    prepared_ = nullptr;
    fence_.leave(stream, capturing);
    last_breakdown_ = opts_.breakdown ? timer_.collect() : StepTimes{};
  }


 public:
  StepTimes last_breakdown() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_breakdown_;
  }

  ProductInfo last_products() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return {product_flops_, std::string(to_string(math_)), products::peak_tflops(math_)};
  }

 private:
  struct Buffers {
    float2 *spec_w, *spec_a, *spec_b, *spec_c;
    float *real_a, *real_b, *real_c;
  };

  // Byte sizes of the buffers for `chunk` images (untiled) or items (tiled).
  Sizes sizes(int64_t chunk) const {
    const ConvProblem& p = p_;
    const bool mirror = p.padding == Padding::mirror;
    const int64_t F = freqs_, plane = int64_t(n_h_) * n_w_, pad_plane = p.padded_h() * p.padded_w();
    const int64_t out_tile = tiled_ ? rows_.step * cols_.step : 0;
    auto c = [](int64_t a, int64_t b, int64_t e) {
      return std::size_t(checked_mul(checked_mul(a, b, "fbfft workspace"), e, "fbfft workspace"));
    };
    constexpr int64_t kC = sizeof(float2), kR = sizeof(float);
    Sizes s{};
    if (fused_) {  // the weight spectra only (Note [fused tiles])
      s[kSpecW] = c(F, p.fo * p.f, kC);
      return s;
    }
    switch (pass_) {
      case Pass::fprop:
        s[kSpecW] = c(F, p.fo * p.f, kC);
        s[kSpecA] = c(F, chunk * p.f, kC);
        s[kSpecC] = c(F, chunk * p.fo, kC);
        s[kRealA] = tiled_ ? c(chunk * p.f, plane, kR) : (mirror ? c(chunk * p.f, pad_plane, kR) : 0);
        s[kRealC] = tiled_ ? c(chunk * p.fo, out_tile, kR) : 0;
        break;
      case Pass::bprop:
        s[kSpecW] = c(F, p.fo * p.f, kC);
        s[kSpecA] = c(F, chunk * p.fo, kC);
        s[kSpecC] = c(F, chunk * p.f, kC);
        s[kRealA] = tiled_ ? c(chunk * p.fo, plane, kR) : 0;
        s[kRealC] = tiled_ ? c(chunk * p.f, out_tile, kR) : (mirror ? c(chunk * p.f, pad_plane, kR) : 0);
        break;
      case Pass::accgrad:
        s[kSpecA] = c(F, chunk * p.f, kC);
        s[kSpecB] = c(F, chunk * p.fo, kC);
        s[kSpecC] = c(F, p.fo * p.f, kC);
        s[kRealA] = tiled_ ? c(chunk * p.f, plane, kR) : (mirror ? c(chunk * p.f, pad_plane, kR) : 0);
        s[kRealB] = tiled_ ? c(chunk * p.fo, plane, kR) : 0;
        break;
    }
    return s;
  }

  static std::size_t total(const Sizes& s) {
    ArenaCursor cur;
    for (std::size_t n : s) cur.take(n);
    return cur.used();
  }

  Buffers carve(char* base) const {
    ArenaCursor cur(base);
    std::array<void*, kBufCount> ptr{};
    for (int k = 0; k < kBufCount; ++k) ptr[std::size_t(k)] = sizes_[std::size_t(k)] ? cur.take(sizes_[std::size_t(k)]) : nullptr;
    return {static_cast<float2*>(ptr[kSpecW]), static_cast<float2*>(ptr[kSpecA]), static_cast<float2*>(ptr[kSpecB]),
            static_cast<float2*>(ptr[kSpecC]), static_cast<float*>(ptr[kRealA]),  static_cast<float*>(ptr[kRealB]),
            static_cast<float*>(ptr[kRealC])};
  }

  // The largest chunk <= max_chunk whose workspace fits the limit; the cuBLAS int arguments bound it too.
  void choose_chunk(int64_t max_chunk) {
    const int64_t widest = std::max(p_.f, p_.fo);
    if (freqs_ > INT_MAX || p_.f * p_.fo > INT_MAX || widest > INT_MAX)
      throw Unsupported("fbfft: " + p_.to_string() + " exceeds cuBLAS's int arguments (f*fo = " +
                        std::to_string(p_.f * p_.fo) + ")");
    max_chunk = std::min<int64_t>(max_chunk, INT_MAX / widest);
    const std::size_t limit = opts_.workspace_limit;
    int64_t chunk = max_chunk;
    if (limit && total(sizes(chunk)) > limit) {
      const std::size_t least = total(sizes(1));
      if (least > limit) {
        const Sizes s = sizes(1);
        std::string parts;
        for (int k = 0; k < kBufCount; ++k)
          if (s[std::size_t(k)]) parts += std::string(parts.empty() ? "" : ", ") + kBufNames[k] + " " + std::to_string(s[std::size_t(k)]);
        throw Unsupported("fbfft: workspace_limit=" + std::to_string(limit) + " bytes is below the " +
                          std::to_string(least) + " bytes that one " + (tiled_ ? "item" : "image") +
                          " needs on basis " + std::to_string(n_h_) + "x" + std::to_string(n_w_) + " (" + parts + ")");
      }
      int64_t lo = 1, hi = max_chunk;  // total(sizes(lo)) fits, total(sizes(hi)) does not
      while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (total(sizes(mid)) <= limit ? lo : hi) = mid;
      }
      chunk = lo;
    }
    chunk_ = chunk;
    sizes_ = sizes(chunk_);
    workspace_ = total(sizes_);
  }

  // The device kernels recompute each tile's window from the axis geometry; check it against the
  // planner's tiles once, so a misreading of Note [tile geometry] fails loudly at plan time.
  void check_tile_geometry() const {
    const TilePlan& tp = tile_plan_;
    const int64_t kh = p_.kh, kw = p_.kw;
    for (int64_t t = 0; t < tp.tile_count(); ++t) {
      const Tile tile = tp.tile(t);
      const int64_t tr = t / cols_.count, tc = t % cols_.count;
      const Window win{rows_.origin + tr * rows_.step, cols_.origin + tc * cols_.step,
                       std::min(rows_.step, rows_.extent - tr * rows_.step),
                       std::min(cols_.step, cols_.extent - tc * cols_.step)};
      Window read{win.y0, win.x0, win.h + kh - 1, win.w + kw - 1};
      if (pass_ == Pass::bprop) read = {win.y0 - (kh - 1), win.x0 - (kw - 1), read.h, read.w};
      const bool ok = tile.window == win && tile.read == read && read.h <= n_h_ && read.w <= n_w_ &&
                      win.h <= rows_.step && win.w <= cols_.step;
      if (!ok) throw Error("fbfft: internal error: tile " + std::to_string(t) + " geometry differs from the planner's");
    }
  }

  // extra["fused"]: on runs the fused kernel or throws Unsupported saying why it cannot; auto runs it
  // where it can (and says why not otherwise); off never.
  void resolve_fused() {
    if (options_.fused == Fused::off) return;
    const Support s = fused_tiles_support(p_, pass_, tiled_ ? &tile_plan_ : nullptr);
    if (!s.ok && options_.fused == Fused::on) throw Unsupported("fbfft: extra[\"fused\"]=on: " + s.reason);
    fused_ = s.ok;
    if (!s.ok) fused_note_ = "not fused (extra[\"fused\"]=auto): " + s.reason;
  }
  fbfft::Layout spectra_layout() const { return fused_ ? fbfft::Layout::standard : fbfft::Layout::freq_major; }

  // --- transform-family tuning ---------------------------------------------------------------
  // Note [fbfft transform tuning]
  // Which family transforms a basis fastest in the freq_major layout depends on the batch as well
  // as the size (H100, S=128 -> S=32 at 32x32: the register kernels' many planes per block win on
  // large batches, the four-step clusters' one plane per block on small ones; at sides 16 and 32 the
  // lanes family's four lanes per transform on small ones, Note [lane-split small batches]), so with autotune
  // the plan times each family that has a kernel, once: the forward of the pass's main operand
  // (the input, or gradOutput in bprop) and the inverse of its result, on the first chunk's
  // geometry, from a zeroed scratch tensor into the (zeroed) workspace; the fastest of each
  // direction runs (ties go to the automatic choice). Weight spectra use the forward's family.
  // When the result's window is at most 12×12 (accGrad's kh×kw, or a small output) the pruned inverse
  // (Note [pruned inverse to small windows]) is a candidate too: it reads the spectra once but has
  // few blocks on a small batch, so it is timed like the others (a pinned family still meets it),
  // at each lanes-per-plane split (Note [pruned inverse to small windows]), then a 3×3 or 5×5
  // window by its exact instance and by the padded bound (Note [window bounds]);
  // so is the pruned forward of the weights against the chosen family's transform of them.
  // Without autotune the automatic family runs, and the pruned kernels wherever they apply;
  // extra["window"]=off leaves them out.
  struct ForwardGeom {
    int64_t batch, in_h, in_w, off_h, off_w, ld;
  };
  struct InverseGeom {
    int64_t batch, ld, out_h, out_w, off_h, off_w;
  };
  ForwardGeom tuning_forward_geom() const {
    const ConvProblem& p = p_;
    const int64_t planes = chunk_ * (pass_ == Pass::bprop ? p.fo : p.f);
    if (tiled_) return {planes, n_h_, n_w_, 0, 0, planes};
    if (pass_ == Pass::bprop) return {planes, p.out_h(), p.out_w(), 0, 0, planes};
    if (p.padding == Padding::zero) return {planes, p.h, p.w, p.ph, p.pw, planes};
    return {planes, p.padded_h(), p.padded_w(), 0, 0, planes};
  }
  InverseGeom tuning_inverse_geom() const {
    const ConvProblem& p = p_;
    switch (pass_) {
      case Pass::fprop: {
        const int64_t planes = chunk_ * p.fo;
        return tiled_ ? InverseGeom{planes, planes, rows_.step, cols_.step, 0, 0}
                      : InverseGeom{planes, planes, p.out_h(), p.out_w(), 0, 0};
      }
      case Pass::bprop: {
        const int64_t planes = chunk_ * p.f;
        if (tiled_) return {planes, planes, rows_.step, cols_.step, p.kh - 1, p.kw - 1};
        if (p.padding == Padding::zero) return {planes, planes, p.h, p.w, p.ph, p.pw};
        return {planes, planes, p.padded_h(), p.padded_w(), 0, 0};
      }
      case Pass::accgrad: break;
    }
    return {p.fo * p.f, p.fo * p.f, p.kh, p.kw, 0, 0};
  }

  // The result's window fits the pruned inverse (Note [pruned inverse to small windows]).
  bool inverse_window_possible() const {
    const InverseGeom ig = tuning_inverse_geom();
    return options_.windows && ig.out_h <= fbfft::kMaxWindow && ig.out_w <= fbfft::kMaxWindow;
  }
  // The weights fit the pruned forward (Note [pruned forward of small windows]).
  bool weight_window_possible() const {
    return options_.windows && pass_ != Pass::accgrad && p_.kh <= fbfft::kMaxWindow && p_.kw <= fbfft::kMaxWindow;
  }

  void tune_transforms() {
    std::vector<fbfft::Kernel> cands;
    if (kernel_ == fbfft::Kernel::automatic) {
      for (fbfft::Kernel k : {fbfft::Kernel::registers, fbfft::Kernel::lanes, fbfft::Kernel::fourstep})
        if (fbfft::supported(n_h_, n_w_, k, fbfft::Layout::freq_major)) cands.push_back(k);
    } else {
      cands.push_back(kernel_);
    }
    const bool window = inverse_window_possible(), wwindow = weight_window_possible();
    const bool tune_fwd = cands.size() > 1, tune_inv = tune_fwd || window;
    if (!tune_inv && !wwindow) return;
    const ForwardGeom fg = tuning_forward_geom();
    const InverseGeom ig = tuning_inverse_geom();
    const std::size_t src_bytes = std::size_t(fg.batch * fg.in_h * fg.in_w) * sizeof(float);
    const std::size_t dst_bytes = std::size_t(ig.batch * ig.out_h * ig.out_w) * sizeof(float);
    const std::size_t weight_bytes = std::size_t(p_.fo * p_.f * p_.kh * p_.kw) * sizeof(float);
    DeviceBuffer scratch;
    try {
      arena_.reserve(workspace_);
      scratch.allocate(std::max({src_bytes, dst_bytes, weight_bytes}));
    } catch (const OutOfMemory&) {
      tune_note_ = "not tuned: no memory for the scratch tensor";
      return;
    }
    const CudaStream stream;
    const cudaStream_t st = stream.get();
    FFTCONV_CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), st));
    FFTCONV_CUDA_CHECK(cudaMemsetAsync(arena_.base(), 0, workspace_, st));
    const Buffers b = carve(arena_.base());
    auto time_ms = [&](auto&& launch) { return min_time_ms(st, 3, launch); };
    std::ostringstream note;
    note << "tuned:";
    if (tune_inv) {  // the families (forward and inverse), and the pruned inverse
      const fbfft::Kernel automatic_fwd =
          fbfft::resolve_kernel(n_h_, n_w_, fbfft::Kernel::automatic, fbfft::Layout::freq_major);
      const fbfft::Kernel automatic_inv =
          fbfft::resolve_kernel(n_h_, n_w_, fbfft::Kernel::automatic, fbfft::Layout::freq_major, true);
      double best_f = std::numeric_limits<double>::infinity(), best_i = best_f;
      fbfft::Kernel tuned_fwd = fwd_kernel_, tuned_inv = inv_kernel_;
      auto time_inverse = [&] {
        return time_ms([&] { inverse(b.spec_c, ig.batch, ig.ld, scratch.as<float>(), ig.out_h, ig.out_w, ig.off_h, ig.off_w, st); });
      };
      for (fbfft::Kernel k : cands) {
        fwd_kernel_ = inv_kernel_ = k;
        inv_window_ = false;
        const double tf = tune_fwd ? time_ms([&] {
          forward(scratch.as<float>(), fg.batch, fg.in_h, fg.in_w, fg.off_h, fg.off_w, b.spec_a, fg.ld, st);
        })
                                   : 0.0;
        const double ti = time_inverse();
        note << " " << fbfft::to_string(k) << " ";
        if (tune_fwd) note << tf << "/";
        note << ti << " ms";
        if (tf < best_f || (tf == best_f && k == automatic_fwd)) {
          best_f = tf;
          tuned_fwd = k;
        }
        if (ti < best_i || (ti == best_i && k == automatic_inv)) {
          best_i = ti;
          tuned_inv = k;
        }
      }
      bool tuned_window = false;
      if (window) {
        inv_window_ = true;
        inv_window_exact_ = true;
        // Lanes per plane (Note [pruned inverse to small windows]): each split, the automatic one
        // first so that it wins ties.
        fbfft::InverseArgs probe;
        probe.batch = ig.batch;
        const int automatic_split = fbfft::inverse_window_split(probe);
        int best_split = inv_window_split_ = automatic_split;
        double tw = time_inverse();
        note << " window inverse at " << automatic_split << " lanes/plane " << tw << " ms";
        for (int split : fbfft::kWindowSplits) {
          if (split == automatic_split) continue;  // timed first
          inv_window_split_ = split;
          const double t = time_inverse();
          note << ", " << split << " lanes/plane " << t << " ms";
          if (t < tw) {
            tw = t;
            best_split = split;
          }
        }
        inv_window_split_ = best_split;
        // A 3×3 / 5×5 window also by the padded bound 4 / 8 (Note [window bounds]), at the best split
        const int64_t side = std::max(ig.out_h, ig.out_w);
        if (side == 3 || side == 5) {
          inv_window_exact_ = false;
          const double padded = time_inverse();
          note << " (padded bound " << padded << " ms)";
          inv_window_exact_ = tw <= padded;
          tw = std::min(tw, padded);
        }
        tuned_window = tw < best_i;
      }
      note << (tune_fwd ? " (forward/inverse)" : " (inverse)");
      fwd_kernel_ = tuned_fwd;
      inv_kernel_ = tuned_inv;
      inv_window_ = tuned_window;
    }
    if (wwindow) {  // the weight spectra: the tuned family's transform or the pruned forward
      weight_window_ = false;
      const double full = time_ms([&] { transform_weight(scratch.as<float>(), b.spec_w, st); });
      weight_window_ = true;
      const double pruned = time_ms([&] { transform_weight(scratch.as<float>(), b.spec_w, st); });
      note << (tune_inv ? "; " : " ") << "weights " << full << " ms, pruned " << pruned << " ms";
      weight_window_ = pruned <= full;
    }
    tune_note_ = note.str();
  }

  // --- building blocks -------------------------------------------------------------------------
  // (dst in the freq_major layout at frequency stride ld by the tuned family, or in the standard one
  // by its automatic family: gradOutput's spectra for the small-K products)
  fbfft::ForwardArgs forward_args(const float* src, int64_t batch, int64_t in_h, int64_t in_w, int64_t off_h,
                                  int64_t off_w, float2* dst, int64_t ld,
                                  fbfft::Layout layout = fbfft::Layout::freq_major) const {
    fbfft::ForwardArgs f;
    f.batch = batch;
    f.n_h = n_h_;
    f.n_w = n_w_;
    f.input = src;
    f.in_h = in_h;
    f.in_w = in_w;
    f.in_ld = in_w;
    f.in_plane_stride = in_h * in_w;
    f.off_h = off_h;
    f.off_w = off_w;
    f.output = dst;
    f.layout = layout;
    f.ld_batch = layout == fbfft::Layout::freq_major ? ld : 0;
    f.kernel = layout == fbfft::Layout::freq_major ? fwd_kernel_ : fbfft::Kernel::automatic;
    f.dependent_launch = dependent_;
    return f;
  }

  // One step of the breakdown (PlanOptions::breakdown; timing_ is set only inside execute()).
  template <class Fn>
  void step(const char* name, cudaStream_t st, Fn&& fn) const {
    timed_step(timing_, name, st, fn);
  }

  void forward(const float* src, int64_t batch, int64_t in_h, int64_t in_w, int64_t off_h, int64_t off_w, float2* dst,
               int64_t ld, cudaStream_t st, const char* name = "FFT A",
               fbfft::Layout layout = fbfft::Layout::freq_major) const {
    step(name, st, [&] { fbfft::forward(forward_args(src, batch, in_h, in_w, off_h, off_w, dst, ld, layout), st); });
  }

  // The fprop's products of images [0, sc) of the chunk by the small-K kernel into `dst`, standard
  // layout (Note [small-K products]).
  void small_products(const float2* x, const float2* w, int64_t sc, float2* dst, cudaStream_t st) const {
    const SmallProducts a = fprop_small_products(x, w, dst, sc, chunk_ * p_.f, p_.f, p_.fo, freqs_);
    step("PROD C", st, [&] { small_k_products(a, st); });
    product_flops_ += products::pass_product(p_, pass_, sc, freqs_).flops();
  }

  // bprop's (g = gradOutput's spectra of the chunk's sc images, b = the weight spectra; c standard,
  // [s*f + i][freq]) or accGrad's products (b = the input spectra; c freq_major [freq][o*f + i],
  // accumulated after the first chunk) by the small-K kernel (Note [small-K products]).
  void small_grad_products(const float2* g, const float2* b, int64_t sc, bool accumulate, float2* c,
                           cudaStream_t st) const {
    const SmallGradProducts a = grad_small_products(pass_, g, b, c, sc, chunk_ * p_.f, p_.f, p_.fo, freqs_, accumulate);
    step("PROD C", st, [&] { small_k_grad_products(a, st); });
    product_flops_ += products::pass_product(p_, pass_, sc, freqs_).flops();
  }

  // (src in the freq_major layout at frequency stride ld by the tuned family, or in the standard one,
  // ld unused, by its automatic family: the small-K products)
  void inverse(const float2* src, int64_t batch, int64_t ld, float* dst, int64_t out_h, int64_t out_w, int64_t off_h,
               int64_t off_w, cudaStream_t st, fbfft::Layout layout = fbfft::Layout::freq_major) const {
    fbfft::InverseArgs v;
    v.batch = batch;
    v.n_h = n_h_;
    v.n_w = n_w_;
    v.input = src;
    v.layout = layout;
    v.ld_batch = layout == fbfft::Layout::freq_major ? ld : 0;
    v.kernel = layout == fbfft::Layout::freq_major ? inv_kernel_ : fbfft::Kernel::automatic;
    v.dependent_launch = dependent_;
    v.output = dst;
    v.out_h = out_h;
    v.out_w = out_w;
    v.out_off_h = off_h;
    v.out_off_w = off_w;
    v.out_ld = out_w;
    v.out_plane_stride = out_h * out_w;
    v.scale = 1.0f / float(int64_t(n_h_) * n_w_);
    v.window_exact = inv_window_exact_;
    v.window_split = inv_window_split_;
    if (inv_window_ && fbfft::window_supported(v))
      step("IDFT C", st, [&] { fbfft::inverse_window(v, st); });
    else
      step("IFFT C", st, [&] { fbfft::inverse(v, st); });
  }

  // One strided-batched CGEMM over the frequencies (Note [fbfft CGEMM without transpositions]).
  void gemm(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const float2* A, int64_t lda,
            int64_t stride_a, const float2* B, int64_t ldb, int64_t stride_b, bool accumulate, float2* C, int64_t ldc,
            int64_t stride_c) const {
    products::StridedBatch g;
    g.opa = ta, g.opb = tb, g.m = m, g.n = n, g.k = k, g.a = A, g.lda = lda, g.stride_a = stride_a, g.b = B,
    g.ldb = ldb, g.stride_b = stride_b, g.c = C, g.ldc = ldc, g.stride_c = stride_c, g.batch = freqs_,
    g.accumulate = accumulate;
    cudaStream_t st = nullptr;  // the handle's: execute()'s stream
    FFTCONV_CUBLAS_CHECK(cublasGetStream(handle_, &st));
    step("CGEMM", st, [&] { products::cgemm(handle_, math_, g); });
    product_flops_ += g.flops();
  }

  // What the tuning decided, kept under tuning_key() (Note [persistent choices]): a plan of the same
  // key on a device of the same name takes the decisions without timing again, in this process or,
  // through the tune cache's folder, in a later one.
  std::string tuning_key() const {
    return "fbfft|" + current_device_name() + "|" + p_.to_string() + "|" + std::string(to_string(pass_)) + "|" +
           std::to_string(n_h_) + "x" + std::to_string(n_w_) + "|" + (tiled_ ? tile_plan_.summary() : "untiled") +
           "|chunk=" + std::to_string(chunk_) + "|" + options_key(opts_);
  }
  bool recall_tuning(const std::string& key) {
    const std::optional<std::string> text = device_choices().find(key, choices_file(opts_.tune_cache));
    if (!text) return false;
    fbfft::Kernel fwd, inv;
    ProductMath math;
    bool window, exact, weight_window, small_k, fork;
    int split;
    std::string note;
    try {
      const nlohmann::json t = nlohmann::json::parse(*text);
      fwd = fbfft::parse_kernel(t.at("fwd").get<std::string>(), "fwd");
      inv = fbfft::parse_kernel(t.at("inv").get<std::string>(), "inv");
      window = t.at("inv_window").get<bool>(), exact = t.at("inv_window_exact").get<bool>();
      split = t.at("inv_window_split").get<int>();
      weight_window = t.at("weight_window").get<bool>();
      math = parse_product_math(t.at("math").get<std::string>());
      small_k = t.at("small_k").get<bool>(), fork = t.at("fork").get<bool>();
      note = t.at("note").get<std::string>();
    } catch (const std::exception&) {  // a damaged entry: tune again, and overwrite it
      return false;
    }
    fwd_kernel_ = fwd, inv_kernel_ = inv, inv_window_ = window, inv_window_exact_ = exact;
    inv_window_split_ = split, weight_window_ = weight_window, math_ = math, small_k_ = small_k;
    if (!fork) fork_.reset();
    math_note_ = "tuned earlier";
    tune_note_ = "tuned earlier: " + note;
    return true;
  }
  void remember_tuning(const std::string& key) const {
    const nlohmann::json t = {{"fwd", fbfft::to_string(fwd_kernel_)},
                              {"inv", fbfft::to_string(inv_kernel_)},
                              {"inv_window", inv_window_},
                              {"inv_window_exact", inv_window_exact_},
                              {"inv_window_split", inv_window_split_},
                              {"weight_window", weight_window_},
                              {"math", std::string(to_string(math_))},
                              {"small_k", small_k_},
                              {"fork", fork_ != nullptr},
                              {"note", tune_note_}};
    device_choices().store(key, t.dump(), choices_file(opts_.tune_cache));
  }

  // The pass's product at a full chunk, for the precision model (products::model_choice).
  products::StridedBatch representative_product() const { return products::pass_product(p_, pass_, chunk_, freqs_); }

  // Whether the small-K kernels can run the products (Note [small-K products]): an untiled pass with
  // at most kMaxSmallK input channels on a basis with standard-layout transforms; fprop's and bprop's
  // result not to a small window (whose pruned inverse reads the freq_major layout; accGrad's
  // products write that layout).
  bool small_k_possible() const {
    return !tiled_ && !fused_ && p_.f <= kMaxSmallK && (pass_ == Pass::accgrad || !inverse_window_possible()) &&
           fbfft::supported(n_h_, n_w_, fbfft::Kernel::automatic, fbfft::Layout::standard);
  }
  bool small_k_pinned() const { return options_.products == Products::smallk; }
  // The layout of the spectra that meet the small-K kernels (fprop's products, bprop's and accGrad's
  // gradOutput spectra, bprop's products); freq_major for the CGEMM.
  fbfft::Layout products_layout() const { return small_k_ ? fbfft::Layout::standard : fbfft::Layout::freq_major; }
  // Pinned by extra["products"], else the small-K kernel where it can until tune_pass times both. Its
  // products are fp32: a pinned tf32 or 3xtf32 keeps the CGEMM.
  void resolve_products() {
    const bool fp32 = opts_.math == ProductMath::automatic || opts_.math == ProductMath::fp32;
    if (small_k_pinned() && !small_k_possible())
      throw Unsupported("fbfft: extra[\"products\"]=smallk needs an untiled pass with f <= " + std::to_string(kMaxSmallK) +
                        " (f=" + std::to_string(p_.f) + ")" +
                        (pass_ == Pass::accgrad ? std::string()
                                                : " and an output larger than " + std::to_string(fbfft::kMaxWindow) + "x" +
                                                      std::to_string(fbfft::kMaxWindow)) +
                        ", on a basis with standard-layout transforms");
    if (small_k_pinned() && !fp32)
      throw Unsupported("fbfft: extra[\"products\"]=smallk computes in fp32, not math=" + std::string(to_string(opts_.math)));
    small_k_ = options_.products != Products::gemm && fp32 && small_k_possible();
  }

  // The products' precision (Note [product precision]): pinned, or the model's choice until tune_pass
  // times it.
  void resolve_math() {
    const products::StridedBatch g = representative_product();
    if (opts_.math == ProductMath::automatic) {
      math_ = products::model_choice(g);
      math_note_ = "model: " + std::string(math_ == ProductMath::tf32x3 ? "every product dimension >= " : "a product dimension < ") +
                   std::to_string(products::kTensorCoreMinDim);
      return;
    }
    if (!products::supports(opts_.math, g))
      throw Unsupported("fbfft: math=" + std::string(to_string(opts_.math)) + " does not cover the " +
                        std::string(to_string(pass_)) + " products");
    math_ = opts_.math;
    math_note_ = "pinned";
  }

  // Weight spectra: the pruned direct DFT of the kh×kw window where it applies and is faster
  // (Note [pruned forward of small windows], Note [fbfft transform tuning]), else the basis' transform.
  void transform_weight(const float* w, float2* spec_w, cudaStream_t st) const {
    fbfft::ForwardArgs f = forward_args(w, p_.fo * p_.f, p_.kh, p_.kw, 0, 0, spec_w, p_.fo * p_.f);
    if (fused_) f.layout = fbfft::Layout::standard, f.ld_batch = 0;  // [plane][freq] (Note [fused tiles])
    if (weight_window_)
      step("DFT B", st, [&] { fbfft::forward_window(f, st); });
    else
      step("FFT B", st, [&] { fbfft::forward(f, st); });
  }

  // Spectra of input images [s0, s0+sc) into dst (ld chunk*f): read in place with the padding as
  // the forward's offset (zero), or through a padded copy (mirror).
  void transform_input(const float* x, int64_t s0, int64_t sc, float* pad, float2* dst, cudaStream_t st) const {
    const ConvProblem& p = p_;
    const float* src = x + s0 * p.f * p.h * p.w;
    if (p.padding == Padding::zero) {
      forward(src, sc * p.f, p.h, p.w, p.ph, p.pw, dst, chunk_ * p.f, st);
    } else {
      step("PAD A", st, [&] { pad_planes(src, sc * p.f, p.h, p.w, p.ph, p.pw, p.padding, pad, st); });
      forward(pad, sc * p.f, p.padded_h(), p.padded_w(), 0, 0, dst, chunk_ * p.f, st);
    }
  }

  // (operand A of bprop, B of accGrad: `name` is its breakdown step; the standard layout for the
  // small-K products)
  void transform_grad(const float* g, int64_t s0, int64_t sc, float2* dst, cudaStream_t st, const char* name) const {
    const int64_t oh = p_.out_h(), ow = p_.out_w();
    forward(g + s0 * p_.fo * oh * ow, sc * p_.fo, oh, ow, 0, 0, dst, chunk_ * p_.fo, st, name, products_layout());
  }

  // The stream of the branch that runs beside the caller's stream until merge() (Note [forked
  // transforms]): the plan's second stream, or `st` itself with fork=off or a breakdown.
  cudaStream_t branch(cudaStream_t st) const { return fork_ && !timing_ ? fork_->fork(st) : st; }
  void merge(cudaStream_t st) const {
    if (fork_ && !timing_) fork_->join(st);
  }

  void run_pass(const float* x, const float* w, const float* g, float* r, const Buffers& b, cudaStream_t st) const {
    switch (pass_) {
      case Pass::fprop: tiled_ ? fprop_tiled(x, w, r, b, st) : fprop(x, w, r, b, st); break;
      case Pass::bprop: tiled_ ? bprop_tiled(g, w, r, b, st) : bprop(g, w, r, b, st); break;
      case Pass::accgrad: tiled_ ? accgrad_tiled(x, g, r, b, st) : accgrad(x, g, r, b, st); break;
    }
  }

  // Whether the second stream pays (Note [forked transforms], fbfft): the whole pass, captured in a
  // CUDA graph and replayed (GPU time with the shortest launch gaps, as `bench conv` times it), on
  // zeroed operands, with the fork and on one stream (medians of 9 samples); the fork stays only
  // when it is faster by a margin. With two streams the time is not one number: the kernels of the
  // two branches meet in different orders from one replay to the next, so a plan's own timing does
  // not always predict a later run's: where the tuner measured forked / one stream = 0.94–1.00 the
  // fork was up to 1.20× slower in `bench conv`, where it pays the tuner measured 0.85–0.87. accGrad
  // always forks (its two forwards are alike; 1.10× faster in geometric mean), so it is not timed.
  static constexpr double kForkMargin = 0.92;
  // Times the whole pass as a CUDA graph on synthetic operands (uniform in [-1, 1)): forked against
  // one stream (Note [forked transforms]), fp32 against 3xtf32 products (Note [product precision]),
  // and the CGEMM against the small-K kernel (Note [small-K products]).
  void tune_pass(bool fork, bool math, bool small_k) {
    const ConvProblem& p = p_;
    DeviceBuffer x, w, g, r;
    try {
      arena_.reserve(workspace_);
      if (pass_ != Pass::bprop) x.allocate(std::size_t(p.input_elems()) * sizeof(float));
      if (pass_ != Pass::accgrad) w.allocate(std::size_t(p.weight_elems()) * sizeof(float));
      if (pass_ != Pass::fprop) g.allocate(std::size_t(p.output_elems()) * sizeof(float));
      r.allocate(std::size_t(p.result_elems(pass_)) * sizeof(float));
    } catch (const OutOfMemory&) {  // untimed: one stream, as without autotune, and the model's precision
      if (fork) fork_.reset();
      tune_note_ += std::string(tune_note_.empty() ? "" : "; ") + "pass not timed (no memory for the operands)";
      return;
    }
    const CudaStream stream;
    const cudaStream_t st = stream.get();
    uint64_t seed = 0x5eed;
    for (DeviceBuffer* d : {&x, &w, &g})
      if (d->bytes()) gpu_kernels::fill_uniform(d->as<float>(), int64_t(d->bytes() / sizeof(float)), seed++, st);
    FFTCONV_CUDA_CHECK(cudaMemsetAsync(arena_.base(), 0, workspace_, st));
    FFTCONV_CUBLAS_CHECK(cublasSetStream(handle_, st));
    const Buffers b = carve(arena_.base());
    auto time_graph = [&] {
      const CudaGraph graph([&] { run_pass(x.as<float>(), w.as<float>(), g.as<float>(), r.as<float>(), b, st); }, st);
      graph.rethrow_if_failed();
      return median_time_ms(st, 9, [&] { graph.launch(st); });
    };
    std::ostringstream note;
    note << (tune_note_.empty() ? "" : "; ");
    if (small_k) small_k_ = false;  // the fork and the precision with the CGEMM
    double best = time_graph();
    if (fork) {
      std::unique_ptr<StreamFork> keep = std::move(fork_);
      const double serial = time_graph();  // (its last sample synchronized the stream)
      note << "pass forked " << best << " ms, one stream " << serial << " ms";
      if (best < kForkMargin * serial)
        fork_ = std::move(keep);
      else
        best = serial;
    }
    if (math && products::supports(ProductMath::tf32x3, representative_product())) {
      const ProductMath first = math_, other = first == ProductMath::fp32 ? ProductMath::tf32x3 : ProductMath::fp32;
      math_ = other;
      const double t = time_graph();
      note << (fork ? "; " : "") << "products " << to_string(first) << " " << best << " ms, " << to_string(other)
           << " " << t << " ms";
      const double t3 = first == ProductMath::tf32x3 ? best : t, t32 = first == ProductMath::tf32x3 ? t : best;
      math_ = t3 <= products::kTensorCoreMargin * t32 ? ProductMath::tf32x3 : ProductMath::fp32;
      math_note_ = "timed";
      best = math_ == ProductMath::tf32x3 ? t3 : t32;
    }
    if (small_k) {  // Note [small-K products]: the CGEMM above against the small-K kernel
      small_k_ = true;
      const double t = time_graph();
      note << (fork || math ? "; " : "") << "products by CGEMM " << best << " ms, small-K kernel " << t << " ms";
      small_k_ = t < best;
    }
    tune_note_ += note.str();
  }

  // --- untiled passes --------------------------------------------------------------------------
  void fprop(const float* x, const float* w, float* y, const Buffers& b, cudaStream_t st) const {
    const ConvProblem& p = p_;
    const int64_t oh = p.out_h(), ow = p.out_w();
    if (!prepared_) transform_weight(w, b.spec_w, branch(st));
    for (int64_t s0 = 0; s0 < p.S; s0 += chunk_) {
      const int64_t sc = std::min(chunk_, p.S - s0);
      transform_input(x, s0, sc, b.real_a, b.spec_a, st);
      if (s0 == 0) merge(st);
      if (small_k_)  // Note [small-K products]
        small_products(b.spec_a, b.spec_w, sc, b.spec_c, st);
      else
        gemm(CUBLAS_OP_C, CUBLAS_OP_N, p.fo, sc, p.f, b.spec_w, p.f, p.fo * p.f, b.spec_a, p.f, chunk_ * p.f, false,
             b.spec_c, p.fo, chunk_ * p.fo);
      inverse(b.spec_c, sc * p.fo, chunk_ * p.fo, y + s0 * p.fo * oh * ow, oh, ow, 0, 0, st, products_layout());
    }
  }

  void bprop(const float* g, const float* w, float* gx, const Buffers& b, cudaStream_t st) const {
    const ConvProblem& p = p_;
    if (!prepared_) transform_weight(w, b.spec_w, branch(st));
    for (int64_t s0 = 0; s0 < p.S; s0 += chunk_) {
      const int64_t sc = std::min(chunk_, p.S - s0);
      transform_grad(g, s0, sc, b.spec_a, st, "FFT A");
      if (s0 == 0) merge(st);
      if (small_k_)  // Note [small-K products]
        small_grad_products(b.spec_a, b.spec_w, sc, false, b.spec_c, st);
      else
        gemm(CUBLAS_OP_N, CUBLAS_OP_N, p.f, sc, p.fo, b.spec_w, p.f, p.fo * p.f, b.spec_a, p.fo, chunk_ * p.fo, false,
             b.spec_c, p.f, chunk_ * p.f);
      float* out = gx + s0 * p.f * p.h * p.w;
      if (p.padding == Padding::zero) {  // P^T is the crop: store the window [ph, ph+h)×[pw, pw+w)
        inverse(b.spec_c, sc * p.f, chunk_ * p.f, out, p.h, p.w, p.ph, p.pw, st, products_layout());
      } else {  // the padded grid, then the fold
        inverse(b.spec_c, sc * p.f, chunk_ * p.f, b.real_c, p.padded_h(), p.padded_w(), 0, 0, st, products_layout());
        step("FOLD C", st, [&] { fold_planes(b.real_c, sc * p.f, p, out, st); });
      }
    }
  }

  void accgrad(const float* x, const float* g, float* gw, const Buffers& b, cudaStream_t st) const {
    const ConvProblem& p = p_;
    for (int64_t s0 = 0; s0 < p.S; s0 += chunk_) {
      const int64_t sc = std::min(chunk_, p.S - s0);
      transform_grad(g, s0, sc, b.spec_b, branch(st), "FFT B");
      transform_input(x, s0, sc, b.real_a, b.spec_a, st);
      merge(st);
      if (small_k_)  // Note [small-K products]
        small_grad_products(b.spec_b, b.spec_a, sc, s0 > 0, b.spec_c, st);
      else
        gemm(CUBLAS_OP_N, CUBLAS_OP_C, p.f, p.fo, sc, b.spec_a, p.f, chunk_ * p.f, b.spec_b, p.fo, chunk_ * p.fo,
             s0 > 0, b.spec_c, p.f, p.fo * p.f);
    }
    inverse(b.spec_c, p.fo * p.f, p.fo * p.f, gw, p.kh, p.kw, 0, 0, st);
  }

  // --- tiled passes (Note [tile geometry]) -----------------------------------------------------
  SourceGrid input_grid(const float* x) const {
    return {x, p_.h, p_.w, p_.ph, p_.pw, p_.padding, p_.f};
  }
  SourceGrid grad_grid(const float* g) const { return {g, p_.out_h(), p_.out_w(), 0, 0, Padding::zero, p_.fo}; }

  void gather(const SourceGrid& src, GatherRect rect, int64_t i0, int64_t ic, float* dst, cudaStream_t st,
              const char* name = "GATHER A") const {
    step(name, st, [&] {
      gather_tiles(src, rect, p_.kh, p_.kw, rows_, cols_, p_.S, i0, ic, n_h_, n_w_, dst, PlaneLayout::dense(n_h_, n_w_),
                   st);
    });
  }

  void fprop_tiled(const float* x, const float* w, float* y, const Buffers& b, cudaStream_t st) const {
    const ConvProblem& p = p_;
    if (fused_) {
      fprop_fused(x, w, y, b, st);
      return;
    }
    if (!prepared_) transform_weight(w, b.spec_w, branch(st));
    for (int64_t i0 = 0; i0 < units_; i0 += chunk_) {
      const int64_t ic = std::min(chunk_, units_ - i0);
      gather(input_grid(x), GatherRect::padded_read, i0, ic, b.real_a, st);
      forward(b.real_a, ic * p.f, n_h_, n_w_, 0, 0, b.spec_a, chunk_ * p.f, st);
      if (i0 == 0) merge(st);
      gemm(CUBLAS_OP_C, CUBLAS_OP_N, p.fo, ic, p.f, b.spec_w, p.f, p.fo * p.f, b.spec_a, p.f, chunk_ * p.f, false,
           b.spec_c, p.fo, chunk_ * p.fo);
      inverse(b.spec_c, ic * p.fo, chunk_ * p.fo, b.real_c, rows_.step, cols_.step, 0, 0, st);
      step("SCATTER C", st, [&] {
        scatter_tiles(b.real_c, PlaneLayout::dense(rows_.step, cols_.step), rows_, cols_, p.S, p.fo, i0, ic, y,
                      p.out_h(), p.out_w(), st);
      });
    }
  }

  // Note [fused tiles]: the weight spectra in the standard layout, then one kernel.
  void fprop_fused(const float* x, const float* w, float* y, const Buffers& b, cudaStream_t st) const {
    const ConvProblem& p = p_;
    if (!prepared_) transform_weight(w, b.spec_w, st);
    fbfft::FusedTilesArgs f;
    f.n = n_h_;
    f.input = x;
    f.S = p.S, f.f = p.f, f.h = p.h, f.w = p.w, f.ph = p.ph, f.pw = p.pw, f.kh = p.kh, f.kw = p.kw;
    f.kernel = b.spec_w;
    f.fo = p.fo;
    f.output = y;
    f.out_h = p.out_h(), f.out_w = p.out_w();
    f.rows = {rows_.origin, rows_.extent, rows_.step, rows_.count};
    f.cols = {cols_.origin, cols_.extent, cols_.step, cols_.count};
    f.dependent_launch = dependent_;
    step("FUSED", st, [&] { fbfft::fused_tiles_fprop(f, st); });
    product_flops_ += 8.0 * double(freqs_) * double(p.fo) * double(p.f) * double(units_);
  }

  void bprop_tiled(const float* g, const float* w, float* gx, const Buffers& b, cudaStream_t st) const {
    const ConvProblem& p = p_;
    if (!prepared_) transform_weight(w, b.spec_w, branch(st));
    FFTCONV_CUDA_CHECK(cudaMemsetAsync(gx, 0, std::size_t(p.input_elems()) * sizeof(float), st));
    for (int64_t i0 = 0; i0 < units_; i0 += chunk_) {
      const int64_t ic = std::min(chunk_, units_ - i0);
      gather(grad_grid(g), GatherRect::grad_full, i0, ic, b.real_a, st);
      forward(b.real_a, ic * p.fo, n_h_, n_w_, 0, 0, b.spec_a, chunk_ * p.fo, st);
      if (i0 == 0) merge(st);
      gemm(CUBLAS_OP_N, CUBLAS_OP_N, p.f, ic, p.fo, b.spec_w, p.f, p.fo * p.f, b.spec_a, p.fo, chunk_ * p.fo, false,
           b.spec_c, p.f, chunk_ * p.f);
      // keep [kh-1, kh-1+step) × [kw-1, kw-1+step): the g_pad window of each tile
      inverse(b.spec_c, ic * p.f, chunk_ * p.f, b.real_c, rows_.step, cols_.step, p.kh - 1, p.kw - 1, st);
      step("FOLD C", st, [&] { fold_tiles(b.real_c, PlaneLayout::dense(rows_.step, cols_.step), rows_, cols_, p, i0, ic, gx, st); });
    }
  }

  void accgrad_tiled(const float* x, const float* g, float* gw, const Buffers& b, cudaStream_t st) const {
    const ConvProblem& p = p_;
    for (int64_t i0 = 0; i0 < units_; i0 += chunk_) {
      const int64_t ic = std::min(chunk_, units_ - i0);
      const cudaStream_t side = branch(st);
      gather(grad_grid(g), GatherRect::grad_window, i0, ic, b.real_b, side, "GATHER B");
      forward(b.real_b, ic * p.fo, n_h_, n_w_, 0, 0, b.spec_b, chunk_ * p.fo, side, "FFT B");
      gather(input_grid(x), GatherRect::padded_read, i0, ic, b.real_a, st);
      forward(b.real_a, ic * p.f, n_h_, n_w_, 0, 0, b.spec_a, chunk_ * p.f, st);
      merge(st);
      gemm(CUBLAS_OP_N, CUBLAS_OP_C, p.f, p.fo, ic, b.spec_a, p.f, chunk_ * p.f, b.spec_b, p.fo, chunk_ * p.fo, i0 > 0,
           b.spec_c, p.f, p.fo * p.f);
    }
    inverse(b.spec_c, p.fo * p.f, p.fo * p.f, gw, p.kh, p.kw, 0, 0, st);
  }

  ConvProblem p_;
  Pass pass_;
  PlanOptions opts_;
  int n_h_, n_w_;
  std::string why_;
  Options options_ = Options::parse(opts_.extra);
  bool dependent_ = options_.dependent;    // extra["launch"]
  fbfft::Kernel kernel_ = options_.kernel;  // extra["kernel"]: the transforms' family
  fbfft::Kernel fwd_kernel_ = fbfft::Kernel::automatic, inv_kernel_ = fbfft::Kernel::automatic;  // tuned
  bool inv_window_ = false;     // the result by the pruned inverse (tuned)
  bool inv_window_exact_ = true;  // ... by its exact 3×3 / 5×5 instance, else the padded bound (tuned)
  int inv_window_split_ = 0;      // ... with this many lanes per plane, 0 = automatic (tuned)
  bool weight_window_ = false;  // the weight spectra by the pruned forward (tuned)
  bool fused_ = false;          // the tiled fprop in one kernel (extra["fused"], Note [fused tiles])
  bool small_k_ = false;        // fprop products by the small-K kernel (Note [small-K products])
  std::string fused_note_;      // why fused=auto did not fuse
  std::string tune_note_;
  ProductMath math_ = ProductMath::fp32;  // the products' precision (resolve_math, tune_pass)
  std::string math_note_;
  mutable double product_flops_ = 0;    // of the last execute()
  mutable const float2* prepared_ = nullptr;  // inside execute_with(): the prepared weight spectra
  std::shared_ptr<SpectraSlot> spare_ = std::make_shared<SpectraSlot>();  // prepare_weights()' memory
  int64_t freqs_ = 0;
  bool tiled_ = false;
  TilePlan tile_plan_;
  AxisGeom rows_, cols_;
  int64_t units_ = 0, chunk_ = 1;  // images (untiled) or items (tiled), and how many per chunk
  Sizes sizes_{};
  std::size_t workspace_ = 0;
  int device_ = 0;
  cublasHandle_t handle_ = nullptr;
  mutable StepTimer timer_;             // the breakdown's events
  mutable StepTimer* timing_ = nullptr;  // &timer_ inside an execute() with a breakdown (mutex_ held)
  mutable StepTimes last_breakdown_;
  std::unique_ptr<StreamFork> fork_;  // the second stream, where the plan forks (Note [forked transforms])
  mutable DeviceArena arena_;
  WorkspaceFence fence_;  // after arena_: destroyed first, it waits for the work queued on the arena
  mutable std::mutex mutex_;
};

}  // namespace

Support untiled_basis(const ConvProblem& p, int64_t pin_h, int64_t pin_w, Basis& out) {
  const int64_t hp = p.wrapped_h(), wp = p.wrapped_w();  // Note [wrapped padding]
  auto side = [](int64_t padded, int64_t pin, const char* name, int64_t& n) -> std::string {
    if (pin <= 0) {
      n = std::max<int64_t>(2, next_pow2(padded));
      return "";
    }
    if (!is_smooth7(pin) || pin < padded)
      return std::string(name) + "=" + std::to_string(pin) +
             " must be of the form 2^a 3^b 5^c 7^d (fbfft's kernels), >= the circular extent " + std::to_string(padded);
    n = pin;
    return "";
  };
  int64_t nh = 0, nw = 0;
  if (std::string e = side(hp, pin_h, "basis_h", nh); !e.empty()) return {false, e};
  if (std::string e = side(wp, pin_w, "basis_w", nw); !e.empty()) return {false, e};
  out.note = "basis next_pow2 of the circular extent " + std::to_string(hp) + "x" + std::to_string(wp);
  if (pin_h > 0 || pin_w > 0) out.note = "pinned basis";
  if (!fbfft::supported(int(std::min<int64_t>(nh, INT_MAX)), int(std::min<int64_t>(nw, INT_MAX)), fbfft::Kernel::automatic,
                        fbfft::Layout::freq_major) && pin_h <= 0 &&
      pin_w <= 0 && nh <= fbfft::kMaxSide2d && nw <= fbfft::kMaxSide2d) {
    nh = nw = fbfft::kMaxSide2d;  // one side > 64: the square kernel is the only one that fits
    out.note += ", widened to 128x128 (fbfft's only 2-D kernel with a side > 64)";
  }
  if (nh > fbfft::kMaxSide2d || nw > fbfft::kMaxSide2d ||
      !fbfft::supported(int(nh), int(nw), fbfft::Kernel::automatic, fbfft::Layout::freq_major))
    return {false, "basis " + std::to_string(nh) + "x" + std::to_string(nw) + " for the circular extent " +
                       std::to_string(hp) + "x" + std::to_string(wp) +
                       " has no fbfft kernel (2-D sides 2..128 of the form 2^a 3^b 5^c 7^d; a power-of-two side of "
                       "128 needs the other >= 32); a tiled plan (tile=auto, or 8..64) can run it"};
  out.n_h = int(nh);
  out.n_w = int(nw);
  return {};
}

bool smooth_basis(const ConvProblem& p, const Basis& pow2, Basis& out) {
  const int64_t hp = p.wrapped_h(), wp = p.wrapped_w(), side = std::max(hp, wp);
  for (int n : fbfft::kSmoothSides2d) {  // ascending
    if (n < side) continue;
    if (int64_t(n) * (n / 2 + 1) >= int64_t(pow2.n_h) * (pow2.n_w / 2 + 1)) return false;
    out.n_h = out.n_w = n;
    out.note = "smooth basis " + std::to_string(n) + "x" + std::to_string(n) + " for the circular extent " +
               std::to_string(hp) + "x" + std::to_string(wp) + " (Note [smooth register FFT])";
    return true;
  }
  return false;
}

// Note [stockham bases]
// The register and four-step kernels run powers of two and smooth squares; the Stockham kernels
// (Note [stockham kernels]) run every other 7-smooth rectangle, odd sides included, at a third to a
// half of their throughput per frequency. So the rectangle of the smallest 7-smooth side >= each
// side of the circular extent (Note [wrapped padding]) is a candidate only where it has at most half
// the frequencies of the better of the power-of-two and smooth-square bases (a wide or tall input,
// or one whose power-of-two basis is widened to 128x128); the plan's autotune times it against them.
// Invariant: a basis that is timed is never chosen unmeasured, so a wrong margin costs tuning time,
// not speed. (H100, odd_rect fprop:
// 42x54, 1,176 frequencies, 0.40 ms against 0.245 ms at 54x54, 1,512.)
bool stockham_basis(const ConvProblem& p, const Basis& pow2, const Basis* square, Basis& out) {
  const int64_t hp = std::max<int64_t>(2, p.wrapped_h()), wp = std::max<int64_t>(2, p.wrapped_w());
  const int64_t nh = next_smooth7(hp), nw = next_smooth7(wp);
  if (!fbfft::supported(int(std::min<int64_t>(nh, INT_MAX)), int(std::min<int64_t>(nw, INT_MAX)), fbfft::Kernel::automatic,
                        fbfft::Layout::freq_major))
    return false;
  auto freqs = [](int64_t h, int64_t w) { return h * (w / 2 + 1); };
  int64_t best = freqs(pow2.n_h, pow2.n_w);
  if (square) best = std::min(best, freqs(square->n_h, square->n_w));
  if (2 * freqs(nh, nw) > best) return false;  // also rules out nh x nw equal to either basis
  out.n_h = int(nh);
  out.n_w = int(nw);
  out.note = "Stockham basis " + std::to_string(nh) + "x" + std::to_string(nw) + " for the circular extent " +
             std::to_string(hp) + "x" + std::to_string(wp) + " (Note [stockham bases])";
  return true;
}

Support fused_tiles_support(const ConvProblem& p, Pass pass, const TilePlan* tp) {
  if (pass != Pass::fprop) return {false, "the fused kernel runs fprop only (pass=" + std::string(to_string(pass)) + ")"};
  if (!tp || !tp->tiled) return {false, "the fused kernel runs tiled plans only (this plan is untiled)"};
  if (p.padding != Padding::zero) return {false, "the fused kernel pads with zeros only (pad=mirror)"};
  if (!p.is_dense()) return {false, "the fused kernel runs dense stride-1 problems only (" + p.to_string() + ")"};
  if (tp->fft_h != tp->fft_w)
    return {false, "tile basis " + std::to_string(tp->fft_h) + "x" + std::to_string(tp->fft_w) +
                       " is not square (the fused kernel has 16x16 and 32x32)"};
  if (std::string why = fbfft::fused_tiles_unsupported(int(std::min<int64_t>(tp->fft_h, INT_MAX)), p.f); !why.empty())
    return {false, why};
  return {};
}

std::unique_ptr<Plan> make_untiled_conv_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                             const Basis& basis, std::string why) {
  std::string w = basis.note;
  if (!why.empty()) w += "; " + why;
  return std::make_unique<FbfftConvPlan>(p, pass, opts, basis.n_h, basis.n_w, nullptr, std::move(w));
}

std::unique_ptr<Plan> make_tiled_conv_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts, const TilePlan& tp,
                                           std::string why) {
  if (!tp.tiled) throw InvalidArgument("fbfft: make_tiled_conv_plan needs a tiled plan");
  if (tp.fft_h > fbfft::kMaxSide2d || tp.fft_w > fbfft::kMaxSide2d ||
      !fbfft::supported(int(tp.fft_h), int(tp.fft_w), fbfft::Kernel::automatic, fbfft::Layout::freq_major))
    throw Unsupported("fbfft: tile basis " + std::to_string(tp.fft_h) + "x" + std::to_string(tp.fft_w) +
                      " has no fbfft kernel (powers of two, 2-D sides 2..64, or 128x128)");
  if (pass == Pass::accgrad && tp.reduction != AccgradReduction::frequency)
    throw Unsupported("fbfft: accgrad_reduction=time is not implemented (the frequency reduction is)");
  return std::make_unique<FbfftConvPlan>(p, pass, opts, int(tp.fft_h), int(tp.fft_w), &tp, std::move(why));
}

}  // namespace fftconv::fbfft_conv
