// The command line as typed (see command_line.hpp).
#include "cli/command_line.hpp"

#include <fstream>
#include <iterator>

namespace fftconv::cli {

std::string command_line(const std::string& fallback) {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : all) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? fallback : out;
}

}  // namespace fftconv::cli
