// The validation sweep: every (problem, pass, backend) of a problem set run on fresh random inputs
// and compared with one shared reference, plus the adjoint identity per problem and backend.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "common/backend.hpp"
#include "common/problem.hpp"
#include "validation/problem_sets.hpp"
#include "validation/report.hpp"

namespace fftconv {

struct ValidateOptions {
  std::string set;                       // problem_set() name or spec list
  uint64_t set_seed = 1;                 // for `random` (and --sample, via selection.sample_seed)
  int64_t random_count = 200;
  SetSelection selection;
  std::vector<std::string> backends;     // empty: every backend of the registry available here
  std::vector<Pass> passes{Pass::fprop, Pass::bprop, Pass::accgrad};
  std::string tile = "none";             // TileSpec text, part of the record key
  std::string check = "auto";            // auto | direct | fftw64 | gpu64
  bool adjoint = true;                   // record pass "adjoint" per problem and backend
  uint64_t data_seed = 0;                // 0: drawn from std::random_device (recorded per line)
  // Backend pins (PlanOptions::extra): each key must be one that a backend of the sweep accepts,
  // and each backend gets the keys it accepts (Note [options of several backends]).
  std::map<std::string, std::string> plan_extra;
  // Pins the sweep adds, where a backend accepts them, unless plan_extra sets the key.
  std::map<std::string, std::string> plan_defaults{{"fftw_planner", "estimate"}};
  int threads = 0;                       // PlanOptions::threads (CPU backends; 0 = default)
  bool autotune = true;                  // PlanOptions::autotune (GPU backends)
  // PlanOptions::math of the GPU backends; the CPU backends keep fp32. A mode other than auto or
  // fp32 in a sweep without a GPU backend is an InvalidArgument.
  ProductMath math = ProductMath::automatic;
  std::string out;                       // .jsonl appended to as records are made ("" = none)
  bool resume = false;                   // skip keys already in `out`
  bool json = false;                     // also write each record to `json_out`
  bool progress = true;                  // progress line on stderr
  bool dry_run = false;                  // check the options and select the problems, then stop
};

struct ValidateResult {
  std::vector<Record> records;  // resumed ones first, then the new ones
  Summary summary;
  int64_t problems = 0;
  double wall_s = 0;
  std::string operands;  // where the sweep kept its tensors: "host" or "device" (sweep_data.hpp)
};

// The reference rung for `check` and p: auto is direct up to kDirectMaxMadds (1e7 when the GPU
// rung is available), then gpu64 when available, else fftw64. Throws InvalidArgument for an
// unknown name, Unsupported for gpu64 without a device.
std::string resolve_check(const std::string& check, const ConvProblem& p);

// Nh·Nw of the transform a plan uses, for the tolerance: the tile (tile_json's fft_h·fft_w), else
// the "basis HxW" / "tile HxW" its describe() names; 1 for time-domain backends (direct, im2col);
// else next_pow2(hp)·next_pow2(wp), an upper bound for untiled FFT plans.
int64_t plan_basis_elems(const std::string& backend, const std::string& describe, const std::string& tile_json,
                         const ConvProblem& p);

// Runs the sweep over `registry` (nullptr: builtin_registry()). Throws InvalidArgument /
// InvalidProblem for bad options before any work. With dry_run, returns after those checks with
// only `problems` set, touching no file.
ValidateResult run_validation(const ValidateOptions& o, std::ostream* json_out, const Registry* registry = nullptr);

}  // namespace fftconv
