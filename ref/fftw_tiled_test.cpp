// Tiled fftw against direct: every pass, both paddings, tile sizes 8..64 and rectangular tiles,
// both accgrad reductions, tiles larger than the problem, kernels that need the largest tile,
// and tile=auto. Tolerances from the tolerance model.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "api/fftconv.hpp"
#include "common/fft_size.hpp"
#include "validation/compare.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"
#include "validation/verdict.hpp"

using namespace fftconv;

namespace {
void check_tiled(const ConvProblem& p, Pass pass, const std::string& tile, const std::string& reduction,
                 uint64_t seed, int64_t in_flight = 0) {
  PlanOptions o;
  o.tile = TileSpec::parse(tile);
  o.extra["fftw_planner"] = "estimate";
  if (!reduction.empty()) o.extra["accgrad_reduction"] = reduction;
  if (in_flight) o.extra["tiles_in_flight"] = std::to_string(in_flight);
  PassData d = make_pass_data(p, pass, seed);
  const auto ref = reference_result(p, pass, d, RefKind::direct);
  auto plan = builtin_registry().get("fftw").plan(p, pass, o);
  plan->execute(d.args());
  const ErrorStats e = compare(d.result.data(), ref.data(), int64_t(ref.size()));
  const Tolerance tol = tolerance(p, pass, DType::f32, pow2_basis_elems(p));
  INFO(p.to_string(), " ", to_string(pass), " tile ", tile, " ", reduction, " -> ", plan->describe(), " rel_l2 ", e.rel_l2);
  CHECK(count_nan(d.result) == 0);
  CHECK(e.rel_l2 <= tol.rel_l2);
  CHECK(e.max_abs_rel <= tol.max_abs_rel);
}
}  // namespace

TEST_CASE("tiled fftw == direct for every pass, padding and tile size") {
  std::mt19937_64 rng(99);
  const char* problems[] = {"S=2,f=3,fo=2,n=37,k=5,p=2",           "S=2,f=2,fo=3,h=29,w=41,kh=3,kw=7,ph=1,pw=3,pad=mirror",
                            "S=1,f=2,fo=2,n=70,k=3,p=1,pad=mirror", "S=3,f=1,fo=1,h=19,w=23,kh=4,kw=2",
                            "S=2,f=2,fo=2,n=9,k=3"};  // last: tiles larger than the problem
  for (const char* spec : problems)
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
      for (const char* tile : {"8", "16", "32", "64", "16x8", "8x32"}) {
        const ConvProblem p = ConvProblem::parse(spec);
        const TileSpec t = TileSpec::parse(tile);
        if (t.fft_h < p.kh || t.fft_w < p.kw) continue;
        if (pass == Pass::accgrad) {
          check_tiled(p, pass, tile, "frequency", rng());
          check_tiled(p, pass, tile, "time", rng(), 3);
        } else {
          check_tiled(p, pass, tile, "", rng(), 5);
        }
      }
}

TEST_CASE("kernels that need the largest tile, and tile=auto") {
  std::mt19937_64 rng(3);
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    check_tiled(ConvProblem::parse("S=1,f=2,fo=2,n=90,k=60"), pass, "64", "", rng());
    check_tiled(ConvProblem::parse("S=2,f=4,fo=4,n=100,k=3,p=1,pad=mirror"), pass, "auto", "", rng());
    check_tiled(ConvProblem::parse("S=2,f=4,fo=4,n=12,k=11"), pass, "auto", "", rng());
  }
}

TEST_CASE("tiled plans report their tiles and honour the workspace limit") {
  auto p = ConvProblem::parse("S=4,f=8,fo=8,n=128,k=5");
  PlanOptions o;
  o.tile = TileSpec::parse("16");
  auto plan = builtin_registry().get("fftw").plan(p, Pass::fprop, o);
  CHECK(plan->tile_json().find("\"fft_h\":16") != std::string::npos);
  o.tile = TileSpec::parse("auto");
  o.workspace_limit = 4 << 20;
  auto lim = builtin_registry().get("fftw").plan(p, Pass::fprop, o);
  CHECK(lim->workspace_bytes() <= o.workspace_limit);
}

TEST_CASE("fftw plans are bitwise repeatable, tiled and untiled") {
  auto p = ConvProblem::parse("S=3,f=4,fo=5,h=40,w=33,kh=5,kw=3,p=2,pad=mirror");
  for (const char* tile : {"none", "16", "auto"})
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      PlanOptions o;
      o.tile = TileSpec::parse(tile);
      auto plan = builtin_registry().get("fftw").plan(p, pass, o);
      PassData d = make_pass_data(p, pass, 1);
      plan->execute(d.args());
      const std::vector<float> first = d.result;
      for (int rep = 0; rep < 3; ++rep) {
        std::fill(d.result.begin(), d.result.end(), std::numeric_limits<float>::quiet_NaN());
        plan->execute(d.args());
        INFO(tile, " ", to_string(pass), " rep ", rep);
        CHECK(std::memcmp(first.data(), d.result.data(), first.size() * sizeof(float)) == 0);
      }
    }
}

TEST_CASE("tile=auto that stays untiled runs exactly the tile=none plan (Note [auto's untiled candidate])") {
  // Large kernels: the untiled plan wins; with the planner's power-of-two basis (256x256, 128x128)
  // instead of fftw's smooth one (135x135, 72x72) auto ran 2.5-20x slower than none.
  for (const char* spec : {"S=4,f=8,fo=8,n=130,k=63", "S=8,f=8,fo=8,n=66,k=33", "S=2,f=2,fo=2,n=40,k=31"})
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      const ConvProblem p = ConvProblem::parse(spec);
      PlanOptions none, automatic;
      none.extra["fftw_planner"] = automatic.extra["fftw_planner"] = "estimate";
      automatic.tile = TileSpec::parse("auto");
      const auto a = builtin_registry().get("fftw").plan(p, pass, none);
      const auto b = builtin_registry().get("fftw").plan(p, pass, automatic);
      INFO(spec, " ", to_string(pass), "\nnone: ", a->describe(), "\nauto: ", b->describe());
      CHECK(b->tile_json() == "null");
      CHECK(b->describe().rfind(a->describe(), 0) == 0);  // the same plan, with the planner's reason after it
      CHECK(b->workspace_bytes() == a->workspace_bytes());
      PassData d = make_pass_data(p, pass, 4);
      a->execute(d.args());
      const std::vector<float> first = d.result;
      std::fill(d.result.begin(), d.result.end(), std::numeric_limits<float>::quiet_NaN());
      b->execute(d.args());
      CHECK(std::memcmp(first.data(), d.result.data(), first.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("describe() stays one short line; candidates() lists every basis weighed") {
  // A padded side of 130 has 24 7-smooth sizes up to 256: 576 bases, all of them once listed in
  // describe() (thousands of characters on the `fftconv run` plan line).
  PlanOptions o;
  o.extra["fftw_planner"] = "estimate";
  const auto plan = builtin_registry().get("fftw").plan(ConvProblem::parse("S=1,n=130,k=3"), Pass::fprop, o);
  INFO(plan->describe());
  CHECK(plan->describe().size() < 400);
  CHECK(plan->describe().find("576 candidate bases (135x135 ... 256x256)") != std::string::npos);
  const std::string all = plan->candidates();
  CHECK(std::count(all.begin(), all.end(), ';') == 575);
}
