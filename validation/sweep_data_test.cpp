// The host and device homes of a sweep's tensors (sweep_data.hpp) agree: same operands from the same
// seed, same verdicts. The device half runs only where a CUDA device is present.
#include <doctest/doctest.h>

#include <cmath>

#include "api/fftconv.hpp"
#include "common/errors.hpp"
#include "validation/execute.hpp"
#include "validation/runner.hpp"
#include "validation/sweep_data.hpp"

using namespace fftconv;

TEST_CASE("the host sweep data judges a correct backend as passing and a wrong reference as failing") {
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=2,n=9,k=3,p=1,pad=mirror");
  const Backend& b = builtin_registry().get("fftw");
  auto data = make_host_sweep_data();
  CHECK(std::string(data->where()) == "host");
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    data->make(p, pass, 42);
    data->reference("direct");
    const auto plan = b.plan(p, pass, PlanOptions{});
    data->run(b, *plan);
    const Verdict v = data->judge(256);
    CHECK(v.ok);
    CHECK(v.error.rel_l2 < 1e-6);
  }
  CHECK_THROWS_AS(data->reference("nonsense"), InvalidArgument);
}

TEST_CASE("a sweep of GPU backends keeps its operands on the device and agrees with the host sweep") {
  if (!gpu_reference_available()) {
    MESSAGE("no CUDA device: skipped");
    return;
  }
  ValidateOptions o;
  o.set = "S=2,f=3,fo=2,n=9,k=3,p=1,pad=mirror;S=3,f=5,fo=4,h=33,w=20,kh=5,kw=3;S=16,f=16,fo=16,n=40,k=7";
  o.progress = false;
  o.data_seed = 77;
  o.autotune = false;  // the same plans on both sides
  o.backends = {"cufft", "fbfft"};
  const ValidateResult dev = run_validation(o, nullptr);
  CHECK(dev.operands == "device");
  CHECK(dev.summary.failures == 0);
  o.backends = {"cufft", "fbfft", "direct"};  // a host backend brings the host path
  const ValidateResult host = run_validation(o, nullptr);
  CHECK(host.operands == "host");
  CHECK(host.summary.failures == 0);
  int matched = 0;
  for (const Record& d : dev.records)
    for (const Record& h : host.records)
      if (d.key() == h.key()) {
        INFO(d.backend, " ", d.pass, " ", d.spec);
        CHECK(d.status == h.status);
        CHECK(d.ref == h.ref);
        CHECK(d.data_seed == h.data_seed);
        // Same operands (up to rare last-bit differences of the generator) and reference rung.
        CHECK(d.rel_l2 == doctest::Approx(h.rel_l2).epsilon(0.05));
        ++matched;
      }
  CHECK(matched == int(dev.records.size()));
}

TEST_CASE("poisoned_args hands out the operands and a NaN result that judge() then judges") {
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=4,n=7,k=3,p=1");
  const Backend& b = builtin_registry().get("im2col");
  auto data = make_host_sweep_data();
  data->make(p, Pass::bprop, 9);
  data->reference("direct");
  const Args a = data->poisoned_args();
  CHECK(a.input == nullptr);  // bprop reads grad_output and weight
  REQUIRE(a.weight != nullptr);
  REQUIRE(a.grad_output != nullptr);
  const float* r = static_cast<const float*>(a.result);
  for (int64_t i = 0; i < p.input_elems(); ++i) REQUIRE(std::isnan(r[i]));
  CHECK_FALSE(data->judge(1).ok);  // nothing written yet
  b.plan(p, Pass::bprop, PlanOptions{})->execute(a);
  CHECK(data->judge(1).ok);
  data->poisoned_args();  // poisoned again
  CHECK_FALSE(data->judge(1).ok);
}
