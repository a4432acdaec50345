// One benchmark cell (cell_bench.hpp) on the host: repetitions under the budget and the time cap,
// verified results, and the status each kind of failure is recorded with.
#include <doctest/doctest.h>

#include <cstring>

#include "api/fftconv.hpp"
#include "bench/cell_bench.hpp"
#include "validation/execute.hpp"

using namespace fftconv;
using namespace fftconv::bench;

namespace {

// A host backend whose plans write zeros (a wrong result), or whose planning throws `fail`.
class FakeBackend final : public Backend {
 public:
  enum class Mode { zeros, out_of_memory, unsupported_plan };
  explicit FakeBackend(Mode m) : mode_(m) {}
  std::string_view name() const override { return "fake"; }
  Location location() const override { return Location::host; }
  Support supports(const ConvProblem&, Pass, DType) const override { return {}; }
  std::string_view summary() const override { return "test double"; }
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions&) const override {
    if (mode_ == Mode::out_of_memory) throw OutOfMemory("fake: 1 TiB workspace", std::size_t(1) << 40);
    if (mode_ == Mode::unsupported_plan) throw Unsupported("fake: no plan for this shape");
    struct Zeros final : Plan {
      int64_t n;
      explicit Zeros(int64_t elems) : n(elems) {}
      std::size_t workspace_bytes() const override { return 123; }
      void execute(const Args& a) const override { std::memset(a.result, 0, std::size_t(n) * sizeof(float)); }
      std::string describe() const override { return "fake zeros; more"; }
    };
    return std::make_unique<Zeros>(p.result_elems(pass));
  }

 private:
  Mode mode_;
};

CellOptions quick() {
  CellOptions o;
  o.warmup = 1, o.repeat = 5, o.min_repeat = 2, o.budget_ms = 1;
  return o;
}

}  // namespace

TEST_CASE("cell repetitions follow the budget between min_repeat and repeat, and the time cap skips") {
  CellOptions o;
  o.warmup = 2, o.repeat = 25, o.min_repeat = 3, o.budget_ms = 200, o.cell_seconds = 30;
  std::string why;
  CHECK(cell_repetitions(o, 0.001, &why) == 25);   // tiny runs: at most repeat
  CHECK(cell_repetitions(o, 20.0, &why) == 10);    // 200 ms / 20 ms
  CHECK(cell_repetitions(o, 1000.0, &why) == 3);   // long runs: at least min_repeat
  CHECK(why.empty());
  CHECK(cell_repetitions(o, 5000.0, &why) == 3);   // the budget asks for 1, min_repeat wins
  o.budget_ms = 60000;
  CHECK(cell_repetitions(o, 5000.0, &why) == 4);   // the budget asks for 12; 30 s fit 2 warm-up + 4
  o.budget_ms = 200;
  o.min_repeat = 5;
  CHECK(cell_repetitions(o, 6000.0, &why) == 0);   // 2 + 5 runs of 6 s exceed 30 s
  CHECK(why.find("time cap") == 0);
  o.cell_seconds = 0;                              // no cap
  CHECK(cell_repetitions(o, 6000.0, nullptr) == 5);
  o.min_repeat = 30;
  CHECK_THROWS_AS(o.validate(), InvalidArgument);
}

TEST_CASE("numbers of the result files keep a few significant digits") {
  CHECK(round_significant(0.123456789, 5) == doctest::Approx(0.12346).epsilon(1e-12));
  CHECK(round_significant(98765.4321, 3) == 98800.0);
  CHECK(round_significant(-1.5e-7, 2) == doctest::Approx(-1.5e-7));
  CHECK(round_significant(0.0, 3) == 0.0);
  CellResult r;
  r.impl = "fftw", r.median_ms = 1.23456789, r.rel_l2 = 3.14159e-7, r.tol_rel_l2 = 1e-5;
  const nlohmann::json j = cell_json(r);
  CHECK(j["median_ms"].get<double>() == doctest::Approx(1.2346));
  CHECK(j["rel_l2"].dump() == "3.14e-07");
  CHECK_FALSE(j.contains("min_ms"));  // unset fields are left out
}

TEST_CASE("cells of host backends are verified at the timed batch and timed") {
  CellBench bench(quick(), false);
  const ConvProblem p = ConvProblem::parse("S=3,f=4,fo=5,n=12,k=5");
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    bench.prepare(p, pass, cell_seed(1, p.to_string(), pass));
    for (const char* name : {"fftw", "im2col"}) {
      INFO(name, " ", to_string(pass));
      const CellResult r = bench.time_impl(name, PlanOptions{});
      CHECK(r.status == "ok");
      CHECK(r.verified);
      CHECK(r.rel_l2 >= 0);
      CHECK(r.rel_l2 < r.tol_rel_l2);
      CHECK(r.ref == "direct");
      CHECK(r.runs >= 2);
      CHECK(r.runs <= 5);
      CHECK(r.median_ms > 0);
      CHECK(r.min_ms <= r.median_ms);
      CHECK(r.plan_ms >= 0);
      CHECK_FALSE(r.choice.empty());
      CHECK(r.choice.find(p.to_string()) == std::string::npos);  // the spec prefix is dropped
    }
  }
}

TEST_CASE("a cell records wrong results, allocation failures, refusals and the time cap by status") {
  CellOptions o = quick();
  CellBench bench(o, false);
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=2,n=9,k=3");
  bench.prepare(p, Pass::fprop, 5);
  const CellResult wrong = bench.time_backend(FakeBackend(FakeBackend::Mode::zeros), PlanOptions{});
  CHECK(wrong.status == "error");
  CHECK(wrong.reason.find("outside tolerance") == 0);
  CHECK_FALSE(wrong.verified);
  CHECK(wrong.rel_l2 == doctest::Approx(1.0));  // zeros against a nonzero reference
  CHECK(wrong.runs == 0);                       // not timed
  CHECK(wrong.choice == "fake zeros");
  const CellResult oom = bench.time_backend(FakeBackend(FakeBackend::Mode::out_of_memory), PlanOptions{});
  CHECK(oom.status == "out of memory");
  CHECK(oom.reason.find("1 TiB") != std::string::npos);
  const CellResult no = bench.time_backend(FakeBackend(FakeBackend::Mode::unsupported_plan), PlanOptions{});
  CHECK(no.status == "unsupported");
  const CellResult cudnn = bench.time_cudnn(false);  // host operands: cuDNN cannot run on them
  CHECK(cudnn.status == "unsupported");
  CHECK(cudnn.impl == "cudnn");

  o.cell_seconds = 1e-9;
  CellBench capped(o, false);
  capped.prepare(p, Pass::fprop, 5);
  const CellResult skipped = capped.time_impl("fftw", PlanOptions{});
  CHECK(skipped.status == "skipped");
  CHECK(skipped.reason.find("time cap") == 0);
  CHECK(skipped.verified);  // verified once, then not timed
  CHECK(skipped.probe_ms > 0);
  CHECK(skipped.runs == 0);
}

TEST_CASE("the implementations a benchmark can name, and where their operands live") {
  CHECK_FALSE(device_operands_for({"fftw", "im2col"}));
  CHECK_THROWS_AS(device_operands_for({"fftw", "nonsense"}), InvalidArgument);
  CHECK_THROWS_AS(device_operands_for({}), InvalidArgument);
  CHECK(is_cudnn_impl("cudnn"));
  CHECK(is_cudnn_impl("cudnn-tc"));
  CHECK_FALSE(is_cudnn_impl("cufft"));
  if (!gpu_reference_available()) {
    CHECK_THROWS_AS(device_operands_for({"cudnn", "fftw"}), Unsupported);  // no CUDA here: exit 2 in the CLI
  }
  CHECK(cell_seed(1, "S=1", Pass::fprop) == cell_seed(1, "S=1", Pass::fprop));
  CHECK(cell_seed(1, "S=1", Pass::fprop) != cell_seed(1, "S=2", Pass::fprop));
  CHECK(cell_seed(1, "S=1", Pass::fprop) != cell_seed(2, "S=1", Pass::fprop));
  CHECK(cell_seed(1, "S=1", Pass::fprop) != cell_seed(1, "S=1", Pass::bprop));
}

TEST_SUITE("gpu") {
TEST_CASE("device cells: cuDNN's fastest verified algorithm and the CUDA backends, verified and timed") {
  if (!gpu_reference_available()) {
    MESSAGE("no CUDA device: skipping the device cell GPU test");
    return;
  }
  CellBench bench(quick(), device_operands_for({"cudnn", "cufft", "fbfft"}));
  const ConvProblem p = ConvProblem::parse("S=4,f=8,fo=6,n=20,k=5");
  PlanOptions po;
  po.autotune = false;
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    bench.prepare(p, pass, cell_seed(3, p.to_string(), pass));
    for (const char* name : {"cudnn", "cudnn-tc", "cufft", "fbfft"}) {
      INFO(name, " ", to_string(pass));
      const CellResult r = bench.time_impl(name, po);
      CHECK(r.status == "ok");
      CHECK(r.runs >= 2);
      CHECK(r.median_ms > 0);
      CHECK(r.rel_l2 >= 0);
      CHECK(r.ref == "direct");
      if (std::string(name) != "cudnn-tc") CHECK(r.verified);  // tensor-op math is not held to fp32's model
      if (is_cudnn_impl(name)) CHECK(r.choice.find(pass == Pass::fprop ? "FWD_" : "BWD_") == 0);
    }
  }
}
}  // TEST_SUITE
