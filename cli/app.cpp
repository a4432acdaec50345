// The `fftconv` command (see app.hpp): the subcommands and the error-to-exit-status mapping.
#include "cli/app.hpp"

#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "cli/commands.hpp"
#include "common/errors.hpp"

namespace fftconv::cli {

bool& arguments_only() {
  static bool on = false;
  return on;
}

int run_cli(int argc, const char* const* argv) {
  CLI::App app{"fftconv: convolutional layers (fprop, bprop, accGrad) computed by FFT, on the CPU "
               "(FFTW3 reference) and NVIDIA GPUs (cuFFT/cuBLAS, fbfft), checked against direct ground truth."};
  app.set_version_flag("--version", std::string("fftconv " FFTCONV_VERSION) +
                                         (FFTCONV_CUDA_BUILT ? " (CUDA backends built)" : " (CPU backends only)"));
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_backends_command(app, &exit_code);
  add_run_command(app, &exit_code);
  add_plan_command(app, &exit_code);
  add_validate_command(app, &exit_code);
  CLI::App* bench = app.add_subcommand(
      "bench", "Benchmarks: layers (vs cuDNN), grid (the paper's Table 3 grid vs cuDNN), networks (AlexNet, "
               "OverFeat, VGG-16 vs cuDNN), fft (fbfft vs cuFFT), conv (backend vs backend grid), tiling (CPU), "
               "step (fprop+bprop with shared weight spectra)");
  bench->require_subcommand(1);
  add_bench_layers_command(*bench, &exit_code);
  add_bench_grid_command(*bench, &exit_code);
  add_bench_networks_command(*bench, &exit_code);
  add_bench_fft_command(*bench, &exit_code);
  add_bench_tiling_command(*bench, &exit_code);
  add_bench_conv_command(*bench, &exit_code);
  add_bench_step_command(*bench, &exit_code);
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
