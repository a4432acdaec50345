// Tests of the GPU double-precision direct kernel (the reference ladder's large rung) against the CPU
// `direct` on random problems covering every pass and both paddings.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "common/errors.hpp"
#include "gpu/direct64.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"

using namespace fftconv;

TEST_SUITE("gpu") {
  TEST_CASE("direct64 on the GPU matches the CPU direct in double") {
    if (!cuda_device_available()) {
      MESSAGE("no CUDA device: skipped");
      return;
    }
    std::mt19937_64 rng(std::random_device{}());
    auto u = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    for (int iter = 0; iter < 90; ++iter) {
      ConvProblem p;
      p.S = u(1, 4); p.f = u(1, 6); p.fo = u(1, 6); p.h = u(1, 24); p.w = u(1, 24);
      p.padding = u(0, 1) ? Padding::mirror : Padding::zero;
      p.ph = u(0, std::min<int64_t>(p.h - 1, 4)); p.pw = u(0, std::min<int64_t>(p.w - 1, 4));
      if (p.padding == Padding::zero && u(0, 2) == 0) { p.ph = u(0, 6); p.pw = u(0, 6); }
      p.kh = u(1, p.padded_h()); p.kw = u(1, p.padded_w());
      if (iter % 10 == 0) { p.kh = p.padded_h(); p.kw = p.padded_w(); }
      p.validate();
      const Pass pass = Pass(iter % 3);
      const PassData d = make_pass_data(p, pass, rng());
      const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
      const std::vector<double> gpu = direct64_pass(p, pass, d.input.empty() ? nullptr : d.input.data(),
                                                    d.weight.empty() ? nullptr : d.weight.data(),
                                                    d.grad_output.empty() ? nullptr : d.grad_output.data());
      REQUIRE(gpu.size() == ref.size());
      const ErrorStats e = compare(gpu.data(), ref.data(), int64_t(ref.size()));
      INFO(p.to_string(), " ", to_string(pass), " rel_l2=", e.rel_l2);
      CHECK(e.nonfinite == 0);
      CHECK(e.rel_l2 <= tolerance(p, pass, DType::f64, 1).rel_l2);
      CHECK(e.max_abs_rel <= tolerance(p, pass, DType::f64, 1).max_abs_rel);
    }
  }

  TEST_CASE("direct64 rejects an invalid problem before touching the device") {
    ConvProblem p;
    p.h = 2; p.kh = 3;
    CHECK_THROWS_AS(direct64_pass(p, Pass::fprop, nullptr, nullptr, nullptr), InvalidProblem);
  }
}
