// libFuzzer target (clang -fsanitize=fuzzer,address,undefined; scripts/fuzz.sh): `validate --resume`
// on a mutated results file. The input is the file; a sweep of two small problems on `direct`
// resumes it. It either refuses the file (InvalidArgument naming a malformed line) or ends with a
// file that reads back whole and holds a record of every (problem, pass) of the sweep.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include "common/errors.hpp"
#include "validation/runner.hpp"

using namespace fftconv;

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

const char* const kSet = "n=5,k=3;S=2,f=2,fo=1,h=4,w=6,kh=2,kw=3,p=1,pad=mirror";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fftconv_fuzz_resume_" + std::to_string(getpid()) + ".jsonl";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  ValidateOptions o;
  o.set = kSet;
  o.backends = {"direct"};
  o.data_seed = 1;
  o.out = path;
  o.resume = true;
  o.progress = false;
  try {
    run_validation(o, nullptr);
  } catch (const InvalidArgument&) {
    return 0;  // a line that is not a record, before the last
  }
  const std::vector<Record> records = read_records(path);  // must read back whole
  std::set<std::string> keys;
  for (const Record& r : records) keys.insert(r.key());
  for (const char* spec : {"S=1,f=1,fo=1,h=5,w=5,kh=3,kw=3,ph=0,pw=0,pad=zero",
                           "S=2,f=2,fo=1,h=4,w=6,kh=2,kw=3,ph=1,pw=1,pad=mirror"})
    for (const char* pass : {"fprop", "bprop", "accgrad", "adjoint"})
      require(keys.count(std::string(spec) + "|" + pass + "|direct|none") == 1);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const std::streamoff n = in.tellg();
  if (n > 0) {
    in.seekg(n - 1);
    require(in.get() == '\n');
  }
  return 0;
}
