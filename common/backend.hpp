// The Backend / Plan interface every implementation follows, the options of a plan,
// the execution arguments, and the ordered registry with its pure selection function.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/problem.hpp"

namespace fftconv {

enum class DType { f32, f64 };
enum class Location { host, cuda };
std::string_view to_string(DType d);
std::string_view to_string(Location l);

// Tiling choice of a plan: none, auto (the planner's choose()), or an explicit tile FFT size.
struct TileSpec {
  enum class Kind { none, automatic, fixed };
  Kind kind = Kind::none;
  int64_t fft_h = 0, fft_w = 0;  // for Kind::fixed
  // "none" | "auto" | "N" | "HxW"; throws InvalidArgument naming `tile`.
  static TileSpec parse(std::string_view s);
  std::string to_string() const;
  bool operator==(const TileSpec&) const = default;
};

// Which FFT sizes a planner may pick: powers of two (fbfft) or 2,3,5,7-smooth sizes.
enum class SizePolicy { pow2, smooth };
SizePolicy parse_size_policy(std::string_view s);  // "pow2" | "smooth"
std::string_view to_string(SizePolicy s);

// Precision of the GPU backends' frequency-domain products (`--math`, Note [product precision]):
// fp32 (cuBLAS CGEMM on CUDA cores), tf32x3 (the 3xTF32 split on tensor cores: each fp32 operand as
// a TF32 big part plus a TF32 remainder, three products summed; fp32-accurate), tf32 (one TF32
// product: about 1e-3 relative error, only when asked), automatic (the faster of fp32 and tf32x3,
// timed when autotuning; never tf32). The CPU backends compute in fp32 (or float64) and accept
// automatic and fp32.
enum class ProductMath { automatic, fp32, tf32x3, tf32 };
ProductMath parse_product_math(std::string_view s);  // "auto" | "fp32" | "3xtf32" | "tf32"
std::string_view to_string(ProductMath m);

struct PlanOptions {
  DType dtype = DType::f32;                     // element type the plan will execute on
  TileSpec tile;                                // tiling (default none)
  SizePolicy tile_sizes = SizePolicy::pow2;     // candidate tile sizes for tile=auto
  std::vector<int64_t> tile_candidates;         // explicit candidate list (overrides tile_sizes)
  std::size_t workspace_limit = 0;              // bytes, 0 = unlimited
  int64_t basis_h = 0, basis_w = 0;             // pin the untiled Fourier basis (0 = choose)
  bool autotune = true;                         // GPU: time candidates once per (problem, pass)
  std::string tune_cache;                       // GPU: JSON file caching autotuner winners ("none": memory only)
  bool breakdown = false;                       // GPU: time each pipeline step with events
  int threads = 0;                              // CPU: OpenMP threads (0 = default)
  ProductMath math = ProductMath::automatic;    // GPU: precision of the frequency-domain products
  std::map<std::string, std::string> extra;     // backend-specific pins (Backend::option_keys())
  // `auto`: the caller prepares the weight spectra once (Plan::prepare_weights) and runs the plan
  // on them (execute_with), so fprop and bprop are modelled and timed that way (Note [planning for
  // prepared weights] in api/auto_plan.cpp). In auto's plan cache key; not in options_key(), since a
  // backend's own plan is the same either way.
  bool prepared_weights = false;
  // GPU: a plan of another backend that `auto` has already timed runs in this many ms (0: none).
  // A tuner whose best is far above it stops early and caches nothing (Note [tuning bound]); not
  // part of options_key(), since it changes how long a plan is tuned, not what it computes.
  double tune_bound_ms = 0;
  // GPU: when set, a tuner times no candidate it expects to end after this moment, beyond the first
  // it needs for a plan (Note [tuning budget]); `auto` sets it. Not part of options_key() either.
  std::optional<std::chrono::steady_clock::time_point> tune_deadline;
};
// What a plan's describe() says when its tuning stopped at PlanOptions::tune_bound_ms (`auto` reads it).
inline constexpr std::string_view kTuningStopped = "tuning stopped: ";
// What it says beside each candidate left untimed at PlanOptions::tune_deadline.
inline constexpr std::string_view kTuningBudgetSpent = "not timed (tuning budget spent)";

// The file `name` in the folder of PlanOptions::tune_cache, where the tuners keep what outlives the
// process (Note [persistent choices], Note [fftw wisdom]); "" when tune_cache is empty or "none".
std::string beside_tune_cache(const std::string& tune_cache, std::string_view name);

// The options that change what a plan computes or how it is chosen, as one string (tuning caches'
// keys): dtype, tile, tile sizes and candidates, workspace limit, basis pins, math, threads, extras.
std::string options_key(const PlanOptions& o);
// Hardware threads of this machine: std::thread::hardware_concurrency(), at least 1.
int hardware_threads();
// PlanOptions::threads must be 0 (OpenMP's default team) or 1..hardware_threads(): more threads
// than processors only slow a plan down (1000 made a 2 ms problem take 98 s) and 100,000 crashed
// the OpenMP runtime. Throws InvalidArgument naming `threads` and both counts otherwise.
void check_threads(int64_t threads);


// The data of one execution. Which pointers are read and which is written depends on the pass:
//   fprop:   input (S×f×h×w), weight (fo×f×kh×kw)        -> result = output (S×fo×out_h×out_w)
//   bprop:   grad_output (S×fo×out_h×out_w), weight      -> result = gradInput (S×f×h×w)
//   accgrad: input, grad_output                          -> result = gradWeight (fo×f×kh×kw)
// With ConvProblem::bias, fprop also reads bias (fo) and accgrad also writes grad_bias (fo) =
// the sum of gradOutput over S, out_h and out_w, as PyTorch.
// Pointers are host or device memory per the backend's location(); dtype is f32 unless the
// backend accepts f64 (direct). stream is a cudaStream_t for CUDA backends (nullptr = default).
struct Args {
  const void* input = nullptr;
  const void* weight = nullptr;
  const void* grad_output = nullptr;
  void* result = nullptr;
  const void* bias = nullptr;
  void* grad_bias = nullptr;
  DType dtype = DType::f32;
  void* stream = nullptr;
};

// Per-step timings (ms) when PlanOptions::breakdown is on; empty otherwise.
using StepTimes = std::vector<std::pair<std::string, double>>;

// The frequency-domain products of a plan's last execute(): real-equivalent flops, the precision
// they ran in and the nominal peak of that mode on the device (TFLOP/s, 0 when unknown). Plans
// without products (direct, im2col) report flops 0.
struct ProductInfo {
  double flops = 0;
  std::string math;
  double peak_tflops = 0;
};

// Weight spectra computed once by Plan::prepare_weights(): fprop and bprop of one training step, or
// repeated inference calls, then skip the weight transforms. key() names what must agree between
// the plan that prepared them and a plan that reads them (backend, basis, layout, shapes, device).
class PreparedWeights {
 public:
  virtual ~PreparedWeights() = default;
  virtual std::string key() const = 0;
  virtual std::size_t bytes() const = 0;
};

// Owns what an execution needs besides user data (FFT plans, twiddles, tile lists, workspace).
class Plan {
 public:
  virtual ~Plan() = default;
  virtual std::size_t workspace_bytes() const = 0;
  // const and repeatable: the same args give the same result.
  virtual void execute(const Args& args) const = 0;
  // What was chosen and why (basis, tile plan, strategies), in a line of modest length.
  virtual std::string describe() const = 0;
  // Every alternative the plan weighed with its figures (fftw: each candidate basis and its
  // estimated flops), for machine-readable output; "" when there is nothing beyond describe().
  virtual std::string candidates() const { return ""; }
  // Tile plan summary as JSON text ("null" when untiled).
  virtual std::string tile_json() const { return "null"; }
  // Step timings of the last execute() when breakdown was requested.
  virtual StepTimes last_breakdown() const { return {}; }
  // The products of the last execute() (see ProductInfo).
  virtual ProductInfo last_products() const { return {}; }
  // The Fourier basis the plan transforms in ({0, 0} for time-domain plans): pin it (basis_h/w) on
  // another pass's plan to share prepared weights with it.
  virtual std::pair<int64_t, int64_t> fourier_basis() const { return {0, 0}; }
  // The FFT size of a tiled plan's tiles ({0, 0} when untiled): pin it (tile = HxW) on another
  // pass's plan to share prepared weights with it, as fourier_basis() does for untiled plans.
  virtual std::pair<int64_t, int64_t> tile_basis() const { return {0, 0}; }
  // Weight spectra of `weight` (fo×f×kh×kw, in the plan's memory) for execute(args, prepared), made
  // on `stream`. Plans of passes that read the weights (fprop, bprop) of backends with a frequency
  // domain implement it; others throw Unsupported.
  virtual std::shared_ptr<const PreparedWeights> prepare_weights(const void* weight, void* stream) const;
  // execute() with the weight spectra taken from `prepared` (args.weight is not read). Throws
  // InvalidArgument when prepared.key() differs from what this plan reads.
  virtual void execute_with(const Args& args, const PreparedWeights& prepared) const;
};

struct Support {
  bool ok = true;
  std::string reason;
};

// {true} for a valid problem, else {false, the InvalidProblem message}: the common first answer of supports().
Support problem_support(const ConvProblem& p);
// problem_support(p), and {false, which option} unless p.is_dense(): the answer of a backend that
// computes the dense problem only (api/lowering.hpp runs the others through it).
Support dense_problem_support(const ConvProblem& p);
// A depthwise problem as the FFT backends compute it natively (Note [depthwise products]): groups
// g > 1 with g = f = fo, stride 1, no dilation, no bias, zero or mirror padding (the lowering in
// api/lowering.hpp adds the others around it).
bool is_depthwise(const ConvProblem& p);
// A dense problem with a 1×1 kernel and no padding: the cufft backend computes it without
// transforms (Note [pointwise basis], gpu/cufft/cufft_pointwise.hpp).
bool is_pointwise(const ConvProblem& p);
// Throws Unsupported (naming backend and option) unless p is valid and dense: for Backend::plan().
void require_dense(const ConvProblem& p, std::string_view backend);
// Throws Unsupported naming `math` unless o.math is automatic or fp32: for the backends whose
// products are plain fp32 (or float64) arithmetic (the CPU backends).
void require_fp32_products(const PlanOptions& o, std::string_view backend);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual Location location() const = 0;
  // Is the backend usable on this machine at all (a CUDA device present, ...)?
  virtual Support available() const { return {}; }
  // "no" is not an error: the reason says why.
  virtual Support supports(const ConvProblem& p, Pass pass, DType dtype = DType::f32) const = 0;
  // Throws InvalidProblem / Unsupported / OutOfMemory.
  virtual std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const = 0;
  // One line for `fftconv backends`.
  virtual std::string_view summary() const = 0;
  // The PlanOptions::extra keys plan() reads: the backend's own and, where it tiles, the tiling
  // planner's. plan() throws InvalidArgument (check_option_keys) for any other key.
  virtual std::vector<std::string_view> option_keys() const { return {}; }
};

// Throws InvalidArgument naming `backend`, the first key of `extra` not in `accepted`, and the
// accepted keys: "<backend>: unknown option '<key>' (accepted: <key>, <key>, ...)", or "(accepted:
// none)".
void check_option_keys(std::string_view backend, const std::map<std::string, std::string>& extra,
                       const std::vector<std::string_view>& accepted);
void check_option_keys(const Backend& b, const PlanOptions& o);  // b's name and option_keys()

// Note [options of several backends]: one PlanOptions handed to several backends (validate, bench
// conv without --baseline-opt) may hold the keys of any of them. check_option_keys rejects a key
// that none of them accepts, naming each backend's keys; options_for gives each backend only the
// keys it accepts, so that plan() stays strict.
void check_option_keys(const std::vector<const Backend*>& backends, const std::map<std::string, std::string>& extra);
PlanOptions options_for(const Backend& b, PlanOptions o);

// An ordered list of backends, like oneDNN's implementation lists; `direct` is always last-resort.
class Registry {
 public:
  void add(std::shared_ptr<const Backend> b);
  // A backend this build leaves out (the CUDA ones without nvcc), and why, for get()'s message.
  void add_absent(std::string name, std::string why);
  const std::vector<std::shared_ptr<const Backend>>& all() const { return backends_; }
  // The backend called `name`. Throws Unsupported naming why for a backend this build leaves out
  // ("backend: 'cufft' is not built ..."), else InvalidArgument listing the known names.
  const Backend& get(std::string_view name) const;
  const Backend* find(std::string_view name) const;

 private:
  std::vector<std::shared_ptr<const Backend>> backends_;
  std::vector<std::pair<std::string, std::string>> absent_;
};

// Throws InvalidArgument naming the missing operand when a pointer the pass needs is null.
void require_operands(const Args& a, Pass pass, std::string_view backend);
// The same, and bias (fprop) / grad_bias (accgrad) when p.bias.
void require_operands(const Args& a, const ConvProblem& p, Pass pass, std::string_view backend);

// Pure selection: the first backend in order that is available, at `where` (any location when
// nullptr), and supports (p, pass, dtype). Throws Unsupported with every backend's reason.
const Backend& select_backend(const Registry& r, const ConvProblem& p, Pass pass, DType dtype,
                              const Location* where = nullptr);

}  // namespace fftconv
