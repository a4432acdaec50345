// libFuzzer target (clang -fsanitize=fuzzer,address,undefined; scripts/fuzz.sh): the problem spec
// parser and the other option parsers of common/. Each input either parses or throws the typed
// error of its field; a parsed problem is valid, prints a spec that parses back to itself, and
// never sets a field twice.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/backend.hpp"
#include "common/errors.hpp"
#include "common/problem.hpp"

using namespace fftconv;

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

template <class F>
void typed(F&& f) {
  try {
    f();
  } catch (const InvalidProblem&) {
  } catch (const InvalidArgument&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  typed([&] {
    const ConvProblem p = ConvProblem::parse(text);
    p.validate();
    const std::string spec = p.to_string();
    require(ConvProblem::parse(spec) == p);
    bool refused = false;  // the canonical spec sets every field: one more key sets one twice
    try {
      ConvProblem::parse(spec + ",n=" + std::to_string(p.h));
    } catch (const InvalidProblem&) {
      refused = true;
    }
    require(refused);
  });
  typed([&] {
    const TileSpec t = TileSpec::parse(text);
    require(TileSpec::parse(t.to_string()) == t);
  });
  typed([&] { require(to_string(parse_pass(text)).size() > 0); });
  typed([&] { (void)parse_padding(text); });
  typed([&] { require(to_string(parse_size_policy(text)).size() > 0); });
  return 0;
}
