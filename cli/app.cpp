// The `fftconv` command (see app.hpp): the subcommands and the error-to-exit-status mapping.
#include "cli/app.hpp"

#include <cstddef>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "cli/commands.hpp"
#include "common/errors.hpp"

namespace fftconv::cli {

bool& arguments_only() {
  static bool on = false;
  return on;
}

namespace {

// Note [reachable command tree]
// Building the CLI11 tree (every subcommand with all its options, defaults and help strings) costs
// more than parsing one command line, so run_cli builds only the subcommand that argv[1] names (and,
// under `bench`, the one that argv[2] names) beside the top-level options. CLI11 looks a word up as
// a subcommand only among the children of the subcommands on the parsed path and of their parents,
// so the subcommands left out are never consulted and help text, errors and exit status are those
// of the full tree. The full tree is still built where argv[1] names no subcommand (`--help` lists
// them all; `--version`, typos) and, as a guard that does not rest on require_subcommand(1), where a
// later word names a subcommand of the top level or of `bench`. cli/app_test.cpp compares the two.
// Under ASan the CLI fuzz target runs about 1.8x as many inputs a second for it.
struct Command {
  std::string_view name;
  void (*add)(CLI::App&, int*);
};

// The subcommands of `fftconv` (before `bench`) and of `fftconv bench`, in the order of the help text.
constexpr Command kCommands[] = {{"backends", add_backends_command},
                                 {"run", add_run_command},
                                 {"plan", add_plan_command},
                                 {"validate", add_validate_command}};
constexpr std::string_view kBench = "bench";
constexpr Command kBenchCommands[] = {{"layers", add_bench_layers_command}, {"grid", add_bench_grid_command},
                                      {"networks", add_bench_networks_command}, {"fft", add_bench_fft_command},
                                      {"tiling", add_bench_tiling_command},   {"conv", add_bench_conv_command},
                                      {"step", add_bench_step_command}};

template <std::size_t N>
bool names_one_of(const Command (&commands)[N], std::string_view word) {
  for (const Command& c : commands)
    if (word == c.name) return true;
  return false;
}

bool names_subcommand(std::string_view word) {
  return word == kBench || names_one_of(kCommands, word) || names_one_of(kBenchCommands, word);
}

// The subcommand path that argv selects ({} = the full tree; bench may be empty under `bench`).
struct Reach {
  std::string_view top, bench;
};

Reach reachable(int argc, const char* const* argv) {
  if (argc < 2 || (argv[1] != kBench && !names_one_of(kCommands, argv[1]))) return {};
  Reach r{argv[1], {}};
  int next = 2;
  if (r.top == kBench && argc > 2 && names_one_of(kBenchCommands, argv[2])) r.bench = argv[next++];
  for (int i = next; i < argc; ++i)
    if (names_subcommand(argv[i])) return {};
  return r;
}

}  // namespace

int run_cli(int argc, const char* const* argv, CommandTree tree) {
  CLI::App app{"fftconv: convolutional layers (fprop, bprop, accGrad) computed by FFT, on the CPU "
               "(FFTW3 reference) and NVIDIA GPUs (cuFFT/cuBLAS, fbfft), checked against direct ground truth."};
  app.set_version_flag("--version", std::string("fftconv " FFTCONV_VERSION) +
                                         (FFTCONV_CUDA_BUILT ? " (CUDA backends built)" : " (CPU backends only)"));
  app.require_subcommand(1);
  int exit_code = kExitOk;
  const Reach r = tree == CommandTree::reachable ? reachable(argc, argv) : Reach{};
  for (const Command& c : kCommands)
    if (r.top.empty() || r.top == c.name) c.add(app, &exit_code);
  if (r.top.empty() || r.top == kBench) {
    CLI::App* bench = app.add_subcommand(
        "bench", "Benchmarks: layers (vs cuDNN), grid (the paper's Table 3 grid vs cuDNN), networks (AlexNet, "
                 "OverFeat, VGG-16 vs cuDNN), fft (fbfft vs cuFFT), conv (backend vs backend grid), tiling (tiled "
                 "vs untiled plans), step (fprop+bprop with shared weight spectra)");
    bench->require_subcommand(1);
    for (const Command& c : kBenchCommands)
      if (r.bench.empty() || r.bench == c.name) c.add(*bench, &exit_code);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "fftconv: %s\n", e.what());
    return kExitBadInput;
  } catch (const InvalidProblem& e) {
    std::fprintf(stderr, "fftconv: invalid problem: %s\n", e.what());
    return kExitBadInput;
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "fftconv: invalid argument: %s\n", e.what());
    return kExitBadInput;
  } catch (const Unsupported& e) {
    std::fprintf(stderr, "fftconv: unsupported: %s\n", e.what());
    return kExitBadInput;
  } catch (const OutOfMemory& e) {
    std::fprintf(stderr, "fftconv: out of memory: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fftconv: out of host memory\n");
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fftconv: error: %s\n", e.what());
    return kExitCheckFailed;
  }
  return exit_code;
}

}  // namespace fftconv::cli
