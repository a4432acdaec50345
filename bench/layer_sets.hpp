// Named layer sets of `fftconv bench layers --set NAME` (and the grid and network benchmarks): each
// layer a name and a spec string at its own batch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/problem.hpp"

namespace fftconv::bench {

struct NamedLayer {
  std::string name;
  std::string spec;
};

// "L" (the paper's Table 4, S = 128), "modern" (common layers beyond the paper, dense, stride 1),
// "large" (large images and kernels), "depthwise" (depthwise large kernels at batch 64, with strided
// and dilated dense rows from ResNet and DeepLab). Throws InvalidArgument naming `set` otherwise.
std::vector<NamedLayer> layer_set(const std::string& set);
// The names layer_set() takes.
std::vector<std::string> layer_set_names();

struct LayerProblem {
  std::string name;
  ConvProblem p;
};

// The layers of `set`, or where `set` is empty the spec strings `specs` (presets take overrides), each
// named by its spec; at batch S = `batch` (0: each layer's own), validated. Throws InvalidArgument for
// an unknown set or a negative batch, InvalidProblem for a bad spec.
std::vector<LayerProblem> resolve_layers(const std::string& set, const std::vector<std::string>& specs,
                                         int64_t batch);

// The layers named in `only`, in that order (all of `layers` when it is empty). Throws
// InvalidArgument naming the first name that is not among them.
std::vector<LayerProblem> select_layers(const std::vector<LayerProblem>& layers, const std::vector<std::string>& only);

// The layers of resolve_layers(), narrowed by select_layers(`only`), in the shape of `fftconv bench
// networks --list`, one network named after the set ("custom" for specs): {"batch", "set",
// "networks": [{"name", "layers": [{"name", "spec", "stride", "same_as"}]}]}. "batch" is the layers'
// common S (null when they differ), "stride" the height stride (the spec carries every option),
// "same_as" an earlier layer of the same spec.
nlohmann::json layer_list_json(const std::string& set, const std::vector<std::string>& specs, int64_t batch,
                               const std::vector<std::string>& only = {});

}  // namespace fftconv::bench
