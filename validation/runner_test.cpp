// Tests of the sweep runner: CPU backends pass a small set, broken backends are caught (wrong value,
// unwritten element, broken adjoint), unsupported ones are skipped, --resume continues a file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "api/fftconv.hpp"
#include "validation/data.hpp"
#include "validation/runner.hpp"

using namespace fftconv;

namespace {

// Wraps the builtin direct backend and spoils its result in one of several ways.
class SpoiledBackend final : public Backend {
 public:
  enum class Fault { none, wrong_value, unwritten, unsupported, throws };
  SpoiledBackend(std::string name, Fault f) : name_(std::move(name)), fault_(f) {}
  std::string_view name() const override { return name_; }
  Location location() const override { return Location::host; }
  Support supports(const ConvProblem& p, Pass pass, DType d) const override {
    if (fault_ == Fault::unsupported) return {false, "this test backend supports nothing"};
    return builtin_registry().get("direct").supports(p, pass, d);
  }
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& o) const override {
    if (fault_ == Fault::throws) throw std::runtime_error("planner crashed");
    return std::make_unique<SpoiledPlan>(builtin_registry().get("direct").plan(p, pass, o), p.result_elems(pass), fault_);
  }
  std::string_view summary() const override { return "test"; }

 private:
  class SpoiledPlan final : public Plan {
   public:
    SpoiledPlan(std::unique_ptr<Plan> inner, int64_t n, Fault f) : inner_(std::move(inner)), n_(n), fault_(f) {}
    std::size_t workspace_bytes() const override { return 0; }
    void execute(const Args& a) const override {
      auto* out = static_cast<float*>(a.result);
      const float keep = out[n_ - 1];
      inner_->execute(a);
      if (fault_ == Fault::wrong_value) out[0] += 1.0f;
      if (fault_ == Fault::unwritten) out[n_ - 1] = keep;
    }
    std::string describe() const override { return "spoiled " + inner_->describe(); }

   private:
    std::unique_ptr<Plan> inner_;
    int64_t n_;
    Fault fault_;
  };
  std::string name_;
  Fault fault_;
};

ValidateOptions small_options() {
  ValidateOptions o;
  o.set = "S=2,f=3,fo=2,n=9,k=3,p=1,pad=mirror;S=1,f=2,fo=3,h=7,w=12,kh=3,kw=5;n=6,k=6";
  o.progress = false;
  return o;
}

}  // namespace

TEST_CASE("fftw, im2col and direct pass a small set, every pass and the adjoint") {
  ValidateOptions o = small_options();
  o.backends = {"fftw", "im2col", "direct"};
  std::ostringstream js;
  o.json = true;
  const ValidateResult r = run_validation(o, &js);
  CHECK(r.problems == 3);
  CHECK(r.records.size() == 3 * 3 * 4);
  CHECK(r.summary.failures == 0);
  CHECK(r.summary.skipped == 0);
  for (const Record& rec : r.records) {
    INFO(rec.backend, " ", rec.pass, " ", rec.spec, " ", rec.reason);
    CHECK(rec.status == "pass");
    CHECK(rec.tol_rel_l2 > 0);
    if (rec.pass != "adjoint") CHECK(rec.ref == "direct");
    if (rec.backend == "fftw" && rec.pass != "adjoint") CHECK(rec.basis > 1);
    if (rec.backend == "im2col") CHECK(rec.basis == 1);
  }
  std::istringstream lines(js.str());
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) n += record_from_json(line).backend.empty() ? 0 : 1;
  CHECK(n == 36);
}

TEST_CASE("the adjoint check of a layer whose results are exactly zero passes (Note [adjoint tolerance])") {
  // Every tap of the one output column lands in the padding: y, gx and gw are zero, and fftw's
  // rounding noise (about 1e-7) once measured 0.04 against a scale made of the same noise.
  ValidateOptions o = small_options();
  o.set = "S=3,f=4,fo=1,h=38,w=2,kh=6,kw=4,ph=2,pw=4,sw=2,dh=2,dw=3";
  o.backends = {"fftw"};
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    o.data_seed = seed;
    const ValidateResult r = run_validation(o, nullptr);
    for (const Record& rec : r.records) {
      INFO(rec.pass, " ", rec.reason);
      CHECK(rec.status == "pass");
      if (rec.pass == "adjoint") CHECK(rec.rel_l2 < 1e-6);
    }
  }
}

TEST_CASE("broken backends fail, unsupported ones are skipped, a throwing one is an error") {
  Registry reg;
  using F = SpoiledBackend::Fault;
  reg.add(std::make_shared<SpoiledBackend>("honest", F::none));
  reg.add(std::make_shared<SpoiledBackend>("wrong", F::wrong_value));
  reg.add(std::make_shared<SpoiledBackend>("lazy", F::unwritten));
  reg.add(std::make_shared<SpoiledBackend>("picky", F::unsupported));
  reg.add(std::make_shared<SpoiledBackend>("crashy", F::throws));
  ValidateOptions o = small_options();
  const ValidateResult r = run_validation(o, nullptr, &reg);
  for (const Record& rec : r.records) {
    INFO(rec.backend, " ", rec.pass, " ", rec.spec, " ", rec.status, " ", rec.reason);
    if (rec.backend == "honest") CHECK(rec.status == "pass");
    if (rec.backend == "picky") CHECK(rec.status == "skipped");
    if (rec.backend == "crashy") CHECK(rec.status == "error");
    if (rec.backend == "lazy" && rec.pass != "adjoint") {
      CHECK(rec.status == "fail");
      CHECK(rec.nonfinite >= 1);
    }
    if (rec.backend == "wrong") CHECK(rec.status == "fail");  // the adjoint identity breaks too
  }
  CHECK(!r.summary.ok());
  CHECK(r.summary.cells.at("picky").at("fprop").skipped == 3);
}

TEST_CASE("--resume skips what the file already holds; bad options are rejected up front") {
  const std::string path = "runner_test_results.jsonl";
  std::remove(path.c_str());
  ValidateOptions o = small_options();
  o.backends = {"im2col"};
  o.out = path;
  o.passes = {Pass::fprop};
  o.adjoint = false;
  CHECK(run_validation(o, nullptr).records.size() == 3);
  o.passes = {Pass::fprop, Pass::accgrad};
  o.resume = true;
  std::ostringstream js;
  o.json = true;
  const ValidateResult r = run_validation(o, &js);
  CHECK(r.records.size() == 6);
  const std::string text = js.str();
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);  // only the new accgrad records
  CHECK(read_records(path).size() == 6);
  std::remove(path.c_str());

  ValidateOptions bad = small_options();
  bad.backends = {"nope"};
  CHECK_THROWS_AS(run_validation(bad, nullptr), InvalidArgument);
  bad = small_options();
  bad.tile = "banana";
  CHECK_THROWS_AS(run_validation(bad, nullptr), InvalidArgument);
  bad = small_options();
  bad.check = "exact";
  CHECK_THROWS_AS(run_validation(bad, nullptr), InvalidArgument);
}

TEST_CASE("plan options: a key of any backend of the sweep reaches the backends that accept it; others are rejected") {
  ValidateOptions o = small_options();
  o.backends = {"fftw", "direct"};
  o.passes = {Pass::fprop};
  o.adjoint = false;
  o.plan_extra = {{"fftw_cgemm", "eigen"}};  // fftw's: direct plans without it
  ValidateResult r = run_validation(o, nullptr);
  CHECK(r.records.size() == 6);
  for (const Record& rec : r.records) {
    INFO(rec.backend, " ", rec.spec, " ", rec.reason);
    CHECK(rec.status == "pass");
    if (rec.backend == "fftw") CHECK(rec.describe.find("products Eigen") != std::string::npos);
  }
  o.backends = {"direct"};  // the sweep's own default (fftw_planner) goes where it is accepted only
  o.plan_extra.clear();
  CHECK(run_validation(o, nullptr).summary.ok());

  const std::string path = "runner_test_options.jsonl";
  std::remove(path.c_str());
  o.out = path;
  o.plan_extra = {{"fftw_planner", "estimate"}};
  CHECK_THROWS_WITH_AS(run_validation(o, nullptr), "direct: unknown option 'fftw_planner' (accepted: none)",
                       InvalidArgument);
  o.backends = {"fftw", "direct"};
  o.plan_extra = {{"fftw_planner", "estimate"}, {"gemm", "3m"}};
  CHECK_THROWS_WITH_AS(run_validation(o, nullptr),
                       "fftw, direct: unknown option 'gemm' (accepted: fftw: fftw_planner, fftw_cgemm, tiles_in_flight, "
                       "accgrad_reduction, stride; direct: none)",
                       InvalidArgument);
  CHECK(read_records(path).empty());  // rejected before any work
  std::remove(path.c_str());
}

TEST_CASE("--math: the CPU backends keep fp32; a tensor-core mode needs a GPU backend in the sweep") {
  ValidateOptions o = small_options();
  o.backends = {"fftw", "direct"};
  o.passes = {Pass::fprop};
  o.adjoint = false;
  o.math = ProductMath::fp32;
  CHECK(run_validation(o, nullptr).summary.ok());
  for (ProductMath m : {ProductMath::tf32x3, ProductMath::tf32}) {
    o.math = m;
    const std::string want = "math: '" + std::string(to_string(m)) +
                             "' sets the products of the GPU backends, and the sweep has none";
    CHECK_THROWS_WITH_AS(run_validation(o, nullptr), want.c_str(), InvalidArgument);
  }
}

TEST_CASE("every built-in backend rejects a key it does not accept, naming itself and its keys, device or not") {
  const ConvProblem p = ConvProblem::parse("S=2,f=2,fo=3,n=9,k=3,p=1");
  for (const auto& b : builtin_registry().all()) {
    std::string keys;
    for (std::string_view k : b->option_keys()) keys += (keys.empty() ? "" : ", ") + std::string(k);
    PlanOptions o;
    o.extra = {{"totallyunknown", "1"}};
    const std::string want = std::string(b->name()) + ": unknown option 'totallyunknown' (accepted: " +
                             (keys.empty() ? "none" : keys) + ")";
    CHECK_THROWS_WITH_AS(b->plan(p, Pass::fprop, o), want.c_str(), InvalidArgument);
    const std::vector<const Backend*> one{b.get()};
    CHECK_THROWS_WITH_AS(check_option_keys(one, o.extra), want.c_str(), InvalidArgument);
  }
}

namespace {

std::vector<std::string> file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// A record line with its wall-clock fields zeroed: what two runs with one data seed share.
std::string without_timing(const std::string& line) {
  Record r = record_from_json(line);
  r.time_ms = r.plan_ms = r.ref_ms = 0;
  return to_json_line(r);
}

}  // namespace

TEST_CASE("--resume after a cut at any line, or inside one, ends with the uninterrupted run's records") {
  // Problems of different sizes, largest first: an adjoint check sized from the previous problem
  // reads out of bounds or gives another result.
  ValidateOptions o = small_options();
  o.set = "S=2,f=3,fo=2,n=9,k=3,p=1,pad=mirror;n=6,k=6;S=1,f=2,fo=3,h=7,w=12,kh=3,kw=5";
  o.backends = {"fftw", "direct"};
  o.data_seed = 11;
  o.out = "runner_test_whole.jsonl";
  run_validation(o, nullptr);
  const std::vector<std::string> whole = file_lines(o.out);
  REQUIRE(whole.size() == 3 * 2 * 4);
  std::string text;
  for (std::size_t cut = 0; cut <= whole.size(); ++cut) {
    for (bool mid_line : {false, true}) {
      if (mid_line && cut == whole.size()) continue;
      INFO("cut after line ", cut, mid_line ? " and half of the next" : "");
      ValidateOptions r = o;
      r.out = "runner_test_cut.jsonl";
      r.resume = true;
      write_file(r.out, text + (mid_line ? whole[cut].substr(0, whole[cut].size() / 2) : ""));
      run_validation(r, nullptr);
      const std::vector<std::string> resumed = file_lines(r.out);
      REQUIRE(resumed.size() == whole.size());
      for (std::size_t i = 0; i < whole.size(); ++i) CHECK(without_timing(resumed[i]) == without_timing(whole[i]));
    }
    if (cut < whole.size()) text += whole[cut] + "\n";
  }
  std::remove("runner_test_whole.jsonl");
  std::remove("runner_test_cut.jsonl");
}

TEST_CASE("an output that refuses data fails before the sweep") {
  ValidateOptions o = small_options();
  o.backends = {"direct"};
  o.out = "/proc/version";  // opens for writing (as root) but takes no data
  std::ostringstream js;
  o.json = true;
  if (access("/proc/version", F_OK) == 0) {
    CHECK_THROWS_WITH_AS(run_validation(o, &js), doctest::Contains("out: cannot"), InvalidArgument);
    CHECK(js.str().empty());  // no record was made
  }
  o.out = "no_such_directory/x.jsonl";
  CHECK_THROWS_WITH_AS(run_validation(o, &js), doctest::Contains("no_such_directory/x.jsonl"), InvalidArgument);
  CHECK(js.str().empty());
}

TEST_CASE("plan_basis_elems reads tile plans and describe() texts") {
  const ConvProblem p = ConvProblem::parse("n=13,k=3");
  CHECK(plan_basis_elems("fftw", "x", R"({"fft_h": 16, "fft_w": 8})", p) == 128);
  CHECK(plan_basis_elems("fftw", "fftw (float32): untiled, Fourier basis 15x14 for padded input", "null", p) == 210);
  CHECK(plan_basis_elems("im2col", "im2col: per sample, unrolled 9x121 matrix", "null", p) == 1);
  CHECK(plan_basis_elems("cufft", "no sizes here", "null", p) == 256);
}

TEST_CASE("fill_normal_parallel: seeded, standard normal, independent of the thread count") {
  std::vector<float> a(200001), b(200001), c(200001);
  fill_normal_parallel(a, 42);
  fill_normal_parallel(b, 42);
  fill_normal_parallel(c, 43);
  CHECK(a == b);
  CHECK(a != c);
  double m = 0, v = 0;
  for (float x : a) { CHECK(std::isfinite(x)); m += x; v += double(x) * x; }
  m /= double(a.size());
  v = v / double(a.size()) - m * m;
  CHECK(std::abs(m) < 0.01);
  CHECK(std::abs(v - 1.0) < 0.02);
  const PassData d = make_pass_data_parallel(ConvProblem::parse("S=2,f=3,fo=4,n=9,k=3"), Pass::bprop, 5);
  CHECK(d.input.empty());
  CHECK(d.weight.size() == 4 * 3 * 9);
  CHECK(d.grad_output.size() == 2 * 4 * 7 * 7);
  CHECK(count_nan(d.result) == int64_t(d.result.size()));
}
