// `fftconv bench layers`: the paper's Table 4 (L1..L5 at S=128) — cuDNN's best fp32 algorithm against
// our CUDA backends and the naive cufft pipeline; exit 2 without a CUDA build or device, 1 when a
// backend fails verification.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "bench/layers_bench.hpp"
#include "cli/commands.hpp"
#include "common/errors.hpp"

namespace fftconv::cli {
namespace {

// The command line as typed (from /proc/self/cmdline), for the JSON record.
std::string command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : all) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "fftconv bench layers" : out;
}

int run(const bench::LayersBenchOptions& o, const std::string& json_path) {
  if (arguments_only()) return kExitOk;
  std::string why;
  if (!bench::layers_bench_available(&why)) {
    std::fprintf(stderr, "fftconv bench layers: %s\n", why.c_str());
    return kExitBadInput;
  }
  bool verified = true;
  const std::string doc = bench::run_layers_bench(o, std::cout, &verified);
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    if (!f) throw InvalidArgument("--json: cannot open '" + json_path + "' for writing");
    f << doc << "\n";
    if (!f) throw InvalidArgument("--json: write to '" + json_path + "' failed");
  }
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
  auto no_naive = std::make_shared<bool>(false);
  auto no_autotune = std::make_shared<bool>(false);
  CLI::App* cmd = bench.add_subcommand(
      "layers", "Paper Table 4: cuDNN (every fp32 algorithm) vs our CUDA backends on L1..L5, verified at a small batch");
  cmd->add_option("--layers", o->layers, "layer specs (presets L1..L5 take overrides, e.g. 'L2,pad=mirror')")
      ->delimiter(';');
  cmd->add_option("--passes", o->passes, "passes: fprop,bprop,accgrad")->delimiter(',');
  cmd->add_option("--backends", o->backends, "CUDA backends to time (cufft, fbfft, cufft-naive)")->delimiter(',');
  cmd->add_flag("--no-naive", *no_naive, "do not add the naive cufft pipeline beside cufft");
  cmd->add_option("--batch", o->batch, "batch size S of every layer (default 128)")->check(CLI::PositiveNumber);
  cmd->add_option("--verify-batch", o->verify_batch, "batch of the verification run (default 4)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--repeat", o->repeat, "timed repetitions (median and min reported)")->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o->warmup, "untimed repetitions first")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-autotune", *no_autotune, "heuristic configuration instead of timing candidates");
  cmd->add_option("--tune-cache", o->tune_cache, "JSON file caching the autotuner's winners");
  cmd->add_option("--json", *json_path, "write the results (device, versions, command, rows) as JSON here");
  cmd->callback([o, json_path, no_naive, no_autotune, exit_code]() {
    o->naive = !*no_naive;
    o->autotune = !*no_autotune;
    o->command_line = command_line();
    *exit_code = run(*o, *json_path);
  });
}

}  // namespace fftconv::cli
