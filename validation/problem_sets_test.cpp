// Tests of the problem sets: sizes (paper-grid = 8,232), validity, coverage of the smoke set,
// and the selection (batch, element cap, sampling, shards, launcher environment).
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>

#include "common/errors.hpp"
#include "validation/problem_sets.hpp"

using namespace fftconv;

namespace {
std::set<std::string> specs(const std::vector<LabeledProblem>& v) {
  std::set<std::string> s;
  for (const auto& lp : v) s.insert(lp.problem.to_string());
  return s;
}
}  // namespace

TEST_CASE("paper-grid is the paper's 8,232 distinct valid problems") {
  const auto grid = problem_set("paper-grid");
  CHECK(int64_t(grid.size()) == kPaperGridSize);
  CHECK(int64_t(specs(grid).size()) == kPaperGridSize);
  std::set<int64_t> ys, ks;
  for (const auto& lp : grid) {
    const ConvProblem& p = lp.problem;
    CHECK_NOTHROW(p.validate());
    CHECK(p.out_h() == p.out_w());
    CHECK(p.kh == p.kw);
    CHECK(p.ph == 0);
    ys.insert(p.out_h());
    ks.insert(p.kh);
  }
  CHECK(ys == std::set<int64_t>{1, 2, 4, 8, 16, 32, 64});
  CHECK(ks == std::set<int64_t>{3, 5, 7, 9, 11, 13});
}

TEST_CASE("smoke covers the shapes CI must see") {
  const auto smoke = problem_set("smoke");
  CHECK(smoke.size() >= 45);
  CHECK(smoke.size() <= 70);
  bool odd = false, prime = false, rect = false, k1 = false, kernel_is_input = false, zero_pad = false,
       mirror_pad = false, ones = false, rect_kernel = false, strided = false, dilated = false, grouped = false,
       depthwise = false, bias = false, circular = false;
  auto is_prime = [](int64_t n) {
    if (n < 2) return false;
    for (int64_t d = 2; d * d <= n; ++d)
      if (n % d == 0) return false;
    return true;
  };
  for (const auto& lp : smoke) {
    const ConvProblem& p = lp.problem;
    CHECK_NOTHROW(p.validate());
    CHECK(largest_tensor_elems(p) <= 100000);
    odd |= p.h % 2 == 1;
    prime |= is_prime(p.h) && p.h > 7;
    rect |= p.h != p.w;
    rect_kernel |= p.kh != p.kw;
    k1 |= p.kh == 1 && p.kw == 1;
    kernel_is_input |= p.kh == p.padded_h() && p.kw == p.padded_w() && p.h > 1;
    zero_pad |= p.padding == Padding::zero && p.ph > 0;
    mirror_pad |= p.padding == Padding::mirror && p.ph > 0;
    ones |= p.S == 1 && p.f == 1 && p.fo == 1;
    strided |= p.sh > 1 && p.sw > 1 && p.sh != p.sw;
    dilated |= p.dh > 1;
    grouped |= p.g > 1 && p.g < p.f;
    depthwise |= p.g > 1 && p.g == p.f;
    bias |= p.bias;
    circular |= p.padding == Padding::circular && p.ph > 0;
  }
  CHECK(odd); CHECK(prime); CHECK(rect); CHECK(rect_kernel); CHECK(k1); CHECK(kernel_is_input);
  CHECK(zero_pad); CHECK(mirror_pad); CHECK(ones);
  CHECK(strided); CHECK(dilated); CHECK(grouped); CHECK(depthwise); CHECK(bias); CHECK(circular);
}

TEST_CASE("layers: L1-L5, AlexNet, OverFeat, VGG-16 stride-1 layers") {
  const auto layers = problem_set("layers");
  std::set<std::string> labels;
  for (const auto& lp : layers) labels.insert(lp.label);
  for (const char* l : {"paper.L1", "paper.L5", "alexnet.conv2", "alexnet.conv5", "overfeat.conv2", "overfeat.conv5",
                        "vgg16.conv1_1", "vgg16.conv5_1"})
    CHECK(labels.count(l) == 1);
  CHECK(layers[0].problem == ConvProblem::preset("L1"));
  for (const auto& lp : layers) {
    if (lp.label.rfind("vgg16", 0) == 0) CHECK(lp.problem.out_h() == lp.problem.h);  // 'same' padding
  }
}

TEST_CASE("torch-parity: PyTorch's conv2d test shapes, every option, small") {
  const auto set = problem_set("torch-parity");
  CHECK(set.size() >= 20);
  bool strided = false, dilated = false, grouped = false, depthwise = false, bias = false, circular = false,
       mirror = false;
  for (const auto& lp : set) {
    const ConvProblem& p = lp.problem;
    CHECK_NOTHROW(p.validate());
    CHECK(p.madds() <= 2e6);  // fast enough for the CPU backends and direct
    strided |= p.sh > 1;
    dilated |= p.dh > 1;
    grouped |= p.g > 1 && p.g < p.f;
    depthwise |= p.g > 1 && p.g == p.f;
    bias |= p.bias;
    circular |= p.padding == Padding::circular;
    mirror |= p.padding == Padding::mirror;
  }
  CHECK(strided); CHECK(dilated); CHECK(grouped); CHECK(depthwise); CHECK(bias); CHECK(circular); CHECK(mirror);
}

TEST_CASE("random is seeded, rectangular, and uses both paddings") {
  const auto a = problem_set("random", 7, 120), b = problem_set("random", 7, 120), c = problem_set("random", 8, 120);
  CHECK(a.size() == 120);
  CHECK(specs(a) == specs(b));
  CHECK(specs(a) != specs(c));
  bool mirror = false, zero = false, rect = false, rect_k = false;
  for (const auto& lp : a) {
    mirror |= lp.problem.padding == Padding::mirror && (lp.problem.ph > 0 || lp.problem.pw > 0);
    zero |= lp.problem.padding == Padding::zero && (lp.problem.ph > 0 || lp.problem.pw > 0);
    rect |= lp.problem.h != lp.problem.w;
    rect_k |= lp.problem.kh != lp.problem.kw;
  }
  CHECK(mirror); CHECK(zero); CHECK(rect); CHECK(rect_k);
  int options = 0;
  for (const auto& lp : a) {
    const ConvProblem& p = lp.problem;
    options |= (p.sh > 1 ? 1 : 0) | (p.dh > 1 ? 2 : 0) | (p.g > 1 ? 4 : 0) | (p.bias ? 8 : 0) |
               (p.padding == Padding::circular ? 16 : 0);
  }
  CHECK(options == 31);  // strides, dilations, groups, bias and circular padding are drawn
}

TEST_CASE("spec lists and unknown names") {
  CHECK(problem_set("L2,S=8;n=9,k=3").size() == 2);
  CHECK(problem_set("L3").size() == 1);
  CHECK_THROWS_AS(problem_set("no-such-set"), InvalidArgument);
  CHECK_THROWS_AS(problem_set("n=0,k=1"), InvalidProblem);
}

TEST_CASE("selection: batch override, element cap, sampling, shards") {
  const auto grid = problem_set("paper-grid");
  SetSelection sel;
  sel.batch = 8;
  for (const auto& lp : select_problems(grid, sel)) CHECK(lp.problem.S <= 8);

  sel = SetSelection{};
  sel.max_elements = 200000;
  const auto capped = select_problems(grid, sel);
  CHECK(!capped.empty());
  CHECK(capped.size() < grid.size());
  for (const auto& lp : capped) CHECK(largest_tensor_elems(lp.problem) <= 200000);
  CHECK(specs(capped).size() == capped.size());

  sel.sample = 200;
  sel.sample_seed = 3;
  const auto s1 = select_problems(grid, sel), s2 = select_problems(grid, sel);
  CHECK(s1.size() == 200);
  CHECK(specs(s1) == specs(s2));
  sel.sample_seed = 4;
  CHECK(specs(select_problems(grid, sel)) != specs(s1));

  sel.sample_seed = 3;
  std::set<std::string> all;
  size_t total = 0;
  for (int64_t i = 0; i < 3; ++i) {
    sel.shard_index = i;
    sel.shard_count = 3;
    const auto part = specs(select_problems(grid, sel));
    total += part.size();
    all.insert(part.begin(), part.end());
  }
  CHECK(total == 200);
  CHECK(all == specs(s1));

  sel.shard_index = 3;
  CHECK_THROWS_AS(select_problems(grid, sel), InvalidArgument);
  SetSelection bad;
  bad.max_elements = -1;
  CHECK_THROWS_AS(select_problems(grid, bad), InvalidArgument);
}

TEST_CASE("shards from arguments and the launcher environment") {
  CHECK(parse_shard("2/5") == std::pair<int64_t, int64_t>{2, 5});
  for (const char* bad : {"5/5", "1", "a/2", "-1/2", "1/0", "/2", "1/"}) CHECK_THROWS_AS(parse_shard(bad), InvalidArgument);
  for (const char* v : {"SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "RANK",
                        "WORLD_SIZE", "LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"})
    unsetenv(v);
  CHECK(shard_from_environment() == std::pair<int64_t, int64_t>{0, 1});
  CHECK(local_rank_from_environment() == -1);
  setenv("RANK", "3", 1);
  setenv("WORLD_SIZE", "4", 1);
  setenv("LOCAL_RANK", "1", 1);
  CHECK(shard_from_environment() == std::pair<int64_t, int64_t>{3, 4});
  CHECK(local_rank_from_environment() == 1);
  setenv("SLURM_PROCID", "0", 1);  // Slurm takes precedence
  setenv("SLURM_NTASKS", "2", 1);
  CHECK(shard_from_environment() == std::pair<int64_t, int64_t>{0, 2});
  for (const char* v : {"SLURM_PROCID", "SLURM_NTASKS", "RANK", "WORLD_SIZE", "LOCAL_RANK"}) unsetenv(v);
}
