// Each subcommand of `fftconv` lives in its own cmd_*.cpp and adds itself to the app here.
#pragma once
#include <CLI/CLI.hpp>

namespace fftconv::cli {

// Exit statuses: 0 ok, 1 a check failed, 2 bad problem or argument.
inline constexpr int kExitOk = 0, kExitCheckFailed = 1, kExitBadInput = 2;

// When set (by the CLI fuzz target, cli/fuzz/fuzz_cli.cpp), every command checks its arguments as
// usual and returns before any work, file or device access. Defined in app.cpp.
bool& arguments_only();

// Each add_* registers a subcommand whose callback sets *exit_code.
void add_backends_command(CLI::App& app, int* exit_code);      // cmd_backends.cpp
void add_run_command(CLI::App& app, int* exit_code);           // cmd_run.cpp
void add_plan_command(CLI::App& app, int* exit_code);          // cmd_plan.cpp
void add_validate_command(CLI::App& app, int* exit_code);      // cmd_validate.cpp
void add_bench_layers_command(CLI::App& bench, int* exit_code);  // cmd_bench_layers.cpp
void add_bench_grid_command(CLI::App& bench, int* exit_code);    // cmd_bench_grid.cpp
void add_bench_networks_command(CLI::App& bench, int* exit_code);  // cmd_bench_networks.cpp
void add_bench_fft_command(CLI::App& bench, int* exit_code);     // cmd_bench_fft.cpp
void add_bench_tiling_command(CLI::App& bench, int* exit_code);  // cmd_bench_tiling.cpp
void add_bench_conv_command(CLI::App& bench, int* exit_code);    // cmd_bench_conv.cpp
void add_bench_step_command(CLI::App& bench, int* exit_code);    // cmd_bench_step.cpp

}  // namespace fftconv::cli
