// The problem sets of the validation suite and their selection (see problem_sets.hpp).
#include "validation/problem_sets.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <numeric>
#include <random>
#include <set>

#include "common/errors.hpp"

namespace fftconv {

namespace {

// Hand-picked for coverage: each line names what it exercises.
constexpr const char* kSmokeSpecs[] = {
    "n=1,k=1",                                   // the smallest problem
    "S=1,f=1,fo=1,n=5,k=3",                      // S/f/fo = 1
    "S=2,f=3,fo=4,n=8,k=3",                      // a bit of everything
    "S=3,f=2,fo=5,n=7,k=3",                      // odd sizes
    "S=2,f=3,fo=2,n=13,k=5",                     // prime input
    "S=2,f=2,fo=3,n=17,k=7",                     // prime input, odd kernel
    "S=1,f=5,fo=3,n=11,k=11",                    // kernel = input
    "S=2,f=2,fo=2,n=9,k=11,p=1",                 // kernel = padded input (zero)
    "S=2,f=2,fo=2,n=9,k=11,p=1,pad=mirror",      // kernel = padded input (mirror)
    "S=4,f=3,fo=6,n=12,k=1",                     // k = 1
    "S=2,f=4,fo=4,n=10,k=1,p=2",                 // k = 1 with zero padding
    "S=2,f=4,fo=4,n=10,k=1,p=2,pad=mirror",      // k = 1 with mirror padding
    "S=2,f=3,fo=2,h=5,w=19,kh=3,kw=7",           // rectangular input and kernel
    "S=2,f=3,fo=2,h=23,w=6,kh=5,kw=2",           // tall input, even kernel width
    "S=1,f=2,fo=3,h=1,w=31,kh=1,kw=5",           // one row
    "S=1,f=2,fo=3,h=29,w=1,kh=4,kw=1",           // one column
    "S=3,f=2,fo=2,n=8,k=3,p=1",                  // 'same' zero padding
    "S=3,f=2,fo=2,n=8,k=3,p=1,pad=mirror",       // 'same' mirror padding
    "S=2,f=3,fo=3,n=9,k=5,p=2,pad=mirror",       // mirror, p = 2
    "S=2,f=2,fo=3,n=6,k=3,p=5",                  // zero padding wider than the input
    "S=1,f=2,fo=2,n=4,k=3,p=3,pad=mirror",       // mirror p = h - 1 (the limit)
    "S=2,f=3,fo=2,h=7,w=12,kh=3,kw=5,ph=1,pw=2", // rectangular padding
    "S=2,f=3,fo=2,h=7,w=12,kh=3,kw=5,ph=2,pw=1,pad=mirror",
    "S=2,f=2,fo=2,h=10,w=5,kh=1,kw=5,ph=0,pw=2,pad=mirror",  // padding on one axis only
    "S=2,f=2,fo=2,h=10,w=5,kh=7,kw=1,ph=3,pw=0",
    "S=5,f=1,fo=1,n=16,k=5",                     // batch only
    "S=1,f=16,fo=1,n=8,k=3",                     // many input planes, one output
    "S=1,f=1,fo=16,n=8,k=3",                     // one input plane, many outputs
    "S=7,f=3,fo=5,n=16,k=9",                     // large kernel on small input
    "S=2,f=4,fo=4,n=32,k=3",                     // power-of-two input
    "S=2,f=4,fo=4,n=31,k=4",                     // even kernel, odd input
    "S=2,f=4,fo=4,n=33,k=2",                     // just above a power of two
    "S=2,f=3,fo=3,n=27,k=13",                    // the grid's largest kernel
    "S=2,f=3,fo=3,n=14,k=13,p=2",                // largest kernel with padding
    "S=2,f=3,fo=3,n=14,k=13,p=2,pad=mirror",
    "S=4,f=8,fo=8,n=20,k=5,p=2",                 // a 'real' layer shape, scaled down
    "S=4,f=8,fo=8,n=20,k=5,p=2,pad=mirror",
    "S=3,f=5,fo=7,h=11,w=13,kh=3,kw=3",          // coprime sizes
    "S=3,f=5,fo=7,h=11,w=13,kh=5,kw=3,ph=1,pw=1,pad=mirror",
    "S=2,f=2,fo=2,h=3,w=3,kh=3,kw=3",            // output 1x1
    "S=2,f=2,fo=2,h=3,w=40,kh=3,kw=3",           // output 1 row
    "S=2,f=2,fo=2,h=2,w=2,kh=2,kw=2,ph=1,pw=1,pad=mirror",  // tiny mirror
    "S=1,f=1,fo=1,n=64,k=7",                     // larger plane
    "S=1,f=1,fo=1,h=48,w=20,kh=9,kw=3,ph=4,pw=1",
    "S=2,f=6,fo=4,n=15,k=6,p=3,pad=mirror",      // even kernel, mirror
    "S=2,f=3,fo=3,n=19,k=19",                    // kernel = input, prime
    "L5,S=1,f=8,fo=8",                           // preset with overrides
    "L4,S=1,f=4,fo=4",
    "L3,S=1,f=2,fo=2",
    "S=3,f=3,fo=3,h=9,w=10,kh=2,kw=9,ph=0,pw=3,pad=mirror",
    // torch.nn.functional.conv2d's options (each lowered onto the dense problem but in direct)
    "S=2,f=3,fo=4,n=9,k=3,p=1,s=2",                     // stride 2, 'same'-style padding
    "S=2,f=2,fo=3,h=10,w=7,kh=3,kw=2,sh=2,sw=3",        // rectangular stride
    "S=1,f=4,fo=3,n=8,k=1,s=2",                         // 1x1 stride 2 (one polyphase phase)
    "S=2,f=3,fo=2,n=11,k=3,d=2",                        // dilation
    "S=2,f=2,fo=2,n=12,k=3,p=2,d=2,pad=mirror",         // dilation with mirror padding
    "S=2,f=4,fo=6,n=8,k=3,p=1,g=2",                     // groups
    "S=2,f=4,fo=4,n=10,k=5,p=2,g=4",                    // depthwise
    "S=2,f=4,fo=8,n=9,k=3,g=4,bias=1",                  // depthwise, channel multiplier 2, bias
    "S=2,f=3,fo=3,n=8,k=3,p=1,pad=circular",            // circular padding
    "S=2,f=3,fo=5,n=7,k=3,bias=1",                      // bias alone
    "S=2,f=4,fo=4,n=13,k=3,p=1,s=2,g=4,bias=1,pad=circular",  // depthwise strided circular
    "S=2,f=2,fo=4,n=9,k=3,p=2,s=3,d=2,g=2,bias=1",      // everything at once
    "S=1,f=2,fo=2,h=5,w=6,kh=2,kw=3,ph=5,pw=2,sh=3,sw=2,dh=2,dw=2,pad=circular",  // circular p = h
};

// PyTorch's own conv2d test shapes (its Conv2d module tests: plain, strided, padded, dilated,
// no bias, groups, depthwise with and without multiplier, strided / padded / dilated depthwise,
// reflect and circular padding), S = 2 as there, plus the large-kernel depthwise layers of
// ConvNeXt / RepLKNet at small sizes.
constexpr const char* kTorchParitySpecs[][2] = {
    {"torch.conv2d", "S=2,f=3,fo=4,h=7,w=5,kh=3,kw=2,bias=1"},
    {"torch.conv2d.strided", "S=2,f=3,fo=4,n=6,k=3,s=2,bias=1"},
    {"torch.conv2d.padding", "S=2,f=3,fo=4,n=6,k=3,s=2,p=1,bias=1"},
    {"torch.conv2d.dilated", "S=2,f=3,fo=4,n=8,kh=3,kw=2,dh=3,dw=4,bias=1"},
    {"torch.conv2d.no_bias", "S=2,f=3,fo=2,h=6,w=5,kh=3,kw=4"},
    {"torch.conv2d.groups", "S=2,f=4,fo=6,h=6,w=5,kh=3,kw=2,g=2,bias=1"},
    {"torch.conv2d.depthwise", "S=2,f=4,fo=4,n=6,k=3,g=4,bias=1"},
    {"torch.conv2d.depthwise_with_multiplier", "S=2,f=4,fo=8,n=6,k=3,g=4,bias=1"},
    {"torch.conv2d.depthwise_strided", "S=2,f=4,fo=4,n=6,k=3,s=2,g=4,bias=1"},
    {"torch.conv2d.depthwise_padded", "S=2,f=4,fo=4,n=6,k=3,p=1,g=4,bias=1"},
    {"torch.conv2d.depthwise_dilated", "S=2,f=4,fo=4,n=5,k=2,d=2,g=4,bias=1"},
    {"torch.conv2d.reflect", "S=2,f=2,fo=4,n=8,k=3,p=1,pad=mirror,bias=1"},
    {"torch.conv2d.reflect_strided", "S=2,f=2,fo=4,h=7,w=8,kh=3,kw=3,ph=2,pw=1,s=2,pad=mirror,bias=1"},
    {"torch.conv2d.circular", "S=2,f=2,fo=2,n=3,k=3,ph=1,pw=2,pad=circular,bias=1"},
    {"torch.conv2d.circular_strided_dilated", "S=2,f=2,fo=4,h=9,w=8,k=3,ph=2,pw=3,sh=2,sw=3,d=2,pad=circular,bias=1"},
    {"torch.conv2d.padding_same_dilated", "S=2,f=2,fo=3,n=9,k=3,p=2,d=2,bias=1"},
    {"torch.conv2d.stride_gt_kernel", "S=2,f=3,fo=2,n=10,k=2,s=3,bias=1"},
    {"torch.conv2d.one_by_one_strided", "S=2,f=8,fo=4,n=9,k=1,s=2"},
    {"torch.conv2d.resnet_downsample", "S=2,f=8,fo=16,n=14,k=3,p=1,s=2"},
    {"torch.conv2d.deeplab_atrous", "S=1,f=8,fo=8,n=17,k=3,p=4,d=4,bias=1"},
    {"convnext.depthwise7", "S=2,f=16,fo=16,n=14,k=7,p=3,g=16,bias=1"},
    {"replknet.depthwise13", "S=1,f=8,fo=8,n=14,k=13,p=6,g=8,bias=1"},
    {"replknet.depthwise31", "S=1,f=4,fo=4,n=16,k=31,p=15,g=4"},
};

constexpr int64_t kGridS[] = {1, 16, 64, 128};
constexpr int64_t kGridF[] = {1, 4, 16, 64, 96, 128, 256};
constexpr int64_t kGridK[] = {3, 5, 7, 9, 11, 13};
constexpr int64_t kGridY[] = {1, 2, 4, 8, 16, 32, 64};

std::vector<LabeledProblem> smoke_set() {
  std::vector<LabeledProblem> out;
  for (const char* s : kSmokeSpecs)
    out.push_back({"smoke#" + std::to_string(out.size()), ConvProblem::parse(s)});
  return out;
}

std::vector<LabeledProblem> paper_grid() {
  std::vector<LabeledProblem> out;
  out.reserve(std::size_t(kPaperGridSize));
  // Smallest problems first, so a capped or interrupted run covers the cheap part of the space.
  for (int64_t y : kGridY)
    for (int64_t k : kGridK)
      for (int64_t S : kGridS)
        for (int64_t f : kGridF)
          for (int64_t fo : kGridF) {
            ConvProblem p;
            p.S = S; p.f = f; p.fo = fo; p.kh = p.kw = k; p.h = p.w = y + k - 1;
            out.push_back({"grid#" + std::to_string(out.size()), p});
          }
  return out;
}

ConvProblem layer(int64_t S, int64_t f, int64_t fo, int64_t n, int64_t k, int64_t pad) {
  ConvProblem p;
  p.S = S; p.f = f; p.fo = fo; p.h = p.w = n; p.kh = p.kw = k; p.ph = p.pw = pad;
  p.validate();
  return p;
}

std::vector<LabeledProblem> layer_set() {
  std::vector<LabeledProblem> out;
  for (const char* l : {"L1", "L2", "L3", "L4", "L5"}) out.push_back({std::string("paper.") + l, ConvProblem::preset(l)});
  // AlexNet (Krizhevsky et al. 2012, one-tower form): conv1 has stride 4 and is left out.
  out.push_back({"alexnet.conv2", layer(128, 96, 256, 27, 5, 2)});
  out.push_back({"alexnet.conv3", layer(128, 256, 384, 13, 3, 1)});
  out.push_back({"alexnet.conv4", layer(128, 384, 384, 13, 3, 1)});
  out.push_back({"alexnet.conv5", layer(128, 384, 256, 13, 3, 1)});
  // OverFeat fast model (Sermanet et al. 2014, Table 1): layer 1 has stride 4 and is left out.
  out.push_back({"overfeat.conv2", layer(128, 96, 256, 28, 5, 0)});
  out.push_back({"overfeat.conv3", layer(128, 256, 512, 12, 3, 1)});
  out.push_back({"overfeat.conv4", layer(128, 512, 1024, 12, 3, 1)});
  out.push_back({"overfeat.conv5", layer(128, 1024, 1024, 12, 3, 1)});
  // VGG-16 (Simonyan & Zisserman 2015, configuration D): 3x3, stride 1, padding 1; distinct shapes.
  out.push_back({"vgg16.conv1_1", layer(64, 3, 64, 224, 3, 1)});
  out.push_back({"vgg16.conv1_2", layer(64, 64, 64, 224, 3, 1)});
  out.push_back({"vgg16.conv2_1", layer(64, 64, 128, 112, 3, 1)});
  out.push_back({"vgg16.conv2_2", layer(64, 128, 128, 112, 3, 1)});
  out.push_back({"vgg16.conv3_1", layer(64, 128, 256, 56, 3, 1)});
  out.push_back({"vgg16.conv3_2", layer(64, 256, 256, 56, 3, 1)});
  out.push_back({"vgg16.conv4_1", layer(64, 256, 512, 28, 3, 1)});
  out.push_back({"vgg16.conv4_2", layer(64, 512, 512, 28, 3, 1)});
  out.push_back({"vgg16.conv5_1", layer(64, 512, 512, 14, 3, 1)});
  return out;
}

std::vector<LabeledProblem> torch_parity_set() {
  std::vector<LabeledProblem> out;
  for (const auto& [label, spec] : kTorchParitySpecs) out.push_back({label, ConvProblem::parse(spec)});
  return out;
}

// Draws torch.nn.functional.conv2d's options onto a dense problem p from `rng` (a stream apart from
// the one of p's sizes, so that the sizes of every seed stay what they were): circular padding,
// stride, dilation (shrinking the kernel until it fits), groups dividing f and fo, bias.
void draw_options(ConvProblem& p, std::mt19937_64& rng) {
  auto u = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  if (u(0, 3) == 0) {
    p.padding = Padding::circular;
    p.ph = std::min(p.ph, p.h), p.pw = std::min(p.pw, p.w);
  }
  if (u(0, 1)) p.sh = u(1, 3), p.sw = u(1, 3);
  if (u(0, 2) == 0) p.dh = u(1, 3), p.dw = u(1, 3);
  while (p.kernel_extent_h() > p.padded_h()) --p.kh;
  while (p.kernel_extent_w() > p.padded_w()) --p.kw;
  if (u(0, 1)) {
    const int64_t common = std::gcd(p.f, p.fo);
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= common; ++d)
      if (common % d == 0) divisors.push_back(d);
    p.g = divisors[std::size_t(u(0, int64_t(divisors.size()) - 1))];
  }
  p.bias = u(0, 1) == 1;
}

std::vector<LabeledProblem> random_set(uint64_t seed, int64_t count) {
  std::mt19937_64 rng(seed), options(seed ^ 0x6a09e667f3bcc909ull);
  auto u = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<LabeledProblem> out;
  for (int64_t i = 0; i < count; ++i) {
    ConvProblem p;
    p.S = u(1, 4); p.f = u(1, 16); p.fo = u(1, 16);
    p.h = u(1, 40); p.w = u(1, 40);
    p.padding = u(0, 1) ? Padding::mirror : Padding::zero;
    if (p.padding == Padding::mirror) {
      p.ph = u(0, std::min<int64_t>(p.h - 1, 6)); p.pw = u(0, std::min<int64_t>(p.w - 1, 6));
    } else {
      p.ph = u(0, 6); p.pw = u(0, 6);
    }
    p.kh = u(1, std::min<int64_t>(p.padded_h(), 13)); p.kw = u(1, std::min<int64_t>(p.padded_w(), 13));
    draw_options(p, options);
    p.validate();
    out.push_back({"random#" + std::to_string(i), p});
  }
  return out;
}

std::vector<LabeledProblem> spec_list(std::string_view s) {
  std::vector<LabeledProblem> out;
  while (!s.empty()) {
    auto pos = s.find(';');
    std::string_view one = s.substr(0, pos);
    if (!one.empty()) out.push_back({"spec#" + std::to_string(out.size()), ConvProblem::parse(one)});
    if (pos == std::string_view::npos) break;
    s.remove_prefix(pos + 1);
  }
  if (out.empty()) throw InvalidArgument("set: empty list of problem specs");
  return out;
}

}  // namespace

ConvProblem draw_conv2d_problem(std::mt19937_64& rng, int64_t max_side) {
  auto u = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  while (true) {
    ConvProblem p;
    p.g = u(1, 3);
    p.S = u(1, 3), p.f = p.g * u(1, 3), p.fo = p.g * u(1, 3);
    p.h = u(1, max_side), p.w = u(1, max_side);
    p.sh = u(1, 3), p.sw = u(1, 3), p.dh = u(1, 3), p.dw = u(1, 3);
    p.padding = Padding(u(0, 2));
    const int64_t lim_h = p.padding == Padding::mirror ? p.h - 1 : p.padding == Padding::circular ? p.h : 4;
    const int64_t lim_w = p.padding == Padding::mirror ? p.w - 1 : p.padding == Padding::circular ? p.w : 4;
    p.ph = u(0, std::min<int64_t>(lim_h, 4)), p.pw = u(0, std::min<int64_t>(lim_w, 4));
    p.kh = u(1, 5), p.kw = u(1, 5);
    p.bias = u(0, 1) == 1;
    if (p.kernel_extent_h() > p.padded_h() || p.kernel_extent_w() > p.padded_w()) continue;
    p.validate();
    return p;
  }
}

std::vector<std::string> problem_set_names() { return {"smoke", "paper-grid", "layers", "random", "torch-parity"}; }

std::vector<LabeledProblem> problem_set(std::string_view name, uint64_t seed, int64_t random_count) {
  if (name == "smoke") return smoke_set();
  if (name == "paper-grid") return paper_grid();
  if (name == "layers") return layer_set();
  if (name == "torch-parity") return torch_parity_set();
  if (name == "random") {
    if (random_count < 1) throw InvalidArgument("count: must be >= 1, got " + std::to_string(random_count));
    if (random_count > kMaxRandomCount)  // beyond any sweep, and a count of 10^12 would only exhaust memory
      throw InvalidArgument("count: at most " + std::to_string(kMaxRandomCount) + ", got " + std::to_string(random_count));
    return random_set(seed, random_count);
  }
  if (name.find('=') != std::string_view::npos || (name.size() == 2 && name[0] == 'L') ||
      name.find(',') != std::string_view::npos)
    return spec_list(name);
  throw InvalidArgument("set: unknown name '" + std::string(name) +
                        "' (expected smoke, paper-grid, layers, random, torch-parity, or problem specs joined by ';')");
}

int64_t largest_tensor_elems(const ConvProblem& p) {
  const int64_t in = checked_mul(checked_mul(p.S, p.f, "input"), checked_mul(p.padded_h(), p.padded_w(), "input"), "input");
  return std::max({in, p.weight_elems(), p.output_elems()});
}

std::vector<LabeledProblem> select_problems(std::vector<LabeledProblem> set, const SetSelection& sel) {
  if (sel.batch < 0) throw InvalidArgument("batch: must be >= 0, got " + std::to_string(sel.batch));
  if (sel.max_elements < 0) throw InvalidArgument("max-elements: must be >= 0, got " + std::to_string(sel.max_elements));
  if (sel.sample < 0) throw InvalidArgument("sample: must be >= 0, got " + std::to_string(sel.sample));
  if (sel.shard_count < 1 || sel.shard_index < 0 || sel.shard_index >= sel.shard_count)
    throw InvalidArgument("shard: index " + std::to_string(sel.shard_index) + " not in [0, " +
                          std::to_string(sel.shard_count) + ")");
  std::vector<LabeledProblem> kept;
  std::set<std::string> seen;
  for (auto& lp : set) {
    ConvProblem& p = lp.problem;
    if (sel.batch > 0) p.S = std::min(p.S, sel.batch);
    if (sel.max_elements > 0) {
      while (p.S > 1 && largest_tensor_elems(p) > sel.max_elements) p.S = std::max<int64_t>(1, p.S / 2);
      if (largest_tensor_elems(p) > sel.max_elements) continue;
    }
    if (!seen.insert(p.to_string()).second) continue;
    kept.push_back(std::move(lp));
  }
  if (sel.sample > 0 && sel.sample < int64_t(kept.size())) {
    std::vector<std::size_t> idx(kept.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::mt19937_64 rng(sel.sample_seed);
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(std::size_t(sel.sample));
    std::sort(idx.begin(), idx.end());
    std::vector<LabeledProblem> sampled;
    for (std::size_t i : idx) sampled.push_back(std::move(kept[i]));
    kept = std::move(sampled);
  }
  if (sel.shard_count > 1) {
    std::vector<LabeledProblem> mine;
    for (std::size_t i = 0; i < kept.size(); ++i)
      if (int64_t(i) % sel.shard_count == sel.shard_index) mine.push_back(std::move(kept[i]));
    kept = std::move(mine);
  }
  return kept;
}

namespace {
int64_t parse_count(std::string_view what, std::string_view v) {
  int64_t out = -1;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || out < 0)
    throw InvalidArgument(std::string(what) + ": expected a non-negative integer, got '" + std::string(v) + "'");
  return out;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}
}  // namespace

std::pair<int64_t, int64_t> parse_shard(std::string_view s) {
  auto slash = s.find('/');
  if (slash == std::string_view::npos)
    throw InvalidArgument("shard: expected i/n (e.g. 0/4), got '" + std::string(s) + "'");
  const int64_t i = parse_count("shard", s.substr(0, slash)), n = parse_count("shard", s.substr(slash + 1));
  if (n < 1 || i >= n)
    throw InvalidArgument("shard: expected 0 <= i < n, got '" + std::string(s) + "'");
  return {i, n};
}

std::pair<int64_t, int64_t> shard_from_environment() {
  const char* pairs[][2] = {{"SLURM_PROCID", "SLURM_NTASKS"},
                            {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                            {"RANK", "WORLD_SIZE"}};
  for (auto& pr : pairs) {
    const char* r = env(pr[0]);
    const char* n = env(pr[1]);
    if (r && n) return parse_shard(std::string(r) + "/" + n);
  }
  return {0, 1};
}

int local_rank_from_environment() {
  for (const char* name : {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"})
    if (const char* v = env(name)) return int(parse_count(name, v));
  return -1;
}

}  // namespace fftconv
