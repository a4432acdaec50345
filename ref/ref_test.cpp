// Tests of the CPU backends: direct against hand-computed cases, fftw and im2col against direct on
// random problems within the tolerance model, the adjoint identity, and non-finite propagation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "api/fftconv.hpp"
#include "common/fft_size.hpp"
#include "ref/backends.hpp"
#include "ref/direct.hpp"
#include "ref/fftw_pass.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"
#include "validation/verdict.hpp"

using namespace fftconv;

namespace {
std::vector<double> run_direct(const char* spec, Pass pass, std::vector<double> a, std::vector<double> b) {
  auto p = ConvProblem::parse(spec);
  std::vector<double> out(std::size_t(p.result_elems(pass)), std::nan(""));
  const double* in = pass == Pass::bprop ? nullptr : a.data();
  const double* w = pass == Pass::fprop ? b.data() : pass == Pass::bprop ? b.data() : nullptr;
  const double* g = pass == Pass::bprop ? a.data() : pass == Pass::accgrad ? b.data() : nullptr;
  direct_pass<double>(p, pass, in, w, g, out.data());
  return out;
}

ConvProblem random_problem(std::mt19937_64& rng) {
  auto u = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ConvProblem p;
  p.S = u(1, 3); p.f = u(1, 4); p.fo = u(1, 4);
  const int shape = int(u(0, 5));
  p.h = u(1, 23); p.w = shape == 0 ? p.h : u(1, 23);  // odd, prime, rectangular
  p.padding = u(0, 1) ? Padding::mirror : Padding::zero;
  p.ph = u(0, std::min<int64_t>(p.h - 1, 3)); p.pw = u(0, std::min<int64_t>(p.w - 1, 3));
  if (p.padding == Padding::zero && u(0, 3) == 0) { p.ph = u(0, 4); p.pw = u(0, 4); }
  if (shape == 1) { p.kh = p.padded_h(); p.kw = p.padded_w(); }          // kernel = input
  else if (shape == 2) { p.kh = p.kw = 1; }                                // k = 1
  else { p.kh = u(1, p.padded_h()); p.kw = u(1, p.padded_w()); }
  if (shape == 3) { p.S = p.f = p.fo = 1; }
  p.validate();
  return p;
}
}  // namespace

TEST_CASE("direct: hand-computed cases for each pass and padding") {
  // fprop, no padding: w = [[1,0],[0,-1]] -> x[r][c] - x[r+1][c+1] = -4
  auto y = run_direct("n=3,k=2", Pass::fprop, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 0, 0, -1});
  CHECK(y == std::vector<double>{-4, -4, -4, -4});
  // fprop, zero padding 1 with a 1x1 kernel of 2: zero border, doubled interior
  auto z = run_direct("n=2,k=1,p=1", Pass::fprop, {1, 2, 3, 4}, {2});
  CHECK(z == std::vector<double>{0, 0, 0, 0, 0, 2, 4, 0, 0, 6, 8, 0, 0, 0, 0, 0});
  // fprop, mirror padding pw=1: padded [2,1,2,3,2] * [1,1] -> [3,3,5,5]
  auto m = run_direct("h=1,w=3,kh=1,kw=2,ph=0,pw=1,pad=mirror", Pass::fprop, {1, 2, 3}, {1, 1});
  CHECK(m == std::vector<double>{3, 3, 5, 5});
  // bprop, no padding: full convolution of ones(2x2) with [[1,2],[3,4]]
  auto gx = run_direct("n=3,k=2", Pass::bprop, {1, 1, 1, 1}, {1, 2, 3, 4});
  CHECK(gx == std::vector<double>{1, 3, 2, 4, 10, 6, 3, 7, 4});
  // bprop, zero padding crops the full correlation
  auto gz = run_direct("h=1,w=2,kh=1,kw=2,ph=0,pw=1", Pass::bprop, {1, 1, 1}, {1, 1});
  CHECK(gz == std::vector<double>{2, 2});
  // bprop, mirror padding folds the border back: gpad [1,2,2,2,1] -> [2, 2+1+1, 2]
  auto gm = run_direct("h=1,w=3,kh=1,kw=2,ph=0,pw=1,pad=mirror", Pass::bprop, {1, 1, 1, 1}, {1, 1});
  CHECK(gm == std::vector<double>{2, 4, 2});
  // accgrad: window sums of x under ones(2x2)
  auto gw = run_direct("n=3,k=2", Pass::accgrad, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 1, 1});
  CHECK(gw == std::vector<double>{12, 16, 24, 28});
  // accgrad, mirror padding: x padded [2,1,2,3,2], g = [1,0,0,1] -> [2+3, 1+2]
  auto gmw = run_direct("h=1,w=3,kh=1,kw=2,ph=0,pw=1,pad=mirror", Pass::accgrad, {1, 2, 3}, {1, 0, 0, 1});
  CHECK(gmw == std::vector<double>{5, 3});
  // accgrad with S=2 sums over the batch
  auto gs = run_direct("S=2,h=1,w=2,kh=1,kw=1", Pass::accgrad, {1, 2, 3, 4}, {1, 1, 1, 1});
  CHECK(gs == std::vector<double>{10});
}

TEST_CASE("fftw and im2col match direct on random problems") {
  std::mt19937_64 rng(20261121);
  PlanOptions opts;
  opts.extra["fftw_planner"] = "estimate";
  double worst[2] = {0, 0};
  for (int iter = 0; iter < 300; ++iter) {
    const ConvProblem p = random_problem(rng);
    const Pass pass = Pass(iter % 3);
    PassData d = make_pass_data(p, pass, rng());
    const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
    for (int bi = 0; bi < 2; ++bi) {
      const Backend& b = builtin_registry().get(bi == 0 ? "fftw" : "im2col");
      std::fill(d.result.begin(), d.result.end(), std::numeric_limits<float>::quiet_NaN());
      b.plan(p, pass, options_for(b, opts))->execute(d.args());  // fftw_planner for fftw only
      const int64_t basis = bi == 0 ? pow2_basis_elems(p) : 1;
      const Tolerance tol = tolerance(p, pass, DType::f32, basis);
      const ErrorStats e = compare(d.result.data(), ref.data(), int64_t(ref.size()));
      INFO(b.name(), " ", p.to_string(), " ", to_string(pass), " rel_l2=", e.rel_l2, " max_abs_rel=", e.max_abs_rel);
      CHECK(count_nan(d.result) == 0);
      CHECK(e.rel_l2 <= tol.rel_l2);
      CHECK(e.max_abs_rel <= tol.max_abs_rel);
      worst[bi] = std::max(worst[bi], e.rel_l2);
    }
  }
  MESSAGE("worst rel_l2: fftw ", worst[0], ", im2col ", worst[1]);
}

TEST_CASE("fftw in float64 matches direct to double precision") {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 30; ++iter) {
    const ConvProblem p = random_problem(rng);
    const Pass pass = Pass(iter % 3);
    PassData d = make_pass_data(p, pass, rng());
    auto ref = reference_result(p, pass, d, RefKind::direct);
    auto f64 = reference_result(p, pass, d, RefKind::fftw64);
    const ErrorStats e = compare(f64.data(), ref.data(), int64_t(ref.size()));
    INFO(p.to_string(), " ", to_string(pass));
    CHECK(e.rel_l2 <= tolerance(p, pass, DType::f64, pow2_basis_elems(p)).rel_l2);
  }
}

TEST_CASE("adjoint identity <fprop(x,w),g> = <x,bprop(g,w)> = <w,accgrad(x,g)> for every CPU backend") {
  std::mt19937_64 rng(11);
  for (const char* name : {"direct", "im2col", "fftw"}) {
    for (int iter = 0; iter < 40; ++iter) {
      const ConvProblem p = random_problem(rng);
      std::vector<float> x(p.input_elems()), w(p.weight_elems()), g(p.output_elems());
      fill_normal(x, rng()); fill_normal(w, rng()); fill_normal(g, rng());
      std::vector<float> y(p.output_elems()), gx(p.input_elems()), gw(p.weight_elems());
      const Backend& b = builtin_registry().get(name);
      PlanOptions o;
      Args a;
      a.input = x.data(); a.weight = w.data(); a.result = y.data();
      b.plan(p, Pass::fprop, o)->execute(a);
      a = Args{}; a.grad_output = g.data(); a.weight = w.data(); a.result = gx.data();
      b.plan(p, Pass::bprop, o)->execute(a);
      a = Args{}; a.input = x.data(); a.grad_output = g.data(); a.result = gw.data();
      b.plan(p, Pass::accgrad, o)->execute(a);
      const double l = dot(y.data(), g.data(), y.size()), m = dot(x.data(), gx.data(), x.size()),
                   r = dot(w.data(), gw.data(), w.size());
      // Scale: |<y,g>| <= ||y|| ||g||; errors are relative to that product.
      const double scale = std::sqrt(dot(y.data(), y.data(), y.size()) * dot(g.data(), g.data(), g.size())) + 1e-30;
      const double tol = tolerance(p, Pass::accgrad, DType::f32, pow2_basis_elems(p)).rel_l2 * 4;
      INFO(name, " ", p.to_string(), " ", l, " ", m, " ", r);
      CHECK(std::abs(l - m) / scale <= tol);
      CHECK(std::abs(l - r) / scale <= tol);
    }
  }
}

TEST_CASE("non-finite inputs give non-finite outputs, never finite garbage") {
  // Every output that depends on the bad value is non-finite (the FFT backends spread it further,
  // over the image or the tile: docs/numerics.md); every finite output is right.
  auto p = ConvProblem::parse("S=2,f=2,fo=2,n=9,k=3,p=1");
  struct Case { const char* backend; const char* tile; };
  for (auto c : {Case{"direct", "none"}, Case{"im2col", "none"}, Case{"fftw", "none"}, Case{"fftw", "8"}})
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
      for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
        PassData d = make_pass_data(p, pass, 3);
        (pass == Pass::bprop ? d.grad_output : d.input)[5] = bad;
        const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
        PlanOptions o;
        o.tile = TileSpec::parse(c.tile);
        builtin_registry().get(c.backend).plan(p, pass, o)->execute(d.args());
        double scale = 0;
        for (double r : ref) scale = std::isfinite(r) ? std::max(scale, std::abs(r)) : scale;
        const double tol = tolerance(p, pass, DType::f32, pow2_basis_elems(p)).max_abs_rel * scale;
        int64_t nonfinite = 0, spread = 0, garbage = 0;
        for (std::size_t i = 0; i < ref.size(); ++i) {
          const bool finite = std::isfinite(d.result[i]);
          nonfinite += finite ? 0 : 1;
          if (!std::isfinite(ref[i])) spread += finite ? 1 : 0;  // the bad value did not reach it
          else if (finite && !(std::abs(d.result[i] - ref[i]) <= tol)) ++garbage;
        }
        INFO(c.backend, " tile ", c.tile, " ", to_string(pass), " ", bad);
        CHECK(nonfinite > 0);
        CHECK(spread == 0);
        CHECK(garbage == 0);
      }
}

TEST_CASE("CPU backends read only their own option keys and name them for any other") {
  // The registry's fftw and im2col are wrapped by the lowering (api/lowering.hpp), which adds its
  // `stride` key; direct computes every option itself and has none.
  const ConvProblem p = ConvProblem::parse("S=2,f=2,fo=3,n=12,k=3,p=1");
  const Registry& r = builtin_registry();
  PlanOptions o;
  o.extra = {{"totallyunknown", "1"}};
  CHECK_THROWS_WITH_AS(r.get("fftw").plan(p, Pass::fprop, o),
                       "fftw: unknown option 'totallyunknown' (accepted: fftw_planner, fftw_cgemm, tiles_in_flight, "
                       "accgrad_reduction, stride)",
                       InvalidArgument);
  for (const char* name : {"direct", "im2col"}) {
    const std::string keys = std::string(name) == "direct" ? "none" : "stride";
    o.extra = {{"fftw_planner", "estimate"}};  // fftw's key
    const std::string want = std::string(name) + ": unknown option 'fftw_planner' (accepted: " + keys + ")";
    CHECK_THROWS_WITH_AS(r.get(name).plan(p, Pass::fprop, o), want.c_str(), InvalidArgument);
    CHECK_NOTHROW(r.get(name).plan(p, Pass::fprop, PlanOptions{}));
  }
  CHECK(make_im2col_backend()->option_keys().empty());
  CHECK(make_direct_backend()->option_keys().empty());
  // Every key fftw names is read: a good value plans (tiled), a bad one is rejected naming the key.
  const auto fftw = make_fftw_backend();
  CHECK(fftw->option_keys() == fftw_option_keys());
  const std::map<std::string, std::string> good{
      {"fftw_planner", "estimate"}, {"fftw_cgemm", "eigen"}, {"tiles_in_flight", "2"}, {"accgrad_reduction", "time"}};
  CHECK(fftw->option_keys().size() == good.size());
  for (std::string_view key : fftw->option_keys()) {
    PlanOptions t;
    t.tile = TileSpec::parse("8");
    t.extra[std::string(key)] = good.at(std::string(key));
    CHECK_NOTHROW(fftw->plan(p, Pass::accgrad, t));
    t.extra[std::string(key)] = "sideways";
    CHECK_THROWS_WITH_AS(fftw->plan(p, Pass::accgrad, t), doctest::Contains(std::string(key).c_str()), InvalidArgument);
  }
}

TEST_CASE("fftw float32: operands near 1e35 whose outputs fit in FLT_MAX stay finite and accurate") {
  // Note [operand scaling]: a 64x64 plane of values 1e35..2e35 has a spectrum whose mean term
  // (6e38) overflows float32, while the convolution with 1e-3 weights is near 1e33.
  const ConvProblem p = ConvProblem::parse("S=1,f=2,fo=2,n=64,k=5,p=2");
  for (const char* tile : {"none", "16", "auto"})
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      PassData d = make_pass_data(p, pass, 5);
      std::vector<float>& big = pass == Pass::bprop ? d.grad_output : d.input;
      std::vector<float>& small = pass == Pass::accgrad ? d.grad_output : d.weight;
      for (float& v : big) v = 1e35f * (1.5f + 0.5f * std::tanh(v));
      for (float& v : small) v *= 1e-3f;
      const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
      PlanOptions o;
      o.tile = TileSpec::parse(tile);
      const auto plan = builtin_registry().get("fftw").plan(p, pass, o);
      plan->execute(d.args());
      const Verdict v = judge_result(p, pass, d, ref, pow2_basis_elems(p));
      INFO(std::string(tile), " ", to_string(pass), " rel_l2 ", v.error.rel_l2, " nonfinite ", v.error.nonfinite);
      CHECK(v.error.nonfinite == 0);
      CHECK(v.ok);
    }
}

TEST_CASE("im2col keeps to the workspace limit with fewer threads and refuses below one thread's buffers") {
  const auto p = ConvProblem::parse("S=2,f=6,fo=5,n=20,k=5");
  const auto im2col = make_im2col_backend();
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    CAPTURE(to_string(pass));
    PlanOptions one;
    one.threads = 1;
    const std::size_t per_thread = im2col->plan(p, pass, one)->workspace_bytes();
    PlanOptions o;
    o.threads = std::min(2, hardware_threads());
    o.workspace_limit = per_thread + per_thread / 2;
    auto plan = im2col->plan(p, pass, o);
    CHECK(plan->workspace_bytes() == per_thread);
    CHECK((plan->describe().find("as many as the workspace limit holds") != std::string::npos) == (o.threads == 2));
    PassData d = make_pass_data(p, pass, 11);
    plan->execute(d.args());
    const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
    const ErrorStats e = compare(d.result.data(), ref.data(), int64_t(ref.size()));
    CHECK(e.rel_l2 <= tolerance(p, pass, DType::f32, 1).rel_l2);
    o.workspace_limit = per_thread - 1;
    try {
      im2col->plan(p, pass, o);
      FAIL("no error");
    } catch (const Unsupported& err) {
      CHECK(std::string(err.what()) == "im2col: workspace_limit " + std::to_string(per_thread - 1) +
                                           " bytes is below the minimum " + std::to_string(per_thread) +
                                           " bytes (one thread's buffers)");
    }
  }
}

TEST_CASE("fftw respects the workspace limit and reports it") {
  auto p = ConvProblem::parse("S=4,f=16,fo=16,n=20,k=5");
  PlanOptions o;
  o.workspace_limit = 3 << 20;
  auto plan = builtin_registry().get("fftw").plan(p, Pass::fprop, o);
  CHECK(plan->workspace_bytes() <= o.workspace_limit);
  CHECK(plan->describe().find("basis") != std::string::npos);
  o.workspace_limit = 1000;
  CHECK_THROWS_AS(builtin_registry().get("fftw").plan(p, Pass::fprop, o), Unsupported);
  // Without a limit the default budget (the tensors touched) still covers one chunk of a pinned
  // basis larger than the default choice: 256x256 for a 198x198 padded input took 9.77 MB where the
  // tensors take 9.16 MB, and planning it used to throw Unsupported.
  // (The workspace grows with the OpenMP team: the check is of two threads, whatever the environment.)
  const auto q = ConvProblem::parse("S=4,f=8,fo=8,n=192,k=7");
  PlanOptions pinned;
  pinned.basis_h = pinned.basis_w = 256;
  pinned.threads = std::min(2, hardware_threads());
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    auto big = builtin_registry().get("fftw").plan(q, pass, pinned);
    CHECK(big->describe().find("basis 256x256") != std::string::npos);
    if (pinned.threads == 2) CHECK(big->workspace_bytes() > touched_bytes(q, DType::f32));
  }
}
