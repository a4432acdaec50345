// The command line as typed and the whole-file write (see command_line.hpp).
#include "cli/command_line.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "common/errors.hpp"

namespace fftconv::cli {

std::string shell_quote(const std::string& arg) {
  const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("_@%+=:,./-", c) != nullptr;
  });
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string command_line(const std::string& fallback) {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string out;
  for (std::size_t begin = 0; begin < all.size();) {  // arguments, each ended by a NUL
    std::size_t end = all.find('\0', begin);
    if (end == std::string::npos) end = all.size();
    if (!out.empty()) out += ' ';
    out += shell_quote(all.substr(begin, end - begin));
    begin = end + 1;
  }
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
