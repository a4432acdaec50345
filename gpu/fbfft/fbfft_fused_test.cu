// GPU tests of the fused tiled fprop (Note [fused tiles], doctest suite "gpu"; each case skips
// without a CUDA device): against the double `direct` reference and the unfused tiled plan on the
// same operands, the items per block and the multi-group forward, prepared weights, and the reasons
// fused=on gives where the kernel cannot run.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "api/fftconv.hpp"
#include "common/errors.hpp"
#include "gpu/fbfft/fbfft_conv_plan.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/runtime/cuda_check.hpp"
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

PlanOptions tiled(const char* tile, const char* fused) {
  PlanOptions o;
  o.tile = TileSpec::parse(tile);
  o.extra["fused"] = fused;
  return o;
}

// One fprop of `plan` on the operands d, into a NaN-poisoned result.
std::vector<float> execute(const Plan& plan, const ConvProblem& p, const PassData& d, const void* x, const void* w) {
  DeviceBuffer dr = upload(d.result);
  Args a;
  a.input = x;
  a.weight = w;
  a.result = dr.get();
  plan.execute(a);
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  FFTCONV_CUDA_CHECK(cudaGetLastError());
  return download<float>(dr, std::size_t(p.output_elems()));
}

// The fused plan (fused=on) and the unfused one (fused=off) of the same tile on the same fresh
// operands: every element written, both within the tolerance model of the tile basis against the
// double reference, fused against unfused likewise, and the fused result bit-identical on a second
// run. Returns the fused plan's describe().
std::string check_fused(const ConvProblem& p, const char* tile) {
  const auto fused = fbfft_backend().plan(p, Pass::fprop, tiled(tile, "on"));
  const auto unfused = fbfft_backend().plan(p, Pass::fprop, tiled(tile, "off"));
  const std::string d = fused->describe();
  INFO(d);
  CHECK(d.find("fused (extra[\"fused\"]=on)") != std::string::npos);
  CHECK(unfused->describe().find("fused") == std::string::npos);
  const auto [fh, fw] = fused->fourier_basis();
  const PassData data = make_pass_data(p, Pass::fprop, fresh_seed());
  DeviceBuffer dx = upload(data.input), dw = upload(data.weight);
  const std::vector<float> yf = execute(*fused, p, data, dx.get(), dw.get());
  const std::vector<float> yf2 = execute(*fused, p, data, dx.get(), dw.get());
  const std::vector<float> yu = execute(*unfused, p, data, dx.get(), dw.get());
  const std::vector<double> ref = reference_result(p, Pass::fprop, data, RefKind::direct);
  const auto [rms_a, rms_b] = operand_rms(data, Pass::fprop);
  const int64_t n = p.output_elems();
  CHECK(count_nan(yf) == 0);
  for (const std::vector<float>* y : {&yf, &yu}) {
    const ErrorStats e = compare(y->data(), ref.data(), n);
    const Tolerance tol = judge_stats(p, Pass::fprop, e, rms_a, rms_b, fh * fw).tol;
    CHECK(e.nonfinite == 0);
    CHECK(e.rel_l2 <= tol.rel_l2);
    CHECK(e.max_abs_rel <= tol.max_abs_rel);
  }
  const std::vector<double> yu64(yu.begin(), yu.end());
  const ErrorStats agree = compare(yf.data(), yu64.data(), n);
  CHECK(agree.rel_l2 <= judge_stats(p, Pass::fprop, agree, rms_a, rms_b, fh * fw).tol.rel_l2);
  CHECK(std::equal(yf.begin(), yf.end(), yf2.begin()));
  return d;
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("fbfft fused tiles (Note [fused tiles]) match the double reference and the unfused plan") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft fused tiles");
    struct Case {
      const char* spec;
      const char* tile;
    };
    const Case cases[] = {
        {"S=2,f=3,fo=96,n=128,k=11", "32"},                    // L1-like: 2 items per block
        {"S=2,f=3,fo=96,n=128,k=11", "16"},                    // 4 items per block, step 6
        {"S=3,f=5,fo=7,h=37,w=45,kh=3,kw=5,ph=1,pw=2", "16"},  // odd sizes, fo not a group multiple
        {"S=3,f=5,fo=7,h=37,w=45,kh=3,kw=5,ph=1,pw=2", "32"},
        {"S=1,f=2,fo=3,h=70,w=23,kh=7,kw=3,ph=3,pw=0", "32"},  // h != w, one tile column
        {"S=2,f=1,fo=1,h=9,w=40,kh=1,kw=1", "16"},             // 1x1 kernel: step = n
        {"S=1,f=2,fo=2,n=20,k=16", "16"},                      // kernel = tile: step 1
        {"S=1,f=2,fo=5,h=31,w=33,kh=3,kw=3,ph=3,pw=3", "32"},  // padding wider than the halo
        {"S=1,f=36,fo=5,n=40,k=3,p=1", "32"},                  // the budget's largest f: 3 forward groups
        {"S=2,f=20,fo=17,n=30,k=5,p=2", "16"},                 // f*nt over one forward group
        {"S=1,f=137,fo=3,n=19,k=3", "16"},                     // the budget's largest f at 16x16
    };
    for (const Case& c : cases) {
      CAPTURE(c.spec);
      CAPTURE(c.tile);
      check_fused(ConvProblem::parse(c.spec), c.tile);
    }
  }

  TEST_CASE("fbfft fused tiles: every items-per-block count, and prepared weights give execute()'s bits") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft fused tiles");
    const ConvProblem p = ConvProblem::parse("S=3,f=4,fo=9,h=41,w=29,kh=5,kw=3,ph=2,pw=1");
    // The kernel directly, with 1, 2 and 4 items per block, against the plan's automatic count.
    const auto plan = fbfft_backend().plan(p, Pass::fprop, tiled("16", "on"));
    const PassData data = make_pass_data(p, Pass::fprop, fresh_seed());
    DeviceBuffer dx = upload(data.input), dw = upload(data.weight);
    const std::vector<float> want = execute(*plan, p, data, dx.get(), dw.get());
    const auto prepared = plan->prepare_weights(dw.get(), nullptr);
    CHECK(prepared->key().find("standard") != std::string::npos);
    // The kernel spectra as the plan makes them: the forward of the weights in the standard layout.
    DeviceBuffer spectra;
    spectra.allocate(std::size_t(p.fo * p.f * 16 * 9) * sizeof(float2));
    fbfft::ForwardArgs fw;
    fw.batch = p.fo * p.f;
    fw.n_h = fw.n_w = 16;
    fw.input = dw.as<float>();
    fw.in_h = p.kh, fw.in_w = p.kw, fw.in_ld = p.kw, fw.in_plane_stride = p.kh * p.kw;
    fw.output = spectra.as<float2>();
    fbfft::forward(fw);
    const TilePlan tp = plan_tiling(p, Pass::fprop, tiled("16", "on")).plan;
    for (int nt : {1, 2, 4}) {
      CAPTURE(nt);
      DeviceBuffer dr = upload(data.result);
      fbfft::FusedTilesArgs a;
      a.n = 16;
      a.input = dx.as<float>();
      a.S = p.S, a.f = p.f, a.h = p.h, a.w = p.w, a.ph = p.ph, a.pw = p.pw, a.kh = p.kh, a.kw = p.kw;
      a.kernel = spectra.as<float2>();
      a.fo = p.fo;
      a.output = dr.as<float>();
      a.out_h = p.out_h(), a.out_w = p.out_w();
      a.rows = {tp.rows.origin, tp.rows.extent, tp.rows.step, tp.rows.count};
      a.cols = {tp.cols.origin, tp.cols.extent, tp.cols.step, tp.cols.count};
      a.tiles_per_block = nt;
      fbfft::fused_tiles_fprop(a);
      FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> got = download<float>(dr, std::size_t(p.output_elems()));
      CHECK(std::equal(got.begin(), got.end(), want.begin()));  // the same sums in the same order
    }
    DeviceBuffer dr = upload(data.result);
    Args a;
    a.input = dx.get();
    a.result = dr.get();
    plan->execute_with(a, *prepared);
    FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> again = download<float>(dr, std::size_t(p.output_elems()));
    CHECK(std::equal(again.begin(), again.end(), want.begin()));
    // The unfused plan's spectra are in another layout: not accepted.
    const auto unfused = fbfft_backend().plan(p, Pass::fprop, tiled("16", "off"));
    CHECK_THROWS_AS(unfused->execute_with(a, *prepared), InvalidArgument);
  }

  TEST_CASE("fbfft fused tiles: fused=on refuses what the kernel cannot run, naming why; auto falls back and says so") {
    FFTCONV_SKIP_WITHOUT_DEVICE("fbfft fused tiles");
    const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=4,n=40,k=5,p=2");
    auto refuses = [&](const ConvProblem& q, Pass pass, PlanOptions o, const char* why) {
      CAPTURE(why);
      o.autotune = false;  // one plan, not a timed choice among bases
      CHECK_THROWS_WITH_AS(fbfft_backend().plan(q, pass, o), doctest::Contains(why), Unsupported);
    };
    refuses(p, Pass::bprop, tiled("32", "on"), "fprop only (pass=bprop)");
    refuses(p, Pass::fprop, tiled("none", "on"), "untiled");
    refuses(p, Pass::fprop, tiled("64", "on"), "64x64 has no fused kernel");
    refuses(p, Pass::fprop, tiled("16x32", "on"), "not square");
    refuses(ConvProblem::parse("S=2,f=3,fo=4,n=40,k=5,p=2,pad=mirror"), Pass::fprop, tiled("32", "on"), "pad=mirror");
    refuses(ConvProblem::parse("S=1,f=37,fo=4,n=40,k=5"), Pass::fprop, tiled("32", "on"), "f=37");
    CHECK_THROWS_WITH_AS(fbfft_backend().plan(p, Pass::fprop, tiled("32", "sometimes")),
                         doctest::Contains("extra[\"fused\"]"), InvalidArgument);
    const std::string fallback = fbfft_backend().plan(p, Pass::fprop, tiled("64", "auto"))->describe();
    CHECK(fallback.find("not fused (extra[\"fused\"]=auto)") != std::string::npos);
    CHECK(fbfft_backend().plan(p, Pass::fprop, tiled("32", "auto"))->describe().find("fused (extra[\"fused\"]=auto)") !=
          std::string::npos);
    CHECK(fbfft_backend().plan(p, Pass::fprop, tiled("32", "off"))->describe().find("fused") == std::string::npos);
  }
}
