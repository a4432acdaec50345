// The `fftconv` command: entry point, error-to-exit-status mapping (2 for bad input, 1 for a
// failed check, never a signal).
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "cli/commands.hpp"
#include "common/errors.hpp"

int main(int argc, char** argv) {
  using namespace fftconv;
  CLI::App app{"fftconv: convolutional layers (fprop, bprop, accGrad) computed by FFT, on the CPU "
               "(FFTW3 reference) and NVIDIA GPUs (cuFFT/cuBLAS, fbfft), checked against direct ground truth."};
  app.set_version_flag("--version", std::string("fftconv " FFTCONV_VERSION) +
                                         (FFTCONV_CUDA_BUILT ? " (CUDA backends built)" : " (CPU backends only)"));
  app.require_subcommand(1);
  int exit_code = cli::kExitOk;
  cli::add_backends_command(app, &exit_code);
  cli::add_run_command(app, &exit_code);
  cli::add_plan_command(app, &exit_code);
  cli::add_validate_command(app, &exit_code);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks: layers (vs cuDNN), fft (fbfft vs cuFFT), conv (backend vs backend grid), tiling (CPU)");
  bench->require_subcommand(1);
  cli::add_bench_layers_command(*bench, &exit_code);
  cli::add_bench_fft_command(*bench, &exit_code);
  cli::add_bench_tiling_command(*bench, &exit_code);
  cli::add_bench_conv_command(*bench, &exit_code);
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
    return cli::kExitBadInput;
  } catch (const InvalidProblem& e) {
    std::fprintf(stderr, "fftconv: invalid problem: %s\n", e.what());
    return cli::kExitBadInput;
  } catch (const InvalidArgument& e) {
    std::fprintf(stderr, "fftconv: invalid argument: %s\n", e.what());
    return cli::kExitBadInput;
  } catch (const Unsupported& e) {
    std::fprintf(stderr, "fftconv: unsupported: %s\n", e.what());
    return cli::kExitBadInput;
  } catch (const OutOfMemory& e) {
    std::fprintf(stderr, "fftconv: out of memory: %s\n", e.what());
    return cli::kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fftconv: out of host memory\n");
    return cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fftconv: error: %s\n", e.what());
    return cli::kExitCheckFailed;
  }
  return exit_code;
}
