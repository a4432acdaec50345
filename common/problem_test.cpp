// Tests of ConvProblem: spec parsing round-trips, presets, and every class of bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/errors.hpp"
#include "common/problem.hpp"

using namespace fftconv;

TEST_CASE("spec strings parse with defaults, shorthands and presets") {
  auto p = ConvProblem::parse("n=5,k=3");
  CHECK(p.S == 1);
  CHECK(p.f == 1);
  CHECK(p.fo == 1);
  CHECK(p.h == 5);
  CHECK(p.w == 5);
  CHECK(p.kh == 3);
  CHECK(p.out_h() == 3);
  auto q = ConvProblem::parse("L2,S=8");
  CHECK(q.S == 8);
  CHECK(q.f == 64);
  CHECK(q.kh == 9);
  auto r = ConvProblem::parse("S=2,f=3,fo=4,h=7,w=9,kh=2,kw=5,p=1,pad=mirror");
  CHECK(r.ph == 1);
  CHECK(r.pw == 1);
  CHECK(r.padding == Padding::mirror);
  CHECK(r.out_w() == 9 + 2 - 5 + 1);
  CHECK(ConvProblem::parse("L5").fo == 384);
}

TEST_CASE("spec strings round-trip on random problems") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    ConvProblem p;
    auto u = [&](int lo, int hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    p.S = u(1, 9); p.f = u(1, 9); p.fo = u(1, 9); p.h = u(1, 40); p.w = u(1, 40);
    p.padding = Padding(u(0, 2));
    p.ph = u(0, p.h - 1); p.pw = u(0, p.w - 1);
    p.kh = u(1, p.padded_h()); p.kw = u(1, p.padded_w());
    p.sh = u(1, 3); p.sw = u(1, 3); p.bias = u(0, 1) == 1;
    p.g = u(1, 2); p.f *= p.g; p.fo *= p.g;
    p.validate();
    CHECK(ConvProblem::parse(p.to_string()) == p);
  }
}

TEST_CASE("bad specs raise InvalidProblem naming the field") {
  struct Bad { const char* spec; const char* fragment; };
  for (const Bad& bad : {
           Bad{"", "empty"}, Bad{"n=0", "h"}, Bad{"n=5,k=-1", "kh"}, Bad{"n=5,k=7", "kh"},
           Bad{"h=5,w=3,kh=3,kw=4", "kw"}, Bad{"n=5,k=3,p=-2", "ph"}, Bad{"n=5,k=3,p=5,pad=mirror", "ph"},
           Bad{"n=5,k=3,pad=spiral", "pad"}, Bad{"n=5,k=3,s=0", "sh"}, Bad{"n=5,k=3,dw=-1", "dw"},
           Bad{"n=5,k=3,f=4,fo=6,g=3", "g: 3 groups do not divide f"}, Bad{"n=5,k=3,f=6,fo=4,g=3", "divide fo"},
           Bad{"n=5,k=3,g=0", "g"}, Bad{"n=5,k=3,d=3", "dh: dilated kernel height 7"}, Bad{"n=5,k=3,bias=2", "bias"},
           Bad{"n=5,k=3,p=6,pad=circular", "ph: circular padding 6 must be <= h = 5"}, Bad{"n=5,x=3", "unknown key 'x'"}, Bad{"n=abc", "n"},
           Bad{"n=5,k=3,S=99999999999999999999", "S"}, Bad{"L9", "preset"}, Bad{"n=5,,k=3", "empty field"},
           Bad{"n=5,L2", "key=value"}, Bad{"S=2147483647,f=2147483647,fo=1,n=1000,k=3", "input"},
           Bad{"n=4,k=3,fo=0", "fo"}, Bad{"n=3,k=", "missing"}, Bad{"n=8,n=9", "key 'n' appears twice"},
           Bad{"n=8,k=3,S=2,S=2", "key 'S' appears twice"}, Bad{"n=8,h=9", "key 'h' sets h, already set by 'n'"},
           Bad{"kw=3,n=9,k=3", "key 'k' sets kw, already set by 'kw'"}, Bad{"n=9,p=1,pw=2", "sets pw"},
           Bad{"n=9,pad=zero,pad=mirror", "key 'pad' appears twice"}}) {
    const char *spec = bad.spec, *fragment = bad.fragment;  // not a structured binding: CAPTURE is a lambda
    CAPTURE(spec);
    try {
      ConvProblem::parse(spec);
      FAIL("no exception for ", spec);
    } catch (const InvalidProblem& e) {
      CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    }
  }
}

TEST_CASE("stride, dilation, groups, bias and circular padding: PyTorch's sizes, spec round-trip") {
  const auto p = ConvProblem::parse("S=2,f=4,fo=6,n=11,k=3,p=2,s=2,d=3,g=2,bias=1,pad=circular");
  CHECK(p.sh == 2);
  CHECK(p.sw == 2);
  CHECK(p.dh == 3);
  CHECK(p.g == 2);
  CHECK(p.bias);
  CHECK(p.padding == Padding::circular);
  CHECK(p.kernel_extent_h() == 7);
  CHECK(p.out_h() == (11 + 4 - 3 * 2 - 1) / 2 + 1);  // torch: (h + 2p - d(k-1) - 1) / s + 1
  CHECK(p.weight_elems() == 6 * 2 * 3 * 3);
  CHECK(p.reduction_length(Pass::fprop) == 2 * 9);
  CHECK(p.reduction_length(Pass::bprop) == 3 * 9);
  CHECK_FALSE(p.is_dense());
  CHECK(ConvProblem::parse(p.to_string()) == p);
  CHECK(ConvProblem::parse("sh=3,sw=1,n=9,k=2").out_h() == 3);
  // Defaults print nothing new: every older spec string stays what it was.
  CHECK(ConvProblem::parse("S=2,f=3,fo=4,n=8,k=3").to_string() == "S=2,f=3,fo=4,h=8,w=8,kh=3,kw=3,ph=0,pw=0,pad=zero");
  CHECK(ConvProblem::parse("n=8,k=3").is_dense());
  CHECK_FALSE(ConvProblem::parse("n=8,k=3,bias=1").is_dense());
  CHECK(ConvProblem::parse("n=8,k=3,bias=0").is_dense());
  CHECK(ConvProblem::parse("n=5,k=3,p=5,pad=circular").padded_h() == 15);
  CHECK_THROWS_AS(ConvProblem::parse("n=9,k=3,s=2,sh=3"), InvalidProblem);
  CHECK_THROWS_AS(ConvProblem::parse("n=9,k=3,g=1,g=1"), InvalidProblem);
  CHECK_THROWS_AS(ConvProblem::parse("n=9,k=3,bias=1,bias=0"), InvalidProblem);
}

TEST_CASE("presets take overrides; a key may follow a preset once") {
  CHECK(ConvProblem::parse("L2,S=8").S == 8);
  CHECK(ConvProblem::parse("L2,n=32,k=5").h == 32);
  CHECK_THROWS_AS(ConvProblem::parse("L2,S=8,S=4"), InvalidProblem);
}

TEST_CASE("pass names") {
  CHECK(parse_pass("accgrad") == Pass::accgrad);
  CHECK(to_string(Pass::bprop) == "bprop");
  CHECK_THROWS_AS(parse_pass("backward"), InvalidArgument);
}

TEST_CASE("checked_mul detects overflow") {
  CHECK(checked_mul(3, 4, "x") == 12);
  CHECK_THROWS_AS(checked_mul(int64_t(1) << 40, int64_t(1) << 30, "x"), InvalidProblem);
}

// The three stride-1 passes in 1-D on the zero-padded input (linear), and the same sums taken
// circularly in a basis of N with the input at offset p (the FFT backends' layout); the largest
// difference between the two over the three results.
static double wrap_error(int64_t n, int64_t p, int64_t k, int64_t N, std::mt19937& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  const int64_t out = n + 2 * p - k + 1;
  std::vector<double> x(static_cast<size_t>(n)), w(static_cast<size_t>(k)), g(static_cast<size_t>(out));
  for (auto* v : {&x, &w, &g})
    for (auto& e : *v) e = d(rng);
  auto xpad = [&](int64_t i) { return i >= p && i < p + n ? x[size_t(i - p)] : 0.0; };  // linear
  auto xb = [&](int64_t i) { return xpad(((i % N) + N) % N); };                         // basis, circular
  auto gb = [&](int64_t i) { i = ((i % N) + N) % N; return i < out ? g[size_t(i)] : 0.0; };
  auto wb = [&](int64_t i) { i = ((i % N) + N) % N; return i < k ? w[size_t(i)] : 0.0; };
  double err = 0;
  for (int64_t y = 0; y < out; ++y) {  // fprop: sum_j xpad[y + j] w[j]
    double lin = 0, circ = 0;
    for (int64_t j = 0; j < k; ++j) lin += xpad(y + j) * w[size_t(j)];
    for (int64_t j = 0; j < N; ++j) circ += xb(y + j) * wb(j);
    err = std::max(err, std::abs(lin - circ));
  }
  for (int64_t i = 0; i < n; ++i) {  // bprop: gradInput[i] = sum_j g[i + p - j] w[j], read at offset p
    double lin = 0, circ = 0;
    for (int64_t j = 0; j < k; ++j)
      if (i + p - j >= 0 && i + p - j < out) lin += g[size_t(i + p - j)] * w[size_t(j)];
    for (int64_t j = 0; j < N; ++j) circ += gb(i + p - j) * wb(j);
    err = std::max(err, std::abs(lin - circ));
  }
  for (int64_t j = 0; j < k; ++j) {  // accgrad: sum_y xpad[y + j] g[y]
    double lin = 0, circ = 0;
    for (int64_t y = 0; y < out; ++y) lin += xpad(y + j) * g[size_t(y)];
    for (int64_t y = 0; y < N; ++y) circ += xb(y + j) * gb(y);
    err = std::max(err, std::abs(lin - circ));
  }
  return err;
}

TEST_CASE("wrapped padding: the circular basis of wrapped_w is exact, one less is not") {
  std::mt19937 rng(12345);
  int tight = 0;
  for (int t = 0; t < 400; ++t) {
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    ConvProblem q;
    q.h = 1, q.kh = 1, q.w = pick(1, 24), q.pw = pick(0, 12), q.kw = pick(1, q.w + 2 * q.pw);
    const int64_t N = q.wrapped_w();
    INFO(q.to_string(), " N=", N);
    CHECK(N <= q.padded_w());
    CHECK(wrap_error(q.w, q.pw, q.kw, N, rng) < 1e-12);
    CHECK(wrap_error(q.w, q.pw, q.kw, N + 3, rng) < 1e-12);  // any larger basis too
    if (N > q.kw && N > q.padded_w() - q.kw + 1 && q.pw > 0) {  // n + p binds: one less wraps onto data
      CHECK(wrap_error(q.w, q.pw, q.kw, N - 1, rng) > 1e-6);
      ++tight;
    }
  }
  CHECK(tight > 100);
  ConvProblem m = ConvProblem::parse("S=1,f=1,fo=1,h=20,w=20,kh=5,kw=5,ph=2,pw=2,pad=mirror");
  CHECK(m.wrapped_h() == 24);  // mirror: the padded side
  CHECK(ConvProblem::parse("S=1,f=1,fo=1,n=56,k=31,p=15").wrapped_w() == 71);
}
