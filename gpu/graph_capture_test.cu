// GPU tests (doctest suite "gpu"): a plan's execute() captured into a CUDA graph on a user stream
// replays to the same result as the plain call, for both GPU backends, every pass, both paddings,
// untiled and tiled, autotuned; plans that cannot be captured say so with Unsupported.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "api/fftconv.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_graph.hpp"
#include "gpu/runtime/test_device.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"

using namespace fftconv;

namespace {

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { FFTCONV_CUDA_CHECK(cudaStreamCreate(&s)); }
  ~Stream() { cudaStreamDestroy(s); }
};

// Captures plan.execute(a) on `stream`; rethrows what execute() threw (its type intact).
std::unique_ptr<CudaGraph> capture(const Plan& plan, const Args& a, cudaStream_t stream) {
  auto graph = std::make_unique<CudaGraph>([&] { plan.execute(a); }, stream);
  graph->rethrow_if_failed();
  return graph;
}

// Plain execute, then two graph replays into NaN-poisoned buffers: both equal the plain result
// bit for bit (same kernels, same order), which is within the tolerance of the double reference.
void check_capture(const char* backend, const ConvProblem& p, Pass pass, const PlanOptions& o) {
  const Backend& b = builtin_registry().get(backend);
  const auto plan = b.plan(p, pass, o);
  INFO(plan->describe());
  PassData d = make_pass_data(p, pass, 99);
  DeviceBuffer dx = upload(d.input), dw = upload(d.weight), dg = upload(d.grad_output), dr = upload(d.result);
  Stream stream;
  Args a;
  a.input = d.input.empty() ? nullptr : dx.get();
  a.weight = d.weight.empty() ? nullptr : dw.get();
  a.grad_output = d.grad_output.empty() ? nullptr : dg.get();
  a.result = dr.get();
  a.stream = stream.s;
  plan->execute(a);
  FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream.s));
  const std::size_t n = std::size_t(p.result_elems(pass));
  const std::vector<float> plain = download<float>(dr, n);

  const auto graph = capture(*plan, a, stream.s);
  for (int replay = 0; replay < 2; ++replay) {
    FFTCONV_CUDA_CHECK(cudaMemsetAsync(dr.get(), 0xff, n * sizeof(float), stream.s));  // NaN poison
    graph->launch(stream.s);
    FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream.s));
    const std::vector<float> r = download<float>(dr, n);
    CHECK(count_nan(r) == 0);
    CHECK(std::equal(r.begin(), r.end(), plain.begin()));
  }
  const auto ref = reference_result(p, pass, d, RefKind::direct);
  const ErrorStats e = compare(plain.data(), ref.data(), int64_t(n));
  const Tolerance tol = tolerance(p, pass, DType::f32, 64 * 64);
  CHECK(e.rel_l2 <= tol.rel_l2);
}

ConvProblem problem(int64_t n, int64_t k, int64_t pad, Padding padding) {
  ConvProblem p;
  p.S = 3;
  p.f = 4;
  p.fo = 5;
  p.h = p.w = n;
  p.kh = p.kw = k;
  p.ph = p.pw = pad;
  p.padding = padding;
  p.validate();
  return p;
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("CUDA graph capture of cufft and fbfft plans replays the plain result") {
    FFTCONV_SKIP_WITHOUT_DEVICE("graph capture");
    for (const char* backend : {"cufft", "fbfft"})
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
        for (Padding padding : {Padding::zero, Padding::mirror})
          for (const char* tile : {"none", "16"}) {
            const ConvProblem p = problem(27, 5, 2, padding);
            PlanOptions o;
            o.tile = TileSpec::parse(tile);
            CAPTURE(backend);
            CAPTURE(tile);
            CAPTURE(to_string(pass));
            CAPTURE(p.to_string());
            check_capture(backend, p, pass, o);
          }
    // cufft's pruned weight DFT on its second stream (Note [forked transforms]), both edge modes
    for (Pass pass : {Pass::fprop, Pass::bprop})
      for (const char* edges : {"copy", "callback"}) {
        const ConvProblem p = problem(27, 5, 2, Padding::zero);
        PlanOptions o;
        o.extra["weights"] = "dft";
        o.extra["edges"] = edges;
        CAPTURE(edges);
        CAPTURE(to_string(pass));
        check_capture("cufft", p, pass, o);
      }
  }

  TEST_CASE("CUDA graph capture: plans that cannot be captured throw Unsupported") {
    FFTCONV_SKIP_WITHOUT_DEVICE("graph capture");
    const ConvProblem p = problem(13, 3, 1, Padding::zero);
    // cufft: the naive pipeline; both backends: --breakdown (its step events are synchronized on)
    for (const char* why : {"cufft naive", "cufft breakdown", "fbfft breakdown"}) {
      CAPTURE(why);
      const std::string w = why;
      PlanOptions o;
      if (w == "cufft naive")
        o.extra.emplace("naive", std::string(1, '1'));
      else
        o.breakdown = true;
      const auto plan = builtin_registry().get(w.substr(0, 5)).plan(p, Pass::fprop, o);
      PassData d = make_pass_data(p, Pass::fprop, 5);
      DeviceBuffer dx = upload(d.input), dw = upload(d.weight), dr = upload(d.result);
      Stream stream;
      Args a;
      a.input = dx.get();
      a.weight = dw.get();
      a.result = dr.get();
      a.stream = stream.s;
      plan->execute(a);
      FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream.s));
      CHECK_THROWS_AS(capture(*plan, a, stream.s), Unsupported);
      // the stream is usable again afterwards
      plan->execute(a);
      CHECK(cudaStreamSynchronize(stream.s) == cudaSuccess);
    }
  }
}
