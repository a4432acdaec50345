// Host test of the device kernels' index arithmetic for the lowering's activation maps: with
// IndexDiv (gpu/runtime/fast_div.hpp) the input and input_grad maps read the same elements in the
// same order as with int64 division (common/lowering.hpp), so they return identical values.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "common/lowering.hpp"
#include "gpu/runtime/fast_div.hpp"
#include "validation/problem_sets.hpp"

using namespace fftconv;

TEST_CASE("lowering maps: multiply-high divisors give the int64 maps' values") {
  std::mt19937_64 rng(20261127);
  std::normal_distribution<float> nd;
  int64_t checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const ConvProblem p = draw_conv2d_problem(rng, 24);
    for (StrideLowering st : {StrideLowering::polyphase, StrideLowering::subsample})
      for (bool native : {false, true}) {
        const LoweringMap m = make_lowering(p, st, native);
        CAPTURE(p.to_string());
        const auto fast = lowering_divisors<IndexDiv>(m, IndexDiv::make);
        const auto plain = plain_divisors(m);
        std::vector<float> x(std::size_t(p.input_elems())), gx(std::size_t(m.input_elems()));
        for (float& v : x) v = nd(rng);
        for (float& v : gx) v = nd(rng);
        bool same = true;
        for (int64_t e = 0; e < m.input_elems(); ++e)
          same = same && lowered_input(m, fast, x.data(), e) == lowered_input(m, plain, x.data(), e);
        for (int64_t e = 0; e < p.input_elems(); ++e)
          same = same && lowered_input_grad(m, fast, gx.data(), e) == lowered_input_grad(m, plain, gx.data(), e);
        CHECK(same);
        checked += m.input_elems() + p.input_elems();
      }
  }
  CHECK(checked > 100000);
}

TEST_CASE("IndexDiv: quotients of indices up to 2^32 - 1 by the sizes a map divides by") {
  std::mt19937_64 rng(7);
  for (int64_t d : std::vector<int64_t>{1, 2, 3, 7, 13, 29, 56, 196, 1000, 65537, 2147483647, 4294967295}) {
    const IndexDiv by = IndexDiv::make(d);
    for (int k = 0; k < 2000; ++k) {
      const int64_t x = int64_t(rng() % (uint64_t(1) << 32));
      REQUIRE(by.div(x) == x / d);
    }
    for (int64_t x : {int64_t(0), d - 1, d, int64_t(4294967295)}) REQUIRE(by.div(x) == x / d);
  }
}
