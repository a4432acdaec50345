// One cell of the grid and network benchmarks: one (problem, pass) on fresh seeded operands with its
// float64 reference, timed for cuDNN's fastest verified algorithm or for one backend, every result
// verified at the batch it is timed at (validation/sweep_data.hpp keeps operands, result and
// reference, on the device when every implementation is a CUDA one).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/backend.hpp"
#include "common/problem.hpp"

namespace fftconv::bench {

// Note [cell repetitions]
// Each implementation first runs once on the cell's operands; that run is verified against the
// reference and its time t1 plans the timed runs: n = clamp(budget_ms / t1, min_repeat, repeat),
// after `warmup` untimed runs. A cell whose warmup + min_repeat runs would take longer than
// cell_seconds is not timed: it is recorded as "skipped" ("time cap", t1 kept as probe_ms).
// cuDNN: every algorithm runs once verified and once timed (the probe); the verified ones within
// 2x of the fastest probe (at most cudnn_candidates) are then timed in full on rotated operand sets,
// and the fastest median is the baseline. Its tolerance is the model's for an FFT over the untiled
// power-of-two basis (its FFT algorithms' basis is not visible), the loosest the backends get.
struct CellOptions {
  int warmup = 2;
  int repeat = 25;               // timed runs, at most
  int min_repeat = 3;            // timed runs, at least
  double budget_ms = 200;        // measured time a cell aims at
  double cell_seconds = 30;      // cap on warm-up and timed runs of one implementation (0: none)
  int cudnn_candidates = 3;      // cuDNN algorithms timed in full after the probe
  std::string check = "auto";    // reference rung: auto | direct | fftw64 | gpu64 (validation/runner.hpp)
  void validate() const;         // throws InvalidArgument naming the flag
};

// Timed runs for one run of `one_run_ms` (Note [cell repetitions]); 0 with *why set when the cell
// does not fit cell_seconds.
int cell_repetitions(const CellOptions& o, double one_run_ms, std::string* why);

struct CellResult {
  std::string impl;               // "cudnn" (FMA math), "cudnn-tc" (tensor-op math) or a backend name
  std::string status = "ok";      // ok | unsupported | out of memory | error | skipped
  std::string reason;             // why, when not ok
  double median_ms = -1, min_ms = -1;
  int runs = 0;                   // timed runs behind median and min
  double probe_ms = -1;           // the one verified run (wall time; cuDNN: its fastest probe)
  double plan_ms = -1;            // backends: plan() with its autotuning
  std::size_t workspace_bytes = 0;
  std::string choice;             // cuDNN's algorithm, or the start of the plan's describe()
  double rel_l2 = -1, tol_rel_l2 = -1;
  bool verified = false;          // within the tolerance model at the timed batch
  std::string ref;                // the reference rung
  bool ok() const { return status == "ok"; }
};

// The seed a cell's operands are drawn with: a record reproduces from its spec, pass and data_seed.
uint64_t cell_seed(uint64_t data_seed, const std::string& spec, Pass pass);

// The fields of r that are set, numbers rounded to 5 significant digits (errors to 3).
nlohmann::json cell_json(const CellResult& r);
// x rounded to `digits` significant digits.
double round_significant(double x, int digits);

// The implementations a benchmark names: "cudnn", "cudnn-tc", "auto" (when the build has it) or a
// registry backend. Throws InvalidArgument listing the known names.
bool is_cudnn_impl(const std::string& name);
const Backend& bench_backend(const std::string& name);
// True when `names` are CUDA implementations (cuDNN or CUDA backends: their cells keep operands on
// the device), false when they are host backends. Throws Unsupported naming what is missing when a
// name needs CUDA, cuDNN or a device that this build or machine lacks, InvalidArgument for an unknown
// name or a mix of host and CUDA implementations.
bool device_operands_for(const std::vector<std::string>& names);
// "NVIDIA H100 80GB HBM3 (sm_90), cuDNN 9.14.0" or the host's description.
std::string bench_device(bool device);
// The options of a run's cells, for its result file; the current UTC time as 2026-01-31T12:00:00Z.
nlohmann::json cell_options_json(const CellOptions& o);
std::string utc_now();

class CellBench {
 public:
  // device: operands, references and results live on the current CUDA device (Unsupported without).
  CellBench(const CellOptions& o, bool device);
  ~CellBench();
  CellBench(const CellBench&) = delete;
  CellBench& operator=(const CellBench&) = delete;
  // Fresh operands of (p, pass) drawn with `seed`; the reference is computed when first needed.
  // When the operands cannot be made (out of memory), every cell of them reports it as its status.
  void prepare(const ConvProblem& p, Pass pass, uint64_t seed);
  CellResult time_cudnn(bool tensor_op_math);
  CellResult time_backend(const Backend& b, const PlanOptions& po);
  // Either of the two by name (is_cudnn_impl / bench_backend).
  CellResult time_impl(const std::string& name, const PlanOptions& po);
  // False (with the CUDA error) when the device is in a sticky error state: later cells cannot run.
  bool device_ok(std::string* why) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace fftconv::bench
