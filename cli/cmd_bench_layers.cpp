// `fftconv bench layers`: the paper's Table 4 (L1..L5 at S=128) — cuDNN's best fp32 algorithm against
// our CUDA backends and the naive cufft pipeline; exit 2 without a CUDA build or device, 1 when a
// backend fails verification. `--list` prints the layers as JSON (bench/torch_networks.py reads it).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "bench/layer_sets.hpp"
#include "bench/layers_bench.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "common/errors.hpp"

namespace fftconv::cli {
namespace {

int run(bench::LayersBenchOptions o, const std::string& json_path, bool resume) {
  // Bad options fail before the device is asked for, on any machine.
  (void)bench::check_layers_bench_options(o);
  if (resume && json_path.empty()) throw InvalidArgument("--resume: needs --json (the results to continue)");
  if (arguments_only()) return kExitOk;  // no file is read or written when only the arguments are checked
  if (resume) {
    if (std::ifstream f(json_path); f) {
      std::ostringstream text;
      text << f.rdbuf();
      o.resume = text.str();
    }
  }
  if (!json_path.empty()) {  // before any measurement: a path that cannot be written fails now
    std::ofstream probe(json_path + ".partial");
    if (!probe) throw InvalidArgument("--json: cannot open '" + json_path + ".partial' for writing");
    probe.close();
    std::filesystem::remove(json_path + ".partial");
  }
  std::string why;
  if (!bench::layers_bench_available(&why)) {
    std::fprintf(stderr, "fftconv bench layers: %s\n", why.c_str());
    return kExitBadInput;
  }
  if (!json_path.empty()) o.checkpoint = [&](const std::string& doc) { write_json_file(json_path, doc, "--json"); };
  bool verified = true;
  const std::string doc = bench::run_layers_bench(o, std::cout, &verified);
  if (!json_path.empty()) write_json_file(json_path, doc, "--json");
  if (!verified) {
    std::fprintf(stderr, "fftconv bench layers: at least one backend failed verification or errored\n");
    return kExitCheckFailed;
  }
  return kExitOk;
}

}  // namespace

void add_bench_layers_command(CLI::App& bench, int* exit_code) {
  auto o = std::make_shared<bench::LayersBenchOptions>();
  auto json_path = std::make_shared<std::string>();
  auto no_tc = std::make_shared<bool>(false);
  auto no_autotune = std::make_shared<bool>(false);
  auto list = std::make_shared<bool>(false);
  CLI::App* cmd = bench.add_subcommand(
      "layers", "Paper Table 4 and named sets: cuDNN (every algorithm, strict fp32 and with tensor cores) vs our CUDA "
                "backends, verified at a small batch");
  cmd->add_option("--set", o->set, "a named layer set: L (the paper's Table 4), modern, large, depthwise "
                                   "(overrides --layers)");
  cmd->add_option("--layers", o->layers, "layer specs (presets L1..L5 take overrides, e.g. 'L2,pad=mirror')")
      ->delimiter(';');
  cmd->add_option("--passes", o->passes, "passes: fprop,bprop,accgrad")->delimiter(',');
  cmd->add_option("--backends", o->backends, "CUDA backends to time (auto, fbfft, cufft, cufft-naive)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--naive", o->naive, "add the naive cufft pipeline (the paper's) beside cufft");
  cmd->add_flag("--no-cudnn-tensor-ops", *no_tc, "time cuDNN in strict fp32 only (not also with TF32 tensor cores)");
  cmd->add_option("--math", o->math, "products of our backends: auto | fp32 | 3xtf32 | tf32")->capture_default_str();
  cmd->add_option("--batch", o->batch, "batch size S of every layer (default 0: each layer's own; L1..L5: 128)");
  cmd->add_option("--verify-batch", o->verify_batch, "batch of the verification run (default 4)");
  cmd->add_option("--repeat", o->repeat, "timed repetitions (median and min reported)");
  cmd->add_option("--warmup", o->warmup, "untimed repetitions first");
  cmd->add_flag("--no-autotune", *no_autotune, "heuristic configuration instead of timing candidates");
  cmd->add_option("--tune-cache", o->tune_cache, "JSON file caching the autotuner's winners; none: in memory only");
  cmd->add_option("--tile", o->tile,
                  "also plan fbfft and cufft with this tile spec (auto, N or HxW), labelled e.g. 'fbfft tile=auto'")
      ->capture_default_str();
  cmd->add_option("--json", *json_path,
                  "write the results (device, versions, command, rows) as JSON here, rewritten after every row");
  cmd->add_option("--only", o->only, "run only these layers of the set (names, comma-separated)")->delimiter(',');
  auto resume = std::make_shared<bool>(false);
  cmd->add_flag("--resume", *resume, "keep the rows already in --json (an earlier run of the same set and backends) "
                                     "and time only the others");
  cmd->add_flag("--list", *list, "print the layers of --set or --layers (and --only) at --batch as JSON (the shape "
                                 "of `bench networks --list`) and exit; needs no CUDA");
  cmd->callback([o, json_path, no_tc, no_autotune, resume, list, exit_code]() {
    if (*list) {
      std::cout << bench::layer_list_json(o->set, o->layers, o->batch, o->only).dump(2) << "\n";
      *exit_code = kExitOk;
      return;
    }
    o->cudnn_tensor_ops = !*no_tc;
    o->autotune = !*no_autotune;
    o->command_line = command_line();
    *exit_code = run(*o, *json_path, *resume);
  });
}

}  // namespace fftconv::cli
