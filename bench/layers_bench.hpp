// `fftconv bench layers`: the paper's Table 4 on today's GPU, and named sets beyond it. For each
// layer (L1..L5 at S=128 by default) and pass: cuDNN's best algorithm in strict fp32 and with
// tensor-core math allowed (every algorithm timed, each one's error reported), each of our backends
// (auto, fbfft, cufft) with the configuration it chose, its plan and tuning time, speedups, TRED/s
// (S·f·fo·kh·kw·out_h·out_w / time, in 10^12 per second), workspace and device memory; every backend
// and cuDNN algorithm is verified against the float64 reference at a reduced batch.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <functional>
#include <string>
#include <vector>

#include "bench/layer_sets.hpp"
#include "common/problem.hpp"

namespace fftconv::bench {

struct LayersBenchOptions {
  std::string set;              // a named set (bench/layer_sets.hpp); "" = `layers`
  std::vector<std::string> layers{"L1", "L2", "L3", "L4", "L5"};  // spec strings (presets take overrides)
  std::vector<std::string> passes{"fprop", "bprop", "accgrad"};
  std::vector<std::string> backends{"auto", "fbfft", "cufft"};  // registry names, "auto", "cufft-naive"
  bool naive = false;           // add "cufft-naive" after "cufft"
  bool cudnn_tensor_ops = true; // also time cuDNN with tensor-core math allowed (TF32)
  int64_t batch = 0;            // S of every layer; 0 = each layer's own (the L presets: 128)
  std::string math = "auto";    // PlanOptions::math of our backends
  int64_t verify_batch = 4;     // S of the verification run
  int repeat = 20, warmup = 3;
  bool autotune = true;
  std::string tune_cache;       // PlanOptions::tune_cache
  std::string command_line;     // recorded in the JSON
  // Besides each fbfft / cufft entry, the same backend planned with this tile spec ("auto", "32",
  // ...; "none" adds nothing), labelled "fbfft tile=auto" etc.
  std::string tile = "none";
  // Called with the whole document after every row, so a run stopped midway keeps what it measured.
  std::function<void(const std::string&)> checkpoint;
  // Layer names to run (in this order), a subset of the set's or --layers'; empty: all of them.
  std::vector<std::string> only;
  // A document of an earlier run of the same set and backends: its rows are kept and not timed again.
  std::string resume;
};

// What a run covers: the selected layers (resolve_layers() narrowed by select_layers()) and the passes.
struct LayersBenchScope {
  std::vector<LayerProblem> layers;
  std::vector<Pass> passes;
};

// The checks run_layers_bench() makes of its options on the host alone (no device is needed): batch,
// verification batch, repeat, warmup, tile spec, --math, passes, the set or layer specs and --only.
// Throws InvalidArgument (InvalidProblem for a bad layer spec) naming the field and value; returns what
// the run covers. The backends are checked by the run, which knows the CUDA registry.
LayersBenchScope check_layers_bench_options(const LayersBenchOptions& opts);

// True when this build has CUDA and a device is present; else *why says which.
bool layers_bench_available(std::string* why);

// Runs the benchmark, prints the table to `out`, and returns the JSON document. *all_verified is
// false when some backend's result failed the tolerance model at the verification batch.
// Throws as check_layers_bench_options() does for bad options, InvalidArgument for a bad --backends
// or --resume document, CudaError / OutOfMemory from the device.
std::string run_layers_bench(const LayersBenchOptions& opts, std::ostream& out, bool* all_verified);

}  // namespace fftconv::bench
