#include "common/atomic_write.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>

namespace fftconv {

std::string write_file_atomically(const std::string& file, const std::string& text) {
  static std::atomic<unsigned long> counter{0};
  const std::string tmp = file + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!out) return "cannot write '" + tmp + "'";
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return "write to '" + tmp + "' failed";
    }
  }
  if (std::rename(tmp.c_str(), file.c_str()) != 0) {
    std::remove(tmp.c_str());
    return "cannot rename '" + tmp + "' to '" + file + "'";
  }
  return "";
}

}  // namespace fftconv
