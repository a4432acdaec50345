// Planner invariants on thousands of random problems (partition, windows, workspace limit),
// fixed geometry examples, bad input, and the choose/explain contract.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "common/padding.hpp"
#include "tiling/cost_model.hpp"
#include "tiling/planner.hpp"
#include "tiling/random_problems.hpp"

using namespace fftconv;

namespace {

// Every element of region() is written by exactly one tile, and each window is well formed.
void check_geometry(const TilePlan& t) {
  const ConvProblem& p = t.problem;
  CAPTURE(p.to_string());
  CAPTURE(t.summary());
  const Window R = t.region();
  switch (t.pass) {
    case Pass::fprop: case Pass::accgrad: CHECK(R == Window{0, 0, p.out_h(), p.out_w()}); break;
    case Pass::bprop:
      CHECK(R == (p.padding == Padding::zero ? Window{p.ph, p.pw, p.h, p.w}
                                               : Window{0, 0, p.padded_h(), p.padded_w()}));
      CHECK(t.assembly == (p.padding == Padding::zero ? BpropAssembly::crop_store : BpropAssembly::fold_accumulate));
      break;
  }
  CHECK(t.out_tile_h() == t.fft_h - p.kh + 1);
  CHECK(t.out_tile_w() == t.fft_w - p.kw + 1);
  CHECK(t.tiles_in_flight >= 1);
  CHECK(t.tiles_in_flight <= t.item_count());
  std::vector<int> hits(R.area(), 0);
  const Window padded{0, 0, p.padded_h(), p.padded_w()}, inner{p.ph, p.pw, p.h, p.w};
  const Window grad{0, 0, p.out_h(), p.out_w()};
  for (int64_t k = 0; k < t.tile_count(); ++k) {
    const Tile e = t.tile(k);
    REQUIRE(e.index == k);
    REQUIRE(e.row * t.cols.count + e.col == k);
    REQUIRE(!e.window.empty());
    REQUIRE(R.contains(e.window));
    REQUIRE(e.window.h <= t.out_tile_h());
    REQUIRE(e.window.w <= t.out_tile_w());
    for (int64_t y = e.window.y0; y < e.window.y0 + e.window.h; ++y)
      for (int64_t x = e.window.x0; x < e.window.x0 + e.window.w; ++x) ++hits[(y - R.y0) * R.w + x - R.x0];
    // The read window is the output window plus the kernel halo and fits the basis.
    REQUIRE(e.read.h == e.window.h + p.kh - 1);
    REQUIRE(e.read.w == e.window.w + p.kw - 1);
    REQUIRE(e.read.h <= t.fft_h);
    REQUIRE(e.read.w <= t.fft_w);
    REQUIRE(e.read.contains(e.read_valid));
    if (t.pass == Pass::bprop) {
      REQUIRE(e.read.y0 == e.window.y0 - (p.kh - 1));
      REQUIRE(grad.contains(e.read_valid));
      REQUIRE(e.border == !(e.read_valid == e.read));
      REQUIRE(e.keep == Window{p.kh - 1, p.kw - 1, e.window.h, e.window.w});
    } else {
      REQUIRE(e.read.y0 == e.window.y0);
      REQUIRE(padded.contains(e.read));  // inside the padded input ...
      REQUIRE(e.read_valid == e.read);
      REQUIRE(e.border == !inner.contains(e.read));  // ... and marked when it touches the padding
      REQUIRE(e.keep == (t.pass == Pass::fprop ? Window{0, 0, e.window.h, e.window.w} : Window{0, 0, p.kh, p.kw}));
    }
    REQUIRE(e.keep.y0 + e.keep.h <= t.fft_h);
    REQUIRE(e.keep.x0 + e.keep.w <= t.fft_w);
  }
  // Exactly once (for accgrad: the reduction covers every gradOutput element once).
  for (int h : hits) REQUIRE(h == 1);
}

}  // namespace

TEST_CASE("random problems: tiles partition the result and windows are well formed") {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int64_t> side(2, 80);
  for (int trial = 0; trial < 3000; ++trial) {
    const ConvProblem p = testing::random_tiling_problem(rng);
    const Pass pass = testing::random_pass(rng);
    const int64_t fh = side(rng), fw = side(rng);
    if (fh < p.kh || fw < p.kw || fh > largest_tile_side(p, pass, true) || fw > largest_tile_side(p, pass, false)) {
      CHECK_THROWS_AS(make_tiled_plan(p, pass, fh, fw, 4), Unsupported);
      continue;
    }
    check_geometry(make_tiled_plan(p, pass, fh, fw, side(rng)));
  }
}

TEST_CASE("random problems: a bprop chunk's fold footprint holds every element its tiles add to") {
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int64_t> side(2, 40);
  int chunks = 0, exact = 0;
  for (int trial = 0; trial < 400; ++trial) {
    ConvProblem p = testing::random_tiling_problem(rng);
    p.h = std::min<int64_t>(p.h, 60), p.w = std::min<int64_t>(p.w, 60);  // brute force below
    p.ph = std::min(p.ph, p.padding == Padding::mirror ? p.h - 1 : p.ph);
    p.pw = std::min(p.pw, p.padding == Padding::mirror ? p.w - 1 : p.pw);
    p.kh = std::min(p.kh, p.padded_h()), p.kw = std::min(p.kw, p.padded_w());
    const int64_t fh = std::max(p.kh, side(rng)), fw = std::max(p.kw, side(rng));
    const TilePlan t = make_tiled_plan(p, Pass::bprop, fh, fw, 1);
    CAPTURE(p.to_string());
    CAPTURE(t.summary());
    const int64_t n = t.item_count(), chunk = std::uniform_int_distribution<int64_t>(1, n)(rng);
    for (int64_t i0 = 0; i0 < n; i0 += chunk) {
      const int64_t ic = std::min(chunk, n - i0);
      const FoldFootprint f = bprop_fold_footprint(p, t.rows, t.cols, i0, ic);
      // Brute force: the (s, r, c) every padded position of the chunk's tile windows reads from.
      int64_t s_lo = p.S, s_hi = -1, r_lo = p.h, r_hi = -1, c_lo = p.w, c_hi = -1;
      for (int64_t item = i0; item < i0 + ic; ++item) {
        const Tile e = t.tile(item / p.S);
        const int64_t s = item % p.S;
        for (int64_t y = e.window.y0; y < e.window.y0 + e.window.h; ++y)
          for (int64_t x = e.window.x0; x < e.window.x0 + e.window.w; ++x) {
            const int64_t r = padded_source(y, p.h, p.ph, p.padding), c = padded_source(x, p.w, p.pw, p.padding);
            if (r < 0 || c < 0) continue;
            s_lo = std::min(s_lo, s), s_hi = std::max(s_hi, s);
            r_lo = std::min(r_lo, r), r_hi = std::max(r_hi, r);
            c_lo = std::min(c_lo, c), c_hi = std::max(c_hi, c);
          }
      }
      CAPTURE(i0);
      CAPTURE(ic);
      ++chunks;
      REQUIRE(s_hi >= 0);  // every bprop tile lies in the padded grid, whose positions all have a source
      CHECK(f.s0 <= s_lo);
      CHECK(f.s0 + f.images > s_hi);
      CHECK(f.s0 + f.images <= p.S);
      CHECK(f.rect.y0 <= r_lo);
      CHECK(f.rect.y0 + f.rect.h > r_hi);
      CHECK(f.rect.x0 <= c_lo);
      CHECK(f.rect.x0 + f.rect.w > c_hi);
      CHECK(Window{0, 0, p.h, p.w}.contains(f.rect));
      if (p.padding == Padding::zero || i0 / p.S == (i0 + ic - 1) / p.S) {  // exact bounds
        ++exact;
        CHECK(f.rect == Window{r_lo, c_lo, r_hi - r_lo + 1, c_hi - c_lo + 1});
        if (i0 / p.S == (i0 + ic - 1) / p.S) CHECK((f.s0 == s_lo && f.s0 + f.images == s_hi + 1));
      }
    }
  }
  CHECK(exact > 100);
  MESSAGE("chunks: " << chunks << ", with exact bounds: " << exact);
  const TilePlan t = make_tiled_plan(ConvProblem::parse("S=2,f=1,fo=1,h=9,w=9,kh=3,kw=3,ph=1,pw=1"), Pass::bprop, 8, 8, 1);
  CHECK_THROWS_AS(bprop_fold_footprint(t.problem, t.rows, t.cols, 0, t.item_count() + 1), InvalidArgument);
  CHECK_THROWS_AS(bprop_fold_footprint(t.problem, t.rows, t.cols, -1, 1), InvalidArgument);
  CHECK_THROWS_AS(bprop_fold_footprint(t.problem, t.rows, t.cols, 0, 0), InvalidArgument);
}

TEST_CASE("random problems: choose() honours the workspace limit or throws Unsupported") {
  std::mt19937 rng(std::random_device{}());
  int chosen_tiled = 0, unsupported = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const ConvProblem p = testing::random_tiling_problem(rng);
    const Pass pass = testing::random_pass(rng);
    TilingOptions o;
    o.policy = trial % 2 ? SizePolicy::smooth : SizePolicy::pow2;
    o.workspace_limit = std::size_t(1) << std::uniform_int_distribution<int>(10, 28)(rng);
    if (trial % 5 == 0) o.sizes = {8, 12, 24, 64};
    try {
      const TilingChoice c = choose(p, pass, o);
      CHECK(c.plan.cost.workspace_bytes <= double(o.workspace_limit));
      CHECK(workspace_model(c.plan).at(c.plan.tiles_in_flight) == doctest::Approx(c.plan.cost.workspace_bytes));
      const Candidate& win = c.candidates.at(c.chosen);
      CHECK(win.feasible);
      CHECK(win.tiled == c.plan.tiled);
      for (const Candidate& k : c.candidates) {
        if (k.feasible) CHECK(win.cost.cost <= k.cost.cost);
        if (k.feasible) CHECK(k.cost.workspace_bytes <= double(o.workspace_limit));
        if (k.feasible)  // the charged parts add up to the cost (what the tiling notebook plots)
          CHECK(k.cost.transform_cost + k.cost.pointwise_cost + k.cost.extra_flops + k.cost.traffic_cost ==
                doctest::Approx(k.cost.cost));
      }
      if (c.plan.tiled) { ++chosen_tiled; check_geometry(c.plan); }
      CHECK(!c.reason.empty());
    } catch (const Unsupported& e) {
      ++unsupported;
      CHECK(std::string(e.what()).find("no candidate fits") != std::string::npos);
    }
  }
  CHECK(chosen_tiled > 0);
  MESSAGE("tiled choices: " << chosen_tiled << ", unsupported: " << unsupported);
}

TEST_CASE("fprop geometry of the paper's example: n=128, k=5, tile 16") {
  const ConvProblem p = ConvProblem::parse("S=8,f=16,fo=16,n=128,k=5");
  const TilePlan t = make_tiled_plan(p, Pass::fprop, 16, 16, 1000);
  CHECK(t.out_tile_h() == 12);
  CHECK(t.rows.count == 11);  // ceil(124 / 12)
  CHECK(t.tile_count() == 121);
  CHECK(t.tiles_in_flight == 968);  // clamped to S * tiles
  const Tile last = t.tile(120);
  CHECK(last.window == Window{120, 120, 4, 4});  // remainder tile
  CHECK(last.read == Window{120, 120, 8, 8});
  CHECK_FALSE(last.border);
  CHECK_THROWS_AS(t.tile(121), InvalidArgument);
  CHECK_THROWS_AS(t.tile(-1), InvalidArgument);
}

TEST_CASE("bprop geometry: halo outside gradOutput is clipped and marked") {
  const ConvProblem p = ConvProblem::parse("n=10,k=3,p=1");
  const TilePlan t = make_tiled_plan(p, Pass::bprop, 8, 8, 1);
  const Tile first = t.tile(0);
  CHECK(first.window == Window{1, 1, 6, 6});  // zero padding: only the unpadded window of g_pad
  CHECK(first.read == Window{-1, -1, 8, 8});
  CHECK(first.read_valid == Window{0, 0, 7, 7});
  CHECK(first.border);
}

TEST_CASE("untiled plans and accgrad reductions") {
  const ConvProblem p = ConvProblem::parse("S=8,f=16,fo=16,n=256,k=3");
  TilingOptions o;
  const TilingChoice u = choose_untiled(p, Pass::fprop, o);
  CHECK_FALSE(u.plan.tiled);
  CHECK(u.plan.fft_h == 256);
  CHECK(u.plan.tiles_in_flight == 8);
  o.policy = SizePolicy::smooth;
  // The circular extent (Note [wrapped padding]): 28 with zero padding, the padded 29 under mirror.
  CHECK(choose_untiled(ConvProblem::parse("n=27,k=3,p=1"), Pass::bprop, o).plan.fft_h == 28);
  CHECK(choose_untiled(ConvProblem::parse("n=27,k=3,p=1,pad=mirror"), Pass::bprop, o).plan.fft_h == 30);
  CHECK_THROWS_AS(make_untiled_plan(p, Pass::fprop, 128, 256, 1), Unsupported);
  // Time reduction costs more inverses than frequency reduction on the same tile.
  const TilePlan f = make_tiled_plan(p, Pass::accgrad, 16, 16, 256, AccgradReduction::frequency);
  const TilePlan t = make_tiled_plan(p, Pass::accgrad, 16, 16, 256, AccgradReduction::time);
  CHECK(t.cost.transform_flops > f.cost.transform_flops);
  CHECK(t.cost.cost > f.cost.cost);
  const TilingChoice c = choose(p, Pass::accgrad, {});
  CHECK(c.plan.reduction == AccgradReduction::frequency);
}

TEST_CASE("tiling wins on memory and on cost when the kernel is small") {
  for (const char* spec : {"S=8,f=16,fo=16,n=128,k=5", "S=8,f=16,fo=16,n=256,k=3"})
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      CAPTURE(std::string(spec));
      CAPTURE(to_string(pass));
      const TilingChoice c = choose(ConvProblem::parse(spec), pass, {});
      CHECK(c.plan.tiled);
      CHECK(c.plan.cost.workspace_bytes < c.candidates[0].cost.workspace_bytes);  // [0] is none
    }
}

TEST_CASE("workspace limit lowers the tiles in flight; too small a limit is Unsupported") {
  const ConvProblem p = ConvProblem::parse("S=8,f=16,fo=16,n=128,k=5");
  TilingOptions o;
  o.workspace_limit = 2 << 20;
  const TilingChoice c = choose_fixed(p, Pass::fprop, 16, 16, o);
  CHECK(c.plan.tiled);
  CHECK(c.plan.tiles_in_flight < kMinTilesInFlight);
  CHECK(c.plan.cost.workspace_bytes <= double(o.workspace_limit));
  o.workspace_limit = 1000;
  CHECK_THROWS_AS(choose_fixed(p, Pass::fprop, 16, 16, o), Unsupported);
  CHECK_THROWS_AS(choose(p, Pass::fprop, o), Unsupported);
  CHECK_THROWS_AS(choose_untiled(p, Pass::fprop, o), Unsupported);
}

TEST_CASE("rectangular problems get rectangular candidates") {
  TilingOptions o;
  const TilingChoice sq = choose(ConvProblem::parse("n=64,k=5"), Pass::fprop, o);
  for (const Candidate& k : sq.candidates) CHECK(k.fft_h == k.fft_w);
  const TilingChoice re = choose(ConvProblem::parse("h=200,w=20,kh=9,kw=3"), Pass::fprop, o);
  bool any = false;
  for (const Candidate& k : re.candidates) any |= k.tiled && k.fft_h != k.fft_w;
  CHECK(any);
  CHECK(policy_sizes(SizePolicy::pow2) == std::vector<int64_t>{8, 16, 32, 64});
  CHECK(policy_sizes(SizePolicy::smooth).size() > 20);
}

TEST_CASE("bad problems and options raise typed errors") {
  ConvProblem bad;
  bad.h = 3; bad.kh = 5;
  CHECK_THROWS_AS(make_tiled_plan(bad, Pass::fprop, 8, 8, 1), InvalidProblem);
  CHECK_THROWS_AS(choose(bad, Pass::accgrad, {}), InvalidProblem);
  bad = ConvProblem{};
  bad.S = 0;
  CHECK_THROWS_AS(choose_untiled(bad, Pass::bprop, {}), InvalidProblem);
  // The planner tiles the dense problem; the lowering hands it that (Note [lowering]).
  const ConvProblem strided = ConvProblem::parse("h=232,s=40,kh=1,pad=mirror");
  CHECK_THROWS_AS(choose(strided, Pass::fprop, {}), Unsupported);
  CHECK_THROWS_AS(make_tiled_plan(ConvProblem::parse("n=16,k=3,g=1,bias=1"), Pass::fprop, 8, 8, 1), Unsupported);
  const ConvProblem p = ConvProblem::parse("n=32,k=3");
  TilingOptions o;
  o.sizes = {1};
  CHECK_THROWS_AS(choose(p, Pass::fprop, o), InvalidArgument);
  CHECK_THROWS_AS(choose_fixed(p, Pass::fprop, 8, 5000, {}), InvalidArgument);
  PlanOptions po;
  po.extra["tiles_in_flight"] = "-3";
  CHECK_THROWS_AS(tiling_options(po), InvalidArgument);
  po.extra = {{"accgrad_reduction", "space"}};
  CHECK_THROWS_AS(tiling_options(po), InvalidArgument);
  po.extra = {{"accgrad_reduction", "time"}, {"tiles_in_flight", "1000000"}};
  po.tile = TileSpec::parse("16");
  const TilingChoice c = plan_tiling(p, Pass::accgrad, po);
  CHECK(c.plan.reduction == AccgradReduction::time);
  CHECK(c.plan.tiles_in_flight == c.plan.item_count());  // clamped to all items
  po.extra = {{"tiles_in_flight", "3"}};
  CHECK(plan_tiling(p, Pass::fprop, po).plan.tiles_in_flight == 3);
}

TEST_CASE("the planner's option keys are the extra keys tiling_options reads") {
  CHECK(tiling_option_keys() == std::vector<std::string_view>{"tiles_in_flight", "accgrad_reduction"});
  CHECK(with_tiling_option_keys({"a"}) == std::vector<std::string_view>{"a", "tiles_in_flight", "accgrad_reduction"});
  for (std::string_view key : tiling_option_keys()) {  // each is read: a bad value is rejected, naming it
    PlanOptions po;
    po.extra[std::string(key)] = "sideways";
    CHECK_THROWS_WITH_AS(tiling_options(po), doctest::Contains(std::string(key).c_str()), InvalidArgument);
  }
  PlanOptions po;
  po.extra = {{"gemm", "sideways"}};  // a backend's key: not the planner's to read
  CHECK_NOTHROW(tiling_options(po));
}

TEST_CASE("a tile beyond the one covering the input is refused, naming tile and the sizes") {
  const ConvProblem p = ConvProblem::parse("n=8,k=3");
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    CAPTURE(to_string(pass));
    CHECK_THROWS_WITH_AS(choose_fixed(p, pass, 1000, 1000, {}),
                         doctest::Contains("tile: fft_h = 1000 is larger than any useful tile for the padded input 8x8"),
                         Unsupported);
    CHECK_THROWS_WITH_AS(make_tiled_plan(p, pass, 16, 128, 1), doctest::Contains("fft_w = 128"), Unsupported);
    CHECK(choose_fixed(p, pass, 64, 64, {}).plan.tiled);  // up to the policies' largest tile
    TilingOptions o;
    o.sizes = {16, 1000};  // an explicit candidate list: the huge one is listed, infeasible
    const TilingChoice c = choose(p, pass, o);
    bool listed = false;
    for (const Candidate& k : c.candidates)
      if (k.fft_h == 1000) listed = !k.feasible && k.note.find("larger than any useful tile") != std::string::npos;
    CHECK(listed);
  }
  // A large kernel needs a large tile: one tile of 128 covers 90 padded rows with k = 60.
  CHECK(choose_fixed(ConvProblem::parse("n=90,k=60"), Pass::fprop, 128, 128, {}).plan.tiled);
  CHECK_THROWS_AS(choose_fixed(ConvProblem::parse("n=90,k=60"), Pass::fprop, 256, 128, {}), Unsupported);
}

TEST_CASE("huge problems plan without overflow") {
  const ConvProblem p = ConvProblem::parse("S=1,f=1,fo=1,h=1000000,w=1000000,k=3");
  const TilingChoice c = choose(p, Pass::accgrad, {});
  CHECK(c.plan.tiled);
  CHECK(c.plan.tile_count() > 1000);
  CHECK(std::isfinite(c.plan.cost.cost));
  check_geometry(make_tiled_plan(ConvProblem::parse("h=5,w=100000,kh=5,kw=2"), Pass::bprop, 64, 64, 9));
}

TEST_CASE("explain lists the candidates and the reason") {
  const TilingChoice c = choose(ConvProblem::parse("L5,S=8"), Pass::fprop, {});
  const std::string s = explain(c);
  CHECK(s.find("reason: ") != std::string::npos);
  CHECK(s.find("* " + c.candidates[c.chosen].label()) != std::string::npos);
  CHECK(s.find("none(") != std::string::npos);
  TilingOptions smooth;
  smooth.policy = SizePolicy::smooth;
  const TilingChoice big = choose(ConvProblem::parse("h=300,w=200,kh=3,kw=5"), Pass::fprop, smooth);
  CHECK(explain(big, 5).find("more candidates") != std::string::npos);
}

TEST_CASE("frequency_reduction_only pins the frequency reduction and refuses the time one") {
  PlanOptions o;
  CHECK(frequency_reduction_only(o, "gpu").extra.at("accgrad_reduction") == "frequency");
  o.extra["accgrad_reduction"] = "frequency";
  CHECK(frequency_reduction_only(o, "gpu").extra.at("accgrad_reduction") == "frequency");
  o.extra["accgrad_reduction"] = "time";
  CHECK_THROWS_AS(frequency_reduction_only(o, "gpu"), Unsupported);
  o.extra["accgrad_reduction"] = "sideways";
  CHECK_THROWS_AS(frequency_reduction_only(o, "gpu"), InvalidArgument);
}

TEST_CASE("the timed tile candidates drop tiles the model charges over kTimedCostRatio times the cheapest") {
  const auto any = [](const Candidate&) { return true; };
  // 2048x2048 under a 31x31 kernel: 64x64 keeps 34x34 outputs, 32x32 only 2x2 (dozens of times the cost).
  const TilingChoice big = choose(ConvProblem::parse("S=1,f=8,fo=8,n=2048,k=31,p=15"), Pass::fprop, {});
  const std::vector<const Candidate*> timed = timed_tile_candidates(big, any, 2);
  REQUIRE(timed.size() == 1);
  CHECK(timed[0]->fft_h == 64);
  // Close candidates are all kept, cheapest first, at most `count`.
  const TilingChoice rect = choose(ConvProblem::parse("S=8,f=16,fo=16,h=300,w=500,k=9,p=4"), Pass::fprop, {});
  const std::vector<const Candidate*> three = timed_tile_candidates(rect, any, 3);
  REQUIRE(three.size() == 3);
  CHECK(three[0]->cost.cost <= three[1]->cost.cost);
  CHECK(three[1]->cost.cost <= three[2]->cost.cost);
  for (const Candidate* k : three) CHECK(k->cost.cost <= kTimedCostRatio * three[0]->cost.cost);
  // The cheapest runnable tile stays however costly, and `runnable` filters first.
  const std::vector<const Candidate*> only32 =
      timed_tile_candidates(big, [](const Candidate& k) { return k.fft_h == 32; }, 2);
  REQUIRE(only32.size() == 1);
  CHECK(only32[0]->fft_h == 32);
  CHECK(timed_tile_candidates(big, [](const Candidate&) { return false; }, 2).empty());
  // The untiled candidate is never among them (the pointers point into the choice, which must outlive them).
  const TilingChoice l1 = choose(ConvProblem::parse("L1"), Pass::fprop, {});
  for (const Candidate* k : timed_tile_candidates(l1, any, 4)) CHECK(k->tiled);
}
