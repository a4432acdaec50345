// `fftconv bench layers`: the paper's Table 4 on today's GPU. For each layer (L1..L5 at S=128 by
// default) and pass: cuDNN's best fp32 algorithm (all of them are timed), each of our backends with
// the configuration it chose, the naive cufft pipeline beside it, speedups, TRED/s
// (S·f·fo·kh·kw·out_h·out_w / time, in 10^12 per second) and workspaces; every backend and cuDNN
// algorithm is verified against the float64 reference at a reduced batch.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace fftconv::bench {

struct LayersBenchOptions {
  std::vector<std::string> layers{"L1", "L2", "L3", "L4", "L5"};  // spec strings (presets take overrides)
  std::vector<std::string> passes{"fprop", "bprop", "accgrad"};
  std::vector<std::string> backends{"cufft"};  // registry names, plus "cufft-naive"
  bool naive = true;            // add "cufft-naive" after "cufft"
  int64_t batch = 128;          // S of every layer
  int64_t verify_batch = 4;     // S of the verification run
  int repeat = 20, warmup = 3;
  bool autotune = true;
  std::string tune_cache;       // PlanOptions::tune_cache
  std::string command_line;     // recorded in the JSON
};

// True when this build has CUDA and a device is present; else *why says which.
bool layers_bench_available(std::string* why);

// Runs the benchmark, prints the table to `out`, and returns the JSON document. *all_verified is
// false when some backend's result failed the tolerance model at the verification batch.
// Throws InvalidArgument / InvalidProblem for bad options, CudaError / OutOfMemory from the device.
std::string run_layers_bench(const LayersBenchOptions& opts, std::ostream& out, bool* all_verified);

}  // namespace fftconv::bench
