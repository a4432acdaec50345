// GPU tests of the cufft backend (doctest suite "gpu"; each case skips when no CUDA device exists):
// against the CPU `direct` ground truth in double, every pass and padding, random odd, prime and
// rectangular sizes, every CGEMM strategy and spectrum layout, pinned bases, chunked execution, tile
// plans, the tune cache, the workspace limit, typed errors, breakdown, and the naive variant.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iterator>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/tensor.hpp"
#include "gpu/backends.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/cufft/cufft_pipeline.hpp"
#include "gpu/cufft/cufft_plan_pool.hpp"
#include "gpu/cufft/cufft_tune_cache.hpp"
#include "gpu/cufft/cufft_tuner.hpp"
#include "gpu/runtime/device_arena.hpp"
#include "validation/data.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"
#include "common/fft_size.hpp"

#include "gpu/runtime/test_device.hpp"

using namespace fftconv;

namespace {



std::vector<float> random_vector(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& e : v) e = d(rng);
  return v;
}

struct Outcome {
  double rel_l2 = 0;
  int64_t non_finite = 0;
  double cancellation = 1;  // Note [cancellation]: the tolerance's factor for this result's ||ref||
};

// Runs `execute` on fresh random operands with a NaN-poisoned result; compares to the double reference.
Outcome run_and_compare(const ConvProblem& p, Pass pass, const std::function<void(const Args&)>& execute,
                        std::mt19937& rng, cudaStream_t stream = nullptr) {
  const auto x = random_vector(p.input_elems(), rng), w = random_vector(p.weight_elems(), rng),
             g = random_vector(p.output_elems(), rng);
  DeviceBuffer dx = upload(x), dw = upload(w), dg = upload(g);
  const int64_t n = p.result_elems(pass);
  std::vector<float> result(size_t(n), std::nanf(""));
  DeviceBuffer dr = upload(result);  // poisoned
  Args a;
  a.input = pass == Pass::bprop ? nullptr : dx.get();
  a.weight = pass == Pass::accgrad ? nullptr : dw.get();
  a.grad_output = pass == Pass::fprop ? nullptr : dg.get();
  a.result = dr.get();
  a.stream = stream;
  execute(a);
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  FFTCONV_CUDA_CHECK(cudaMemcpy(result.data(), dr.get(), size_t(n) * sizeof(float), cudaMemcpyDeviceToHost));
  PassData d;  // the operands the pass reads, for the CPU `direct` ground truth in double
  if (pass != Pass::bprop) d.input = x;
  if (pass != Pass::accgrad) d.weight = w;
  if (pass != Pass::fprop) d.grad_output = g;
  const auto ref = reference_result(p, pass, d, RefKind::direct);
  Outcome o;
  double d2 = 0, r2 = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (!std::isfinite(result[size_t(k)])) ++o.non_finite;
    const double d = double(result[size_t(k)]) - ref[size_t(k)];
    d2 += d * d;
    r2 += ref[size_t(k)] * ref[size_t(k)];
  }
  o.rel_l2 = r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
  const auto [rms_a, rms_b] = operand_rms(d, pass);
  o.cancellation = cancellation_factor(n, p.reduction_length(pass), rms_a, rms_b, std::sqrt(r2));
  return o;
}

Outcome run_and_compare(const ConvProblem& p, Pass pass, const Plan& plan, std::mt19937& rng,
                        cudaStream_t stream = nullptr) {
  return run_and_compare(p, pass, [&](const Args& a) { plan.execute(a); }, rng, stream);
}

// The project's tolerance model (validation/tolerance.hpp) at the basis the plan may use: the pinned
// one, else the power-of-two bound of the smooth candidates (the larger basis, the looser bound).
double tol(const ConvProblem& p, Pass pass, int64_t nh = 0, int64_t nw = 0) {
  const int64_t basis = (nh ? nh : next_pow2(p.padded_h())) * (nw ? nw : next_pow2(p.padded_w()));
  return tolerance(p, pass, DType::f32, basis).rel_l2;
}
constexpr Pass kPasses[] = {Pass::fprop, Pass::bprop, Pass::accgrad};

ConvProblem random_problem(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ConvProblem p;
  p.padding = pick(0, 1) ? Padding::mirror : Padding::zero;
  p.S = pick(1, 3), p.f = pick(1, 4), p.fo = pick(1, 4);
  p.h = pick(1, 23), p.w = pick(1, 23);  // odd, prime and rectangular shapes
  const int64_t max_ph = p.padding == Padding::mirror ? std::min<int64_t>(3, p.h - 1) : 3;
  const int64_t max_pw = p.padding == Padding::mirror ? std::min<int64_t>(3, p.w - 1) : 3;
  p.ph = pick(0, max_ph), p.pw = pick(0, max_pw);
  p.kh = pick(1, std::min<int64_t>(7, p.padded_h()));
  p.kw = pick(1, std::min<int64_t>(7, p.padded_w()));
  p.validate();
  return p;
}

std::shared_ptr<const Backend> g_backend;
const Backend& backend() {
  if (!g_backend) g_backend = make_cufft_backend();
  return *g_backend;
}

}  // namespace

TEST_SUITE("gpu") {

TEST_CASE("cufft: available() answers without throwing") {
  const Support s = backend().available();
  CHECK(s.ok == fftconv::test::have_device());
  if (!s.ok) CHECK(!s.reason.empty());
  CHECK_FALSE(backend().supports(ConvProblem{}, Pass::fprop, DType::f64).ok);
}

TEST_CASE("cufft matches a double direct convolution on random problems, all passes and paddings") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const char* gemms[] = {"strided", "batched", "loop", "3m"};
  int checked = 0;
  for (int t = 0; t < 120; ++t) {
    const ConvProblem p = random_problem(rng);
    for (Pass pass : kPasses) {
      PlanOptions opts;
      opts.autotune = false;
      opts.extra["gemm"] = gemms[(t + int(pass)) % 4];
      const char* layouts[] = {"transposed", "direct", "gather"};
      opts.extra["layout"] = layouts[(t / 2) % 3];  // every gemm with every layout
      opts.extra["edges"] = t % 3 == 1 ? "callback" : "copy";  // callbacks with every layout and gemm
      if (t % 5 == 0) {  // pinned bases, including sizes that are not 2,3,5,7-smooth
        opts.basis_h = p.padded_h() + (t % 3);
        opts.basis_w = p.padded_w() + (t % 4);
      }
      if (t % 4 == 3 && p.padded_w() >= 2) opts.extra["weights"] = "dft";  // pruned weight transforms, every layout
      if (t % 11 == 0) opts.extra = {{"naive", "1"}}, opts.basis_h = opts.basis_w = 0;
      INFO(p.to_string(), " ", to_string(pass), " gemm=", opts.extra.count("gemm") ? opts.extra["gemm"] : "-",
           " layout=", opts.extra.count("layout") ? opts.extra["layout"] : "-",
           " edges=", opts.extra.count("edges") ? opts.extra["edges"] : "-",
           " weights=", opts.extra.count("weights") ? opts.extra["weights"] : "-", " basis=", opts.basis_h, "x",
           opts.basis_w);
      auto plan = backend().plan(p, pass, opts);
      INFO(plan->describe());
      const Outcome o = run_and_compare(p, pass, *plan, rng);
      CHECK(o.non_finite == 0);
      CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, opts.basis_h, opts.basis_w));
      ++checked;
    }
  }
  CHECK(checked == 360);
}

TEST_CASE("cufft runs zero-padded layers on bases below the padded size (Note [wrapped padding])") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  for (const char* spec : {"S=2,f=3,fo=3,n=40,k=31,p=15", "S=2,f=3,fo=2,h=9,w=20,kh=3,kw=5,ph=4,pw=2"})
    for (Pass pass : kPasses)
      for (const char* edges : {"copy", "callback"}) {
        const ConvProblem p = ConvProblem::parse(spec);
        PlanOptions opts;
        opts.autotune = false;
        opts.extra["edges"] = edges;
        opts.basis_h = next_smooth7(p.wrapped_h()), opts.basis_w = next_smooth7(p.wrapped_w());
        INFO(spec, " ", to_string(pass), " ", edges);
        auto plan = backend().plan(p, pass, opts);
        INFO(plan->describe());
        const Outcome o = run_and_compare(p, pass, *plan, rng);
        CHECK(o.non_finite == 0);
        CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, opts.basis_h, opts.basis_w));
        PlanOptions chosen;  // the tuner's own basis starts at the circular extent too
        chosen.autotune = false;
        const std::string d = backend().plan(p, pass, chosen)->describe();
        const auto at = d.find("basis ");
        REQUIRE(at != std::string::npos);
        const int64_t nh = std::stoll(d.substr(at + 6)), nw = std::stoll(d.substr(d.find('x', at) + 1));
        CHECK(nh >= p.wrapped_h());
        CHECK(nw >= p.wrapped_w());
        CHECK(nh * nw < next_smooth7(p.padded_h()) * next_smooth7(p.padded_w()));
      }
  PlanOptions below;
  below.basis_h = 54;  // the circular extent of n=40, p=15 is 55
  CHECK_THROWS_WITH_AS(backend().plan(ConvProblem::parse("S=1,f=1,fo=1,n=40,k=31,p=15"), Pass::fprop, below),
                       doctest::Contains("basis_h: 54"), InvalidArgument);
}

TEST_CASE("cufft depthwise matches direct on wrapped bases with callback and copy edges, every pass and padding") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  int checked = 0;
  for (const char* spec : {"S=3,f=5,fo=5,h=13,w=9,kh=5,kw=3,ph=2,pw=1,g=5,pad=mirror", "S=2,f=4,fo=4,n=16,k=7,p=3,g=4",
                           "S=2,f=3,fo=3,h=12,w=17,kh=9,kw=9,ph=4,pw=4,g=3", "S=1,f=6,fo=6,h=10,w=7,kh=3,kw=2,g=6", "S=2,f=2,fo=2,h=9,w=6,kh=3,kw=2,ph=4,pw=3,g=2"})
    for (Pass pass : kPasses)
      for (std::string edges : {"", "copy", "callback"}) {  // "": the default (timed)
        const ConvProblem p = ConvProblem::parse(spec);
        PlanOptions opts;
        if (!edges.empty()) opts.extra["edges"] = edges;
        auto plan = backend().plan(p, pass, opts);
        const std::string d = plan->describe();
        INFO(spec, " ", to_string(pass), " ", d);
        if (edges.empty())  // timed: each edge mode on the two smallest bases of the wrapped extent
          CHECK(d.find("depthwise variant measured") != std::string::npos);
        else
          CHECK(d.find("edges=" + edges) != std::string::npos);
        for (int rep = 0; rep < 2; ++rep) {  // fresh operands each time: the callbacks' parameters follow
          const Outcome o = run_and_compare(p, pass, *plan, rng);
          CHECK(o.non_finite == 0);
          const auto [nh, nw] = plan->fourier_basis();  // the wrapped extent (Note [wrapped padding])
          const int64_t h1 = next_smooth7(p.wrapped_h()), w1 = next_smooth7(p.wrapped_w());
          CHECK((nh == h1 || (edges.empty() && nh == next_smooth7(h1 + 1))));
          CHECK((nw == w1 || (edges.empty() && nw == next_smooth7(w1 + 1))));
          CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, nh, nw));
        }
        ++checked;
      }
  CHECK(checked == 45);
  PlanOptions bad;
  bad.extra["edges"] = "sideways";
  CHECK_THROWS_AS(backend().plan(ConvProblem::parse("S=1,f=2,fo=2,n=8,k=3,g=2"), Pass::fprop, bad), InvalidArgument);
  PlanOptions small;
  small.basis_h = small.basis_w = 8;  // below the wrapped extent 9 of n=8, p=1
  CHECK_THROWS_AS(backend().plan(ConvProblem::parse("S=1,f=2,fo=2,n=8,k=3,p=1,g=2"), Pass::fprop, small),
                  InvalidArgument);
  small.basis_h = small.basis_w = 10;  // above it: any basis that holds the extent
  CHECK_NOTHROW(backend().plan(ConvProblem::parse("S=1,f=2,fo=2,n=8,k=3,p=1,g=2"), Pass::fprop, small));
}

TEST_CASE("cufft autotuned plans are correct and repeatable; the tune cache round-trips through a file, tiled too") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const auto path = (std::filesystem::temp_directory_path() /
                     ("fftconv_cufft_tune_" + std::to_string(rng()) + ".json")).string();
  const ConvProblem p = ConvProblem::parse("S=4,f=3,fo=5,h=13,w=11,kh=3,kw=4,ph=1,pw=2,pad=mirror");
  for (Pass pass : kPasses) {
    PlanOptions opts;
    opts.tune_cache = path;
    auto tuned = backend().plan(p, pass, opts);
    INFO(tuned->describe());
    CHECK(tuned->describe().find("autotuned") != std::string::npos);
    for (int rep = 0; rep < 2; ++rep) {  // execute() is repeatable
      const Outcome o = run_and_compare(p, pass, *tuned, rng);
      CHECK(o.non_finite == 0);
      CHECK(o.rel_l2 <= o.cancellation * tol(p, pass));
    }
    REQUIRE(std::filesystem::exists(path));
    TuneCache::instance().clear_memory();  // the next plan must come from the file
    auto cached = backend().plan(p, pass, opts);
    INFO(cached->describe());
    CHECK(cached->describe().find("tune cache " + path) != std::string::npos);
    // Same configuration: the describe() texts agree up to the first ';'.
    const std::string a = tuned->describe(), b = cached->describe();
    CHECK(a.substr(0, a.find(';')) == b.substr(0, b.find(';')));
    CHECK(cached->workspace_bytes() == tuned->workspace_bytes());
  }
  // A tiled plan takes the small cuBLAS workspace, also from a record written while tiled plans kept
  // the large one (Note [cufft tiles]).
  const ConvProblem pt = ConvProblem::parse("S=2,f=2,fo=3,h=41,w=29,kh=5,kw=3,ph=2,pw=0");
  const std::string small = "cublas workspace " + std::to_string(kCublasWorkspaceSmall);
  PlanOptions tiled;
  tiled.tile = TileSpec::parse("16");
  tiled.tune_cache = path;
  auto tuned = backend().plan(pt, Pass::fprop, tiled);
  INFO(tuned->describe());
  CHECK(tuned->describe().find(small) != std::string::npos);
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string from = "\"cublas_workspace\": " + std::to_string(kCublasWorkspaceSmall);
  const std::string to = "\"cublas_workspace\": " + std::to_string(kCublasWorkspaceLarge);
  int replaced = 0;
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()), ++replaced)
    text.replace(at, from.size(), to);
  REQUIRE(replaced > 0);
  std::ofstream(path) << text;
  TuneCache::instance().clear_memory();
  auto cached = backend().plan(pt, Pass::fprop, tiled);
  INFO(cached->describe());
  CHECK(cached->describe().find("tune cache " + path) != std::string::npos);
  CHECK(cached->describe().find(small) != std::string::npos);
  CHECK(cached->workspace_bytes() == tuned->workspace_bytes());
  const Outcome o = run_and_compare(pt, Pass::fprop, *cached, rng);
  CHECK(o.non_finite == 0);
  CHECK(o.rel_l2 <= o.cancellation * tol(pt, Pass::fprop, 16, 16));
  std::ofstream(path) << "{ not json";
  TuneCache::instance().clear_memory();
  PlanOptions bad;
  bad.tune_cache = path;
  CHECK_THROWS_AS(backend().plan(p, Pass::fprop, bad), InvalidArgument);
  std::filesystem::remove(path);
}

TEST_CASE("cufft autotunes over 13-smooth bases by default and over the paper's 7-smooth ones on request") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  // Padded 13x11: the default space has 13 and 11 (cuFFT's prime kernels); max_prime=7 starts at 14 and 12.
  const ConvProblem p = ConvProblem::parse("S=6,f=5,fo=7,h=11,w=9,kh=3,kw=3,ph=1,pw=1,pad=zero");
  for (Pass pass : kPasses) {
    for (const char* max_prime : {"13", "7"}) {
      PlanOptions opts;
      opts.extra["max_prime"] = max_prime;
      auto plan = backend().plan(p, pass, opts);
      const std::string why = plan->describe();
      INFO(to_string(pass), " max_prime=", max_prime, " ", why);
      const bool smooth13 = std::string(max_prime) == "13";
      CHECK((why.find("13x11:") != std::string::npos) == smooth13);  // timed candidate
      CHECK(why.find("weights dft:") != std::string::npos);           // the pruned weight variant timed
      CHECK(why.find("weights dft: failed") == std::string::npos);
      if (!smooth13) CHECK(why.find("13x") == std::string::npos);
      for (int rep = 0; rep < 2; ++rep) {
        const Outcome o = run_and_compare(p, pass, *plan, rng);
        CHECK(o.non_finite == 0);
        CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, 13, 11));
      }
    }
    PlanOptions pinned;  // the 13x11 basis itself, every pass, both paddings, against the reference
    pinned.autotune = false;
    pinned.basis_h = 13, pinned.basis_w = 11;
    for (const char* edges : {"copy", "callback", "dft"}) {  // dft: weights=dft with copies
      pinned.extra["edges"] = std::string(edges) == "dft" ? "copy" : edges;
      if (std::string(edges) == "dft") pinned.extra["weights"] = "dft";
      for (const char* pad : {"zero", "mirror"}) {
        const ConvProblem q = ConvProblem::parse(std::string("S=3,f=4,fo=2,h=11,w=9,kh=3,kw=3,ph=1,pw=1,pad=") + pad);
        auto plan = backend().plan(q, pass, pinned);
        INFO(plan->describe());
        CHECK(plan->describe().find("basis 13x11") != std::string::npos);
        const Outcome o = run_and_compare(q, pass, *plan, rng);
        CHECK(o.non_finite == 0);
        CHECK(o.rel_l2 <= o.cancellation * tol(q, pass, 13, 11));
      }
    }
  }
}

TEST_CASE("cufft autotune times the per-frequency CGEMM loop only when its launches fit the cutoff") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  // About 7,800 frequencies of tiny products: the loop's launch floor (kLoopLaunchFloorMs each) is far
  // above twice the strided time, so it is not run; the plan is still tuned and correct.
  const ConvProblem many = ConvProblem::parse("S=1,f=2,fo=2,n=120,k=3,p=1");
  for (Pass pass : kPasses) {
    auto plan = backend().plan(many, pass, {});
    const std::string why = plan->describe();
    INFO(to_string(pass), " ", why);
    CHECK(why.find("loop: not timed (") != std::string::npos);
    const Outcome o = run_and_compare(many, pass, *plan, rng);
    CHECK(o.non_finite == 0);
    CHECK(o.rel_l2 <= o.cancellation * tol(many, pass));
  }
  // A handful of frequencies with 512x512 products: the floor is a few microseconds, and it is timed.
  const ConvProblem few = ConvProblem::parse("S=128,f=512,fo=512,n=3,k=2");
  auto plan = backend().plan(few, Pass::fprop, {});
  const std::string why = plan->describe();
  INFO(why);
  CHECK(why.find(", loop: ") != std::string::npos);
  CHECK(why.find("loop: not timed") == std::string::npos);
}

TEST_CASE("cufft autotune stops at a bound it cannot approach and caches nothing then (Note [tuning bound])") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const ConvProblem p = ConvProblem::parse("S=3,f=5,fo=6,h=29,w=27,kh=4,kw=3,ph=1,pw=1,pad=zero");
  PlanOptions bounded;
  bounded.tune_bound_ms = 1e-6;  // no plan runs this fast: the first basis is the last timed
  auto plan = backend().plan(p, Pass::fprop, bounded);
  const std::string why = plan->describe();
  INFO(why);
  CHECK(why.find(kTuningStopped) != std::string::npos);
  CHECK(why.find("; winner ") == std::string::npos);
  CHECK(why.find("CGEMM {") == std::string::npos);
  CHECK(why.find("x the 1e-06 ms of a plan timed before") != std::string::npos);
  const auto bases = why.substr(why.find("bases {"), why.find('}') - why.find("bases {"));
  CHECK(std::count(bases.begin(), bases.end(), ',') == 0);  // one basis timed
  const Outcome o = run_and_compare(p, Pass::fprop, *plan, rng);
  CHECK(o.non_finite == 0);
  CHECK(o.rel_l2 <= o.cancellation * tol(p, Pass::fprop));
  // Nothing went to the tune cache: without the bound the tuning runs in full, its stages timed,
  // and only then is it cached.
  const std::string full = backend().plan(p, Pass::fprop, {})->describe();
  INFO(full);
  CHECK(full.find("autotuned: bases {") != std::string::npos);
  CHECK(full.find("; winner ") != std::string::npos);
  CHECK(full.find(" s]; CGEMM {") != std::string::npos);
  CHECK(backend().plan(p, Pass::fprop, {})->describe().find("autotuned earlier") != std::string::npos);
  // A bound the plan easily beats changes nothing.
  PlanOptions loose;
  loose.tune_bound_ms = 1e6;
  CHECK(backend().plan(p, Pass::fprop, loose)->describe().find("autotuned earlier") != std::string::npos);
}

TEST_CASE("cufft autotune past its deadline times one basis and caches under its own key (Note [tuning budget])") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const ConvProblem p = ConvProblem::parse("S=3,f=5,fo=6,h=30,w=26,kh=4,kw=3,ph=1,pw=1,pad=zero");
  PlanOptions due;
  due.tune_deadline = std::chrono::steady_clock::now();  // spent before the tuning begins
  auto plan = backend().plan(p, Pass::fprop, due);
  const std::string why = plan->describe();
  INFO(why);
  const auto bases = why.substr(why.find("bases {"), why.find('}') - why.find("bases {"));
  CHECK(std::count(bases.begin(), bases.end(), ',') == 1);  // one basis timed, then the note
  CHECK(bases.find(" more: " + std::string(kTuningBudgetSpent)) != std::string::npos);
  CHECK(why.find("; CGEMM {strided: ") != std::string::npos);
  CHECK(why.find("the others: " + std::string(kTuningBudgetSpent)) != std::string::npos);
  CHECK(why.find("math {3xtf32: " + std::string(kTuningBudgetSpent)) != std::string::npos);
  CHECK(why.find("; winner ") != std::string::npos);
  const Outcome o = run_and_compare(p, Pass::fprop, *plan, rng);
  CHECK(o.non_finite == 0);
  CHECK(o.rel_l2 <= o.cancellation * tol(p, Pass::fprop));
  // A planner with a deadline reuses the cut tuning; one without tunes in full, which then serves both.
  const std::string again = backend().plan(p, Pass::fprop, due)->describe();
  CHECK(again.find("autotuned earlier within a tuning budget") != std::string::npos);
  const std::string full = backend().plan(p, Pass::fprop, {})->describe();
  INFO(full);
  CHECK(full.find("autotuned: bases {") != std::string::npos);
  CHECK(full.find(kTuningBudgetSpent) == std::string::npos);
  CHECK(backend().plan(p, Pass::fprop, due)->describe().find("autotuned earlier (") != std::string::npos);
  // A deadline far ahead changes nothing.
  const ConvProblem q = ConvProblem::parse("S=3,f=5,fo=6,h=30,w=25,kh=4,kw=3,ph=1,pw=1,pad=zero");
  PlanOptions later;
  later.tune_deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
  const std::string relaxed = backend().plan(q, Pass::fprop, later)->describe();
  INFO(relaxed);
  CHECK(relaxed.find("autotuned: bases {") != std::string::npos);
  CHECK(relaxed.find(kTuningBudgetSpent) == std::string::npos);
}

TEST_CASE("cufft autotune times the direct layout with callbacks only under kDirectCallbackMaxMs") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  // L2 (S=128, 64 -> 64 channels, 64x64, k=9): about 0.9 ms with cufft on an H200, far above the
  // limit, so whichever edges win, the direct layout is never timed with callbacks.
  const std::string why = backend().plan(ConvProblem::parse("L2"), Pass::fprop, {})->describe();
  INFO(why);
  REQUIRE(why.find("; winner ") != std::string::npos);
  CHECK(kDirectCallbackMaxMs < 0.5);
  const auto direct = why.find("direct/callback: ");
  if (direct != std::string::npos) CHECK(why.compare(direct, 26, "direct/callback: not timed") == 0);
  CHECK((direct != std::string::npos || why.find("direct/copy: ") != std::string::npos));
}

TEST_CASE("cufft weights=dft matches the reference with kernels up to 12x12 (staged windows)") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  for (const char* spec : {"S=2,f=3,fo=4,h=20,w=18,kh=9,kw=11,ph=1,pw=2,pad=zero",
                           "S=3,f=2,fo=3,h=17,w=23,kh=12,kw=10,ph=2,pw=0,pad=mirror",
                           "S=2,f=5,fo=2,h=12,w=12,kh=8,kw=9,ph=0,pw=0,pad=zero"}) {
    const ConvProblem p = ConvProblem::parse(spec);
    for (Pass pass : kPasses)
      for (const char* layout : {"transposed", "direct", "gather"}) {
        PlanOptions opts;
        opts.autotune = false;
        opts.extra = {{"weights", "dft"}, {"layout", layout}};
        auto plan = backend().plan(p, pass, opts);
        INFO(plan->describe());
        CHECK(plan->describe().find("weights dft") != std::string::npos);
        const Outcome o = run_and_compare(p, pass, *plan, rng);
        CHECK(o.non_finite == 0);
        CHECK(o.rel_l2 <= o.cancellation * tol(p, pass));
      }
  }
}

TEST_CASE("cufft honours the workspace limit by chunking the batch, and says Unsupported below it") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const ConvProblem p = ConvProblem::parse("S=32,f=16,fo=16,h=60,w=61,kh=5,kw=4,ph=2,pw=1,pad=zero");
  for (Pass pass : kPasses) {
    PlanOptions opts;
    opts.autotune = false;
    const std::size_t full = backend().plan(p, pass, opts)->workspace_bytes();
    for (std::size_t limit : {full - 1, full / 2, full / 5}) {
      opts.workspace_limit = limit;
      opts.extra["layout"] = limit == full / 5 ? "direct" : "transposed";  // chunks in both layouts
      auto plan = backend().plan(p, pass, opts);
      INFO(to_string(pass), " limit ", limit, ": ", plan->describe());
      CHECK(plan->workspace_bytes() <= limit);
      const Outcome o = run_and_compare(p, pass, *plan, rng);
      CHECK(o.non_finite == 0);
      CHECK(o.rel_l2 <= o.cancellation * tol(p, pass));
      opts.autotune = true;  // the tuner must respect the same limit
      opts.extra.erase("layout");
      auto tuned = backend().plan(p, pass, opts);
      CHECK(tuned->workspace_bytes() <= limit);
      opts.autotune = false;
    }
    opts.workspace_limit = 4096;  // far below one sample's spectra
    CHECK_THROWS_AS(backend().plan(p, pass, opts), Unsupported);
  }
}

TEST_CASE("cufft callbacks pad, clip and gather inside cuFFT: every pass, mirror folds, chunks, non-smooth bases") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const char* specs[] = {
      "S=3,f=2,fo=3,h=17,w=12,kh=4,kw=3,ph=2,pw=1,pad=mirror",  // bprop keeps the fold kernel
      "S=2,f=3,fo=2,h=9,w=9,kh=9,kw=9,ph=0,pw=0",               // 1x1 output
      "S=4,f=1,fo=2,h=1,w=23,kh=1,kw=5,ph=0,pw=2",              // one-row planes
      "S=5,f=4,fo=3,h=20,w=21,kh=5,kw=5,ph=2,pw=2,pad=zero",
  };
  for (const char* spec : specs) {
    const ConvProblem p = ConvProblem::parse(spec);
    for (Pass pass : kPasses)
      for (const char* layout : {"transposed", "direct", "gather"}) {
        PlanOptions opts;
        opts.autotune = false;
        opts.extra = {{"edges", "callback"}, {"layout", layout}};
        if (std::string(layout) == "gather") opts.basis_h = p.padded_h() + 1;  // 2,3,5,7-smooth or not
        auto plan = backend().plan(p, pass, opts);
        INFO(plan->describe());
        CHECK(plan->describe().find("edges callback") != std::string::npos);
        for (int rep = 0; rep < 2; ++rep) {  // repeatable: the parameter block is rewritten per run
          const Outcome o = run_and_compare(p, pass, *plan, rng);
          CHECK(o.non_finite == 0);
          CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, opts.basis_h));
        }
        // Chunks: the parameter block moves to each chunk's samples (and results). The limit must
        // fall below the buffers plus the small cuBLAS workspace for the batch to be split.
        std::unique_ptr<Plan> chunked;
        const std::size_t buffers = plan->workspace_bytes() - kCublasWorkspaceLarge;
        for (double frac : {0.9, 0.75, 0.6, 0.45}) {
          opts.workspace_limit = kCublasWorkspaceSmall + std::size_t(double(buffers) * frac);
          chunked = backend().plan(p, pass, opts);
          if (chunked->describe().find("chunks of") != std::string::npos) break;
        }
        INFO(chunked->describe());
        REQUIRE(chunked->describe().find("chunks of") != std::string::npos);
        const Outcome o = run_and_compare(p, pass, *chunked, rng);
        CHECK(o.non_finite == 0);
        CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, opts.basis_h));
      }
  }
  PlanOptions tiled;  // tiles are gathered and scattered by kernels: edge callbacks do not apply
  tiled.autotune = false;
  tiled.tile = TileSpec::parse("16");
  tiled.extra = {{"edges", "callback"}};
  CHECK_THROWS_AS(backend().plan(ConvProblem::parse("S=2,f=2,fo=2,n=40,k=3"), Pass::fprop, tiled), InvalidArgument);
  tiled.extra = {{"edges", "sideways"}};
  CHECK_THROWS_AS(backend().plan(ConvProblem::parse("S=2,f=2,fo=2,n=40,k=3"), Pass::fprop, tiled), InvalidArgument);
}

TEST_CASE("cufft transforms the weight side in batches (Note [weight-side batches]): passes, layouts, edges, tiles") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const ConvProblem p = ConvProblem::parse("S=3,f=4,fo=5,h=17,w=12,kh=4,kw=3,ph=2,pw=1,pad=mirror");
  auto check = [&](Pass pass, const PipelineConfig& cfg, const TilePlan* tiles) {
    CufftPipeline pl(p, pass, cfg, tiles);
    INFO(to_string(pass), " ", cfg.to_string(), tiles ? " tiled" : "", ": ", pl.edges_summary());
    REQUIRE(pl.weight_planes() == 20);
    REQUIRE(pl.weight_batch() == 6);  // batches of 6, 6, 6 and 2
    CHECK(pl.edges_summary().find("in batches of 6 of its 20 planes") != std::string::npos);
    DeviceBuffer ws;
    ws.allocate(pl.workspace_bytes());
    const auto execute = [&](const Args& a) { pl.run(a, static_cast<cudaStream_t>(a.stream), ws.get(), nullptr); };
    for (int rep = 0; rep < 2; ++rep) {
      const Outcome o = run_and_compare(p, pass, execute, rng);
      CHECK(o.non_finite == 0);
      CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, cfg.nh, cfg.nw));
    }
  };
  for (Pass pass : kPasses)
    for (SpectrumLayout layout : {SpectrumLayout::transposed, SpectrumLayout::direct, SpectrumLayout::gather}) {
      PipelineConfig cfg;
      cfg.nh = 24, cfg.nw = 15, cfg.chunk = 2, cfg.layout = layout, cfg.weight_batch = 6;
      for (EdgeMode edges : {EdgeMode::copy, EdgeMode::callback}) {
        cfg.edges = edges;
        check(pass, cfg, nullptr);
      }
      const TilePlan t = make_tiled_plan(p, pass, 16, 16, 5, AccgradReduction::frequency);
      cfg.nh = cfg.nw = 16, cfg.chunk = 5, cfg.edges = EdgeMode::copy;
      check(pass, cfg, &t);
    }
  // Automatic: whole below the bound; a 64x64 basis of 512x512 weight planes (4.4 GB of spectra) in
  // batches, so the workspace is the spectra plus batch-sized scratch, not three times the spectra.
  PipelineConfig small;
  small.nh = 24, small.nw = 15, small.chunk = 3;
  CHECK(CufftPipeline(p, Pass::fprop, small).weight_batch() == 20);
  const ConvProblem big = ConvProblem::parse("S=1,f=512,fo=512,h=12,w=12,kh=3,kw=3,ph=1,pw=1");
  PipelineConfig wide;
  wide.nh = wide.nw = 64, wide.chunk = 1;
  const double spectra = 512.0 * 512 * 64 * 33 * 8;
  for (Pass pass : kPasses) {
    CufftPipeline pl(big, pass, wide);
    INFO(to_string(pass), ": ", pl.workspace_summary());
    CHECK(pl.weight_planes() == 512 * 512);
    CHECK(pl.weight_batch() == int64_t(kWeightBatchBytes / (64 * 33 * 8)));
    CHECK(double(pl.workspace_bytes()) < spectra + double(1 << 30));
  }
}

TEST_CASE("cufft plans made again take their transforms from the pool, one owner at a time") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  // Callbacks on every transform (Note [cuFFT plan pool]): each pooled plan carries its own
  // parameter block, which the next owner rewrites.
  const ConvProblem p = ConvProblem::parse("S=3,f=2,fo=3,h=13,w=11,kh=3,kw=4,ph=1,pw=2");
  for (Pass pass : kPasses) {
    PlanOptions opts;
    opts.autotune = false;
    opts.extra = {{"edges", "callback"}, {"layout", "gather"}};
    auto first = backend().plan(p, pass, opts);
    auto second = backend().plan(p, pass, opts);  // the first still owns its plans: new ones
    const std::size_t reused = cufft_pool::reuse_count();
    first.reset();
    second.reset();
    const std::size_t idle = cufft_pool::idle_count();
    CHECK(idle >= 2);
    auto third = backend().plan(p, pass, opts);  // from the pool
    CHECK(cufft_pool::reuse_count() > reused);
    CHECK(cufft_pool::idle_count() < idle);
    auto fourth = backend().plan(p, pass, opts);  // from the pool too, not the plans the third holds
    for (Plan* plan : {third.get(), fourth.get()})
      for (int rep = 0; rep < 2; ++rep) {
        const Outcome o = run_and_compare(p, pass, *plan, rng);
        CHECK(o.non_finite == 0);
        CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, 0));
      }
  }
  CHECK(cufft_pool::idle_count() <= std::size_t(cufft_pool::kIdleLimit));
}

TEST_CASE("cufft autotune links each transform once: candidates take the winner's plans from the pool") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  // Basis, layout and callbacks pinned, the CGEMM, weight transform and product math tuned: every
  // candidate needs the same three transforms (padded A and B, clipped result), so exactly three plans
  // are made, however many candidates are timed and whichever wins. Sizes no other case uses.
  const ConvProblem p = ConvProblem::parse("S=5,f=3,fo=2,h=17,w=19,kh=4,kw=3,ph=1,pw=1");
  PlanOptions opts;
  opts.basis_h = 20, opts.basis_w = 21;
  opts.extra = {{"edges", "callback"}, {"layout", "transposed"}};
  const std::size_t made = cufft_pool::made_count(), reused = cufft_pool::reuse_count();
  auto plan = backend().plan(p, Pass::fprop, opts);
  INFO(plan->describe());
  CHECK(cufft_pool::made_count() - made == 3);
  CHECK(cufft_pool::reuse_count() - reused >= 3 * 4);  // three CGEMMs, 3xtf32 and the winner remade
  std::mt19937 rng(7);
  const Outcome o = run_and_compare(p, Pass::fprop, *plan, rng);
  CHECK(o.rel_l2 <= o.cancellation * tol(p, Pass::fprop, 0));
}

TEST_CASE("cufft transforms operands that fill the basis in place, leaves them intact, stages misaligned ones") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const ConvProblem p = ConvProblem::parse("S=3,f=2,fo=3,n=16,k=5");  // 16x16 input in a 16x16 basis
  for (Pass pass : {Pass::fprop, Pass::accgrad})
    for (const char* layout : {"transposed", "direct"}) {
      PlanOptions opts;
      opts.autotune = false;
      opts.basis_h = opts.basis_w = 16;
      opts.extra = {{"layout", layout}};
      auto plan = backend().plan(p, pass, opts);
      INFO(to_string(pass), " ", plan->describe());
      const auto x = random_vector(p.input_elems(), rng), w = random_vector(p.weight_elems(), rng),
                 g = random_vector(p.output_elems(), rng);
      DeviceBuffer dx = upload(x), dw = upload(w), dg = upload(g), dr(size_t(p.result_elems(pass)) * sizeof(float));
      Args a;
      a.input = dx.get();
      a.weight = pass == Pass::fprop ? dw.get() : nullptr;
      a.grad_output = pass == Pass::accgrad ? dg.get() : nullptr;
      a.result = dr.get();
      plan->execute(a);
      FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
      CHECK(download<float>(dx, x.size()) == x);  // bitwise: the R2C read it, nothing wrote it
      // A misaligned caller pointer is staged in an aligned buffer: the same transform, bitwise.
      const auto aligned_result = download<float>(dr, size_t(p.result_elems(pass)));
      DeviceBuffer shifted((x.size() + 1) * sizeof(float));
      FFTCONV_CUDA_CHECK(cudaMemcpy(shifted.as<float>() + 1, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
      a.input = shifted.as<float>() + 1;
      plan->execute(a);
      FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
      CHECK(download<float>(dr, aligned_result.size()) == aligned_result);
      const Outcome o = run_and_compare(p, pass, *plan, rng);
      CHECK(o.non_finite == 0);
      CHECK(o.rel_l2 <= o.cancellation * tol(p, pass, 16, 16));
    }
}

TEST_CASE("cufft raises typed errors for impossible or malformed requests") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  const ConvProblem p = ConvProblem::parse("S=2,f=2,fo=3,n=9,k=3,p=1");
  PlanOptions opts;
  opts.autotune = false;
  opts.tile = TileSpec::parse("16");
  opts.extra["accgrad_reduction"] = "time";  // tiled accgrad reduces in the frequency domain only
  CHECK_THROWS_AS(backend().plan(p, Pass::accgrad, opts), Unsupported);
  opts.extra = {{"naive", "1"}};  // the naive variant runs untiled only
  CHECK_THROWS_AS(backend().plan(p, Pass::fprop, opts), Unsupported);
  opts.extra.clear();
  opts.tile = TileSpec{};
  opts.basis_h = 8;  // < padded 11
  CHECK_THROWS_AS(backend().plan(p, Pass::fprop, opts), InvalidArgument);
  opts.basis_h = 0;
  opts.extra["gemm"] = "fastest";
  CHECK_THROWS_AS(backend().plan(p, Pass::fprop, opts), InvalidArgument);
  opts.extra = {{"layout", "diagonal"}};
  CHECK_THROWS_AS(backend().plan(p, Pass::fprop, opts), InvalidArgument);
  opts.extra = {{"colour", "blue"}};
  CHECK_THROWS_AS(backend().plan(p, Pass::fprop, opts), InvalidArgument);
  for (const char* v : {"17", "4", "", "seven"}) {
    opts.extra = {{"max_prime", v}};
    CHECK_THROWS_AS(backend().plan(p, Pass::fprop, opts), InvalidArgument);
  }
  opts.extra = {{"weights", "winograd"}};
  CHECK_THROWS_AS(backend().plan(p, Pass::fprop, opts), InvalidArgument);
  opts.extra = {{"weights", "dft"}};  // pruned weight transforms: untiled, kernels up to 8x8
  opts.tile = TileSpec::parse("16");
  CHECK_THROWS_AS(backend().plan(p, Pass::fprop, opts), InvalidArgument);
  opts.tile = TileSpec{};
  CHECK_NOTHROW(backend().plan(p, Pass::fprop, opts));
  const ConvProblem big_kernel = ConvProblem::parse("S=2,f=2,fo=3,n=16,k=13,p=0");
  CHECK_THROWS_AS(backend().plan(big_kernel, Pass::accgrad, opts), Unsupported);
  opts.extra.clear();
  auto plan = backend().plan(p, Pass::fprop, opts);
  std::vector<float> host(size_t(p.input_elems()));
  DeviceBuffer dw(size_t(p.weight_elems()) * 4), dr(size_t(p.output_elems()) * 4);
  Args a;
  a.input = host.data();  // host memory: rejected
  a.weight = dw.get();
  a.result = dr.get();
  CHECK_THROWS_AS(plan->execute(a), InvalidArgument);
  a.input = dw.get();
  a.weight = nullptr;  // missing operand
  CHECK_THROWS_AS(plan->execute(a), InvalidArgument);
  a.weight = dw.get();
  a.dtype = DType::f64;
  CHECK_THROWS_AS(plan->execute(a), InvalidArgument);
  ConvProblem bad = p;
  bad.kh = 40;
  CHECK_THROWS_AS(backend().plan(bad, Pass::fprop, opts), InvalidProblem);
}

TEST_CASE("cufft runs the shared planner's tile plans (8, 16, 32, 12, rectangular, auto), several chunks") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const char* specs[] = {
      "S=3,f=3,fo=2,h=37,w=45,kh=3,kw=3,ph=1,pw=1",
      "S=3,f=3,fo=2,h=37,w=45,kh=3,kw=3,ph=1,pw=1,pad=mirror",
      "S=2,f=2,fo=3,h=41,w=29,kh=5,kw=3,ph=2,pw=0",
      "S=2,f=2,fo=3,h=41,w=29,kh=5,kw=3,ph=2,pw=2,pad=mirror",
      "S=2,f=4,fo=4,h=13,w=13,kh=3,kw=3,ph=1,pw=1,pad=mirror",  // one tile row at 16
      "S=2,f=2,fo=3,n=9,k=3,p=1",                                // tiles larger than the problem
  };
  int tiled = 0;
  for (const char* spec : specs) {
    const ConvProblem p = ConvProblem::parse(spec);
    for (const char* tile : {"8", "16", "32", "12", "8x16", "auto"})
      for (const char* flight : {"0", "5"})
        for (Pass pass : kPasses) {
          PlanOptions o;
          o.autotune = (tiled % 4) == 0;  // the tuner runs tiled plans too
          o.tile = TileSpec::parse(tile);
          if (std::string(tile) == "12") o.tile_sizes = SizePolicy::smooth;
          o.extra["tiles_in_flight"] = flight;
          o.extra["layout"] = (tiled % 3) == 1 ? "direct" : "transposed";
          if (o.tile.kind == TileSpec::Kind::fixed && (o.tile.fft_h < p.kh || o.tile.fft_w < p.kw)) continue;
          CAPTURE(spec);
          CAPTURE(tile);
          CAPTURE(flight);
          CAPTURE(to_string(pass));
          const auto plan = backend().plan(p, pass, o);
          INFO(plan->describe());
          const std::string json = plan->tile_json();
          int64_t nh = 0, nw = 0;
          if (json != "null") {
            const auto num = [&](const char* key) {
              const auto at = json.find(key);
              REQUIRE(at != std::string::npos);
              return std::stoll(json.substr(at + std::string(key).size()));
            };
            nh = num("\"fft_h\":"), nw = num("\"fft_w\":");
            CHECK(plan->describe().find("Note [cufft tiles]") != std::string::npos);
            CHECK(plan->describe().find("cublas workspace " + std::to_string(kCublasWorkspaceSmall)) !=
                  std::string::npos);
            if (std::string(flight) == "5") CHECK(num("\"tiles_in_flight\":") <= 5);
            ++tiled;
          } else {
            CHECK(std::string(tile) == "auto");
          }
          for (int rep = 0; rep < 2; ++rep) {  // bprop's fold zeroes gradInput on every run
            const Outcome out = run_and_compare(p, pass, *plan, rng);
            CHECK(out.non_finite == 0);
            CHECK(out.rel_l2 <= out.cancellation * tol(p, pass, nh, nw));
          }
        }
  }
  CHECK(tiled > 150);
}

TEST_CASE("cufft breakdown times every step; runs on a user stream") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(std::random_device{}());
  const ConvProblem p = ConvProblem::parse("S=8,f=4,fo=6,h=20,w=17,kh=5,kw=3,ph=2,pw=1,pad=mirror");
  cudaStream_t stream;
  FFTCONV_CUDA_CHECK(cudaStreamCreate(&stream));
  for (Pass pass : kPasses) {
    PlanOptions opts;
    opts.autotune = false;
    opts.breakdown = true;
    auto plan = backend().plan(p, pass, opts);
    const Outcome o = run_and_compare(p, pass, *plan, rng, stream);
    CHECK(o.non_finite == 0);
    CHECK(o.rel_l2 <= o.cancellation * tol(p, pass));
    const StepTimes t = plan->last_breakdown();
    for (const char* step : {"PAD A", "FFT A", "TRANS A", "PAD B", "FFT B", "TRANS B", "CGEMM", "TRANS C", "IFFT C",
                             "CLIP C"}) {
      auto it = std::find_if(t.begin(), t.end(), [&](const auto& e) { return e.first == step; });
      CHECK_MESSAGE(it != t.end(), step);
      if (it != t.end()) CHECK(it->second >= 0.0);
    }
  }
  FFTCONV_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("DeviceArena grows only when a larger workspace is asked for") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  DeviceArena arena;
  CHECK(arena.reserve(1000));
  CHECK_FALSE(arena.reserve(500));
  CHECK_FALSE(arena.reserve(1000));
  CHECK(arena.reserve(5000));
  CHECK(arena.grow_count() == 2);
  CHECK(arena.capacity() >= 5000);
  CHECK_THROWS_AS(DeviceBuffer(std::size_t(1) << 60), OutOfMemory);
}

}  // TEST_SUITE

TEST_CASE("cufft pointwise (Note [pointwise basis]): 1x1 kernels without transforms, every pass, accGrad in chunks; pins select the pipeline") {
  FFTCONV_SKIP_WITHOUT_DEVICE("cufft");
  std::mt19937 rng(31);
  for (const char* spec : {"S=3,f=5,fo=4,h=9,w=7,kh=1,kw=1", "S=1,f=7,fo=3,h=1,w=11,kh=1,kw=1",
                           "S=6,f=33,fo=17,h=14,w=14,kh=1,kw=1,pad=mirror"})
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      const ConvProblem p = ConvProblem::parse(spec);
      CAPTURE(spec);
      CAPTURE(to_string(pass));
      REQUIRE(is_pointwise(p));
      PlanOptions o;
      for (std::size_t limit : {std::size_t(0), std::size_t(1), std::size_t(2 * p.f * p.fo * 4)}) {
        CAPTURE(limit);
        o.workspace_limit = limit;  // accGrad: partials of every image, none (one GEMM per image), two per chunk
        const auto plan = backend().plan(p, pass, o);
        const std::string d = plan->describe();
        INFO(d);
        CHECK(d.find("cufft pointwise") != std::string::npos);
        CHECK(plan->fourier_basis() == std::pair<int64_t, int64_t>{1, 1});
        CHECK(plan->workspace_bytes() <= (limit ? limit : std::size_t(256) << 20));
        if (pass == Pass::accgrad && p.S > 1 && limit != 1) CHECK(d.find("partials in chunks of") != std::string::npos);
        const Outcome r = run_and_compare(p, pass, *plan, rng);
        CHECK(r.non_finite == 0);
        CHECK(r.rel_l2 <= r.cancellation * tolerance(p, pass, DType::f32, 1).rel_l2);
        CHECK(plan->last_products().flops == doctest::Approx(2.0 * double(p.madds())));
      }
    }
  // A pinned basis, a pipeline option or tensor-core math runs the FFT pipeline; padding is not pointwise.
  const ConvProblem p = ConvProblem::parse("S=2,f=4,fo=3,h=8,w=8,kh=1,kw=1");
  PlanOptions pinned;
  pinned.basis_h = pinned.basis_w = 8;
  CHECK(backend().plan(p, Pass::fprop, pinned)->describe().find("pointwise") == std::string::npos);
  PlanOptions gemm;
  gemm.extra["gemm"] = "strided";
  CHECK(backend().plan(p, Pass::fprop, gemm)->describe().find("pointwise") == std::string::npos);
  PlanOptions tc;
  tc.math = ProductMath::tf32x3;
  CHECK(backend().plan(p, Pass::fprop, tc)->describe().find("pointwise") == std::string::npos);
  CHECK_FALSE(is_pointwise(ConvProblem::parse("S=2,f=4,fo=3,h=8,w=8,kh=1,kw=1,ph=1,pw=1")));
  CHECK_FALSE(is_pointwise(ConvProblem::parse("S=2,f=4,fo=4,h=8,w=8,kh=1,kw=1,g=2")));
}
