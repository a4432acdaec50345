// Tests of the GPU double-precision direct kernel (the reference ladder's large rung) against the CPU
// `direct` on random problems covering every pass and both paddings.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "common/errors.hpp"
#include "gpu/reference/direct64.hpp"
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

  TEST_CASE("direct64 in chunks (images, then pixels of one image) equals one unchunked call") {
    if (!cuda_device_available()) {
      MESSAGE("no CUDA device: skipped");
      return;
    }
    std::mt19937_64 rng(std::random_device{}());
    for (const char* spec : {"S=5,f=3,fo=4,h=17,w=13,kh=3,kw=5,ph=2,pw=1,pad=mirror",
                             "S=3,f=6,fo=2,h=20,w=20,kh=7,kw=7,ph=3,pw=3,pad=zero", "S=7,f=2,fo=3,n=11,k=4"}) {
      const ConvProblem p = ConvProblem::parse(spec);
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
        const PassData d = make_pass_data(p, pass, rng());
        auto ptr = [](const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); };
        const std::vector<double> whole = direct64_pass(p, pass, ptr(d.input), ptr(d.weight), ptr(d.grad_output));
        const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
        // Beside the weight (and bprop's padded-grid gradient of one image): four pixel columns of
        // the unrolled operand at a time, then 64 KiB (whole images, a few per block).
        const int64_t taps = p.kh * p.kw;
        const int64_t rows = pass == Pass::fprop ? p.f * taps : pass == Pass::bprop ? p.fo * taps : p.f * taps + p.fo;
        const int64_t fixed = p.weight_elems() + (pass == Pass::bprop ? p.f * p.padded_h() * p.padded_w() : 0);
        for (std::size_t limit : {std::size_t(fixed + 4 * rows) * 8, std::size_t(fixed) * 8 + (std::size_t(64) << 10)}) {
          INFO(spec, " ", to_string(pass), " scratch ", limit);
          const std::vector<double> part =
              direct64_pass(p, pass, ptr(d.input), ptr(d.weight), ptr(d.grad_output), limit);
          const ErrorStats e = compare(part.data(), whole.data(), int64_t(whole.size()));
          CHECK(e.rel_l2 <= 1e-14);
          CHECK(compare(part.data(), ref.data(), int64_t(ref.size())).rel_l2 <= tolerance(p, pass, DType::f64, 1).rel_l2);
        }
      }
    }
  }

  TEST_CASE("direct64 says OutOfMemory when the scratch cannot hold one pixel column") {
    if (!cuda_device_available()) {
      MESSAGE("no CUDA device: skipped");
      return;
    }
    const ConvProblem p = ConvProblem::parse("S=1,f=64,fo=64,n=16,k=5");
    std::vector<float> x(std::size_t(p.input_elems()), 1.0f), w(std::size_t(p.weight_elems()), 1.0f);
    CHECK_THROWS_AS(direct64_pass(p, Pass::fprop, x.data(), w.data(), nullptr, std::size_t(p.weight_elems()) * 8 + 64),
                    OutOfMemory);
  }

  TEST_CASE("direct64 rejects an invalid problem before touching the device") {
    ConvProblem p;
    p.h = 2; p.kh = 3;
    CHECK_THROWS_AS(direct64_pass(p, Pass::fprop, nullptr, nullptr, nullptr), InvalidProblem);
  }
}
