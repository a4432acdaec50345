// The networks benchmark: layer lists, one cell per distinct (layer, pass), totals per network with
// the strided layers counted at cuDNN's time (see networks_bench.hpp).
#include "bench/networks_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <ostream>

#include "common/errors.hpp"
#include "validation/problem_sets.hpp"
#include "validation/progress.hpp"
#include "validation/report.hpp"

namespace fftconv::bench {

namespace {

using nlohmann::json;

// A layer from the validation set `layers` (label "<network>.<name>"), or a spec written out here.
struct LayerSource {
  const char* name;
  const char* from;  // label in the set, or a spec at S = 1 when strided
  int64_t stride;
};

// AlexNet (one-tower, 227x227 input) and OverFeat-fast (231x231): the first layer is 11x11 with
// stride 4; VGG-16 (configuration D): 3x3, stride 1, padding 1, the set holding each shape once.
const std::map<std::string, std::vector<LayerSource>>& sources() {
  static const std::map<std::string, std::vector<LayerSource>> s{
      {"alexnet",
       {{"conv1", "f=3,fo=96,n=227,k=11", 4}, {"conv2", "alexnet.conv2", 1}, {"conv3", "alexnet.conv3", 1},
        {"conv4", "alexnet.conv4", 1}, {"conv5", "alexnet.conv5", 1}}},
      {"overfeat",
       {{"conv1", "f=3,fo=96,n=231,k=11", 4}, {"conv2", "overfeat.conv2", 1}, {"conv3", "overfeat.conv3", 1},
        {"conv4", "overfeat.conv4", 1}, {"conv5", "overfeat.conv5", 1}}},
      {"vgg16",
       {{"conv1_1", "vgg16.conv1_1", 1}, {"conv1_2", "vgg16.conv1_2", 1}, {"conv2_1", "vgg16.conv2_1", 1},
        {"conv2_2", "vgg16.conv2_2", 1}, {"conv3_1", "vgg16.conv3_1", 1}, {"conv3_2", "vgg16.conv3_2", 1},
        {"conv3_3", "vgg16.conv3_2", 1}, {"conv4_1", "vgg16.conv4_1", 1}, {"conv4_2", "vgg16.conv4_2", 1},
        {"conv4_3", "vgg16.conv4_2", 1}, {"conv5_1", "vgg16.conv5_1", 1}, {"conv5_2", "vgg16.conv5_1", 1},
        {"conv5_3", "vgg16.conv5_1", 1}}}};
  return s;
}

std::string cell(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%10.2f", ms);
  return b;
}

}  // namespace

std::vector<std::string> network_names() { return {"alexnet", "overfeat", "vgg16"}; }

std::vector<NetworkLayer> network_layers(const std::string& network, int64_t batch) {
  if (batch < 1) throw InvalidArgument("batch: must be >= 1, got " + std::to_string(batch));
  const auto it = sources().find(network);
  if (it == sources().end())
    throw InvalidArgument("networks: unknown network '" + network + "' (known: alexnet, overfeat, vgg16)");
  std::map<std::string, ConvProblem> set;
  for (LabeledProblem& lp : problem_set("layers")) set.emplace(lp.label, lp.problem);
  std::vector<NetworkLayer> out;
  std::map<std::string, std::string> first_of;  // spec -> first layer with it
  for (const LayerSource& s : it->second) {
    NetworkLayer l{s.name, "", s.stride, ""};
    if (s.stride > 1) {
      l.spec = "S=" + std::to_string(batch) + "," + s.from + ",s=" + std::to_string(s.stride);
    } else {
      ConvProblem p = set.at(s.from);
      p.S = batch;
      l.spec = p.to_string();
    }
    if (auto [f, fresh] = first_of.emplace(l.spec, l.name); !fresh) l.same_as = f->second;
    out.push_back(l);
  }
  return out;
}

json network_layers_json(const std::vector<std::string>& networks, int64_t batch) {
  json nets = json::array();
  for (const std::string& n : networks) {
    json layers = json::array();
    for (const NetworkLayer& l : network_layers(n, batch))
      layers.push_back({{"name", l.name}, {"spec", l.spec}, {"stride", l.stride}, {"same_as", l.same_as}});
    nets.push_back({{"name", n}, {"layers", layers}});
  }
  return {{"batch", batch}, {"networks", nets}};
}

json run_networks_bench(const NetworksBenchOptions& o, std::ostream& out, bool* all_verified) {
  const auto t_start = std::chrono::steady_clock::now();
  o.cell.validate();
  if (o.passes.empty()) throw InvalidArgument("passes: empty list");
  if (o.networks.empty()) throw InvalidArgument("networks: empty list");
  std::vector<std::string> impls;
  if (o.cudnn) impls.push_back("cudnn");
  if (o.cudnn && o.cudnn_tensor_ops) impls.push_back("cudnn-tc");
  impls.insert(impls.end(), o.backends.begin(), o.backends.end());
  const bool device = device_operands_for(impls);
  std::map<std::string, std::vector<NetworkLayer>> layers;
  int64_t cells = 0;
  for (const std::string& n : o.networks) {
    layers[n] = network_layers(n, o.batch);
    for (const NetworkLayer& l : layers[n]) cells += l.same_as.empty() ? int64_t(o.passes.size() * impls.size()) : 0;
  }
  *all_verified = true;
  CellBench bench(o.cell, device);
  ProgressLine progress("networks", cells, o.progress);
  json doc{{"benchmark", "networks"}, {"command", o.command}, {"device", bench_device(device)},
           {"environment", environment_lines()}, {"date", utc_now()}, {"batch", o.batch},
           {"impls", impls}, {"plan", {{"autotune", o.plan.autotune}, {"extra", o.plan.extra}}},
           {"cell", cell_options_json(o.cell)},
           {"networks", json::array()}};
  if (!o.note.empty()) doc["note"] = o.note;

  for (const std::string& net : o.networks) {
    json jl = json::array();
    std::map<std::string, json> by_name;  // layer name -> its passes (for same_as)
    for (const NetworkLayer& l : layers[net]) {
      json row{{"name", l.name}, {"spec", l.spec}, {"stride", l.stride}};
      if (!l.same_as.empty()) {
        row["same_as"] = l.same_as;
        row["passes"] = by_name[l.same_as];
        jl.push_back(row);
        continue;
      }
      json passes = json::object();
      ConvProblem p;
      std::string parse_error;
      try {
        p = ConvProblem::parse(l.spec);
      } catch (const InvalidProblem& e) {
        parse_error = std::string("this build's problem type cannot express the layer: ") + e.what();
      }
      for (Pass pass : o.passes) {
        json per = json::object();
        if (parse_error.empty()) bench.prepare(p, pass, cell_seed(o.data_seed, l.spec, pass));
        for (const std::string& impl : impls) {
          CellResult r;
          r.impl = impl;
          if (!parse_error.empty()) {
            r.status = "unsupported", r.reason = parse_error;
          } else {
            r = bench.time_impl(impl, o.plan);
          }
          if (!is_cudnn_impl(impl) && r.status == "error") *all_verified = false;
          per[impl] = cell_json(r);
          progress.add(1, net + " " + l.name + " " + std::string(to_string(pass)) + " " + impl + ": " + r.status);
        }
        passes[std::string(to_string(pass))] = per;
      }
      by_name[l.name] = passes;
      row["passes"] = passes;
      jl.push_back(row);
    }
    doc["networks"].push_back({{"name", net}, {"layers", jl}, {"totals", network_totals(jl, impls, o.passes)}});
  }
  progress.finish();
  doc["wall_s"] = round_significant(std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(), 4);
  out << networks_table(doc);
  return doc;
}

json network_totals(const json& layers, const std::vector<std::string>& impls, const std::vector<Pass>& passes) {
  json totals = json::object();
  for (const std::string& impl : impls) {
    json t = json::object();
    double total = 0;
    json missing = json::array(), by_cudnn = json::array();
    for (Pass pass : passes) {
      const std::string ps(to_string(pass));
      double sum = 0;
      for (const json& l : layers) {
        const json& cells = l["passes"].value(ps, json::object());
        const json mine = cells.value(impl, json::object()), base = cells.value("cudnn", json::object());
        if (mine.value("status", "") == "ok") {
          sum += mine["median_ms"].get<double>();
        } else if (!is_cudnn_impl(impl) && l.value("stride", 1) > 1 && base.value("status", "") == "ok") {
          sum += base["median_ms"].get<double>();  // the paper's method: strided layers by cuDNN
          if (pass == passes.front()) by_cudnn.push_back(l["name"]);
        } else if (!std::count(missing.begin(), missing.end(), l["name"])) {
          missing.push_back(l["name"]);
        }
      }
      t[ps] = round_significant(sum, 5);
      total += sum;
    }
    t["total"] = round_significant(total, 5);
    t["complete"] = missing.empty();
    if (!missing.empty()) t["missing"] = missing;
    if (!by_cudnn.empty()) t["strided_by_cudnn"] = by_cudnn;
    totals[impl] = t;
  }
  return totals;
}

json merge_networks_documents(const json& earlier, const json& later) {
  auto run_of = [](const json& d) {
    json r = json::object();
    for (const char* k : {"device", "command", "date", "wall_s", "note"})
      if (d.contains(k)) r[k] = d[k];
    return r;
  };
  json out = later;
  out["runs"] = earlier.value("runs", json::array({run_of(earlier)}));
  out["runs"].push_back(run_of(later));
  out["networks"] = json::array();
  for (const json& n : earlier.value("networks", json::array())) {
    bool replaced = false;
    for (const json& m : later["networks"]) replaced = replaced || m["name"] == n["name"];
    if (!replaced) out["networks"].push_back(n);
  }
  for (const json& m : later["networks"]) out["networks"].push_back(m);
  return out;
}

std::string networks_table(const json& doc) {
  std::string s = "# " + doc.value("device", std::string("?")) + ", batch " + std::to_string(doc.value("batch", 0)) +
                  "; medians in ms, summed over every convolutional layer\n";
  for (const json& net : doc["networks"]) {
    s += net["name"].get<std::string>() + "\n  implementation              fprop      bprop    accGrad      total\n";
    for (const auto& [impl, t] : net["totals"].items()) {
      std::string label = impl;
      if (t.contains("strided_by_cudnn")) label += " (strided by cuDNN)";
      char head[40];
      std::snprintf(head, sizeof head, "  %-24s", label.c_str());
      s += head;
      for (const char* k : {"fprop", "bprop", "accgrad", "total"}) {
        s += ' ';
        s += t.contains(k) ? cell(t[k].get<double>()) : std::string(10, ' ');
      }
      if (!t["complete"].get<bool>()) s += "   without " + t["missing"].dump();
      s += "\n";
    }
  }
  return s;
}

}  // namespace fftconv::bench
