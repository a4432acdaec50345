// The command line as typed, for the result files of the benchmarks.
#pragma once
#include <string>

namespace fftconv::cli {

// The process's arguments joined by spaces (from /proc/self/cmdline), or `fallback` where unreadable.
std::string command_line(const std::string& fallback = "fftconv");

}  // namespace fftconv::cli
