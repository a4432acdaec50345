// The command line as typed, and the whole-file write, for the result files of the benchmarks.
#pragma once
#include <string>

namespace fftconv::cli {

// The process's arguments as a command a shell reads back (from /proc/self/cmdline, each argument
// through shell_quote), or `fallback` where unreadable.
std::string command_line(const std::string& fallback = "fftconv");
// `arg` as is when it holds only letters, digits and _@%+=:,./- (and is not empty), else in single
// quotes (a quote inside as '\'').
std::string shell_quote(const std::string& arg);

// Writes `doc` and a newline to `path` whole: to `path`.partial, then renamed over it, so that a run
// stopped while writing leaves the previous file. Throws InvalidArgument naming `option` (the flag
// that gave the path) when the file cannot be written.
void write_json_file(const std::string& path, const std::string& doc, const std::string& option);

}  // namespace fftconv::cli
