// The `fftconv` command as a function: builds the subcommands, parses argv, runs the chosen one and
// maps errors to exit statuses (2 bad input, 1 a failed check, never a signal). main() and the CLI
// fuzz target call it.
#pragma once

namespace fftconv::cli {

int run_cli(int argc, const char* const* argv);

}  // namespace fftconv::cli
