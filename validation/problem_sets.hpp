// The named problem sets of the validation suite (smoke, paper-grid, layers, random) and the
// selection applied to them: batch override, element cap, seeded sampling, sharding.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/problem.hpp"

namespace fftconv {

// A problem with a human label ("alexnet.conv3", "grid#123", "smoke#7"); the spec string
// (problem.to_string()) is what reproduces it.
struct LabeledProblem {
  std::string label;
  ConvProblem problem;
};

// The set names accepted by problem_set().
std::vector<std::string> problem_set_names();

// The full, unfiltered set, in a fixed order:
//   smoke       ~60 small, diverse problems (odd, prime, rectangular, k = 1, kernel = padded input,
//               zero and mirror padding, S/f/fo = 1) for CI.
//   paper-grid  the paper's Table 3 space: S ∈ {1,16,64,128}, f, fo ∈ {1,4,16,64,96,128,256},
//               k ∈ {3,5,7,9,11,13}, output y ∈ {1,2,4,8,16,32,64}, h = w = y + k − 1,
//               no padding: 4·7·7·6·7 = 8,232 problems (kPaperGridSize).
//   layers      the paper's L1–L5 (S = 128) and the stride-1 convolutional layers of AlexNet
//               (S = 128), OverFeat-fast (S = 128) and VGG-16 (S = 64) with their zero padding.
//   random      `count` problems drawn from `seed`: rectangular inputs and kernels, the three paddings,
//               and strides, dilations, groups and bias drawn apart (torch.nn.functional.conv2d).
//   torch-parity  PyTorch's own conv2d test shapes (strided, padded, dilated, groups, depthwise,
//               reflect, circular, bias) and small large-kernel depthwise layers.
// A spec string (or several joined by ';') is also accepted as a set of its own.
// Throws InvalidArgument for an unknown name.
std::vector<LabeledProblem> problem_set(std::string_view name, uint64_t seed = 1, int64_t random_count = 200);

inline constexpr int64_t kPaperGridSize = 8232;
inline constexpr int64_t kMaxRandomCount = 1000000;  // the largest `random` set

// Selection applied after the set is built, in this order.
struct SetSelection {
  int64_t batch = 0;         // > 0: replace S by min(S, batch)
  int64_t max_elements = 0;  // > 0: shrink S until the largest tensor fits, skip if S = 1 does not
  int64_t sample = 0;        // > 0: keep a seeded random sample of this many (order preserved)
  uint64_t sample_seed = 1;
  int64_t shard_index = 0, shard_count = 1;  // keep problems with position % count == index
};

// A small random problem for unit tests of the conv2d options: S <= 3, up to 3 groups of up to 3
// channels, sides up to max_side, kernels up to 5, stride and dilation up to 3, any padding, bias.
ConvProblem draw_conv2d_problem(std::mt19937_64& rng, int64_t max_side);

// Elements of the largest tensor of p (input, weight, output; padded input counted as hp·wp).
int64_t largest_tensor_elems(const ConvProblem& p);

// Applies `sel`; duplicates created by capping are removed (first kept). Throws InvalidArgument
// for a bad selection (negative sizes, shard index out of range).
std::vector<LabeledProblem> select_problems(std::vector<LabeledProblem> set, const SetSelection& sel);

// "i/n" -> {i, n}; throws InvalidArgument naming `shard`.
std::pair<int64_t, int64_t> parse_shard(std::string_view s);
// The shard from the launcher's environment: SLURM_PROCID/SLURM_NTASKS,
// OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, RANK/WORLD_SIZE (first pair present), else {0, 1}.
std::pair<int64_t, int64_t> shard_from_environment();
// LOCAL_RANK (or SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK), else -1.
int local_rank_from_environment();

}  // namespace fftconv
