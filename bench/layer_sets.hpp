// Named layer sets of `fftconv bench layers --set NAME` (and the grid and network benchmarks): each
// layer a name and a spec string at its own batch.
#pragma once
#include <string>
#include <vector>

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

}  // namespace fftconv::bench
