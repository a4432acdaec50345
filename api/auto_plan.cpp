// The `auto` backend (see auto_plan.hpp): model, measurement and the persistent plan cache.
#include "api/auto_plan.hpp"
#include "common/forwarding_plan.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>

#include "common/atomic_write.hpp"
#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "tiling/planner.hpp"

#if HAVE_FFTCONV_GPU
#include <cuda_runtime.h>

#include "gpu/runtime/choice_cache.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "gpu/runtime/fill_kernels.cuh"
#include "gpu/runtime/tuning_timer.hpp"
#endif

namespace fftconv {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

constexpr const char* kLibraryVersion = "fftconv-0.2";
constexpr const char* kCacheFile = "auto-plans.json";
// The prefix of a candidate's note that says it ran out of memory.
constexpr std::string_view kOutOfMemoryNote = "out of memory: ";

// --- the cost model --------------------------------------------------------------------------

// Planes of a pass's data and result, of `items` images (or (image, tile) items of a tiled plan),
// and of the weight, whose spectra every pass reads.
double data_planes(const ConvProblem& p, double items) { return items * double(p.f + p.fo); }
double weight_planes(const ConvProblem& p) { return double(p.fo * p.f); }

// Rates of the model, per backend family (measured orders of magnitude, not peaks): an H100 for
// the GPU backends, two AVX-512 cores for the CPU ones.
struct Rates {
  double transform_flops_per_s;  // FFT work
  double product_flops_per_s;    // complex products (or im2col's GEMM)
  double bytes_per_s;            // memory traffic of the spectra
  double fixed_ms;               // launches, planning overheads per call
  bool costly_tuning = false;    // its tuner builds many library plans: planned last, bounded (Note [tuning bound])
};
Rates rates_of(std::string_view backend) {
  if (backend == "fbfft") return {20e12, 45e12, 2.2e12, 0.02};
  if (backend == "cufft") return {12e12, 45e12, 1.3e12, 0.04, true};
  if (backend == "fftw") return {60e9, 100e9, 20e9, 0.05};
  if (backend == "im2col") return {0, 120e9, 20e9, 0.02};
  return {0, 1e9, 10e9, 0.0};  // direct and anything unknown: time-domain at a slow rate
}

int64_t model_basis(std::string_view backend, int64_t padded) {
  if (backend == "fbfft") {
    for (int64_t n = std::max<int64_t>(padded, 2);; ++n)
      if (is_pow2(n) || fbfft_smooth_side(n)) return n;
  }
  if (backend == "cufft") return smooth_candidates(padded, 13).front();
  return next_smooth7(padded);
}

// Where the CLI runs `auto` and which location a name maps to.
std::mutex g_cache_mutex;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Whether the plans of (o, pass) run on weight spectra prepared once (Note [planning for prepared
// weights]): only the passes that read the weights.
bool reads_prepared(const PlanOptions& o, Pass pass) { return o.prepared_weights && pass != Pass::accgrad; }

std::string cache_key(const ConvProblem& p, Pass pass, const PlanOptions& o, Location where, const std::string& device) {
  std::ostringstream s;
  s << kLibraryVersion << "|" << to_string(where) << "|" << device << "|" << p.to_string() << "|" << to_string(pass)
    << "|" << to_string(o.dtype) << "|tile=" << o.tile.to_string() << "|math=" << to_string(o.math)
    << "|limit=" << o.workspace_limit << "|threads=" << o.threads;
  for (const auto& [k, v] : o.extra) s << "|" << k << "=" << v;
  if (reads_prepared(o, pass)) s << "|weights=prepared";
  return s.str();
}

std::string device_name(Location where) {
#if HAVE_FFTCONV_GPU
  if (where == Location::cuda) {
    try {
      return current_device_name();  // read once a device, as the backends' keys do
    } catch (const CudaError&) {
      (void)cudaGetLastError();
      return "cuda";
    }
  }
#endif
  (void)where;
  return "host";
}

// The plan cache file: a JSON object {key: {"backend": name, "ms": t}}, read and written whole.
class PlanCache {
 public:
  static std::map<std::string, json>& memory() {
    static std::map<std::string, json> m;
    return m;
  }
  static std::string path(const PlanOptions& o) {
    const std::string dir = plan_cache_dir(o);
    return dir == "none" ? std::string() : dir + "/" + kCacheFile;
  }
  static json find(const std::string& file, const std::string& key) {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    if (auto it = memory().find(key); it != memory().end()) return it->second;
    if (file.empty()) return nullptr;
    const json doc = load(file);
    if (doc.contains(key)) {
      memory()[key] = doc[key];
      return doc[key];
    }
    return nullptr;
  }
  static void store(const std::string& file, const std::string& key, const json& rec) {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    memory()[key] = rec;
    if (file.empty()) return;
    json doc = load(file);
    doc[key] = rec;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
    (void)write_file_atomically(file, doc.dump(1) + "\n");  // a cache that cannot be written is only slower
  }

 private:
  static json load(const std::string& file) {
    std::ifstream in(file);
    if (!in) return json::object();
    try {
      json j = json::parse(in);
      return j.is_object() ? j : json::object();
    } catch (const json::exception&) {
      return json::object();  // a damaged cache is rebuilt
    }
  }
};

// Note [planning for prepared weights]
// A caller that prepares the weight spectra once (Plan::prepare_weights: repeated inference, or
// fprop and bprop of one training step) does not pay their transforms in each call, and with many
// channels at a small batch those transforms are most of an FFT plan's time, so the fastest
// backend can change. With PlanOptions::prepared_weights, fprop and bprop are planned for that
// use: the model leaves out the weight transforms of the backends that prepare them (fbfft, fftw;
// the products still read the spectra), and each timed candidate that can prepare them runs on
// spectra it prepared once, untimed; the others are timed as they will run. The choice is cached
// under its own key. L4 at S = 2 on a 2-core Xeon: planned for prepared weights, fprop runs fftw in
// 0.9-1.1 ms, where the choice for weights transformed in every call, im2col, takes 2.9-3.2 ms.

// Synthetic operands of one pass at a location, and a timer of a plan on them.
class Bench {
 public:
  // `prepared`: each plan that can runs on weight spectra it prepared once, in warm() (Note
  // [planning for prepared weights]).
  Bench(const ConvProblem& p, Pass pass, Location where, bool prepared) : where_(where), prepared_(prepared) {
    // input, weight, grad_output, result, bias (fprop), grad_bias (accgrad)
    const int64_t n[kSlots] = {pass == Pass::bprop ? 0 : p.input_elems(), pass == Pass::accgrad ? 0 : p.weight_elems(),
                               pass == Pass::fprop ? 0 : p.output_elems(), p.result_elems(pass),
                               p.bias && pass == Pass::fprop ? p.fo : 0, p.bias && pass == Pass::accgrad ? p.fo : 0};
    for (int i = 0; i < kSlots; ++i) bytes_[i] = std::size_t(n[i]) * sizeof(float);
    if (where == Location::host) {
      for (int i = 0; i < kSlots; ++i) {
        host_[i].resize(std::size_t(n[i]));
        uint64_t z = 0x9E3779B97F4A7C15ull * uint64_t(i + 1);
        for (float& v : host_[i]) {
          z = z * 6364136223846793005ull + 1442695040888963407ull;
          v = float(double(z >> 40) / double(1ull << 23) - 1.0);
        }
      }
      args_.input = host_[0].data(), args_.weight = host_[1].data(), args_.grad_output = host_[2].data();
      args_.result = host_[3].data();
      if (n[4]) args_.bias = host_[4].data();
      if (n[5]) args_.grad_bias = host_[5].data();
      return;
    }
#if HAVE_FFTCONV_GPU
    stream_.emplace();
    for (int i = 0; i < kSlots; ++i) {
      if (!bytes_[i]) continue;
      dev_[i].allocate(bytes_[i]);
      gpu_kernels::fill_uniform(dev_[i].as<float>(), n[i], 0x5eedull + uint64_t(i), stream_->get());
    }
    args_.input = dev_[0].get(), args_.weight = dev_[1].get(), args_.grad_output = dev_[2].get();
    args_.result = dev_[3].get();
    if (n[4]) args_.bias = dev_[4].get();
    if (n[5]) args_.grad_bias = dev_[5].get();
    args_.stream = stream_->get();
    watch_.emplace();
#endif
  }
  // Prepares `plan` for once(): one untimed run (first-launch costs, caches); on a device it also
  // fixes the plan's launches per sample (launches_per_sample: a short plan is timed as several
  // launches back to back).
  void warm(const Plan& plan) {
    if (prepared_ && !weights_.count(&plan)) {
      try {
        weights_[&plan] = plan.prepare_weights(args_.weight, args_.stream);
      } catch (const Unsupported&) {
        weights_[&plan] = nullptr;  // a plan that cannot prepare them runs as it will: transforming them
      }
    }
    run(plan);
    if (where_ == Location::host) return;
#if HAVE_FFTCONV_GPU
    per_sample_[&plan] = launches_per_sample(watch_->ms_per_launch(stream_->get(), 1, [&] { run(plan); }));
#endif
  }
  // One timed sample of `plan` (ms per run): wall clock on the host, CUDA events on a device.
  double once(const Plan& plan) {
    if (where_ == Location::host) {
      const auto t0 = Clock::now();
      run(plan);
      return ms_since(t0);
    }
#if HAVE_FFTCONV_GPU
    const auto k = per_sample_.find(&plan);
    return watch_->ms_per_launch(stream_->get(), k == per_sample_.end() ? 1 : k->second, [&] { run(plan); });
#else
    throw Unsupported("auto: this build has no CUDA");
#endif
  }

  // Drops what warm() kept for `plan`, before the plan is destroyed.
  void forget(const Plan* plan) { weights_.erase(plan); }

 private:
  // One run of `plan`, on its prepared weight spectra when it has them.
  void run(const Plan& plan) {
    const auto w = weights_.find(&plan);
    if (w != weights_.end() && w->second)
      plan.execute_with(args_, *w->second);
    else
      plan.execute(args_);
  }
  static constexpr int kSlots = 6;
  Location where_;
  bool prepared_ = false;
  std::map<const Plan*, std::shared_ptr<const PreparedWeights>> weights_;
  std::size_t bytes_[kSlots] = {};
  std::vector<float> host_[kSlots];
  Args args_;
#if HAVE_FFTCONV_GPU
  DeviceBuffer dev_[kSlots];
  std::optional<CudaStream> stream_;  // destroyed before the buffers: once() synchronizes its work
  std::optional<LaunchStopwatch> watch_;
  std::map<const Plan*, int> per_sample_;
#endif
};

// b's plan; a backend that does not tile (im2col, direct) is planned untiled when the options ask
// for tile=auto, as the Python API's default tile does (Note [default tile]).
std::unique_ptr<Plan> plan_of(const Backend& b, const ConvProblem& p, Pass pass, const PlanOptions& opts) {
  try {
    return b.plan(p, pass, opts);
  } catch (const Unsupported&) {
    if (opts.tile.kind != TileSpec::Kind::automatic) throw;
    PlanOptions untiled = opts;
    untiled.tile = TileSpec{};
    return b.plan(p, pass, untiled);
  }
}

// One candidate of `auto`: a backend with the options it is planned with, and its label in the
// report and the plan cache ("fftw", "fftw tile=auto").
struct Variant {
  const Backend* backend = nullptr;
  PlanOptions opts;
  std::string label;
  bool tiled_variant = false;  // the tile=auto twin of an untiled request (Note [auto's timed candidates])
};

// Note [auto's timed candidates]
// On the host each backend is a candidate with the options asked for; a backend that tiles (fftw)
// asked for untiled plans (the default) is also a candidate with tile=auto, whose tiles win on
// large images with small kernels (bench/results/cpu/tiling.json: 1.1-2.0x) and lose elsewhere;
// where the tiling planner keeps the problem untiled, that twin is not timed. The candidates run
// interleaved, round after round: a shared host drifts by 2x within a minute, so one candidate
// timed after another compared two machines. A candidate's time is its fastest run, since other
// work only slows a run down, fftw's parallel regions most (with medians, auto chose im2col at
// 2.5x fftw's time on L2, S = 8). On the host each sample follows an untimed run of the same plan,
// as in repeated calls of one layer (right after another candidate a tiled fftw plan ran 1.3-1.4x
// slower: auto chose im2col at 1.49x its time on L3, S = 2 fprop). A candidate 2x the best after
// three rounds is dropped; on the host the two fastest run up to four more rounds while within
// 1.25x of each other (a burst of other work over one candidate's five samples made auto choose
// im2col at 1.11x fftw's time on L1, S = 8 bprop). A device's candidates run the same rounds, each
// sample timed by CUDA events (timed one after another, each a median of five, one H100 run chose
// cufft at 0.324 ms on inception_5x5 accGrad where fbfft ran 0.133). On the GPU the tile=auto
// twins are candidates only where the circular extent is larger than kGpuTwinSide per side
// (fbfft's largest untiled basis), where fbfft runs tiled only and tiles beat cufft's large
// untiled bases (img512_k15 fprop on the H100: cufft 6.4 ms untiled, fbfft tiled 1.9 ms); below it
// each twin would cost its own tile measurement (0.2-1.5 s) in every tuning.
inline constexpr int64_t kGpuTwinSide = 128;

std::vector<Variant> variants(const std::vector<const Backend*>& backends, const ConvProblem& p,
                              const PlanOptions& opts, Location where) {
  const bool twins = where == Location::host || std::max(p.wrapped_h(), p.wrapped_w()) > kGpuTwinSide;
  std::vector<Variant> out;
  for (const Backend* b : backends) {
    out.push_back({b, opts, std::string(b->name()), false});
    if (twins && opts.tile.kind == TileSpec::Kind::none && opts.basis_h == 0 && runs_planner_tiles(*b)) {
      PlanOptions tiled = opts;
      tiled.tile.kind = TileSpec::Kind::automatic;
      out.push_back({b, tiled, std::string(b->name()) + " tile=auto", true});
    }
  }
  return out;
}

// The plan `auto` returns: the winner's plan, described with how it was chosen.
class AutoPlan final : public ForwardingPlan {
 public:
  AutoPlan(std::unique_ptr<Plan> inner, AutoReport report)
      : ForwardingPlan(std::move(inner)), report_(std::move(report)) {}
  std::string describe() const override {
    return "auto -> " + report_.chosen + " (" + report_.reason + "): " + ForwardingPlan::describe();
  }

 private:
  AutoReport report_;
};

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

}  // namespace

double auto_tune_budget_ms() {
  const std::string e = env("FFTCONV_TUNE_BUDGET_MS");
  if (e.empty()) return kAutoTuneBudgetMs;
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(e, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != e.size() || !std::isfinite(v) || v < 0)
    throw InvalidArgument("FFTCONV_TUNE_BUDGET_MS: expected milliseconds >= 0 (0: no budget), got '" + e + "'");
  return v;
}

std::string plan_cache_dir(const PlanOptions& opts) {
  if (opts.tune_cache == "none") return "none";
  if (!opts.tune_cache.empty()) {
    const std::filesystem::path parent = std::filesystem::path(opts.tune_cache).parent_path();
    return parent.empty() ? "." : parent.string();
  }
  if (std::string e = env("FFTCONV_PLAN_CACHE"); !e.empty()) return e;
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty()) return x + "/fftconv";
  if (std::string h = env("HOME"); !h.empty()) return h + "/.cache/fftconv";
  return "none";
}

namespace {

// Note [tiled model]
// A candidate planned with a tile option is modelled as the tile plan the shared planner chooses
// for it (the GPU backends' frequency reduction; fbfft's cheapest tile where the circular extent
// exceeds its largest untiled basis, kGpuTwinSide): the tile's basis, S x tiles items, and the
// weight planes at the tile's basis. Modelled untiled over the whole extent, fbfft's 64x64 tiles
// on img512_k15 cost 8.2x their measured time on the H100 and the model ranked cufft first on every
// large image; the tiled model puts fbfft first there, as measured.
struct ModelledTiles {
  int64_t fft_h = 0, fft_w = 0;
  double items = 0;  // (image, tile) items of a pass
};
std::optional<ModelledTiles> modelled_tiles(const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                            std::string_view name) {
  const bool tiles = name == "fbfft" || name == "cufft" || name == "fftw";
  if (!tiles || opts.tile.kind == TileSpec::Kind::none || !p.is_dense()) return std::nullopt;
  try {
    const TilingChoice c = plan_tiling(p, pass, name == "fftw" ? opts : frequency_reduction_only(opts, name));
    if (c.plan.tiled) return ModelledTiles{c.plan.fft_h, c.plan.fft_w, double(c.plan.item_count())};
    if (name != "fbfft" || std::max(p.wrapped_h(), p.wrapped_w()) <= kGpuTwinSide) return std::nullopt;
    const Candidate* best = nullptr;  // fbfft runs nothing untiled here: its cheapest tile
    for (const Candidate& k : c.candidates)
      if (k.tiled && k.feasible && (!best || k.cost.cost < best->cost.cost)) best = &k;
    if (!best) return std::nullopt;
    return ModelledTiles{best->fft_h, best->fft_w, double(p.S * best->count())};
  } catch (const Error&) {
    return std::nullopt;  // a tile option the planner refuses: the backend's plan will say why
  }
}

}  // namespace

double model_time_ms(const Backend& b, const ConvProblem& p, Pass pass, const PlanOptions& opts) {
  const std::string_view name = b.name();
  const Rates r = rates_of(name);
  if (name == "direct" || name == "im2col") {
    const double gemm = 2.0 * p.madds() / r.product_flops_per_s;
    const double unroll = name == "im2col" ? 4.0 * double(p.f * p.kh * p.kw) * double(p.out_h() * p.out_w()) *
                                                 double(p.S) / r.bytes_per_s
                                           : 0.0;
    return 1e3 * (gemm + unroll) + r.fixed_ms;
  }
  if (name == "cufft" && is_pointwise(p))  // Note [pointwise basis]: one real product, planes read and written once
    return 1e3 * (2.0 * p.madds() / r.product_flops_per_s +
                  4.0 * double(p.S * (p.f + p.fo)) * double(p.h * p.w) / r.bytes_per_s) +
           r.fixed_ms;
  // Every FFT backend's untiled basis starts at the circular extent (Note [wrapped padding]); a
  // tiled one is the tile's (Note [tiled model]).
  const std::optional<ModelledTiles> tiles = modelled_tiles(p, pass, opts, name);
  const int64_t nh = tiles ? tiles->fft_h : model_basis(name, p.wrapped_h());
  const int64_t nw = tiles ? tiles->fft_w : model_basis(name, p.wrapped_w());
  const double items = tiles ? tiles->items : double(p.S);
  const double freqs = double(nh) * double(nw / 2 + 1);
  // Weight spectra prepared once are neither transformed nor written, only read by the products
  // (Note [planning for prepared weights]); fbfft and fftw prepare them.
  const bool weights_once = reads_prepared(opts, pass) && (name == "fbfft" || name == "fftw");
  const double transformed = data_planes(p, items) + (weights_once ? 0.0 : weight_planes(p));
  const double transform = transformed * rfft2_flops(nh, nw) / r.transform_flops_per_s;
  const double products = 8.0 * freqs * double(p.f) * double(p.fo) * items / r.product_flops_per_s;
  // Spectra written by the forward transforms, read and written by the products, read by the inverse.
  const double touched = 3.0 * data_planes(p, items) + (weights_once ? 1.0 : 3.0) * weight_planes(p);
  const double traffic = 8.0 * freqs * touched / r.bytes_per_s;
  return 1e3 * (transform + products + traffic) + r.fixed_ms;
}

std::string AutoReport::explain() const {
  std::ostringstream s;
  s << "auto: " << (from_cache ? "cached choice " : "chose ") << chosen << " (" << reason << ")";
  s << ", " << fmt(tune_ms) << " ms to " << (from_cache ? "plan" : "choose");
  if (device_init_ms > 0) s << " (after " << fmt(device_init_ms) << " ms creating the device context)";
  s << "\n  candidate        model ms   plan ms   measured ms   note\n";
  for (const AutoCandidate& c : candidates) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-15s %9s %9s %13s   ", c.backend.c_str(), fmt(c.model_ms).c_str(),
                  c.plan_ms >= 0 ? fmt(c.plan_ms).c_str() : "-", c.measured_ms >= 0 ? fmt(c.measured_ms).c_str() : "-");
    s << line << (c.backend == chosen ? "chosen" : "") << (c.note.empty() ? "" : (c.backend == chosen ? "; " : "") + c.note)
      << "\n";
  }
  return s.str();
}

std::vector<const Backend*> AutoBackend::candidates(const ConvProblem& p, Pass pass, DType dtype) const {
  std::vector<const Backend*> out;
  const Backend* direct = nullptr;
  for (const auto& b : registry_.all()) {
    if (b->location() != where_ || !b->available().ok || !b->supports(p, pass, dtype).ok) continue;
    if (b->name() == "direct")
      direct = b.get();
    else
      out.push_back(b.get());
  }
  if (out.empty() && direct) out.push_back(direct);
  return out;
}

Support AutoBackend::available() const {
  std::string why;
  for (const auto& b : registry_.all()) {
    if (b->location() != where_) continue;
    const Support a = b->available();
    if (a.ok) return {};
    why += (why.empty() ? "" : "; ") + std::string(b->name()) + ": " + a.reason;
  }
  return {false, why.empty() ? "no backend runs at " + std::string(to_string(where_)) : why};
}

Support AutoBackend::supports(const ConvProblem& p, Pass pass, DType dtype) const {
  if (Support s = problem_support(p); !s.ok) return s;
  std::string why;
  for (const auto& b : registry_.all()) {
    if (b->location() != where_) continue;
    Support s = b->available();
    if (s.ok) s = b->supports(p, pass, dtype);
    if (s.ok) return {};
    why += (why.empty() ? "" : "; ") + std::string(b->name()) + ": " + s.reason;
  }
  return {false, "no " + std::string(to_string(where_)) + " backend supports it (" + why + ")"};
}

std::string_view AutoBackend::summary() const {
  return where_ == Location::cuda ? "the fastest CUDA backend for the problem: modelled, then timed; cached"
                                  : "the fastest host backend for the problem: modelled, then timed; cached";
}

std::unique_ptr<Plan> AutoBackend::plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const {
  return plan(p, pass, opts, nullptr);
}

namespace {

// Why no candidate could be planned (Note [auto's fallback]): each one's reason, as OutOfMemory
// (the largest request) when memory alone stopped them, else as Unsupported.
[[noreturn]] void throw_none_planned(const AutoReport& rep, const ConvProblem& p, Pass pass, std::size_t oom_bytes) {
  std::string why;
  bool memory_only = true;
  for (const AutoCandidate& c : rep.candidates) {
    if (c.note.empty()) continue;
    why += (why.empty() ? "" : "; ") + c.backend + ": " + c.note;
    memory_only = memory_only && c.note.rfind(kOutOfMemoryNote, 0) == 0;
  }
  const std::string what = "auto: no candidate could be planned for " + p.to_string() + " " +
                           std::string(to_string(pass)) + (why.empty() ? "" : " (" + why + ")");
  if (memory_only && !why.empty()) throw OutOfMemory(what, oom_bytes);
  throw Unsupported(what);
}

}  // namespace

// Note [auto's fallback]
// A candidate that supports a problem may still refuse to plan it (a fixed tile below the kernel, a
// workspace over the device's memory), and the model ranks before anything is planned. So when
// none of the candidates the model keeps plans, the others are planned in its order until one does
// (with autotune off: the first in its order that plans); a slow plan beats none. A cached winner
// that refuses now (its memory taken, a backend changed) is chosen afresh the same way. Only when every
// candidate refuses does `auto` throw, with each candidate's reason, as OutOfMemory when every
// refusal was for memory (Python's MemoryError) and as Unsupported otherwise.
// Invariant: `auto` refuses a problem only if every candidate that supports it refuses it too.
std::unique_ptr<Plan> AutoBackend::plan(const ConvProblem& p, Pass pass, const PlanOptions& user_opts,
                                        AutoReport* out) const {
  p.validate();
  // The backends' own tuners persist beside the plan cache (cufft's winners: cufft-tune.json).
  PlanOptions opts = user_opts;
  if (opts.tune_cache == "none") opts.tune_cache.clear();  // no file: every tuner keeps its winners in memory
  if (const std::string dir = plan_cache_dir(user_opts); opts.tune_cache.empty() && dir != "none") {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!ec) opts.tune_cache = dir + "/cufft-tune.json";  // an unwritable folder: the caches stay in memory
  }
  AutoReport rep;
#if HAVE_FFTCONV_GPU
  if (where_ == Location::cuda) {  // a context every CUDA program creates once: not the plan's cost
    const auto ti = Clock::now();
    if (cudaFree(nullptr) == cudaSuccess)
      rep.device_init_ms = ms_since(ti);
    else
      (void)cudaGetLastError();  // no usable device: the candidates say why
  }
#endif
  const auto t0 = Clock::now();
  // Note [tuning budget]: one deadline for every device tuner of this call.
  const double budget_ms = where_ == Location::cuda && opts.autotune ? auto_tune_budget_ms() : 0;
  if (budget_ms > 0)
    opts.tune_deadline =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(budget_ms));
  const std::vector<const Backend*> backends = candidates(p, pass, opts.dtype);
  if (backends.empty()) throw Unsupported("auto: " + supports(p, pass, opts.dtype).reason);
  const std::vector<Variant> cands = variants(backends, p, opts, where_);
  for (const Variant& v : cands) {
    AutoCandidate c;
    c.backend = v.label;
    c.model_ms = model_time_ms(*v.backend, p, pass, v.opts);
    rep.candidates.push_back(c);
  }
  auto finish = [&](std::unique_ptr<Plan> plan) -> std::unique_ptr<Plan> {
    rep.tune_ms = ms_since(t0);
    for (const Variant& v : cands)
      if (v.label == rep.chosen) rep.chosen_backend = std::string(v.backend->name());
    if (out) *out = rep;
    return std::make_unique<AutoPlan>(std::move(plan), rep);
  };

  const std::string file = PlanCache::path(user_opts);
  const std::string key = cache_key(p, pass, opts, where_, device_name(where_));
  if (opts.autotune) {
    const json rec = PlanCache::find(file, key);
    if (rec.is_object() && rec.contains("backend") && rec["backend"].is_string()) {
      for (const Variant& v : cands) {
        if (v.label != rec["backend"].get<std::string>()) continue;
        std::unique_ptr<Plan> plan;
        try {
          plan = plan_of(*v.backend, p, pass, v.opts);
        } catch (const Unsupported&) {  // a cached winner that refuses now: chosen afresh (Note [auto's fallback])
        } catch (const OutOfMemory&) {
        }
        if (!plan) break;
        rep.chosen = v.label;
        rep.from_cache = true;
        rep.reason = "plan cache: timed " + fmt(rec.value("ms", 0.0)) + " ms when chosen";
        return finish(std::move(plan));
      }
    }
  }

  // The model's ranking; the best, and with autotune the others within kAutoModelSpread, are planned.
  std::vector<std::size_t> order(cands.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rep.candidates[a].model_ms < rep.candidates[b].model_ms; });
  const double best_model = rep.candidates[order[0]].model_ms;
  // Runs work() for candidate i; a refusal (OutOfMemory, Unsupported) goes into its note, and false
  // is returned (Note [auto's fallback]).
  std::size_t oom_bytes = 0;  // the largest request a candidate ran out of memory on
  auto unrefused = [&](std::size_t i, auto&& work) {
    try {
      work();
      return true;
    } catch (const OutOfMemory& e) {
      rep.candidates[i].note = std::string(kOutOfMemoryNote) + e.what();
      oom_bytes = std::max(oom_bytes, e.bytes());
    } catch (const Unsupported& e) {
      rep.candidates[i].note = std::string("unsupported: ") + e.what();
    }
    return false;
  };
  if (!opts.autotune || order.size() == 1) {
    // The model's order, the first that plans (Note [auto's fallback]).
    for (std::size_t j = 1; j < order.size(); ++j) rep.candidates[order[j]].note = "not timed (autotune off)";
    for (std::size_t i : order) {
      AutoCandidate& c = rep.candidates[i];
      std::unique_ptr<Plan> plan;
      if (!unrefused(i, [&] {
            const auto tp = Clock::now();
            plan = plan_of(*cands[i].backend, p, pass, cands[i].opts);
            c.plan_ms = ms_since(tp);
          }))
        continue;
      c.note.clear();
      rep.chosen = c.backend;
      rep.reason = order.size() == 1 ? "the only candidate"
                   : i == order[0]    ? "cost model (autotune off)"
                                      : "cost model (autotune off), the first in its order that planned";
      return finish(std::move(plan));
    }
    throw_none_planned(rep, p, pass, oom_bytes);
  }

  // Plan the candidates the model keeps, in its order, except that a backend with a costly tuner
  // keeps its place among the timed but is planned after the others. On a device each plan is
  // timed once as soon as it is built, and the fastest so far bounds the tuning of the next ones
  // (Note [tuning bound]).
  Bench bench(p, pass, where_, reads_prepared(opts, pass));
  std::vector<std::unique_ptr<Plan>> plans(cands.size());
  auto drop = [&](std::size_t i) {  // what the bench kept for the plan goes with it
    bench.forget(plans[i].get());
    plans[i].reset();
  };
  std::vector<std::size_t> timed, deferred;
  std::string last_error;
  auto attempt = [&](std::size_t i, auto&& work) {
    bool ok = false;
    try {
      ok = unrefused(i, work);
    } catch (const CudaError& e) {
      rep.candidates[i].note = std::string("failed: ") + e.what();
      last_error = e.what();
    }
    if (!ok) drop(i);
    return ok;
  };
  double bound_ms = 0;
  auto plan_candidate = [&](std::size_t i) {
    AutoCandidate& c = rep.candidates[i];
    PlanOptions o = cands[i].opts;
    if (where_ == Location::cuda) o.tune_bound_ms = bound_ms;
    const bool built = attempt(i, [&] {
      const auto tp = Clock::now();
      plans[i] = plan_of(*cands[i].backend, p, pass, o);
      c.plan_ms = ms_since(tp);
    });
    if (!built) return;
    if (cands[i].tiled_variant && plans[i]->tile_json() == "null") {
      c.note = "the tiling planner keeps it untiled: the untiled plan";  // Note [auto's timed candidates]
      drop(i);
      return;
    }
    const std::string how = plans[i]->describe();
    if (o.tune_bound_ms > 0 && how.find(kTuningStopped) != std::string::npos)
      c.note = "its tuning stopped at the bound of " + fmt(o.tune_bound_ms) + " ms";  // Note [tuning bound]
    else if (o.tune_deadline && how.find(kTuningBudgetSpent) != std::string::npos)
      c.note = "its tuning was cut at the budget of " + fmt(budget_ms) + " ms";  // Note [tuning budget]
    if (where_ == Location::cuda && !attempt(i, [&] {
          bench.warm(*plans[i]);
          const double ms = bench.once(*plans[i]);
          bound_ms = bound_ms > 0 ? std::min(bound_ms, ms) : ms;
        }))
      return;
    timed.push_back(i);
  };
  std::vector<std::size_t> left_out;  // in the model's order
  for (std::size_t i : order) {
    AutoCandidate& c = rep.candidates[i];
    if (timed.size() + deferred.size() >= std::size_t(kAutoMaxTimed) || c.model_ms > kAutoModelSpread * best_model) {
      c.note = "not timed: model " + fmt(c.model_ms / best_model) + "x the best";
      left_out.push_back(i);
      continue;
    }
    if (rates_of(cands[i].backend->name()).costly_tuning)
      deferred.push_back(i);
    else
      plan_candidate(i);
  }
  for (std::size_t i : deferred) plan_candidate(i);
  // None of those planned: the ones left out, until one does (Note [auto's fallback]).
  for (std::size_t i : left_out) {
    if (!timed.empty()) break;
    rep.candidates[i].note.clear();
    plan_candidate(i);
  }

  // Time them interleaved, round after round (Note [auto's timed candidates]).
  constexpr int kRounds = 5, kDropAfter = 3;
  constexpr double kDropFactor = 2.0;
  std::vector<std::vector<double>> runs(cands.size());
  // One sample of candidate i. On the host it follows an untimed run of the same plan (Note [auto's
  // timed candidates]); on a device each candidate was warmed and sampled when it was planned. A
  // candidate whose sample fails is dropped (attempt) and its runs cleared: it reports no time.
  auto sample = [&](std::size_t i) {
    const bool ok = attempt(i, [&] {
      if (where_ == Location::host) bench.warm(*plans[i]);
      runs[i].push_back(bench.once(*plans[i]));
    });
    if (!ok) runs[i].clear();
    return ok;
  };
  std::vector<std::size_t> live = timed;
  auto fastest = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  for (int round = 0; round < kRounds && live.size() > 1; ++round) {
    std::vector<std::size_t> ran;
    for (std::size_t i : live)
      if (sample(i)) ran.push_back(i);
    live = ran;
    if (round + 1 < kDropAfter || live.empty()) continue;
    double best = 0;
    for (std::size_t i : live) best = best == 0 ? fastest(runs[i]) : std::min(best, fastest(runs[i]));
    std::vector<std::size_t> keep;
    for (std::size_t i : live) {
      if (fastest(runs[i]) <= kDropFactor * best) {
        keep.push_back(i);
        continue;
      }
      std::string& note = rep.candidates[i].note;
      note += (note.empty() ? "" : "; ") + std::string("dropped after ") + std::to_string(runs[i].size()) +
              " rounds: " + fmt(fastest(runs[i]) / best) + "x the best";
      drop(i);
    }
    live = keep;
  }
  // On the host the two fastest get up to kMaxRounds while within kCloseFactor of each other
  // (Note [auto's timed candidates]).
  constexpr int kMaxRounds = 9;
  constexpr double kCloseFactor = 1.25;
  for (int round = kRounds; where_ == Location::host && round < kMaxRounds && live.size() > 1; ++round) {
    std::partial_sort(live.begin(), live.begin() + 2, live.end(),
                      [&](std::size_t x, std::size_t y) { return fastest(runs[x]) < fastest(runs[y]); });
    if (fastest(runs[live[1]]) > kCloseFactor * fastest(runs[live[0]])) break;
    bool both = true;
    for (std::size_t i : {live[0], live[1]}) both = sample(i) && both;
    if (!both) break;
  }
  for (std::size_t i : timed) {  // the dropped ones too; the only one left gets one timed run
    if (runs[i].empty() && (!plans[i] || !sample(i))) continue;
    rep.candidates[i].measured_ms = fastest(runs[i]);
  }

  std::size_t best_i = cands.size();
  for (std::size_t i : timed)
    if (plans[i] && rep.candidates[i].measured_ms >= 0 &&
        (best_i == cands.size() || rep.candidates[i].measured_ms < rep.candidates[best_i].measured_ms))
      best_i = i;
  if (best_i == cands.size()) {
    if (!last_error.empty()) throw CudaError("auto: every candidate failed; last: " + last_error);
    throw_none_planned(rep, p, pass, oom_bytes);
  }
  int n_timed = 0;
  for (const AutoCandidate& c : rep.candidates) n_timed += c.measured_ms >= 0 ? 1 : 0;
  const double best_ms = rep.candidates[best_i].measured_ms;
  rep.chosen = rep.candidates[best_i].backend;
  rep.reason = n_timed == 1 ? "the only candidate timed" : "fastest of " + std::to_string(n_timed) + " timed";
  PlanCache::store(file, key, json{{"backend", rep.chosen}, {"ms", best_ms}});
  return finish(std::move(plans[best_i]));
}

}  // namespace fftconv
