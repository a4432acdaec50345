// GPU tests of the lowering's device kernels (gpu/tiles/lowering_kernels.hpp): every map equals the
// host loops of common/lowering.hpp element for element, gradBias equals the sum in double, and the
// lowered CUDA backends match `direct` on the torch-parity set, every pass.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "api/fftconv.hpp"
#include "api/lowering.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/test_device.hpp"
#include "gpu/tiles/lowering_kernels.hpp"
#include "validation/data.hpp"
#include "validation/execute.hpp"
#include "validation/problem_sets.hpp"
#include "validation/reference.hpp"
#include "validation/runner.hpp"
#include "validation/verdict.hpp"

using namespace fftconv;

namespace {

// The elements a step reads.
int64_t source_elems(const LoweringMap& m, LoweringStep s) {
  switch (s) {
    case LoweringStep::input: return m.outer.input_elems();
    case LoweringStep::weight: return m.outer.weight_elems();
    case LoweringStep::output: return m.output_elems();
    case LoweringStep::grad_output: return m.outer.output_elems();
    case LoweringStep::input_grad: return m.input_elems();
    case LoweringStep::weight_grad: return m.weight_elems();
  }
  return 0;
}

std::vector<float> download_floats(const DeviceBuffer& b, int64_t n) {
  std::vector<float> h(static_cast<std::size_t>(n));
  FFTCONV_CUDA_CHECK(cudaMemcpy(h.data(), b.get(), h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("lowering kernels: every map on the device equals the host loops") {
    FFTCONV_SKIP_WITHOUT_DEVICE("lowering kernels");
    std::mt19937_64 rng(std::random_device{}());
    std::normal_distribution<float> nd;
    const auto host = make_host_lowering_mover();
    for (int trial = 0; trial < 60; ++trial) {
      const ConvProblem p = draw_conv2d_problem(rng, 20);
      for (StrideLowering st : {StrideLowering::polyphase, StrideLowering::subsample})
        for (bool native : {false, true}) {
          const LoweringMap m = make_lowering(p, st, native);
          CAPTURE(p.to_string());
          for (LoweringStep s : {LoweringStep::input, LoweringStep::weight, LoweringStep::output,
                                 LoweringStep::grad_output, LoweringStep::input_grad, LoweringStep::weight_grad}) {
            std::vector<float> src(std::size_t(source_elems(m, s))), bias(std::size_t(p.fo));
            for (float& v : src) v = nd(rng);
            for (float& v : bias) v = nd(rng);
            const bool with_bias = s == LoweringStep::output && p.bias;
            const int64_t n = step_elems(m, s);
            std::vector<float> want(std::size_t(n), std::nanf(""));
            host->step(s, m, src.data(), with_bias ? bias.data() : nullptr, want.data(), DType::f32, nullptr);
            const DeviceBuffer d_src = upload(src), d_bias = upload(bias);
            DeviceBuffer d_dst(std::size_t(n) * sizeof(float));
            FFTCONV_CUDA_CHECK(cudaMemset(d_dst.get(), 0xff, std::size_t(n) * sizeof(float)));  // NaN poison
            lowering_step_device(s, m, d_src.as<const float>(), with_bias ? d_bias.as<const float>() : nullptr,
                                 d_dst.as<float>(), nullptr);
            FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
            const std::vector<float> got = download_floats(d_dst, n);
            CAPTURE(int(s));
            CHECK(got == want);  // the same sums in the same order
          }
        }
    }
  }

  TEST_CASE("lowering kernels: gradBias is gradOutput summed per channel") {
    FFTCONV_SKIP_WITHOUT_DEVICE("gradBias");
    const ConvProblem p = ConvProblem::parse("S=5,f=3,fo=7,n=40,k=3,bias=1");
    const LoweringMap m = make_lowering(p, StrideLowering::none, false);
    std::mt19937_64 rng(std::random_device{}());
    std::normal_distribution<float> nd;
    std::vector<float> g(std::size_t(p.output_elems()));
    for (float& v : g) v = nd(rng);
    const DeviceBuffer d_g = upload(g);
    DeviceBuffer d_gb(std::size_t(p.fo) * sizeof(float));
    lowering_grad_bias_device(m, d_g.as<const float>(), d_gb.as<float>(), nullptr);
    FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> gb = download_floats(d_gb, p.fo);
    const int64_t plane = p.out_h() * p.out_w();
    for (int64_t o = 0; o < p.fo; ++o) {
      double want = 0;
      for (int64_t s = 0; s < p.S; ++s)
        for (int64_t e = 0; e < plane; ++e) want += g[std::size_t((s * p.fo + o) * plane + e)];
      CHECK(double(gb[std::size_t(o)]) == doctest::Approx(want).epsilon(1e-6));
    }
  }

  TEST_CASE("lowered cufft and fbfft match direct on torch-parity, every pass, untiled and tiled") {
    FFTCONV_SKIP_WITHOUT_DEVICE("lowered CUDA backends");
    uint64_t seed = std::random_device{}();
    for (const auto& b : builtin_registry().all()) {
      if (b->location() != Location::cuda || !b->available().ok) continue;
      for (const char* tile : {"none", "auto"})
        for (const LabeledProblem& lp : problem_set("torch-parity"))
          for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
            const ConvProblem& p = lp.problem;
            CAPTURE(b->name());
            CAPTURE(tile);
            CAPTURE(p.to_string());
            CAPTURE(to_string(pass));
            if (!b->supports(p, pass, DType::f32).ok) continue;
            PlanOptions o;
            o.tile = TileSpec::parse(tile);
            std::unique_ptr<Plan> plan;
            try {
              plan = b->plan(p, pass, o);
            } catch (const Unsupported&) {
              continue;  // e.g. a tile this backend cannot use for the lowered problem
            }
            PassData d = make_pass_data(p, pass, ++seed);
            const std::vector<double> ref = reference_result(p, pass, d, RefKind::direct);
            execute_pass(*b, *plan, d);
            const int64_t basis = plan_basis_elems(std::string(b->name()), plan->describe(), plan->tile_json(), p);
            const Verdict v = judge_result(p, pass, d, ref, basis);
            CHECK(v.ok);
          }
    }
  }
}
