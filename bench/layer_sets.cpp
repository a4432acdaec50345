// The named layer sets (see layer_sets.hpp).
#include "bench/layer_sets.hpp"

#include <algorithm>
#include <map>

#include "common/errors.hpp"

namespace fftconv::bench {

std::vector<std::string> layer_set_names() { return {"L", "modern", "large", "depthwise"}; }

std::vector<NamedLayer> layer_set(const std::string& set) {
  if (set == "L") return {{"L1", "L1"}, {"L2", "L2"}, {"L3", "L3"}, {"L4", "L4"}, {"L5", "L5"}};
  if (set == "modern")
    return {{"vgg_conv3", "S=64,f=128,fo=256,n=56,k=3,p=1"},
            {"vgg_conv4", "S=64,f=512,fo=512,n=28,k=3,p=1"},
            {"resnet_s2", "S=128,f=128,fo=128,n=28,k=3,p=1"},
            {"resnet_s4", "S=128,f=512,fo=512,n=7,k=3,p=1"},
            {"inception_5x5", "S=128,f=32,fo=96,n=28,k=5,p=2"},
            {"stem_7x7", "S=32,f=3,fo=64,n=112,k=7,p=3"},
            {"odd_rect", "S=64,f=64,fo=64,h=37,w=45,kh=5,kw=7,ph=2,pw=3"},
            {"large_15", "S=32,f=128,fo=128,n=32,k=15,p=7"},
            {"large_21", "S=16,f=64,fo=64,n=64,k=21,p=10"}};
  if (set == "large")
    return {{"L1", "L1"},
            {"img256_k7", "S=16,f=64,fo=64,n=256,k=7,p=3"},
            {"img512_k15", "S=4,f=32,fo=32,n=512,k=15,p=7"},
            {"img2048_k31", "S=1,f=8,fo=8,n=2048,k=31,p=15"},
            {"rect_k9", "S=8,f=16,fo=16,h=300,w=500,k=9,p=4"},
            {"big_k45", "S=8,f=32,fo=32,n=96,k=45,p=22"}};
  if (set == "depthwise")
    return {{"convnext_s1", "S=64,f=128,fo=128,n=56,k=7,p=3,g=128"},
            {"convnext_s3", "S=64,f=512,fo=512,n=14,k=7,p=3,g=512"},
            {"replk_s1", "S=64,f=128,fo=128,n=56,k=31,p=15,g=128"},
            {"replk_s2", "S=64,f=256,fo=256,n=28,k=29,p=14,g=256"},
            {"replk_s3", "S=64,f=512,fo=512,n=14,k=27,p=13,g=512"},
            {"replk_s4", "S=64,f=1024,fo=1024,n=7,k=13,p=6,g=1024"},
            {"slak_51", "S=64,f=128,fo=128,n=56,k=51,p=25,g=128"},
            {"resnet_3x3_s2", "S=64,f=128,fo=128,n=56,k=3,p=1,s=2"},
            {"resnet_1x1_s2", "S=64,f=256,fo=512,n=28,k=1,s=2"},
            {"deeplab_3x3_d2", "S=16,f=256,fo=256,n=64,k=3,p=2,d=2"},
            {"deeplab_3x3_d4", "S=16,f=256,fo=256,n=64,k=3,p=4,d=4"}};
  std::string known;
  for (const auto& n : layer_set_names()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("set: unknown layer set '" + set + "' (known: " + known + ")");
}

std::vector<LayerProblem> resolve_layers(const std::string& set, const std::vector<std::string>& specs,
                                         int64_t batch) {
  if (batch < 0) throw InvalidArgument("batch: must be >= 0 (0 = each layer's own), got " + std::to_string(batch));
  std::vector<LayerProblem> out;
  auto add = [&](const std::string& name, const std::string& spec) {
    ConvProblem p = ConvProblem::parse(spec);
    if (batch > 0) p.S = batch;
    p.validate();
    out.push_back({name, p});
  };
  if (!set.empty())
    for (const NamedLayer& l : layer_set(set)) add(l.name, l.spec);
  else
    for (const std::string& spec : specs) add(spec, spec);
  return out;
}

std::vector<LayerProblem> select_layers(const std::vector<LayerProblem>& layers, const std::vector<std::string>& only) {
  if (only.empty()) return layers;
  std::vector<LayerProblem> kept;
  for (const std::string& name : only) {
    auto it = std::find_if(layers.begin(), layers.end(), [&](const LayerProblem& l) { return l.name == name; });
    if (it == layers.end()) throw InvalidArgument("--only: no layer '" + name + "' in the layers to run");
    kept.push_back(*it);
  }
  return kept;
}

nlohmann::json layer_list_json(const std::string& set, const std::vector<std::string>& specs, int64_t batch,
                               const std::vector<std::string>& only) {
  using nlohmann::json;
  json layers = json::array(), common_batch;
  std::map<std::string, std::string> first_of;  // spec -> first layer with it
  for (const LayerProblem& l : select_layers(resolve_layers(set, specs, batch), only)) {
    const std::string spec = l.p.to_string();
    const auto [f, fresh] = first_of.emplace(spec, l.name);
    layers.push_back({{"name", l.name}, {"spec", spec}, {"stride", l.p.sh}, {"same_as", fresh ? "" : f->second}});
    if (layers.size() == 1) common_batch = l.p.S;
    else if (common_batch != l.p.S) common_batch = nullptr;
  }
  const std::string name = set.empty() ? "custom" : set;
  return {{"batch", common_batch}, {"set", name}, {"networks", json::array({{{"name", name}, {"layers", layers}}})}};
}

}  // namespace fftconv::bench
