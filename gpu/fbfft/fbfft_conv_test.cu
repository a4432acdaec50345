// GPU tests of the fbfft convolution backend (doctest suite "gpu"; each case skips without a CUDA
// device): against the double `direct` reference on random problems of every pass and padding,
// tiled plans, chunking under a workspace limit, determinism, a user stream, and typed errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "api/fftconv.hpp"
#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "gpu/runtime/choice_cache.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fbfft/fbfft_small_products.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/tiles/device_tiles.hpp"
#include "gpu/tiles/measured_tile.hpp"
#include "tiling/planner.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"
#include "validation/verdict.hpp"

#include "gpu/runtime/test_device.hpp"

using namespace fftconv;

namespace {



const Backend& fbfft_backend() { return builtin_registry().get("fbfft"); }

uint64_t fresh_seed() { return (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}(); }

// The untiled basis side the backend picks (fbfft_conv_plan.hpp untiled_basis), for the tolerance.
int64_t untiled_basis_elems(const ConvProblem& p) {
  int64_t nh = std::max<int64_t>(2, next_pow2(p.wrapped_h())), nw = std::max<int64_t>(2, next_pow2(p.wrapped_w()));
  if ((nh > 64 || nw > 64) && nh <= 128 && nw <= 128 &&
      !fbfft::supported(int(nh), int(nw), fbfft::Kernel::automatic, fbfft::Layout::freq_major))
    nh = nw = 128;
  return nh * nw;
}

// An autotuned plan's describe() names each basis in `labels` with its time ("basis measured: 16x16
// 0.1 ms, ...") and keeps the fastest.
void expect_measured_basis(const std::string& d, const std::vector<std::string>& labels) {
  const auto at = d.find("basis measured: ");
  REQUIRE(at != std::string::npos);
  std::string kept;
  double best = 0;
  for (const std::string& label : labels) {
    const auto i = d.find(" " + label + " ", at);
    REQUIRE(i != std::string::npos);
    const double t = std::stod(d.substr(i + label.size() + 2));
    CHECK(t > 0);
    if (kept.empty() || t < best) {
      best = t;
      kept = label;
    }
  }
  CHECK(d.find("fastest " + kept) != std::string::npos);
  CHECK(d.rfind(": basis " + kept, at) != std::string::npos);
}

struct Run {
  std::vector<float> result, again;  // first and second execution (each into a NaN-poisoned buffer)
  std::vector<double> ref;
  double rms_a = 0, rms_b = 0;  // of the two operands the pass reads (Note [cancellation])
};

// Fresh operands, result poisoned with NaN, executed twice on `stream`, plus the double reference.
Run run_plan(const ConvProblem& p, Pass pass, const Plan& plan, cudaStream_t stream = nullptr) {
  PassData d = make_pass_data(p, pass, fresh_seed());
  DeviceBuffer dx = upload(d.input), dw = upload(d.weight), dg = upload(d.grad_output), dr = upload(d.result);
  Args a;
  a.input = d.input.empty() ? nullptr : dx.get();
  a.weight = d.weight.empty() ? nullptr : dw.get();
  a.grad_output = d.grad_output.empty() ? nullptr : dg.get();
  a.result = dr.get();
  a.stream = stream;
  plan.execute(a);
  FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  FFTCONV_CUDA_CHECK(cudaGetLastError());
  Run r;
  r.result = download<float>(dr, std::size_t(p.result_elems(pass)));
  DeviceBuffer dr2 = upload(d.result);  // still the NaN poison
  a.result = dr2.get();
  plan.execute(a);
  FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  r.again = download<float>(dr2, std::size_t(p.result_elems(pass)));
  r.ref = reference_result(p, pass, d, RefKind::direct);
  std::tie(r.rms_a, r.rms_b) = operand_rms(d, pass);
  return r;
}

// One training step on fresh operands: fprop and bprop transforming the weight in each call, then
// both on spectra fprop->prepare_weights() makes on `prep`, read on `use`; both ways give the same bits.
void check_step_on_prepared(const ConvProblem& p, const Plan& fprop, const Plan& bprop, cudaStream_t prep,
                            cudaStream_t use) {
  const PassData fd = make_pass_data(p, Pass::fprop, fresh_seed());
  const PassData bd = make_pass_data(p, Pass::bprop, fresh_seed());
  DeviceBuffer x = upload(fd.input), w = upload(fd.weight), g = upload(bd.grad_output);
  DeviceBuffer y0 = upload(fd.result), y1 = upload(fd.result), gx0 = upload(bd.result), gx1 = upload(bd.result);
  Args fa, ba;
  fa.input = x.get(), fa.weight = w.get(), fa.result = y0.get();
  ba.grad_output = g.get(), ba.weight = w.get(), ba.result = gx0.get();
  fprop.execute(fa), bprop.execute(ba);
  const auto prepared = fprop.prepare_weights(w.get(), prep);
  CHECK(prepared->bytes() > 0);
  fa.result = y1.get(), ba.result = gx1.get(), fa.weight = ba.weight = nullptr, fa.stream = ba.stream = use;
  fprop.execute_with(fa, *prepared);
  bprop.execute_with(ba, *prepared);
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t ny = std::size_t(p.result_elems(Pass::fprop)), ngx = std::size_t(p.result_elems(Pass::bprop));
  const auto a = download<float>(y0, ny), b = download<float>(y1, ny);
  const auto ga = download<float>(gx0, ngx), gb = download<float>(gx1, ngx);
  CHECK(count_nan(b) + count_nan(gb) == 0);
  CHECK(a == b);
  CHECK(ga == gb);
}

// The basis a plan's describe() names ("...: basis 14x14 (..."), elements; 0 when it names none.
int64_t described_basis_elems(const std::string& d) {
  const auto at = d.find(": basis ");
  if (at == std::string::npos) return 0;
  const std::size_t x = d.find('x', at + 8);
  return std::stoll(d.substr(at + 8)) * std::stoll(d.substr(x + 1));
}

// Runs and checks one plan: every element written and finite, within the tolerance model (of the
// basis the plan describes, an untiled plan's measured one included; else of `basis_elems`), and
// the second execution bit-identical to the first. Returns the plan's describe().
std::string check_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts, int64_t basis_elems,
                       cudaStream_t stream = nullptr) {
  const auto plan = fbfft_backend().plan(p, pass, opts);
  const std::string described = plan->describe();
  INFO(described);
  if (plan->tile_json() == "null" && described_basis_elems(described) > 0) basis_elems = described_basis_elems(described);
  const Run r = run_plan(p, pass, *plan, stream);
  const int64_t n = p.result_elems(pass);
  const ErrorStats e = compare(r.result.data(), r.ref.data(), n);
  const Tolerance tol = judge_stats(p, pass, e, r.rms_a, r.rms_b, basis_elems).tol;  // Note [cancellation] included
  CHECK(e.nonfinite == 0);
  CHECK(count_nan(r.result) == 0);
  CHECK(e.rel_l2 <= tol.rel_l2);
  CHECK(e.max_abs_rel <= tol.max_abs_rel);
  CHECK(std::equal(r.result.begin(), r.result.end(), r.again.begin()));
  return described;
}

// Every pass of each spec, autotuned: the plan times the bases in its labels and keeps the fastest,
// and its result is right whichever it is.
void check_measured_bases(const std::vector<std::pair<const char*, std::vector<std::string>>>& cases) {
  for (const auto& [spec, labels] : cases)
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      const ConvProblem p = ConvProblem::parse(spec);
      CAPTURE(spec);
      CAPTURE(to_string(pass));
      const std::string d = check_plan(p, pass, PlanOptions{}, untiled_basis_elems(p));
      INFO(d);
      expect_measured_basis(d, labels);
    }
}

ConvProblem random_problem(std::mt19937_64& rng, int64_t max_padded) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (;;) {
    ConvProblem p;
    p.S = pick(1, 3);
    p.f = pick(1, 5);
    p.fo = pick(1, 5);
    p.h = pick(1, max_padded);
    p.w = pick(1, max_padded);
    p.padding = pick(0, 1) ? Padding::mirror : Padding::zero;
    const int64_t maxp_h = p.padding == Padding::mirror ? p.h - 1 : 3, maxp_w = p.padding == Padding::mirror ? p.w - 1 : 3;
    p.ph = pick(0, std::min<int64_t>(3, maxp_h));
    p.pw = pick(0, std::min<int64_t>(3, maxp_w));
    if (p.padded_h() > max_padded || p.padded_w() > max_padded) continue;
    p.kh = pick(1, std::min<int64_t>(7, p.padded_h()));
    p.kw = pick(1, std::min<int64_t>(7, p.padded_w()));
    return p;
  }
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("fbfft conv: available() answers without throwing; supports() gives reasons") {
    Support s;
    CHECK_NOTHROW(s = fbfft_backend().available());
    if (!s.ok) CHECK(!s.reason.empty());
    const ConvProblem small = ConvProblem::parse("S=2,f=3,fo=4,h=13,w=13,kh=3,kw=3,ph=1,pw=1");
    CHECK(fbfft_backend().supports(small, Pass::fprop).ok);
    CHECK(!fbfft_backend().supports(small, Pass::fprop, DType::f64).ok);
    // A padded input above the largest basis runs tiled (tile=auto); a kernel above it cannot.
    CHECK(fbfft_backend().supports(ConvProblem::parse("S=1,f=1,fo=1,h=200,w=200,kh=3,kw=3"), Pass::fprop).ok);
    const ConvProblem huge = ConvProblem::parse("S=1,f=1,fo=1,h=300,w=300,kh=140,kw=3");
    const Support no = fbfft_backend().supports(huge, Pass::fprop);
    CHECK(!no.ok);
    CHECK(no.reason.find("140x3") != std::string::npos);
  }

  TEST_CASE("fbfft conv matches the double direct reference on random problems, all passes and paddings") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    std::mt19937_64 rng(fresh_seed());
    for (int k = 0; k < 100; ++k) {
      const ConvProblem p = random_problem(rng, k < 80 ? 40 : 64);
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
        CAPTURE(p.to_string());
        CAPTURE(to_string(pass));
        check_plan(p, pass, PlanOptions{}, untiled_basis_elems(p));
      }
    }
  }

  TEST_CASE("fbfft conv on smooth square bases (Note [smooth register FFT]): pinned and measured, every pass and padding") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    std::mt19937_64 rng(fresh_seed());
    int pinned = 0;
    for (int k = 0; k < 40; ++k) {
      const ConvProblem p = random_problem(rng, 30);
      const int64_t side = std::max(p.padded_h(), p.padded_w());
      bool first = true;  // the smallest side that fits, and about one in seven of the others
      for (int n : fbfft::kSmoothSides2d) {
        if (n < side) continue;
        const bool take = first || (k + n) % 7 == 0;
        first = false;
        if (!take) continue;
        for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
          for (const char* window : {"auto", "off"}) {  // off: the smooth register inverse, not the pruned one
            CAPTURE(p.to_string());
            CAPTURE(to_string(pass));
            CAPTURE(n);
            CAPTURE(window);
            PlanOptions o;
            o.basis_h = o.basis_w = n;
            o.autotune = (pinned++ % 2) == 0;
            o.extra["window"] = window;
            const std::string d = check_plan(p, pass, o, int64_t(n) * n);
            CHECK(d.find("basis " + std::to_string(n) + "x" + std::to_string(n)) != std::string::npos);
          }
      }
    }
    CHECK(pinned > 50);
    // The measured choice on the paper's x = 13 and x = 27 layers (small S): the power-of-two and the
    // smooth square basis timed, the faster kept.
    check_measured_bases({{"S=4,f=8,fo=8,n=13,k=3", {"16x16", "14x14"}},
                          {"S=2,f=8,fo=8,n=27,k=3", {"32x32", "28x28"}},
                          {"S=2,f=4,fo=4,n=27,k=3,p=1,pad=mirror", {"32x32", "30x30"}}});
    // Without autotune the power-of-two basis stands; a pin that is not 7-smooth, or below the padded
    // input, is refused with the field's name.
    const ConvProblem p13 = ConvProblem::parse("S=2,f=3,fo=3,n=13,k=3");
    PlanOptions fixed;
    fixed.autotune = false;
    CHECK(fbfft_backend().plan(p13, Pass::fprop, fixed)->describe().find("basis 16x16") != std::string::npos);
    PlanOptions bad;
    bad.basis_h = bad.basis_w = 26;
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(p13, Pass::fprop, bad), doctest::Contains("basis_h=26"), Unsupported);
    bad.basis_h = bad.basis_w = 12;
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(p13, Pass::fprop, bad), doctest::Contains("basis_h=12"), Unsupported);
  }

  TEST_CASE("fbfft conv on wrapped bases (Note [wrapped padding]): zero padding needs n + p per side") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    // (the power-of-two basis of the padded input: 16x16, 128x128, 16x32, 16x16 under mirror padding)
    for (const auto& [spec, basis] : {std::pair{"S=2,f=4,fo=4,n=7,k=3,p=1", "8x8"},
                                      std::pair{"S=2,f=3,fo=3,n=40,k=31,p=15", "64x64"},
                                      std::pair{"S=2,f=3,fo=2,h=9,w=20,kh=3,kw=5,ph=4,pw=2", "16x32"},
                                      std::pair{"S=2,f=4,fo=4,n=7,k=3,p=1,pad=mirror", "16x16"}})
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
        CAPTURE(spec);
        CAPTURE(to_string(pass));
        PlanOptions o;
        o.autotune = false;
        const ConvProblem p = ConvProblem::parse(spec);
        const std::string d = check_plan(p, pass, o, untiled_basis_elems(p));
        CHECK(d.find(std::string("basis ") + basis) != std::string::npos);
      }
    PlanOptions below;  // a pin under the circular extent (8 for n=7, p=1) is refused
    below.basis_h = below.basis_w = 7;
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(ConvProblem::parse("S=1,f=1,fo=1,n=7,k=3,p=1"), Pass::fprop, below),
                         doctest::Contains("circular extent"), Unsupported);
  }

  TEST_CASE("fbfft depthwise (Note [fused depthwise transforms]): one fused kernel for fprop and bprop, every pass, sides pinned and measured") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    int checked = 0;
    for (const char* spec : {"S=2,f=4,fo=4,n=16,k=7,p=3,g=4", "S=3,f=5,fo=5,h=13,w=9,kh=5,kw=3,ph=2,pw=1,g=5",
                             "S=2,f=3,fo=3,h=12,w=17,kh=9,kw=9,ph=4,pw=4,g=3", "S=1,f=6,fo=6,h=10,w=7,kh=3,kw=2,g=6",
                             "S=2,f=2,fo=2,h=9,w=6,kh=3,kw=2,ph=4,pw=3,g=2", "S=3,f=3,fo=3,n=7,k=13,p=6,g=3",
                             "S=1,f=2,fo=2,n=40,k=31,p=15,g=2", "S=1,f=2,fo=2,n=56,k=51,p=25,g=2"})
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
        for (bool tune : {false, true}) {
          const ConvProblem p = ConvProblem::parse(spec);
          CAPTURE(spec);
          CAPTURE(to_string(pass));
          const int side = fbfft::depthwise_side(std::max(p.wrapped_h(), p.wrapped_w()));
          REQUIRE(side > 0);
          PlanOptions o;
          o.autotune = tune;
          const std::string d = check_plan(p, pass, o, int64_t(side) * side);
          CHECK(d.find("fbfft depthwise") != std::string::npos);
          if (tune)
            CHECK(d.find("depthwise basis measured") != std::string::npos);
          else
            CHECK(d.find("basis " + std::to_string(side) + "x" + std::to_string(side)) != std::string::npos);
          ++checked;
        }
    CHECK(checked == 48);
    PlanOptions pin;
    pin.basis_h = pin.basis_w = 32;
    const ConvProblem p = ConvProblem::parse("S=2,f=4,fo=4,n=16,k=7,p=3,g=4");
    CHECK(check_plan(p, Pass::fprop, pin, 32 * 32).find("basis 32x32") != std::string::npos);
    // Mirror padding, and a circular extent above 120, run the groups one by one (the dense path).
    for (const char* spec : {"S=2,f=3,fo=3,n=9,k=3,p=1,g=3,pad=mirror", "S=1,f=2,fo=2,n=120,k=5,p=2,g=2"}) {
      const ConvProblem q = ConvProblem::parse(spec);
      CAPTURE(spec);
      const std::string d = check_plan(q, Pass::fprop, PlanOptions{}, untiled_basis_elems(q));
      CHECK(d.find("fbfft depthwise") == std::string::npos);
    }
    // The fused transform's own checks name the field.
    fbfft::DepthwiseArgs bad;
    bad.batch = 1;
    bad.in.n_h = bad.in.n_w = bad.out.n_h = bad.out.n_w = 9;
    CHECK_THROWS_WITH_AS(fbfft::validate(bad), doctest::Contains("kernel"), InvalidArgument);
    bad.kernel = reinterpret_cast<const float2*>(&bad);
    bad.in.input = reinterpret_cast<const float*>(&bad);
    bad.out.output = reinterpret_cast<float*>(&bad);
    CHECK_THROWS_WITH_AS(fbfft::validate(bad), doctest::Contains("kDepthwiseSides"), InvalidArgument);
    bad.in.n_w = bad.out.n_w = 10;
    CHECK_THROWS_WITH_AS(fbfft::validate(bad), doctest::Contains("in.n_h=9"), InvalidArgument);
  }

  TEST_CASE("fbfft conv on Stockham bases (Note [stockham bases]): pinned odd and rectangular bases, measured choice") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    std::mt19937_64 rng(fresh_seed());
    auto odd_smooth_at_least = [](int64_t n) {
      while (!is_smooth7(n) || n % 2 == 0) ++n;
      return n;
    };
    int pinned = 0;
    for (int k = 0; k < 16; ++k) {
      const ConvProblem p = random_problem(rng, 40);
      // the smallest 7-smooth sides, and a wider rectangle with an odd side
      const int64_t h0 = next_smooth7(std::max<int64_t>(2, p.padded_h()));
      const int64_t w0 = next_smooth7(std::max<int64_t>(2, p.padded_w()));
      for (auto [bh, bw] : {std::pair{h0, w0}, std::pair{odd_smooth_at_least(h0 + 1), w0}}) {
        for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
          for (const char* window : {"auto", "off"}) {
            CAPTURE(p.to_string());
            CAPTURE(to_string(pass));
            CAPTURE(bh);
            CAPTURE(bw);
            CAPTURE(window);
            PlanOptions o;
            o.basis_h = bh;
            o.basis_w = bw;
            o.autotune = (pinned++ % 2) == 0;
            o.extra["window"] = window;
            const std::string d = check_plan(p, pass, o, bh * bw);
            CHECK(d.find("basis " + std::to_string(bh) + "x" + std::to_string(bw)) != std::string::npos);
          }
      }
    }
    CHECK(pinned == 16 * 2 * 3 * 2);
    // Where the Stockham rectangle has at most half the frequencies of the others it is timed beside
    // them and the fastest kept: 5x40 against 8x64; 3x70 against 128x128 (4x128 has no kernel) and
    // the smooth 72x72.
    check_measured_bases({{"S=2,f=4,fo=4,h=3,w=70,k=3", {"128x128", "72x72", "3x70"}},
                          {"S=2,f=4,fo=4,h=5,w=40,k=3", {"8x64", "5x40"}},
                          {"S=2,f=4,fo=4,h=3,w=38,k=3,p=1,pad=mirror", {"8x64", "5x40"}}});
    // A pin that is not 7-smooth is refused with the field's name.
    PlanOptions bad;
    bad.basis_h = 11;
    bad.basis_w = 16;
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(ConvProblem::parse("S=1,f=1,fo=1,n=9,k=3"), Pass::fprop, bad),
                         doctest::Contains("basis_h=11"), Unsupported);
  }

  TEST_CASE("fbfft conv: fixed corner cases (1x1 planes, kernel = padded input, 128x128 basis, L5-like)") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    const char* specs[] = {
        "S=2,f=2,fo=3,h=1,w=1,kh=1,kw=1",
        "S=1,f=3,fo=2,h=1,w=9,kh=1,kw=4",
        "S=2,f=2,fo=2,h=5,w=7,kh=5,kw=7",
        "S=1,f=2,fo=2,h=5,w=7,kh=7,kw=9,ph=1,pw=1",
        "S=1,f=2,fo=2,h=5,w=7,kh=3,kw=3,ph=4,pw=6,pad=mirror",
        "S=2,f=2,fo=3,h=100,w=30,kh=5,kw=3,ph=2,pw=1",          // widened to 128x128
        "S=1,f=2,fo=2,h=128,w=128,kh=3,kw=3",                   // 128x128 exactly
        "S=1,f=2,fo=2,h=126,w=126,kh=3,kw=3,ph=1,pw=1,pad=mirror",
        "S=4,f=48,fo=48,h=13,w=13,kh=3,kw=3,ph=1,pw=1",          // L5-like
        "S=4,f=48,fo=48,h=13,w=13,kh=3,kw=3,ph=1,pw=1,pad=mirror",
        "S=3,f=16,fo=24,h=27,w=27,kh=3,kw=3",
        "S=2,f=8,fo=8,h=57,w=57,kh=3,kw=3,ph=1,pw=1",
    };
    for (const char* spec : specs) {
      const ConvProblem p = ConvProblem::parse(spec);
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
        CAPTURE(spec);
        CAPTURE(to_string(pass));
        check_plan(p, pass, PlanOptions{}, untiled_basis_elems(p));
      }
    }
  }

  TEST_CASE("fbfft conv runs the planner's tile plans (8, 16, 32, rectangular, smooth, auto), several chunks") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    const char* specs[] = {
        "S=3,f=3,fo=2,h=37,w=45,kh=3,kw=3,ph=1,pw=1",
        "S=3,f=3,fo=2,h=37,w=45,kh=3,kw=3,ph=1,pw=1,pad=mirror",
        "S=2,f=2,fo=3,h=41,w=29,kh=5,kw=3,ph=2,pw=0",
        "S=2,f=2,fo=3,h=41,w=29,kh=5,kw=3,ph=2,pw=2,pad=mirror",
        "S=2,f=4,fo=4,h=13,w=13,kh=3,kw=3,ph=1,pw=1,pad=mirror",  // L5-like, one tile row at 16
        "S=1,f=2,fo=2,h=150,w=70,kh=7,kw=7,ph=3,pw=3",             // untiled basis 256x128: no kernel
        "S=1,f=2,fo=2,h=60,w=60,kh=45,kw=45,ph=22,pw=22",          // smooth tiles 48..120 hold the kernel
    };
    // "smooth": tile=auto with tile_sizes=smooth (Note [fbfft smooth tiles]); "24": a smooth square
    const char* tiles[] = {"8", "16", "32", "8x16", "auto", "24", "smooth"};
    for (const char* spec : specs) {
      const ConvProblem p = ConvProblem::parse(spec);
      for (const char* tile : tiles)
        for (const char* flight : {"0", "5", "2"})
          for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
            // 2 items: bprop chunks inside one tile (S = 3), whose fold covers a part of the images
            if (std::string(flight) == "2" && pass != Pass::bprop) continue;
            PlanOptions o;
            const bool smooth = std::string(tile) == "smooth";
            o.tile = TileSpec::parse(smooth ? "auto" : tile);
            if (smooth) o.tile_sizes = SizePolicy::smooth;
            o.extra["tiles_in_flight"] = flight;
            if (o.tile.kind == TileSpec::Kind::fixed && (o.tile.fft_h < p.kh || o.tile.fft_w < p.kw)) continue;
            CAPTURE(spec);
            CAPTURE(tile);
            CAPTURE(flight);
            CAPTURE(to_string(pass));
            const auto plan = fbfft_backend().plan(p, pass, o);
            const std::string json = plan->tile_json();
            int64_t basis = untiled_basis_elems(p);
            if (json != "null") {  // tiled: the tolerance of the tile basis
              const auto num = [&](const char* key) {
                const auto at = json.find(key);
                REQUIRE(at != std::string::npos);
                return std::stoll(json.substr(at + std::string(key).size()));
              };
              basis = num("\"fft_h\":") * num("\"fft_w\":");
              // Unpinned: the device rule (gpu/tiles/device_tiles.hpp device_in_flight) on the planner's plan.
              if (std::string(flight) == "0" && o.tile.kind == TileSpec::Kind::fixed) {
                const PlanOptions fo = frequency_reduction_only(o, "fbfft");
                CHECK(num("\"tiles_in_flight\":") == device_in_flight(plan_tiling(p, pass, fo).plan, fo).tiles_in_flight);
              } else if (std::string(flight) != "0") {
                CHECK(num("\"tiles_in_flight\":") <= std::stoll(flight));
              }
            } else {
              CHECK(o.tile.kind == TileSpec::Kind::automatic);
            }
            check_plan(p, pass, o, basis);
          }
    }
  }

  TEST_CASE("fbfft and cufft answer tile=auto by timing the untiled plan and the planner's cheapest tiles (autotune)") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    // Note [measured tile choice]: describe() ends "tile=auto measured: <label> <ms> ms, ..., fastest <label>".
    const auto measured = [](const std::string& describe) {
      std::vector<std::pair<std::string, double>> times;
      std::string fastest;
      const std::string key = "tile=auto measured:";
      const auto at = describe.find(key);
      if (at == std::string::npos) return std::make_pair(times, fastest);
      std::string rest = describe.substr(at + key.size());
      std::size_t pos = 0;
      while (pos < rest.size()) {
        std::size_t end = rest.find(',', pos);
        if (end == std::string::npos) end = rest.size();
        std::string item = rest.substr(pos, end - pos);
        item.erase(0, item.find_first_not_of(' '));
        pos = end + 1;
        if (item.rfind("fastest ", 0) == 0) {
          fastest = item.substr(8);
          break;
        }
        const auto ms = item.rfind(" ms"), sp = item.rfind(' ', ms - 1);
        REQUIRE(ms != std::string::npos);
        times.emplace_back(item.substr(0, sp), std::stod(item.substr(sp + 1, ms - sp - 1)));
      }
      return std::make_pair(times, fastest);
    };
    const char* specs[] = {"S=8,f=8,fo=8,n=27,k=3", "S=2,f=3,fo=2,n=40,k=5,p=2,pad=mirror",
                           "S=1,f=2,fo=2,h=150,w=70,kh=7,kw=7,ph=3,pw=3"};  // fbfft: no untiled kernel
    for (const char* backend : {"fbfft", "cufft"})
      for (const char* spec : specs)
        for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
          const ConvProblem p = ConvProblem::parse(spec);
          CAPTURE(backend);
          CAPTURE(spec);
          CAPTURE(to_string(pass));
          PlanOptions o;
          o.tile = TileSpec::parse("auto");
          const auto plan = builtin_registry().get(backend).plan(p, pass, o);
          INFO(plan->describe());
          const auto [times, fastest] = measured(plan->describe());
          const bool fbfft_untiled = std::string(backend) == "cufft" || untiled_basis_elems(p) <= 128 * 128;
          REQUIRE(times.size() >= 2);  // the untiled plan (where the backend has one) and the tiles
          CHECK(times.size() <= std::size_t(kMeasuredTiles) + 1);
          CHECK((times.front().first.rfind("none", 0) == 0) == fbfft_untiled);
          const auto best = std::min_element(times.begin(), times.end(),
                                             [](const auto& a, const auto& b) { return a.second < b.second; });
          CHECK(fastest == best->first);
          CHECK((plan->tile_json() == "null") == (fastest.rfind("none", 0) == 0));
          for (const auto& t : times) CHECK(t.second > 0);
          if (std::string(backend) == "fbfft") {  // the chosen plan is correct (a new plan: same choice or not)
            const Run r = run_plan(p, pass, *plan);
            const ErrorStats e = compare(r.result.data(), r.ref.data(), p.result_elems(pass));
            CHECK(e.nonfinite == 0);
            CHECK(e.rel_l2 <= tolerance(p, pass, DType::f32, 128 * 128).rel_l2);
          }
          if (spec == specs[0]) {  // with breakdown (not capturable in a graph: timed call by call)
            PlanOptions b = o;
            b.breakdown = true;
            const auto timed = builtin_registry().get(backend).plan(p, pass, b);
            CHECK(measured(timed->describe()).second.size() > 0);
            const Run r = run_plan(p, pass, *timed);
            CHECK(compare(r.result.data(), r.ref.data(), p.result_elems(pass)).nonfinite == 0);
            CHECK(!timed->last_breakdown().empty());
          }
          o.autotune = false;  // the planner's choice, not measured
          CHECK(builtin_registry().get(backend).plan(p, pass, o)->describe().find("measured") == std::string::npos);
        }
  }

  TEST_CASE("fbfft conv keeps its tuning and measured basis beside a tune cache file for later processes (Note [persistent choices])") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    const auto dir = std::filesystem::temp_directory_path() / ("fftconv_choices_" + std::to_string(fresh_seed()));
    std::filesystem::create_directories(dir);
    PlanOptions o;
    o.tune_cache = (dir / "cufft-tune.json").string();
    // x = 27: the power-of-two and the smooth basis are timed (fastest_plan), each with its transform tuner.
    const ConvProblem p = ConvProblem::parse("S=3,f=5,fo=7,n=27,k=3");
    const auto first = fbfft_backend().plan(p, Pass::bprop, o);
    INFO(first->describe());
    REQUIRE(first->describe().find("basis measured: ") != std::string::npos);
    const auto file = dir / "device-choices.json";
    REQUIRE(std::filesystem::exists(file));
    device_choices().clear_memory();  // as a later process would start
    const auto again = fbfft_backend().plan(p, Pass::bprop, o);
    const std::string d = again->describe();
    INFO(d);
    CHECK(d.find("chosen earlier, basis measured: ") != std::string::npos);
    CHECK(d.find("(tuned earlier: ") != std::string::npos);
    CHECK(d.substr(0, d.find(';')) == first->describe().substr(0, first->describe().find(';')));
    CHECK(again->workspace_bytes() == first->workspace_bytes());
    const Run r = run_plan(p, Pass::bprop, *again);
    const ErrorStats e = compare(r.result.data(), r.ref.data(), p.result_elems(Pass::bprop));
    CHECK(e.nonfinite == 0);
    CHECK(e.rel_l2 <= tolerance(p, Pass::bprop, DType::f32, 32 * 32).rel_l2);
    CHECK(r.result == r.again);
    // Without a file the choices live in memory only: forgotten, they are timed again.
    device_choices().clear_memory();
    CHECK(fbfft_backend().plan(p, Pass::bprop, {})->describe().find("chosen earlier") == std::string::npos);
    // A damaged file is an error that names tune_cache, not a silent miss.
    std::ofstream(file) << "{ not json";
    device_choices().clear_memory();
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(p, Pass::bprop, o), doctest::Contains("tune_cache"), InvalidArgument);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("fbfft conv chunks under a workspace limit, and says Unsupported below one image") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    const ConvProblem p = ConvProblem::parse("S=7,f=5,fo=6,h=19,w=23,kh=3,kw=5,ph=1,pw=2,pad=mirror");
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      CAPTURE(to_string(pass));
      const std::size_t full = fbfft_backend().plan(p, pass, PlanOptions{})->workspace_bytes();
      CHECK(full > 0);
      PlanOptions o;
      o.workspace_limit = full * 2 / 3;  // the fixed spectra plus a few images
      const auto plan = fbfft_backend().plan(p, pass, o);
      CHECK(plan->workspace_bytes() <= o.workspace_limit);
      CHECK(plan->workspace_bytes() < full);
      check_plan(p, pass, o, untiled_basis_elems(p));
      o.workspace_limit = 4096;  // below one image's spectra
      CHECK_THROWS_AS(fbfft_backend().plan(p, pass, o), Unsupported);
    }
  }

  TEST_CASE("fbfft conv: the transforms' family is tuned per plan, or pinned by extra[\"kernel\"]") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    // 27x27 in the 32x32 basis, where both the register and the four-step (cluster) kernels run; the
    // basis is pinned, since with autotune a smooth 30x30 basis can measure faster and only the
    // register kernels run it (Note [smooth register FFT]).
    const std::pair<const char*, int64_t> cases[] = {{"S=3,f=5,fo=4,h=27,w=27,kh=3,kw=3,ph=1,pw=1", 32},
                                                     {"S=2,f=3,fo=5,h=60,w=50,kh=5,kw=3,pad=mirror,ph=2,pw=1", 64}};
    for (const auto& [spec, basis] : cases) {
      const ConvProblem p = ConvProblem::parse(spec);
      CAPTURE(p.to_string());
      PlanOptions pinned_basis;
      pinned_basis.basis_h = pinned_basis.basis_w = basis;
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
        CAPTURE(to_string(pass));
        const auto tuned = fbfft_backend().plan(p, pass, pinned_basis);
        const std::string text = tuned->describe();
        CHECK(text.find("tuned: registers") != std::string::npos);
        CHECK(text.find(" fourstep ") != std::string::npos);
        const bool lanes = p.h <= 32;  // the lanes family: sides 16 and 32 (Note [lane-split small batches])
        // timed as a candidate: " lanes <forward ms>/<inverse ms> ms" in the tuning note (not the pruned
        // inverse's "N lanes per plane", which appears whenever that inverse wins)
        CHECK(std::regex_search(text, std::regex(" lanes [0-9]")) == lanes);
        check_plan(p, pass, pinned_basis, untiled_basis_elems(p));
        for (const char* k : {"registers", "fourstep", "lanes"}) {
          PlanOptions o = pinned_basis;
          o.extra["kernel"] = k;
          if (!lanes && std::string(k) == "lanes") {
            CHECK_THROWS_AS(fbfft_backend().plan(p, pass, o), Unsupported);
            continue;
          }
          const std::string pinned = fbfft_backend().plan(p, pass, o)->describe();
          CHECK(pinned.find(std::string(k) + " forward / " + k + " inverse transform kernels (pinned)") != std::string::npos);
          check_plan(p, pass, o, untiled_basis_elems(p));
        }
        PlanOptions fixed = pinned_basis;
        fixed.autotune = false;
        CHECK(fbfft_backend().plan(p, pass, fixed)->describe().find("tuned") == std::string::npos);
        PlanOptions off = pinned_basis;
        off.extra["window"] = "off";
        CHECK(fbfft_backend().plan(p, pass, off)->describe().find("pruned") == std::string::npos);
        check_plan(p, pass, off, untiled_basis_elems(p));
      }
    }
    const ConvProblem small = ConvProblem::parse("S=1,f=2,fo=2,h=13,w=13,kh=3,kw=3");  // 16x16: no freq_major four-step
    PlanOptions o;
    o.extra["kernel"] = "fourstep";
    CHECK_THROWS_AS(fbfft_backend().plan(small, Pass::fprop, o), Unsupported);
    o.extra["kernel"] = "fast";
    CHECK_THROWS_AS(fbfft_backend().plan(small, Pass::fprop, o), InvalidArgument);
    o.extra.clear();
    o.extra["window"] = "no";
    CHECK_THROWS_AS(fbfft_backend().plan(small, Pass::fprop, o), InvalidArgument);
    o.extra.clear();
    o.extra["kernels"] = "registers";  // a key no backend knows
    CHECK_THROWS_AS(fbfft_backend().plan(small, Pass::fprop, o), InvalidArgument);
    o.extra.clear();
    o.extra["gemm"] = "3m";  // cufft's key
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(small, Pass::fprop, o), doctest::Contains("fbfft: unknown option 'gemm'"),
                         InvalidArgument);
    o.extra.clear();
    CHECK_NOTHROW(fbfft_backend().plan(small, Pass::fprop, o));
  }

  TEST_CASE("fbfft conv: the forked transforms (fork=on) give the result of one stream (fork=off) bit for bit, as do plain launches (launch=plain); fork=auto") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    // Untiled in one chunk and in several (a workspace limit), tiled with several chunks; mirror
    // padding for the padded-copy branch. Untuned, so that both plans run the same kernels.
    const ConvProblem p = ConvProblem::parse("S=6,f=5,fo=4,h=27,w=25,kh=3,kw=5,ph=1,pw=2,pad=mirror");
    for (const char* mode : {"one chunk", "chunks", "tiled"}) {
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
        CAPTURE(mode);
        CAPTURE(to_string(pass));
        PlanOptions o;
        o.autotune = false;
        if (std::string(mode) == "chunks")
          o.workspace_limit = fbfft_backend().plan(p, pass, o)->workspace_bytes() * 2 / 3;
        if (std::string(mode) == "tiled") {
          o.tile = TileSpec::parse("16");
          o.extra["tiles_in_flight"] = "5";
        }
        o.extra["fork"] = "on";
        const auto forked = fbfft_backend().plan(p, pass, o);
        o.extra["fork"] = "off";
        const auto serial = fbfft_backend().plan(p, pass, o);
        o.extra["launch"] = "plain";  // Note [dependent launch]: the same bits without dependent launches
        const auto plain = fbfft_backend().plan(p, pass, o);
        CHECK(forked->describe().find("second stream") != std::string::npos);
        CHECK(serial->describe().find("second stream") == std::string::npos);
        CHECK(serial->describe().find("launched dependent") != std::string::npos);
        CHECK(plain->describe().find("plain launches") != std::string::npos);
        const PassData d = make_pass_data(p, pass, fresh_seed());
        DeviceBuffer dx = upload(d.input), dw = upload(d.weight), dg = upload(d.grad_output);
        std::vector<float> out[3];
        int i = 0;
        for (const Plan* plan : {forked.get(), serial.get(), plain.get()}) {
          DeviceBuffer dr = upload(d.result);  // NaN poison
          Args a;
          a.input = d.input.empty() ? nullptr : dx.get();
          a.weight = d.weight.empty() ? nullptr : dw.get();
          a.grad_output = d.grad_output.empty() ? nullptr : dg.get();
          a.result = dr.get();
          plan->execute(a);
          FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
          out[i++] = download<float>(dr, std::size_t(p.result_elems(pass)));
        }
        CHECK(count_nan(out[0]) == 0);
        CHECK(out[0] == out[1]);
        CHECK(out[1] == out[2]);
      }
    }
    // fork=auto: accGrad forks; fprop/bprop timed with autotune (both times in the note), else not
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      CAPTURE(to_string(pass));
      const auto tuned = fbfft_backend().plan(p, pass, PlanOptions{});
      CHECK((tuned->describe().find("pass forked ") != std::string::npos) == (pass != Pass::accgrad));
      if (pass == Pass::accgrad) CHECK(tuned->describe().find("second stream") != std::string::npos);
      check_plan(p, pass, PlanOptions{}, untiled_basis_elems(p));
      PlanOptions fixed;
      fixed.autotune = false;
      const bool forks = fbfft_backend().plan(p, pass, fixed)->describe().find("second stream") != std::string::npos;
      CHECK(forks == (pass == Pass::accgrad));
    }
    PlanOptions bad;
    bad.extra["fork"] = "2";
    CHECK_THROWS_AS(fbfft_backend().plan(p, Pass::fprop, bad), InvalidArgument);
    bad.extra.clear();
    bad.extra["launch"] = "fast";
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(p, Pass::fprop, bad), doctest::Contains("extra[\"launch\"]"), InvalidArgument);
  }

  TEST_CASE("fbfft conv: the small-K products (Note [small-K products]) of every pass on 32x32, 64x64 and 128x128 bases and the autotuned one, in chunks; typed errors where they cannot run") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    for (const char* spec : {"S=3,f=1,fo=5,h=30,w=30,kh=13,kw=13,ph=0,pw=0,pad=zero",
                             "S=5,f=3,fo=7,h=40,w=37,kh=9,kw=9,ph=2,pw=3,pad=zero",
                             "S=4,f=2,fo=6,h=50,w=45,kh=3,kw=3,ph=1,pw=1,pad=mirror",
                             "S=3,f=4,fo=3,h=100,w=90,kh=5,kw=5,ph=2,pw=2,pad=zero",
                             "S=17,f=3,fo=19,h=27,w=27,kh=7,kw=7,ph=3,pw=3,pad=zero"}) {
      const ConvProblem p = ConvProblem::parse(spec);
      CAPTURE(spec);
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
        CAPTURE(to_string(pass));
        PlanOptions o;
        o.autotune = false;
        o.extra["products"] = "smallk";
        const std::size_t full = fbfft_backend().plan(p, pass, o)->workspace_bytes();
        for (bool chunks : {false, true}) {
          CAPTURE(chunks);
          o.workspace_limit = chunks ? full * 2 / 3 : 0;
          const std::string d = check_plan(p, pass, o, untiled_basis_elems(p));
          CHECK(d.find("products by the small-K kernel") != std::string::npos);
          CHECK(d.find("CGEMM") == std::string::npos);
          if (chunks) CHECK(fbfft_backend().plan(p, pass, o)->workspace_bytes() <= o.workspace_limit);
        }
        // auto with autotune times both and says so; its result is right either way
        const std::string tuned = check_plan(p, pass, PlanOptions{}, untiled_basis_elems(p));
        CHECK(tuned.find("products by CGEMM ") != std::string::npos);
      }
    }
    PlanOptions pin;
    pin.extra["products"] = "smallk";
    const ConvProblem wide = ConvProblem::parse("S=2,f=5,fo=3,h=20,w=20,kh=5,kw=5,ph=0,pw=0,pad=zero");
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(wide, Pass::fprop, pin), doctest::Contains("f=5"), Unsupported);
    const ConvProblem narrow = ConvProblem::parse("S=2,f=3,fo=3,h=20,w=20,kh=5,kw=5,ph=0,pw=0,pad=zero");
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) CHECK_NOTHROW(fbfft_backend().plan(narrow, pass, pin));
    PlanOptions tiled = pin;
    tiled.tile = TileSpec::parse("16");
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(narrow, Pass::bprop, tiled), doctest::Contains("untiled"), Unsupported);
    pin.math = ProductMath::tf32;  // the kernel computes in fp32: a pinned tf32 is not served by it
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(narrow, Pass::fprop, pin), doctest::Contains("math=tf32"), Unsupported);
    pin.extra.erase("products");
    CHECK(fbfft_backend().plan(narrow, Pass::fprop, pin)->describe().find("small-K") == std::string::npos);
    pin.math = ProductMath::automatic;
    pin.extra["products"] = "cgemm";
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(narrow, Pass::fprop, pin), doctest::Contains("extra[\"products\"]"),
                         InvalidArgument);
    // the kernel's own checks
    fbfft_conv::SmallProducts a;
    a.x = a.w = reinterpret_cast<const float2*>(16);
    a.c = reinterpret_cast<float2*>(16);
    a.images = 2, a.m = 3, a.freqs = 10, a.k = 5, a.ld_x = 10, a.ld_w = 15;
    CHECK_THROWS_WITH_AS(fbfft_conv::small_k_products(a, nullptr), doctest::Contains("k=5"), InvalidArgument);
    a.k = 3, a.ld_x = 5;
    CHECK_THROWS_WITH_AS(fbfft_conv::small_k_products(a, nullptr), doctest::Contains("ld_x=5"), InvalidArgument);
    a.ld_x = 6, a.x = nullptr;
    CHECK_THROWS_AS(fbfft_conv::small_k_products(a, nullptr), InvalidArgument);
    fbfft_conv::SmallGradProducts ga;
    ga.g = ga.b = reinterpret_cast<const float2*>(16);
    ga.c = reinterpret_cast<float2*>(16);
    ga.rows = 2, ga.red = 4, ga.freqs = 10, ga.k = 3, ga.ld_b = 11, ga.g_row = 4, ga.g_red = 1, ga.c_plane = 10,
    ga.c_freq = 1;
    CHECK_THROWS_WITH_AS(fbfft_conv::small_k_grad_products(ga, nullptr), doctest::Contains("ld_b=11"), InvalidArgument);
    ga.ld_b = 12, ga.k = 0;
    CHECK_THROWS_WITH_AS(fbfft_conv::small_k_grad_products(ga, nullptr), doctest::Contains("k=0"), InvalidArgument);
    ga.k = 3, ga.c_freq = 0;
    CHECK_THROWS_WITH_AS(fbfft_conv::small_k_grad_products(ga, nullptr), doctest::Contains("c_freq=0"), InvalidArgument);
  }

  TEST_CASE("fbfft conv: the small-K kernels against double sums for every k, on partial tiles, in both result layouts and accumulated (sized for the sanitizers)") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    using C = std::complex<double>;
    const uint64_t seed = fresh_seed();
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> nd;
    // 19 images, 13 output channels, 70 frequencies: partial blocks in every grid dimension
    const int64_t images = 19, fo = 13, freqs = 70;
    for (int k = 1; k <= fbfft_conv::kMaxSmallK; ++k) {
      CAPTURE(k);
      std::vector<float2> x(freqs * images * k), w(freqs * fo * k), g(images * fo * freqs);
      for (auto* v : {&x, &w, &g})
        for (float2& e : *v) e = make_float2(nd(rng), nd(rng));
      auto c = [](float2 v) { return C(v.x, v.y); };
      DeviceBuffer dx = upload(x), dw = upload(w), dg = upload(g), dc(sizeof(float2) * images * fo * freqs);
      // The first n results in dc against double sums, where terms(add) calls add(i, t) for each of
      // the n_terms terms t of result i: |result - sum| within a few fp32 roundings a term of the sum
      // of the terms' magnitudes.
      auto expect = [&](std::size_t n, int n_terms, auto&& terms) {
        std::vector<C> sum(n);
        std::vector<double> mag(n);
        terms([&](int64_t i, C t) { sum[i] += t, mag[i] += std::abs(t); });
        const std::vector<float2> got = download<float2>(dc, n);
        int bad = 0;
        for (std::size_t i = 0; i < n; ++i)
          bad += !(std::abs(c(got[i]) - sum[i]) <= 4.0 * (n_terms + 1) * 0x1p-24 * mag[i]);
        CHECK(bad == 0);
      };
      fbfft_conv::small_k_products(
          fbfft_conv::fprop_small_products(dx.as<float2>(), dw.as<float2>(), dc.as<float2>(), images, images * k, k, fo,
                                           freqs),
          nullptr);
      expect(images * fo * freqs, k, [&](auto add) {
        for (int64_t s = 0; s < images; ++s)
          for (int64_t o = 0; o < fo; ++o)
            for (int64_t q = 0; q < freqs; ++q)
              for (int i = 0; i < k; ++i)
                add((s * fo + o) * freqs + q, c(x[(q * images + s) * k + i]) * std::conj(c(w[(q * fo + o) * k + i])));
      });
      fbfft_conv::small_k_grad_products(
          fbfft_conv::grad_small_products(Pass::bprop, dg.as<float2>(), dw.as<float2>(), dc.as<float2>(), images,
                                          images * k, k, fo, freqs, false),
          nullptr);
      expect(images * k * freqs, int(fo), [&](auto add) {
        for (int64_t s = 0; s < images; ++s)
          for (int i = 0; i < k; ++i)
            for (int64_t q = 0; q < freqs; ++q)
              for (int64_t o = 0; o < fo; ++o)
                add((s * k + i) * freqs + q, c(g[(s * fo + o) * freqs + q]) * c(w[(q * fo + o) * k + i]));
      });
      // accGrad's freq_major result, added to twice
      FFTCONV_CUDA_CHECK(cudaMemset(dc.get(), 0, dc.bytes()));
      for (int rep = 0; rep < 2; ++rep)
        fbfft_conv::small_k_grad_products(
            fbfft_conv::grad_small_products(Pass::accgrad, dg.as<float2>(), dx.as<float2>(), dc.as<float2>(), images,
                                            images * k, k, fo, freqs, true),
            nullptr);
      expect(freqs * fo * k, int(images) + 1, [&](auto add) {
        for (int64_t o = 0; o < fo; ++o)
          for (int i = 0; i < k; ++i)
            for (int64_t q = 0; q < freqs; ++q)
              for (int64_t s = 0; s < images; ++s)
                add((q * fo + o) * k + i, 2.0 * std::conj(c(g[(s * fo + o) * freqs + q])) * c(x[(q * images + s) * k + i]));
      });
      FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  TEST_CASE("fbfft conv breakdown times every step of every pass, untiled and tiled, on one stream") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    const ConvProblem p = ConvProblem::parse("S=5,f=3,fo=4,h=21,w=19,kh=3,kw=5,ph=1,pw=2,pad=mirror");
    auto has = [](const StepTimes& t, const std::string& name) {
      auto it = std::find_if(t.begin(), t.end(), [&](const auto& e) { return e.first == name; });
      return it != t.end() && it->second >= 0.0;
    };
    for (const char* mode : {"untiled", "tiled"})
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
        CAPTURE(mode);
        CAPTURE(to_string(pass));
        PlanOptions o;
        o.breakdown = true;
        o.extra["fork"] = "on";  // a breakdown runs the steps one by one on one stream all the same
        const bool tiled = std::string(mode) == "tiled";
        if (tiled) {
          o.tile = TileSpec::parse("16");
          o.extra["tiles_in_flight"] = "4";
        }
        check_plan(p, pass, o, tiled ? 16 * 16 : untiled_basis_elems(p));
        const auto plan = fbfft_backend().plan(p, pass, o);
        (void)run_plan(p, pass, *plan);
        const StepTimes t = plan->last_breakdown();
        std::string names;
        for (const auto& e : t) names += e.first + "; ";
        INFO(names);
        CHECK(has(t, "FFT A"));
        CHECK((has(t, "FFT B") || has(t, "DFT B")));
        // (an untiled fprop of few input channels may run the small-K kernel, Note [small-K products])
        CHECK((has(t, "CGEMM") || (!tiled && p.f <= fbfft_conv::kMaxSmallK && has(t, "PROD C"))));
        CHECK((has(t, "IFFT C") || has(t, "IDFT C")));
        if (tiled) {
          CHECK(has(t, "GATHER A"));
          if (pass == Pass::accgrad) CHECK(has(t, "GATHER B"));
          if (pass == Pass::fprop) CHECK(has(t, "SCATTER C"));
          if (pass == Pass::bprop) CHECK(has(t, "FOLD C"));
        } else {
          if (pass != Pass::bprop) CHECK(has(t, "PAD A"));  // mirror: the padded copy
          if (pass == Pass::bprop) CHECK(has(t, "FOLD C"));
        }
      }
    PlanOptions plain;
    CHECK(fbfft_backend().plan(p, Pass::fprop, plain)->last_breakdown().empty());
  }

  TEST_CASE("fbfft conv: prepared weight spectra (Note [prepared spectra memory on the device]) give execute()'s bits, reused across steps and streams") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    const ConvProblem p = ConvProblem::parse("S=3,f=6,fo=5,h=13,w=13,kh=3,kw=3,ph=1,pw=1");
    PlanOptions o;
    o.autotune = false;
    const auto fprop = fbfft_backend().plan(p, Pass::fprop, o);
    std::tie(o.basis_h, o.basis_w) = fprop->fourier_basis();
    const auto bprop = fbfft_backend().plan(p, Pass::bprop, o);
    cudaStream_t s2 = nullptr;
    FFTCONV_CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    // Each step: new weights, prepared on one stream and read by both passes on the other; the
    // spectra of the step before went back to the spare slot, so a stale or early write shows.
    for (int step = 0; step < 4; ++step) {
      CAPTURE(step);
      check_step_on_prepared(p, *fprop, *bprop, step % 2 ? s2 : nullptr, step % 2 ? nullptr : s2);
    }
    FFTCONV_CUDA_CHECK(cudaStreamDestroy(s2));
    // Spectra of another basis, or for accGrad: typed errors before any work.
    PlanOptions other;
    other.autotune = false;
    other.basis_h = other.basis_w = 32;
    const auto wide = fbfft_backend().plan(p, Pass::fprop, other);
    const PassData d = make_pass_data(p, Pass::fprop, 3);
    DeviceBuffer w = upload(d.weight);
    const auto prepared = fprop->prepare_weights(w.get(), nullptr);
    Args a;
    CHECK_THROWS_WITH_AS(wide->execute_with(a, *prepared), doctest::Contains("prepared for"), InvalidArgument);
    CHECK_THROWS_AS(fbfft_backend().plan(p, Pass::accgrad, o)->prepare_weights(w.get(), nullptr), Unsupported);
    CHECK_THROWS_AS(fprop->prepare_weights(nullptr, nullptr), InvalidArgument);
  }

  TEST_CASE("fbfft conv: a tiled plan's tile_basis() plans bprop in its tiles, and both passes read one prepared set") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    const ConvProblem p = ConvProblem::parse("S=2,f=6,fo=5,h=13,w=13,kh=3,kw=3");
    PlanOptions o;
    o.autotune = false;
    CHECK(fbfft_backend().plan(p, Pass::fprop, o)->tile_basis() == std::pair<int64_t, int64_t>{0, 0});
    o.tile = TileSpec{TileSpec::Kind::fixed, 8, 8};
    const auto fprop = fbfft_backend().plan(p, Pass::fprop, o);
    REQUIRE(fprop->tile_basis() == std::pair<int64_t, int64_t>{8, 8});
    // bprop as `bench step` plans it: fprop's basis pinned, then its tiles
    PlanOptions ob = o;
    std::tie(ob.basis_h, ob.basis_w) = fprop->fourier_basis();
    ob.tile = TileSpec{TileSpec::Kind::fixed, fprop->tile_basis().first, fprop->tile_basis().second};
    const auto bprop = fbfft_backend().plan(p, Pass::bprop, ob);
    CHECK(bprop->tile_basis() == fprop->tile_basis());
    check_step_on_prepared(p, *fprop, *bprop, nullptr, nullptr);
  }

  TEST_CASE("fbfft conv runs on a user stream") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    cudaStream_t stream = nullptr;
    FFTCONV_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const ConvProblem p = ConvProblem::parse("S=3,f=4,fo=5,h=16,w=16,kh=3,kw=3,ph=1,pw=1");
    for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
      CAPTURE(to_string(pass));
      check_plan(p, pass, PlanOptions{}, untiled_basis_elems(p), stream);
    }
    FFTCONV_CUDA_CHECK(cudaStreamDestroy(stream));
  }

  TEST_CASE("fbfft conv raises typed errors for requests it cannot serve") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft conv");
    const ConvProblem big = ConvProblem::parse("S=1,f=1,fo=1,h=200,w=200,kh=3,kw=3");
    CHECK_THROWS_AS(fbfft_backend().plan(big, Pass::fprop, PlanOptions{}), Unsupported);
    const ConvProblem p = ConvProblem::parse("S=1,f=2,fo=2,h=20,w=20,kh=3,kw=3");
    PlanOptions o;
    o.dtype = DType::f64;
    CHECK_THROWS_AS(fbfft_backend().plan(p, Pass::fprop, o), Unsupported);
    o = PlanOptions{};
    o.basis_h = o.basis_w = 26;  // neither a power of two nor a smooth side
    CHECK_THROWS_AS(fbfft_backend().plan(p, Pass::fprop, o), Unsupported);
    o.basis_h = o.basis_w = 24;  // a smooth side (Note [smooth register FFT])
    CHECK_NOTHROW(fbfft_backend().plan(p, Pass::fprop, o));
    o = PlanOptions{};
    o.tile = TileSpec::parse("11");  // not 7-smooth: no kernel
    CHECK_THROWS_AS(fbfft_backend().plan(p, Pass::fprop, o), Unsupported);
    o.tile = TileSpec::parse("12");  // a smooth square (Note [fbfft smooth tiles])
    CHECK_NOTHROW(fbfft_backend().plan(p, Pass::fprop, o));
    o = PlanOptions{};
    o.tile = TileSpec::parse("16");
    o.extra["accgrad_reduction"] = "time";
    CHECK_THROWS_AS(fbfft_backend().plan(p, Pass::accgrad, o), Unsupported);
    // Host pointers are rejected before any launch.
    const auto plan = fbfft_backend().plan(p, Pass::fprop, PlanOptions{});
    PassData d = make_pass_data(p, Pass::fprop, 1);
    CHECK_THROWS_AS(plan->execute(d.args()), InvalidArgument);
    const std::string text = plan->describe();
    CHECK(text.find("freq_major") != std::string::npos);
    CHECK(text.find("no padded copies") != std::string::npos);
  }
}
