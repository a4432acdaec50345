// Tests of the lowering (api/lowering.hpp, common/lowering.hpp): its geometry, and every option on
// the CPU backends against the `direct` ground truth, which computes them from their definition.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "api/fftconv.hpp"
#include "api/lowering.hpp"
#include "ref/backends.hpp"
#include "ref/direct.hpp"
#include "validation/compare.hpp"
#include "validation/problem_sets.hpp"
#include "validation/data.hpp"
#include "validation/runner.hpp"
#include "validation/tolerance.hpp"
#include "validation/verdict.hpp"

using namespace fftconv;

namespace {

std::vector<double> normal(int64_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> nd;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = float(nd(rng));  // representable in float32
  return v;
}

double rms(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s / double(v.size()));
}

// Runs one pass of `b` (wrapped) in float32 and checks result and gradBias against direct in double.
void check_against_direct(const Backend& b, const ConvProblem& p, Pass pass, const PlanOptions& o, std::mt19937_64& rng) {
  CAPTURE(p.to_string());
  CAPTURE(to_string(pass));
  const auto x = normal(p.input_elems(), rng), w = normal(p.weight_elems(), rng), g = normal(p.output_elems(), rng),
             bias = normal(p.fo, rng);
  std::vector<double> ref(std::size_t(p.result_elems(pass))), ref_gb(std::size_t(p.fo));
  direct_pass<double>(p, pass, x.data(), w.data(), g.data(), ref.data(), bias.data(), ref_gb.data());
  auto f32 = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  const auto xf = f32(x), wf = f32(w), gf = f32(g), bf = f32(bias);
  std::vector<float> out(ref.size(), std::numeric_limits<float>::quiet_NaN()), gb(ref_gb.size(), std::nanf(""));
  Args a;
  a.input = xf.data(), a.weight = wf.data(), a.grad_output = gf.data(), a.result = out.data();
  a.bias = bf.data(), a.grad_bias = gb.data();
  const auto plan = b.plan(p, pass, o);
  CAPTURE(plan->describe());
  plan->execute(a);
  const int64_t basis = plan_basis_elems(std::string(b.name()), plan->describe(), plan->tile_json(), p);
  const auto [rms_a, rms_b] = pass_operands(pass, rms(x), rms(w), rms(g));
  const Verdict v = judge_stats(p, pass, compare(out.data(), ref.data(), int64_t(out.size())), rms_a, rms_b, basis);
  CHECK(v.error.nonfinite == 0);
  CHECK(v.error.rel_l2 <= v.tol.rel_l2);
  CHECK(v.error.max_abs_rel <= v.tol.max_abs_rel);
  if (p.bias && pass == Pass::accgrad) {  // the sums of gradOutput, float32 against double
    const ErrorStats eb = compare(gb.data(), ref_gb.data(), p.fo);
    CHECK(eb.nonfinite == 0);
    CHECK(eb.diff_norm <= tolerance(p, Pass::accgrad, DType::f32, 1).rel_l2 * std::sqrt(double(p.fo * p.S * p.out_h() * p.out_w())));
  }
}

}  // namespace

TEST_CASE("make_lowering: polyphase geometry of a strided, padded problem") {
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=4,n=9,k=3,p=1,s=2");
  CHECK(p.out_h() == 5);
  const LoweringMap m = make_lowering(p, StrideLowering::polyphase, false);
  CHECK(m.phases_h == 2);
  CHECK(m.inner.kh == 2);
  CHECK(m.inner.h == 5 + 2 - 1);
  CHECK(m.inner.f == 12);
  CHECK(m.inner.ph == 0);
  CHECK(m.inner.is_dense());
  CHECK(m.ohi == p.out_h());
  const LoweringMap s = make_lowering(p, StrideLowering::subsample, false);
  CHECK(s.inner.f == 3);
  CHECK(s.inner.ph == 1);
  CHECK(s.ohi == 9);
  // A 1x1 kernel of stride 2 keeps one phase: the plain subsampled input.
  const LoweringMap one = make_lowering(ConvProblem::parse("f=4,fo=4,n=8,k=1,s=2"), StrideLowering::polyphase, false);
  CHECK(one.inner.f == 4);
  CHECK(one.inner.h == 4);
  // Groups: one run per group of f/g channels, unless the backend computes them.
  const LoweringMap g = make_lowering(ConvProblem::parse("S=2,f=6,fo=9,n=8,k=3,g=3"), StrideLowering::none, false);
  CHECK(g.runs == 3);
  CHECK(g.inner.f == 2);
  CHECK(g.inner.fo == 3);
  CHECK(make_lowering(ConvProblem::parse("f=6,fo=6,n=8,k=3,g=6"), StrideLowering::none, true).inner.g == 6);
  // Dilation: the dilated kernel.
  const LoweringMap d = make_lowering(ConvProblem::parse("n=9,k=3,d=3"), StrideLowering::none, false);
  CHECK(d.inner.kh == 7);
  CHECK_FALSE(d.weight_identity());
  CHECK(d.input_identity());
}

TEST_CASE("lowered im2col and fftw match direct on every option, pass and stride treatment") {
  std::mt19937_64 rng(std::random_device{}());
  const auto im2col = make_lowered_backend(make_im2col_backend(), make_host_lowering_mover);
  const auto fftw = make_lowered_backend(make_fftw_backend(), make_host_lowering_mover);
  for (int trial = 0; trial < 40; ++trial) {
    const ConvProblem p = draw_conv2d_problem(rng, 14);
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
      for (const char* stride : {"polyphase", "subsample"}) {
        PlanOptions o;
        o.extra = {{"stride", stride}};
        check_against_direct(*im2col, p, pass, o, rng);
        o.extra["fftw_planner"] = "estimate";  // a key of fftw's own: im2col refuses it
        check_against_direct(*fftw, p, pass, o, rng);
        o.tile = TileSpec::parse("auto");
        check_against_direct(*fftw, p, pass, o, rng);
      }
  }
}

TEST_CASE("lowered plans say what they chose, and the registry's backends lower") {
  const Backend& fftw = builtin_registry().get("fftw");
  const ConvProblem p = ConvProblem::parse("S=2,f=4,fo=4,n=12,k=3,p=1,s=2,d=2,g=2,bias=1,pad=circular");
  CHECK(fftw.supports(p, Pass::fprop, DType::f32).ok);
  PlanOptions o;
  const std::string d = fftw.plan(p, Pass::fprop, o)->describe();
  CHECK(d.find("polyphase") != std::string::npos);
  CHECK(d.find("circular") != std::string::npos);
  CHECK(d.find("2 runs") != std::string::npos);
  CHECK(d.find("bias") != std::string::npos);
  o.extra["stride"] = "subsample";
  CHECK(fftw.plan(p, Pass::bprop, o)->describe().find("every 2x2th") != std::string::npos);
  o.extra["stride"] = "sideways";
  CHECK_THROWS_AS(fftw.plan(p, Pass::bprop, o), InvalidArgument);
  // The raw backend says no before any work, and plan() throws Unsupported.
  const auto raw = make_fftw_backend();
  CHECK_FALSE(raw->supports(p, Pass::fprop, DType::f32).ok);
  CHECK_THROWS_AS(raw->plan(p, Pass::fprop, PlanOptions{}), Unsupported);
  // A missing bias is an argument error naming it.
  std::vector<float> x(std::size_t(p.input_elems())), w(std::size_t(p.weight_elems())), y(std::size_t(p.output_elems()));
  Args a;
  a.input = x.data(), a.weight = w.data(), a.result = y.data();
  CHECK_THROWS_WITH_AS(fftw.plan(p, Pass::fprop, PlanOptions{})->execute(a), doctest::Contains("bias"), InvalidArgument);
}

TEST_CASE("lowered fftw in float64 matches direct to float64 accuracy") {
  std::mt19937_64 rng(std::random_device{}());
  const Backend& fftw = builtin_registry().get("fftw");
  for (int trial = 0; trial < 10; ++trial) {
    const ConvProblem p = draw_conv2d_problem(rng, 14);
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      CAPTURE(p.to_string());
      const auto x = normal(p.input_elems(), rng), w = normal(p.weight_elems(), rng), g = normal(p.output_elems(), rng),
                 bias = normal(p.fo, rng);
      std::vector<double> ref(std::size_t(p.result_elems(pass))), out(ref.size(), std::nan("")), gb(std::size_t(p.fo)),
          ref_gb(gb.size());
      direct_pass<double>(p, pass, x.data(), w.data(), g.data(), ref.data(), bias.data(), ref_gb.data());
      PlanOptions o;
      o.dtype = DType::f64;
      Args a;
      a.input = x.data(), a.weight = w.data(), a.grad_output = g.data(), a.result = out.data(), a.dtype = DType::f64;
      a.bias = bias.data(), a.grad_bias = gb.data();
      fftw.plan(p, pass, o)->execute(a);
      const double scale = std::sqrt(double(ref.size() * p.reduction_length(pass)));  // Note [cancellation]
      CHECK(compare(out.data(), ref.data(), int64_t(out.size())).diff_norm <= 1e-12 * scale);
      if (p.bias && pass == Pass::accgrad) CHECK(compare(gb.data(), ref_gb.data(), p.fo).diff_norm <= 1e-12 * scale);
    }
  }
}

TEST_CASE("fftw's depthwise path: native groups untiled, per-group runs when tiled, both match direct") {
  std::mt19937_64 rng(std::random_device{}());
  const auto fftw = make_lowered_backend(make_fftw_backend(), make_host_lowering_mover);
  for (const char* spec : {"S=3,f=5,fo=10,h=13,w=9,kh=5,kw=3,ph=2,pw=1,g=5,pad=mirror",
                           "S=2,f=4,fo=4,n=16,k=7,p=3,g=4,bias=1", "S=1,f=3,fo=3,n=12,k=3,s=2,g=3,pad=circular"}) {
    const ConvProblem p = ConvProblem::parse(spec);
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
      for (const char* tile : {"none", "8"}) {
        PlanOptions o;
        o.extra = {{"fftw_planner", "estimate"}};
        o.tile = TileSpec::parse(tile);
        const std::string d = fftw->plan(p, pass, o)->describe();
        CAPTURE(d);
        if (std::string(tile) == "none") CHECK(d.find("fftw depthwise") != std::string::npos);
        else CHECK(d.find("runs of one plan") != std::string::npos);
        // Note [stride choice]: subsampling keeps a strided depthwise layer elementwise.
        if (p.sh > 1 && std::string(tile) == "none") CHECK(d.find("subsample chosen") != std::string::npos);
        check_against_direct(*fftw, p, pass, o, rng);
      }
  }
}

TEST_CASE("auto on the host times and runs problems with bias in every pass") {
  std::mt19937_64 rng(std::random_device{}());
  const Backend& automatic = find_backend("auto", Location::host);
  const ConvProblem p = ConvProblem::parse("S=2,f=4,fo=6,n=11,k=3,p=1,s=2,g=2,bias=1");
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    PlanOptions o;
    o.tune_cache = "none";
    check_against_direct(automatic, p, pass, o, rng);
  }
}
