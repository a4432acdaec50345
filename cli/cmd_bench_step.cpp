// `fftconv bench step`: fprop + bprop of one training step, with the weight spectra computed by each
// pass (two independent calls) against computed once and shared (Plan::prepare_weights), timed
// alternately in the same run; both results checked against each other and against the float64
// reference.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "api/fftconv.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/errors.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/reference.hpp"
#include "validation/run_plan.hpp"
#include "validation/verdict.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include <cuda_runtime.h>

#include "gpu/runtime/cuda_check.hpp"
#endif

namespace fftconv::cli {
namespace {

struct StepFlags {
  std::string problem, backend = "auto", json;
  int repeat = 20;
  PlanFlags plan;
};

// The operands of both passes where the backend runs: host vectors, or device copies of them.
struct StepData {
  PassData f, b;  // fprop (input, weight) and bprop (grad_output, the same weight)
#ifdef FFTCONV_HAVE_CUDA
  DeviceBuffer x, w, g, y, gx;
#endif
  Args fa, ba;

  StepData(const ConvProblem& p, Location where) : f(make_pass_data(p, Pass::fprop, 11)), b(make_pass_data(p, Pass::bprop, 12)) {
    b.weight = f.weight;
    fa = f.args(), ba = b.args();
    if (where == Location::host) return;
#ifdef FFTCONV_HAVE_CUDA
    x = upload(f.input), w = upload(f.weight), g = upload(b.grad_output), y = upload(f.result), gx = upload(b.result);
    fa.input = x.get(), fa.weight = w.get(), fa.result = y.get();
    ba.grad_output = g.get(), ba.weight = w.get(), ba.result = gx.get();
#else
    throw Unsupported("bench step: this build has no CUDA");
#endif
  }
  void sync(Location where) const {
#ifdef FFTCONV_HAVE_CUDA
    if (where == Location::cuda) FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
#endif
    (void)where;
  }
  // The device results back into f.result and b.result.
  void download(Location where) {
#ifdef FFTCONV_HAVE_CUDA
    if (where == Location::cuda) {
      FFTCONV_CUDA_CHECK(cudaMemcpy(f.result.data(), y.get(), y.bytes(), cudaMemcpyDeviceToHost));
      FFTCONV_CUDA_CHECK(cudaMemcpy(b.result.data(), gx.get(), gx.bytes(), cudaMemcpyDeviceToHost));
    }
#endif
    (void)where;
  }
};

// Medians (ms) of the steps a and b, timed alternately after a warm-up of each, so that a host whose
// speed drifts (other work on a shared CPU) slows both alike.
std::pair<double, double> alternating_medians_ms(const std::function<void()>& a, const std::function<void()>& b,
                                                 const StepData& d, Location where, int repeat) {
  std::vector<double> ms[2];
  const std::function<void()>* steps[2] = {&a, &b};
  for (int r = -1; r < repeat; ++r)
    for (int k = 0; k < 2; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      (*steps[k])();
      d.sync(where);
      if (r >= 0) ms[k].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  for (auto& v : ms) std::sort(v.begin(), v.end());
  return {ms[0][ms[0].size() / 2], ms[1][ms[1].size() / 2]};
}

int run(const StepFlags& f) {
  const ConvProblem p = ConvProblem::parse(f.problem);
  if (f.repeat < 1) throw InvalidArgument("repeat: must be >= 1, got " + std::to_string(f.repeat));
  PlanOptions opts = f.plan.to_options();
  const Backend& be = find_backend(f.backend);
  if (Support s = be.available(); !s.ok) throw Unsupported(std::string(be.name()) + ": not usable here: " + s.reason);
  for (Pass pass : {Pass::fprop, Pass::bprop})
    if (Support s = be.supports(p, pass); !s.ok) throw Unsupported(std::string(be.name()) + ": " + s.reason);
  if (arguments_only()) return kExitOk;
  const Location where = be.location();
  auto fprop = be.plan(p, Pass::fprop, opts);
  // bprop in fprop's basis (or tiles of fprop's size), so that it reads the spectra fprop prepares.
  PlanOptions bopts = opts;
  std::tie(bopts.basis_h, bopts.basis_w) = fprop->fourier_basis();
  if (bopts.basis_h > 0) bopts.tile = TileSpec{};
  if (const auto [th, tw] = fprop->tile_basis(); th > 0) bopts.tile = TileSpec{TileSpec::Kind::fixed, th, tw};
  auto bprop = be.plan(p, Pass::bprop, bopts);
  StepData d(p, where);
  void* stream = nullptr;

  fprop->execute(d.fa), bprop->execute(d.ba);
  d.sync(where);
  d.download(where);
  const std::vector<double> y0(d.f.result.begin(), d.f.result.end()), gx0(d.b.result.begin(), d.b.result.end());
  const auto [independent, shared] = alternating_medians_ms(
      [&] { fprop->execute(d.fa), bprop->execute(d.ba); },
      [&] {
        const auto prepared = fprop->prepare_weights(d.fa.weight, stream);
        fprop->execute_with(d.fa, *prepared);
        bprop->execute_with(d.ba, *prepared);
      },
      d, where, f.repeat);
  d.download(where);
  // Repeated inference: fprop on weights prepared once, against fprop computing them every call.
  const auto once = fprop->prepare_weights(d.fa.weight, stream);
  const auto [fprop_ms, fprop_prepared_ms] = alternating_medians_ms(
      [&] { fprop->execute(d.fa); }, [&] { fprop->execute_with(d.fa, *once); }, d, where, f.repeat);
  const double same_y = compare(d.f.result.data(), y0.data(), int64_t(y0.size())).rel_l2;
  const double same_gx = compare(d.b.result.data(), gx0.data(), int64_t(gx0.size())).rel_l2;
  const auto ref_kind = resolve_ref(RefKind::automatic, p);
  const Verdict vf = judge_result(p, Pass::fprop, d.f, reference_result(p, Pass::fprop, d.f, ref_kind),
                                  pow2_basis_elems(p), plan_product_math(*fprop));
  const Verdict vb = judge_result(p, Pass::bprop, d.b, reference_result(p, Pass::bprop, d.b, ref_kind),
                                  pow2_basis_elems(p), plan_product_math(*bprop));
  const bool ok = vf.ok && vb.ok && same_y <= 1e-6 && same_gx <= 1e-6;
  std::printf("problem   %s on %s\nfprop     %s\nbprop     %s\n", p.to_string().c_str(), std::string(be.name()).c_str(),
              fprop->describe().c_str(), bprop->describe().c_str());
  std::printf("step      independent %.3f ms, shared weight spectra %.3f ms: %.2fx\n", independent, shared,
              independent / shared);
  std::printf("inference fprop %.3f ms, on weights prepared once %.3f ms: %.2fx\n", fprop_ms, fprop_prepared_ms,
              fprop_ms / fprop_prepared_ms);
  std::printf("check     fprop rel_l2 %.2e, bprop %.2e (vs %s); shared vs independent %.1e / %.1e -> %s\n",
              vf.error.rel_l2, vb.error.rel_l2, std::string(to_string(ref_kind)).c_str(), same_y, same_gx,
              ok ? "ok" : "FAILED");
  if (!f.json.empty()) {
    nlohmann::json j = {{"benchmark", "step"}, {"problem", p.to_string()}, {"backend", be.name()},
                        {"device", device_description(where, opts.threads)},
                        {"independent_ms", independent}, {"shared_ms", shared}, {"speedup", independent / shared},
                        {"fprop_ms", fprop_ms}, {"fprop_prepared_ms", fprop_prepared_ms},
                        {"fprop_rel_l2", vf.error.rel_l2}, {"bprop_rel_l2", vb.error.rel_l2}, {"ok", ok},
                        {"fprop_plan", fprop->describe()}, {"bprop_plan", bprop->describe()}, {"repeat", f.repeat}};
    std::ofstream out(f.json);
    if (!(out << j.dump(2) << "\n")) throw InvalidArgument("--json: cannot write '" + f.json + "'");
  }
  return ok ? kExitOk : kExitCheckFailed;
}

}  // namespace

void add_bench_step_command(CLI::App& bench, int* exit_code) {
  auto f = std::make_shared<StepFlags>();
  auto* cmd = bench.add_subcommand(
      "step", "fprop + bprop of one training step: weight spectra per pass against computed once and shared");
  cmd->add_option("--problem", f->problem, "Problem spec, e.g. L5,S=2")->required();
  cmd->add_option("--backend", f->backend, "Backend (auto, or one that prepares weights: fbfft, fftw)")
      ->capture_default_str();
  cmd->add_option("--repeat", f->repeat, "Timed steps (median reported)")->capture_default_str();
  cmd->add_option("--json", f->json, "Write the result as JSON here");
  f->plan.add_to(cmd);
  cmd->callback([f, exit_code] { *exit_code = run(*f); });
}

}  // namespace fftconv::cli
