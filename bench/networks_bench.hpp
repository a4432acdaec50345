// `fftconv bench networks`: the paper's AlexNet / OverFeat-fast table, and VGG-16: every convolutional
// layer at batch 128, fprop / bprop / accGrad and their sums, for cuDNN's best algorithm in FMA math
// and with tensor-op math allowed, and for each of our backends (bench/cell_bench.hpp: every result
// verified at the timed batch). A layer a backend does not support (the strided first layers, where
// the problem type or the backend has no stride) is counted at cuDNN's FMA-math time, as the paper
// did ("cuDNN (strided)" in the table).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cell_bench.hpp"
#include "common/backend.hpp"

namespace fftconv::bench {

struct NetworkLayer {
  std::string name;      // "conv2", "conv3_1"
  std::string spec;      // at the benchmark's batch; strided layers carry torch's `s=` key
  int64_t stride = 1;
  std::string same_as;   // a layer of the same shape earlier in the network (timed once), or empty
};

// "alexnet", "overfeat", "vgg16".
std::vector<std::string> network_names();
// The convolutional layers of `network` in order, at batch S = `batch`: the stride-1 layers are the
// validation set `layers`' (validation/problem_sets.hpp), the strided first layers of AlexNet
// (227x227, 11x11, stride 4) and OverFeat-fast (231x231, 11x11, stride 4) are written out here.
// Throws InvalidArgument for an unknown network or a batch < 1.
std::vector<NetworkLayer> network_layers(const std::string& network, int64_t batch);
// {"batch", "networks": [{"name", "layers": [{"name", "spec", "stride", "same_as"}]}]}: the input of
// bench/torch_networks.py.
nlohmann::json network_layers_json(const std::vector<std::string>& networks, int64_t batch);

struct NetworksBenchOptions {
  std::vector<std::string> networks{"alexnet", "overfeat", "vgg16"};
  std::vector<std::string> backends{"cufft", "fbfft"};  // ours; "auto" too where the build has it
  bool cudnn = true;                                    // time cuDNN (false: a run of host backends alone)
  bool cudnn_tensor_ops = true;                         // also time cuDNN with tensor-op math
  int64_t batch = 128;
  std::vector<Pass> passes{Pass::fprop, Pass::bprop, Pass::accgrad};
  CellOptions cell;
  PlanOptions plan;
  uint64_t data_seed = 1;
  bool progress = true;
  std::string command, note;
};

// Runs the benchmark, prints a table per network to `out` and returns the JSON document.
// *all_verified is false when a result of our backends failed the tolerance model or errored.
// Throws Unsupported when this build or machine cannot run cuDNN or a named backend.
nlohmann::json run_networks_bench(const NetworksBenchOptions& o, std::ostream& out, bool* all_verified);

// Per implementation of `impls`: each pass's sum over `layers` (a network's "layers" in the document)
// of the medians, the total, the layers counted at cuDNN's FMA-math time (strided ones our backend
// does not support) and the layers missing (no time at all: "complete" is false).
nlohmann::json network_totals(const nlohmann::json& layers, const std::vector<std::string>& impls,
                              const std::vector<Pass>& passes);
// `later`'s networks added to `earlier` (a network in both: later's), the runs' headers kept in
// "runs" (device, command, started, wall_s, note of each), the top-level fields later's.
nlohmann::json merge_networks_documents(const nlohmann::json& earlier, const nlohmann::json& later);
// The table run_networks_bench prints, from its document.
std::string networks_table(const nlohmann::json& doc);

}  // namespace fftconv::bench
