// `fftconv bench networks`: AlexNet, OverFeat-fast and VGG-16 layer by layer at batch 128 against cuDNN
// (bench/networks_bench.hpp); `--list` prints the layers as JSON (the input of bench/torch_networks.py).
// Exit 2 for bad input or without CUDA/cuDNN, 1 when a result of ours fails verification or errors.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "bench/networks_bench.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/errors.hpp"

namespace fftconv::cli {

namespace {

struct NetworksArgs {
  bench::NetworksBenchOptions o;
  std::vector<std::string> passes;
  std::string json_path;
  bool list = false, no_tc = false, no_cudnn = false, no_progress = false, update = false;
  PlanFlags plan;
};

void run(NetworksArgs& a, int* exit_code) {
  bench::NetworksBenchOptions& o = a.o;
  if (a.list) {
    std::cout << bench::network_layers_json(o.networks, o.batch).dump(2) << "\n";
    return;
  }
  if (!a.passes.empty()) {
    o.passes.clear();
    for (const auto& p : a.passes) o.passes.push_back(parse_pass(p));
  }
  o.cudnn = !a.no_cudnn;
  o.cudnn_tensor_ops = !a.no_tc;
  o.plan = a.plan.to_options();
  o.progress = !a.no_progress;
  o.command = command_line("fftconv bench networks");
  if (a.update && a.json_path.empty()) throw InvalidArgument("update: needs --json FILE");
  if (arguments_only()) return;
  nlohmann::json before;  // --update: the file's document, read before the run
  if (a.update && std::filesystem::exists(a.json_path)) {
    std::ifstream in(a.json_path);
    try {
      before = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw InvalidArgument("json: '" + a.json_path + "' is not a networks document (" + e.what() + ")");
    }
  }
  std::ofstream f;
  if (!a.json_path.empty()) {  // opened first: a bad path fails before the run
    f.open(a.json_path + ".tmp");
    if (!f) throw InvalidArgument("json: cannot open '" + a.json_path + ".tmp' for writing");
  }
  bool verified = true;
  nlohmann::json doc = bench::run_networks_bench(o, std::cout, &verified);
  if (!before.is_null()) doc = bench::merge_networks_documents(before, doc);
  if (f.is_open()) {
    if (!(f << doc.dump(1) << "\n")) throw InvalidArgument("json: write to '" + a.json_path + ".tmp' failed");
    f.close();
    std::filesystem::rename(a.json_path + ".tmp", a.json_path);
  }
  if (!verified) {
    std::cerr << "fftconv bench networks: a result of our backends failed verification or errored\n";
    *exit_code = kExitCheckFailed;
  }
}

}  // namespace

void add_bench_networks_command(CLI::App& bench, int* exit_code) {
  auto a = std::make_shared<NetworksArgs>();
  bench::NetworksBenchOptions& o = a->o;
  o.cell.cell_seconds = 120;  // whole layers at batch 128: a slow cuDNN algorithm still gets timed
  CLI::App* cmd = bench.add_subcommand(
      "networks", "The paper's AlexNet / OverFeat-fast table and VGG-16: every convolutional layer at batch 128, "
                  "per pass and in total, cuDNN (FMA and tensor-op math) against our backends, verified");
  cmd->add_option("--networks", o.networks, "alexnet, overfeat, vgg16")->delimiter(',')->capture_default_str();
  cmd->add_option("--backends", o.backends, "our backends to time (cufft, fbfft, auto where built)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--passes", a->passes, "fprop,bprop,accgrad (default: all)")->delimiter(',');
  cmd->add_option("--batch", o.batch, "batch size S of every layer")->capture_default_str();
  cmd->add_flag("--no-cudnn-tensor-ops", a->no_tc, "time cuDNN in FMA math only (not also with tensor-op math)");
  cmd->add_flag("--no-cudnn", a->no_cudnn, "leave cuDNN out (a run of host backends, e.g. --backends fftw)");
  cmd->add_option("--json", a->json_path, "write the results (layers, cells, totals, device, command) here");
  cmd->add_flag("--update", a->update, "add this run's networks to the --json file (one measured again is replaced), "
                                      "so that the networks can be measured in separate calls");
  cmd->add_flag("--list", a->list, "print the layers of --networks at --batch as JSON and exit");
  cmd->add_option("--cell-seconds", o.cell.cell_seconds, "cap on one cell's warm-up and timed runs")->capture_default_str();
  cmd->add_option("--warmup", o.cell.warmup, "untimed runs before the timed ones")->capture_default_str();
  cmd->add_option("--repeat", o.cell.repeat, "timed runs, at most")->capture_default_str();
  cmd->add_option("--min-repeat", o.cell.min_repeat, "timed runs, at least")->capture_default_str();
  cmd->add_option("--budget-ms", o.cell.budget_ms, "measured time per cell aimed at")->capture_default_str();
  cmd->add_option("--check", o.cell.check, "reference: auto | direct | fftw64 | gpu64")->capture_default_str();
  cmd->add_option("--data-seed", o.data_seed, "seed of the operands")->capture_default_str();
  cmd->add_option("--note", o.note, "text recorded in the JSON (e.g. the commit)");
  cmd->add_flag("--no-progress", a->no_progress, "no progress line on stderr");
  a->plan.add_to(cmd);
  cmd->callback([a, exit_code] { run(*a, exit_code); });
}

}  // namespace fftconv::cli
