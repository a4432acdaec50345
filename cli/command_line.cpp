// The command line as typed and the whole-file write (see command_line.hpp).
#include "cli/command_line.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "common/errors.hpp"

namespace fftconv::cli {

std::string command_line(const std::string& fallback) {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : all) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? fallback : out;
}

void write_json_file(const std::string& path, const std::string& doc, const std::string& option) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream f(tmp);
    if (!f) throw InvalidArgument(option + ": cannot open '" + tmp + "' for writing");
    f << doc << "\n";
    if (!f) throw InvalidArgument(option + ": write to '" + tmp + "' failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw InvalidArgument(option + ": cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
}

}  // namespace fftconv::cli
