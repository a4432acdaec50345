// Tests of the fftw plans' prepared weight spectra (Note [prepared weight spectra]): fprop and bprop
// reading one prepared object agree with their plain execute(), and mismatching spectra are refused.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "api/fftconv.hpp"
#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"
#include "validation/verdict.hpp"

using namespace fftconv;

namespace {

// Odd and rectangular sizes, zero and mirror padding, kernels from 1 to the padded input.
ConvProblem random_dense_problem(std::mt19937_64& rng) {
  auto u = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ConvProblem p;
  p.S = u(1, 3), p.f = u(1, 5), p.fo = u(1, 5);
  p.h = 2 * u(1, 10) + 1, p.w = u(0, 1) ? p.h : u(3, 21);
  p.padding = u(0, 1) ? Padding::mirror : Padding::zero;
  p.ph = u(0, std::min<int64_t>(p.h - 1, 3)), p.pw = u(0, std::min<int64_t>(p.w - 1, 3));
  p.kh = u(1, p.padded_h()), p.kw = u(1, p.padded_w());
  p.validate();
  return p;
}

template <class T>
std::vector<T> as(const std::vector<float>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// fprop and bprop of p in element type T: plain execute() and execute_with() of spectra prepared by
// `preparer` (fprop or bprop), each compared with the other and with the float64 direct reference.
// With a tile, both passes run tiled plans with fprop's tile size.
template <class T>
void check_shared(const ConvProblem& p, uint64_t seed, Pass preparer, std::size_t workspace_limit = 0,
                  TileSpec tile = {}) {
  const DType dt = std::is_same_v<T, float> ? DType::f32 : DType::f64;
  PlanOptions o;
  o.dtype = dt;
  o.workspace_limit = workspace_limit;
  // A workspace limit is met with the scratch of a fixed team (it grows with the threads): one
  // thread, so that the limit means the same on every host.
  if (workspace_limit > 0) o.threads = 1;
  o.extra["fftw_planner"] = "estimate";
  o.tile = tile;
  const Backend& fftw = builtin_registry().get("fftw");
  const auto fprop = fftw.plan(p, Pass::fprop, o);
  PlanOptions ob = o;
  const auto [th, tw] = fprop->tile_basis();
  if (th > 0) {
    ob.tile = TileSpec{TileSpec::Kind::fixed, th, tw};
  } else {
    ob.tile = TileSpec{};
    std::tie(ob.basis_h, ob.basis_w) = fprop->fourier_basis();
    REQUIRE(ob.basis_h >= p.wrapped_h());  // Note [wrapped padding]
  }
  const auto bprop = fftw.plan(p, Pass::bprop, ob);
  REQUIRE(bprop->fourier_basis() == fprop->fourier_basis());
  REQUIRE(bprop->tile_basis() == fprop->tile_basis());

  PassData df = make_pass_data(p, Pass::fprop, seed), db = make_pass_data(p, Pass::bprop, seed + 1);
  db.weight = df.weight;
  const std::vector<T> x = as<T>(df.input), w = as<T>(df.weight), g = as<T>(db.grad_output);
  const auto prepared = (preparer == Pass::fprop ? *fprop : *bprop).prepare_weights(w.data(), nullptr);
  CHECK(prepared->bytes() >= std::size_t(p.f * p.fo) * sizeof(T) * 2);

  for (Pass pass : {Pass::fprop, Pass::bprop}) {
    const Plan& plan = pass == Pass::fprop ? *fprop : *bprop;
    PassData& d = pass == Pass::fprop ? df : db;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::vector<T> plain(d.result.size(), nan), shared(d.result.size(), nan);
    Args a;
    a.dtype = dt;
    a.input = pass == Pass::fprop ? x.data() : nullptr;
    a.grad_output = pass == Pass::bprop ? g.data() : nullptr;
    a.weight = w.data();
    a.result = plain.data();
    plan.execute(a);
    a.weight = nullptr;  // execute_with() reads the spectra only
    a.result = shared.data();
    plan.execute_with(a, *prepared);

    const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
    const Tolerance tol = tolerance(p, pass, dt, pow2_basis_elems(p));
    const std::vector<double> plain64(plain.begin(), plain.end());
    const ErrorStats vs_plain = compare(shared.data(), plain64.data(), int64_t(plain64.size()));
    const ErrorStats vs_ref = compare(shared.data(), ref.data(), int64_t(ref.size()));
    INFO(p.to_string(), " ", to_string(pass), " ", to_string(dt), " prepared by ", to_string(preparer),
         ": vs plain rel_l2 ", vs_plain.rel_l2, ", vs direct ", vs_ref.rel_l2);
    CHECK(vs_plain.nonfinite == 0);
    CHECK(vs_plain.rel_l2 <= tol.rel_l2);
    CHECK(vs_plain.max_abs_rel <= tol.max_abs_rel);
    CHECK(vs_ref.rel_l2 <= tol.rel_l2);
    CHECK(vs_ref.max_abs_rel <= tol.max_abs_rel);
  }
}

struct ForeignWeights final : PreparedWeights {
  std::string key() const override { return "fbfft weight spectra 16x16 of 2x2x3x3 on device 0"; }
  std::size_t bytes() const override { return 0; }
};

}  // namespace

TEST_CASE("fftw: fprop and bprop with one prepared weight spectrum match their plain execute") {
  std::mt19937_64 rng(std::random_device{}());
  for (int iter = 0; iter < 24; ++iter) {
    const ConvProblem p = random_dense_problem(rng);
    const Pass preparer = iter % 2 ? Pass::bprop : Pass::fprop;
    if (iter % 3 == 0)
      check_shared<double>(p, rng(), preparer);
    else
      check_shared<float>(p, rng(), preparer);
  }
  // Fixed cases: mirror padding with an odd rectangular input, and a kernel as large as the input.
  check_shared<float>(ConvProblem::parse("S=2,f=3,fo=5,h=13,w=9,kh=3,kw=5,ph=1,pw=2,pad=mirror"), 7, Pass::fprop);
  check_shared<double>(ConvProblem::parse("S=2,f=3,fo=5,h=13,w=9,kh=3,kw=5,ph=1,pw=2,pad=mirror"), 8, Pass::bprop);
  check_shared<float>(ConvProblem::parse("S=1,f=4,fo=2,n=7,k=7"), 9, Pass::fprop);
  // Spectra in several chunks of output channels (8 MiB each in a 64x63 basis: 8 channels of 1 MiB
  // in float32, 4 in float64), the last one narrower; M chunked by a workspace limit.
  const ConvProblem wide = ConvProblem::parse("S=3,f=64,fo=19,n=61,k=4,p=1,pad=mirror");
  const auto plan = builtin_registry().get("fftw").plan(wide, Pass::fprop, PlanOptions{});
  CHECK(plan->describe().find("prepared weights: chunks M 3/3, R 64, N 8") != std::string::npos);
  check_shared<float>(wide, 10, Pass::fprop);
  check_shared<double>(wide, 11, Pass::bprop);
  check_shared<float>(wide, 12, Pass::bprop, std::size_t(2) << 20);
}

TEST_CASE("fftw: tiled fprop and bprop share one prepared weight spectrum in the tile's basis") {
  // L5's shape at S=2 in 8x8 tiles (2x2 tiles of 6x6 outputs), fewer channels.
  const ConvProblem l5 = ConvProblem::parse("S=2,f=24,fo=40,n=13,k=3");
  const Backend& fftw = builtin_registry().get("fftw");
  PlanOptions o;
  o.tile = TileSpec::parse("8");
  const auto fprop = fftw.plan(l5, Pass::fprop, o);
  CHECK(fprop->tile_basis() == std::pair<int64_t, int64_t>{8, 8});
  CHECK(fprop->describe().find("prepared weights: chunks M") != std::string::npos);
  check_shared<float>(l5, 31, Pass::fprop, 0, TileSpec::parse("8"));
  check_shared<double>(l5, 32, Pass::bprop, 0, TileSpec::parse("8"));
  // Mirror padding (bprop folds the tiles' padded grid), rectangular tiles, odd sizes.
  const ConvProblem mirror = ConvProblem::parse("S=2,f=3,fo=5,h=19,w=23,kh=3,kw=5,ph=1,pw=2,pad=mirror");
  check_shared<float>(mirror, 33, Pass::fprop, 0, TileSpec::parse("8x16"));
  check_shared<float>(mirror, 34, Pass::bprop, 0, TileSpec::parse("16x8"));
  // A workspace limit that chunks the tiles.
  check_shared<float>(l5, 35, Pass::fprop, std::size_t(1) << 20, TileSpec::parse("8"));
  std::mt19937_64 rng(std::random_device{}());
  for (int iter = 0; iter < 12; ++iter) {
    const ConvProblem p = random_dense_problem(rng);
    const int64_t t = int64_t(8) << (iter % 2);
    if (p.kh >= t || p.kw >= t) continue;  // a tile must hold the kernel with room for outputs
    check_shared<float>(p, rng(), iter % 3 ? Pass::fprop : Pass::bprop, 0, TileSpec::parse(std::to_string(t)));
  }
}

TEST_CASE("fftw: prepared spectra of weights near 1e35 stay finite (Note [operand scaling])") {
  // The weights' spectra alone overflow float32 (64 taps of 1e37 sum past FLT_MAX): prepared, they
  // are stored scaled by a power of two; the input, small, keeps the outputs finite.
  const ConvProblem p = ConvProblem::parse("S=1,f=2,fo=2,n=16,k=8,p=2");
  for (Pass pass : {Pass::fprop, Pass::bprop}) {
    PassData d = make_pass_data(p, pass, 21);
    for (float& v : d.weight) v = 1e37f * (1.5f + 0.5f * std::tanh(v));
    for (float& v : (pass == Pass::fprop ? d.input : d.grad_output)) v *= 1e-6f;
    const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
    const auto plan = builtin_registry().get("fftw").plan(p, pass, PlanOptions{});
    const auto prepared = plan->prepare_weights(d.weight.data(), nullptr);
    std::fill(d.result.begin(), d.result.end(), std::numeric_limits<float>::quiet_NaN());
    plan->execute_with(d.args(), *prepared);
    const Verdict v = judge_result(p, pass, d, ref, pow2_basis_elems(p));
    INFO(to_string(pass), " rel_l2 ", v.error.rel_l2, " nonfinite ", v.error.nonfinite);
    CHECK(v.error.nonfinite == 0);
    CHECK(v.ok);
  }
}

TEST_CASE("fftw: spectra prepared for another problem, basis, element type or backend are refused") {
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=4,n=11,k=3,p=1");
  const Backend& fftw = builtin_registry().get("fftw");
  const auto fprop = fftw.plan(p, Pass::fprop, PlanOptions{});
  PassData d = make_pass_data(p, Pass::fprop, 3);
  const auto mine = fprop->prepare_weights(d.weight.data(), nullptr);
  CHECK_NOTHROW(fprop->execute_with(d.args(), *mine));

  auto refused = [&](const Plan& plan, const PreparedWeights& w) {
    CHECK_THROWS_WITH_AS(plan.execute_with(d.args(), w), doctest::Contains("prepared: weights prepared as"),
                         InvalidArgument);
  };
  // Another problem (more input channels): other weights.
  ConvProblem q = p;
  q.f = 5;
  PassData dq = make_pass_data(q, Pass::fprop, 4);
  refused(*fprop, *fftw.plan(q, Pass::fprop, PlanOptions{})->prepare_weights(dq.weight.data(), nullptr));
  // Another basis: bprop planned in its own, larger basis.
  PlanOptions big;
  big.basis_h = big.basis_w = fprop->fourier_basis().first + 3;
  const auto bprop_big = fftw.plan(p, Pass::bprop, big);
  REQUIRE(bprop_big->fourier_basis() != fprop->fourier_basis());
  refused(*bprop_big, *mine);
  // Another element type.
  PlanOptions f64;
  f64.dtype = DType::f64;
  const std::vector<double> w64(d.weight.begin(), d.weight.end());
  refused(*fprop, *fftw.plan(p, Pass::fprop, f64)->prepare_weights(w64.data(), nullptr));
  // Another backend's spectra.
  refused(*fprop, ForeignWeights{});
  // accgrad reads no weights; a tiled plan reads spectra in its tile's basis, not the untiled one.
  CHECK_THROWS_AS(fftw.plan(p, Pass::accgrad, PlanOptions{})->prepare_weights(d.weight.data(), nullptr), Unsupported);
  PlanOptions tiled;
  tiled.tile = TileSpec::parse("8");
  const auto fprop_tiled = fftw.plan(p, Pass::fprop, tiled);
  REQUIRE(fprop_tiled->tile_basis().first == 8);
  refused(*fprop_tiled, *mine);
  refused(*fprop, *fprop_tiled->prepare_weights(d.weight.data(), nullptr));
  CHECK_THROWS_AS(fftw.plan(p, Pass::accgrad, tiled)->prepare_weights(d.weight.data(), nullptr), Unsupported);
  CHECK_THROWS_AS(fprop->prepare_weights(nullptr, nullptr), InvalidArgument);
}
