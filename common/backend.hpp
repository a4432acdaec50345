// The Backend / Plan interface every implementation follows, the options of a plan,
// the execution arguments, and the ordered registry with its pure selection function.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
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

struct PlanOptions {
  DType dtype = DType::f32;                     // element type the plan will execute on
  TileSpec tile;                                // tiling (default none)
  SizePolicy tile_sizes = SizePolicy::pow2;     // candidate tile sizes for tile=auto
  std::vector<int64_t> tile_candidates;         // explicit candidate list (overrides tile_sizes)
  std::size_t workspace_limit = 0;              // bytes, 0 = unlimited
  int64_t basis_h = 0, basis_w = 0;             // pin the untiled Fourier basis (0 = choose)
  bool autotune = true;                         // GPU: time candidates once per (problem, pass)
  std::string tune_cache;                       // GPU: JSON file caching autotuner winners
  bool breakdown = false;                       // GPU: time each pipeline step with events
  int threads = 0;                              // CPU: OpenMP threads (0 = default)
  std::map<std::string, std::string> extra;     // backend-specific pins, e.g. {"gemm", "strided"}
};

// Hardware threads of this machine: std::thread::hardware_concurrency(), at least 1.
int hardware_threads();
// PlanOptions::threads must be 0 (OpenMP's default team) or 1..hardware_threads(): more threads
// than processors only slow a plan down (1000 made a 2 ms problem take 98 s) and 100,000 crashed
// the OpenMP runtime. Throws InvalidArgument naming `threads` and both counts otherwise.
void check_threads(int64_t threads);

// Every key any backend reads from PlanOptions::extra. One PlanOptions may be handed to several
// backends (validate, bench), so a backend ignores the keys of the others but rejects a key that
// no backend knows (a typo).
bool is_known_extra_key(std::string_view key);

// The data of one execution. Which pointers are read and which is written depends on the pass:
//   fprop:   input (S×f×h×w), weight (fo×f×kh×kw)        -> result = output (S×fo×out_h×out_w)
//   bprop:   grad_output (S×fo×out_h×out_w), weight      -> result = gradInput (S×f×h×w)
//   accgrad: input, grad_output                          -> result = gradWeight (fo×f×kh×kw)
// Pointers are host or device memory per the backend's location(); dtype is f32 unless the
// backend accepts f64 (direct). stream is a cudaStream_t for CUDA backends (nullptr = default).
struct Args {
  const void* input = nullptr;
  const void* weight = nullptr;
  const void* grad_output = nullptr;
  void* result = nullptr;
  DType dtype = DType::f32;
  void* stream = nullptr;
};

// Per-step timings (ms) when PlanOptions::breakdown is on; empty otherwise.
using StepTimes = std::vector<std::pair<std::string, double>>;

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
};

struct Support {
  bool ok = true;
  std::string reason;
};

// {true} for a valid problem, else {false, the InvalidProblem message}: the common first answer of supports().
Support problem_support(const ConvProblem& p);

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
};

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

// Pure selection: the first backend in order that is available, at `where` (any location when
// nullptr), and supports (p, pass, dtype). Throws Unsupported with every backend's reason.
const Backend& select_backend(const Registry& r, const ConvProblem& p, Pass pass, DType dtype,
                              const Location* where = nullptr);

}  // namespace fftconv
