// libFuzzer target (clang -fsanitize=fuzzer,address,undefined; scripts/fuzz.sh): the `fftconv`
// command line. The input is split at newlines into at most 24 arguments; every subcommand parses
// and checks them as usual and stops before any work or file (arguments_only()). run_cli must
// return 0, 1 or 2 (errors become exit statuses; nothing may crash or throw out of it).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/commands.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fftconv::cli::arguments_only() = true;
  std::vector<std::string> words{"fftconv"};
  std::string cur;
  for (size_t i = 0; i < size && words.size() < 24; ++i) {
    const char c = char(data[i]);
    if (c == '\n') {
      words.push_back(cur);
      cur.clear();
    } else if (c != '\0') {
      cur += c;
    }
  }
  if (!cur.empty() && words.size() < 24) words.push_back(cur);
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  const int status = fftconv::cli::run_cli(int(argv.size()), argv.data());
  if (status < 0 || status > 2) __builtin_trap();
  return 0;
}
