// The networks benchmark (networks_bench.hpp): the layer lists chain as the networks do, totals count
// strided layers at cuDNN's time and name what is missing, and a host run of AlexNet at batch 1.
#include <doctest/doctest.h>

#include <sstream>

#include "bench/networks_bench.hpp"
#include "common/errors.hpp"

using namespace fftconv;
using namespace fftconv::bench;
using nlohmann::json;

namespace {

std::map<std::string, int64_t> spec_fields(const std::string& spec) {
  std::map<std::string, int64_t> m;
  std::stringstream ss(spec);
  for (std::string kv; std::getline(ss, kv, ',');) {
    const auto eq = kv.find('=');
    if (kv.substr(eq + 1) != "zero") m[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
  }
  return m;
}

// Output side of a layer: (h + 2p - k) / stride + 1.
int64_t out_size(const std::map<std::string, int64_t>& f, int64_t stride) {
  const int64_t h = f.count("h") ? f.at("h") : f.at("n"), k = f.count("kh") ? f.at("kh") : f.at("k");
  const int64_t p = f.count("ph") ? f.at("ph") : f.count("p") ? f.at("p") : 0;
  return (h + 2 * p - k) / stride + 1;
}

}  // namespace

TEST_CASE("the networks' layers chain channel to channel and size to size (pooling between blocks)") {
  // After each layer: the max pooling that follows it (kernel, stride), 0 for none.
  const std::map<std::string, std::vector<std::pair<int, int>>> pools{
      {"alexnet", {{3, 2}, {3, 2}, {0, 0}, {0, 0}, {3, 2}}},
      {"overfeat", {{2, 2}, {2, 2}, {0, 0}, {0, 0}, {2, 2}}},
      {"vgg16", {{0, 0}, {2, 2}, {0, 0}, {2, 2}, {0, 0}, {0, 0}, {2, 2}, {0, 0}, {0, 0}, {2, 2}, {0, 0}, {0, 0}, {2, 2}}}};
  for (const std::string& net : network_names()) {
    INFO(net);
    const std::vector<NetworkLayer> layers = network_layers(net, 128);
    REQUIRE(layers.size() == pools.at(net).size());
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const auto f = spec_fields(layers[i].spec);
      CHECK(f.at("S") == 128);
      if (i == 0) {
        CHECK(f.at("f") == 3);
        continue;
      }
      const auto prev = spec_fields(layers[i - 1].spec);
      CHECK(prev.at("fo") == f.at("f"));
      int64_t side = out_size(prev, layers[i - 1].stride);
      if (const auto [k, s] = pools.at(net)[i - 1]; k) side = (side - k) / s + 1;
      CHECK(side == (f.count("h") ? f.at("h") : f.at("n")));
    }
  }
  const std::vector<NetworkLayer> alex = network_layers("alexnet", 128);
  CHECK(alex[0].stride == 4);
  CHECK(alex[0].spec == "S=128,f=3,fo=96,n=227,k=11,s=4");
  CHECK(out_size(spec_fields(alex[0].spec), 4) == 55);
  CHECK(alex[1].spec == "S=128,f=96,fo=256,h=27,w=27,kh=5,kw=5,ph=2,pw=2,pad=zero");
  const std::vector<NetworkLayer> vgg = network_layers("vgg16", 128);
  CHECK(vgg[6].name == "conv3_3");
  CHECK(vgg[6].same_as == "conv3_2");
  CHECK(vgg[12].same_as == "conv5_1");
  CHECK(vgg[5].same_as.empty());
  CHECK_THROWS_AS(network_layers("resnet", 128), InvalidArgument);
  CHECK_THROWS_AS(network_layers("vgg16", 0), InvalidArgument);
  const json j = network_layers_json({"overfeat"}, 64);
  CHECK(j["batch"] == 64);
  CHECK(j["networks"][0]["layers"].size() == 5);
}

TEST_CASE("network totals: per pass sums, strided layers at cuDNN's time, missing layers named") {
  auto ok = [](double ms) { return json{{"status", "ok"}, {"median_ms", ms}}; };
  const json no{{"status", "unsupported"}};
  const json layers = json::array(
      {{{"name", "conv1"}, {"stride", 4},
        {"passes", {{"fprop", {{"cudnn", ok(10)}, {"cufft", no}}}, {"bprop", {{"cudnn", ok(20)}, {"cufft", no}}}}}},
       {{"name", "conv2"}, {"stride", 1},
        {"passes", {{"fprop", {{"cudnn", ok(5)}, {"cufft", ok(1)}}}, {"bprop", {{"cudnn", no}, {"cufft", ok(2)}}}}}}});
  const json t = network_totals(layers, {"cudnn", "cufft"}, {Pass::fprop, Pass::bprop});
  CHECK(t["cufft"]["fprop"].get<double>() == 11.0);
  CHECK(t["cufft"]["bprop"].get<double>() == 22.0);
  CHECK(t["cufft"]["total"].get<double>() == 33.0);
  CHECK(t["cufft"]["complete"] == true);
  CHECK(t["cufft"]["strided_by_cudnn"] == json({"conv1"}));
  CHECK(t["cudnn"]["total"].get<double>() == 35.0);
  CHECK(t["cudnn"]["complete"] == false);  // conv2's bprop has no cuDNN time
  CHECK(t["cudnn"]["missing"] == json({"conv2"}));
  CHECK_FALSE(t["cudnn"].contains("strided_by_cudnn"));
  const json doc{{"device", "test"}, {"batch", 2}, {"networks", {{{"name", "tiny"}, {"totals", t}}}}};
  const std::string table = networks_table(doc);
  CHECK(table.find("cufft (strided by cuDNN)") != std::string::npos);
  CHECK(table.find("without [\"conv2\"]") != std::string::npos);
}

TEST_CASE("networks measured in separate runs join into one document") {
  const json a{{"device", "d"}, {"command", "run a"}, {"networks", {{{"name", "alexnet"}, {"v", 1}}, {{"name", "vgg16"}, {"v", 1}}}}};
  const json b{{"device", "d"}, {"command", "run b"}, {"networks", {{{"name", "vgg16"}, {"v", 2}}}}};
  const json m = merge_networks_documents(a, b);
  REQUIRE(m["networks"].size() == 2);
  CHECK(m["networks"][0] == json({{"name", "alexnet"}, {"v", 1}}));
  CHECK(m["networks"][1] == json({{"name", "vgg16"}, {"v", 2}}));
  CHECK(m["command"] == "run b");
  REQUIRE(m["runs"].size() == 2);
  CHECK(m["runs"][0]["command"] == "run a");
  const json c = merge_networks_documents(m, b);  // a third run keeps the earlier runs
  CHECK(c["runs"].size() == 3);
}

TEST_CASE("a host run of AlexNet at batch 1: every stride-1 layer verified, the strided one reported") {
  NetworksBenchOptions o;
  o.networks = {"alexnet"};
  o.backends = {"fftw"};
  o.cudnn = false;
  o.batch = 1;
  o.passes = {Pass::accgrad};
  o.progress = false;
  o.cell.warmup = 0, o.cell.repeat = 1, o.cell.min_repeat = 1, o.cell.budget_ms = 0;
  std::ostringstream out;
  bool verified = false;
  const json doc = run_networks_bench(o, out, &verified);
  CHECK(verified);
  const json& net = doc["networks"][0];
  REQUIRE(net["layers"].size() == 5);
  for (std::size_t i = 1; i < 5; ++i) {
    const json& c = net["layers"][i]["passes"]["accgrad"]["fftw"];
    INFO(c.dump());
    CHECK(c["status"] == "ok");
    CHECK(c["verified"] == true);
  }
  // The strided conv1: run when the problem type has a stride, else reported with the reason.
  const json& c1 = net["layers"][0]["passes"]["accgrad"]["fftw"];
  CHECK((c1["status"] == "ok" || c1["status"] == "unsupported"));
  const json& t = net["totals"]["fftw"];
  CHECK(t["accgrad"].get<double>() > 0);
  CHECK(t["complete"] == (c1["status"] == "ok"));
  CHECK(out.str().find("alexnet") != std::string::npos);
  for (const char* k : {"device", "command", "date"}) CHECK(doc.contains(k));  // what bench/report.py requires
}

TEST_SUITE("gpu") {
TEST_CASE("a GPU run of AlexNet at batch 2: cuDNN in both maths and cufft, strided conv1 by cuDNN where it runs") {
  NetworksBenchOptions o;
  o.networks = {"alexnet"};
  o.backends = {"cufft"};
  o.batch = 2;
  o.passes = {Pass::fprop};
  o.progress = false;
  o.plan.autotune = false;
  o.cell.warmup = 0, o.cell.repeat = 2, o.cell.min_repeat = 1, o.cell.budget_ms = 0;
  std::ostringstream out;
  bool verified = false;
  json doc;
  try {
    doc = run_networks_bench(o, out, &verified);
  } catch (const Unsupported& e) {
    MESSAGE("no CUDA device or cuDNN: skipping the GPU networks test (", e.what(), ")");
    return;
  }
  CHECK(verified);
  const json& layers = doc["networks"][0]["layers"];
  for (std::size_t i = 1; i < 5; ++i)
    for (const char* impl : {"cudnn", "cudnn-tc", "cufft"}) {
      INFO(i, " ", impl);
      CHECK(layers[i]["passes"]["fprop"][impl]["status"] == "ok");
    }
  const json& t = doc["networks"][0]["totals"];
  CHECK(t["cufft"]["fprop"].get<double>() > 0);
  if (layers[0]["passes"]["fprop"]["cudnn"]["status"] == "ok" && layers[0]["passes"]["fprop"]["cufft"]["status"] != "ok")
    CHECK(t["cufft"]["strided_by_cudnn"] == json({"conv1"}));
}
}  // TEST_SUITE
