// The named layer sets and their JSON list (`fftconv bench layers --list`, the input of
// bench/torch_networks.py): names, canonical specs with the options of each layer, batch overrides;
// the host-side checks of `bench layers`' options.
#include <doctest/doctest.h>

#include "bench/layer_sets.hpp"
#include "bench/layers_bench.hpp"
#include "common/errors.hpp"

using namespace fftconv;
using namespace fftconv::bench;
using nlohmann::json;

TEST_CASE("layer list: the depthwise set in the shape of bench networks --list") {
  const json j = layer_list_json("depthwise", {}, 0);
  CHECK(j["batch"].is_null());  // batch 64, the DeepLab rows 16
  CHECK(j["set"] == "depthwise");
  REQUIRE(j["networks"].size() == 1);
  CHECK(j["networks"][0]["name"] == "depthwise");
  const json& layers = j["networks"][0]["layers"];
  REQUIRE(layers.size() == layer_set("depthwise").size());
  CHECK(layers[0]["name"] == "convnext_s1");
  CHECK(layers[0]["spec"] == "S=64,f=128,fo=128,h=56,w=56,kh=7,kw=7,ph=3,pw=3,pad=zero,g=128");
  CHECK(layers[0]["same_as"] == "");
  for (const json& l : layers) {
    const ConvProblem p = ConvProblem::parse(l["spec"].get<std::string>());
    CHECK(l["stride"] == p.sh);
    CHECK(p.to_string() == l["spec"].get<std::string>());  // canonical: what `bench layers --set depthwise` times
  }
  CHECK(layers[7]["name"] == "resnet_3x3_s2");
  CHECK(layers[7]["stride"] == 2);
  CHECK(ConvProblem::parse(layers[9]["spec"].get<std::string>()).dh == 2);

  const json small = layer_list_json("depthwise", {}, 2);
  CHECK(small["batch"] == 2);
  for (const json& l : small["networks"][0]["layers"]) CHECK(l["spec"].get<std::string>().rfind("S=2,", 0) == 0);
}

TEST_CASE("layer list: specs named by themselves, repeats marked, bad input refused") {
  const json j = layer_list_json("", {"L5", "S=4,f=2,fo=3,n=9,k=3,g=1", "L5,S=128", "L5,S=2"}, 0);
  CHECK(j["batch"].is_null());
  const json& layers = j["networks"][0]["layers"];
  CHECK(j["set"] == "custom");
  CHECK(j["networks"][0]["name"] == "custom");
  CHECK(layers[0]["name"] == "L5");
  CHECK(layers[2]["same_as"] == "L5");  // the preset at its own batch, 128
  CHECK(layers[3]["same_as"] == "");
  CHECK(layer_list_json("", {"L5", "L4"}, 0)["batch"] == 128);
  CHECK_THROWS_AS(layer_list_json("nope", {}, 0), InvalidArgument);
  CHECK_THROWS_AS(layer_list_json("L", {}, -1), InvalidArgument);
  CHECK_THROWS_AS(layer_list_json("", {"n=0"}, 0), InvalidProblem);
}

TEST_CASE("layer list: --only keeps the named layers in its own order and refuses others") {
  const std::vector<LayerProblem> all = resolve_layers("L", {}, 0);
  CHECK(select_layers(all, {}).size() == all.size());
  const std::vector<LayerProblem> two = select_layers(all, {"L5", "L2"});
  REQUIRE(two.size() == 2);
  CHECK(two[0].name == "L5");
  CHECK(two[1].name == "L2");
  CHECK_THROWS_WITH_AS(select_layers(all, {"L2", "L9"}), "--only: no layer 'L9' in the layers to run", InvalidArgument);
  const json j = layer_list_json("L", {}, 0, {"L4"});
  REQUIRE(j["networks"][0]["layers"].size() == 1);
  CHECK(j["networks"][0]["layers"][0]["name"] == "L4");
}

TEST_CASE("bench layers: options are checked on the host and give the layers and passes run") {
  LayersBenchOptions o;
  o.set = "large";
  o.only = {"big_k45", "L1"};
  o.passes = {"accgrad", "fprop"};
  const LayersBenchScope scope = check_layers_bench_options(o);
  REQUIRE(scope.layers.size() == 2);
  CHECK(scope.layers[0].name == "big_k45");
  CHECK(scope.layers[1].name == "L1");
  REQUIRE(scope.passes.size() == 2);
  CHECK(scope.passes[0] == Pass::accgrad);
  CHECK(scope.passes[1] == Pass::fprop);

  auto refused = [](auto change, const std::string& message) {
    LayersBenchOptions bad;
    change(bad);
    CAPTURE(message);
    try {
      (void)check_layers_bench_options(bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find(message) != std::string::npos);
    }
  };
  refused([](LayersBenchOptions& b) { b.batch = -1; }, "--batch: must be >= 0 (0 = each layer's own), got -1");
  refused([](LayersBenchOptions& b) { b.verify_batch = 0; }, "--verify-batch: must be >= 1, got 0");
  refused([](LayersBenchOptions& b) { b.repeat = 0; }, "--repeat: must be >= 1, got 0");
  refused([](LayersBenchOptions& b) { b.warmup = -2; }, "--warmup: must be >= 0, got -2");
  refused([](LayersBenchOptions& b) { b.tile = "7x"; }, "7x");
  refused([](LayersBenchOptions& b) { b.math = "fp16"; }, "fp16");
  refused([](LayersBenchOptions& b) { b.passes.clear(); }, "--passes: names no pass");
  refused([](LayersBenchOptions& b) { b.passes = {"fprop", "backward"}; }, "unknown value 'backward'");
  refused([](LayersBenchOptions& b) { b.set = "nope"; }, "unknown layer set 'nope'");
  refused([](LayersBenchOptions& b) { b.only = {"L9"}; }, "--only: no layer 'L9' in the layers to run");
}
