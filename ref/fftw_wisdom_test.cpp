// Tests of FFTW's wisdom kept beside a tune cache file (Note [fftw wisdom]): written after planning,
// read back by a planner that has forgotten it (as a new process), the same algorithm then chosen, and
// an unreadable file taken as a miss.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/fftconv.hpp"
#include "ref/fftw_engine.hpp"
#include "validation/data.hpp"

using namespace fftconv;

namespace {

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The float32 fprop result of `plan` on operands of `seed`.
std::vector<float> fprop(const ConvProblem& p, const Plan& plan, uint64_t seed) {
  const PassData d = make_pass_data(p, Pass::fprop, seed);
  const std::vector<float> x(d.input.begin(), d.input.end()), w(d.weight.begin(), d.weight.end());
  std::vector<float> y(d.result.size(), std::numeric_limits<float>::quiet_NaN());
  Args a;
  a.input = x.data(), a.weight = w.data(), a.result = y.data();
  plan.execute(a);
  return y;
}

// A temporary tune cache folder for one test, removed at its end: the options that point at it and
// the float wisdom file beside it.
struct WisdomDir {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fftconv_wisdom_" + std::to_string(std::random_device{}()));
  std::filesystem::path file = dir / "fftw-wisdom-float";
  PlanOptions options;
  WisdomDir() {
    std::filesystem::create_directories(dir);
    options.tune_cache = (dir / "cufft-tune.json").string();
  }
  ~WisdomDir() { std::filesystem::remove_all(dir); }
};

}  // namespace

TEST_CASE("fftw keeps FFTW's wisdom beside a tune cache file and reads it back (Note [fftw wisdom])") {
  const WisdomDir w;
  const auto& file = w.file;
  const PlanOptions& o = w.options;
  // Odd sizes, planned nowhere else in this program.
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=4,h=37,w=29,kh=6,kw=5,ph=1,pw=2");
  const Backend& fftw = builtin_registry().get("fftw");
  forget_fftw_wisdom<float>();
  const auto first = fftw.plan(p, Pass::fprop, o);
  REQUIRE(std::filesystem::exists(file));
  const std::string written = read(file);
  CHECK(written.find("fftw") != std::string::npos);
  CHECK(written == fftw_wisdom_text<float>());
  const std::vector<float> y = fprop(p, *first, 7);

  // As a new process: FFTW forgets, the next plan reads the file and takes the same algorithms.
  forget_fftw_wisdom<float>();
  CHECK(fftw_wisdom_text<float>() != written);
  const auto again = fftw.plan(p, Pass::fprop, o);
  CHECK(fftw_wisdom_text<float>().find(written.substr(written.find('\n') + 1, 40)) != std::string::npos);
  CHECK(fprop(p, *again, 7) == y);  // bit for bit

  // Without a tune cache nothing is written; an unreadable file is a miss, rewritten with wisdom.
  std::ofstream(file) << "(not wisdom";
  forget_fftw_wisdom<float>();
  const auto fresh = fftw.plan(p, Pass::fprop, PlanOptions{});
  CHECK(read(file) == "(not wisdom");
  forget_fftw_wisdom<float>();
  const auto mended = fftw.plan(p, Pass::fprop, o);
  CHECK(read(file).find("fftw") != std::string::npos);
  CHECK(fprop(p, *mended, 7).size() == y.size());
}

TEST_CASE("fftw depthwise keeps its wisdom beside the tune cache file too (Note [fftw wisdom])") {
  const WisdomDir w;
  // Depthwise (g = f), sizes planned nowhere else in this program.
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=3,g=3,h=43,w=19,kh=3,kw=6,ph=1,pw=2");
  const Backend& fftw = builtin_registry().get("fftw");
  forget_fftw_wisdom<float>();
  const auto first = fftw.plan(p, Pass::fprop, w.options);
  CHECK(first->describe().find("depthwise") != std::string::npos);
  REQUIRE(std::filesystem::exists(w.file));
  const std::string written = read(w.file);
  CHECK(written == fftw_wisdom_text<float>());
  const std::vector<float> y = fprop(p, *first, 11);
  forget_fftw_wisdom<float>();
  CHECK(fftw_wisdom_text<float>() != written);
  const auto again = fftw.plan(p, Pass::fprop, w.options);
  CHECK(fftw_wisdom_text<float>().find(written.substr(written.find('\n') + 1, 40)) != std::string::npos);
  CHECK(fprop(p, *again, 11) == y);  // bit for bit
}
