// The `fftconv` command as a function: builds the subcommands, parses argv, runs the chosen one and
// maps errors to exit statuses (2 bad input, 1 a failed check, never a signal). main() and the CLI
// fuzz target call it.
#pragma once

namespace fftconv::cli {

// Which subcommands run_cli builds before parsing: all of them, or only those the command line can
// reach (the default; same help, errors and exit statuses, faster: Note [reachable command tree]).
enum class CommandTree { full, reachable };

int run_cli(int argc, const char* const* argv, CommandTree tree = CommandTree::reachable);

}  // namespace fftconv::cli
