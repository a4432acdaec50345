// `fftconv run`: one pass of one backend on fresh random inputs, timed (min/median over --repeat)
// and compared with a float64 reference; a table or one JSON object.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "api/fftconv.hpp"
#include "validation/run_plan.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "validation/compare.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"
#include "validation/verdict.hpp"

namespace fftconv::cli {

namespace {
struct RunFlags {
  std::string problem, pass = "fprop", backend = "auto", check = "auto";
  int repeat = 5;
  std::string timer = "calls";
  uint64_t seed = 1;
  bool json = false, progress = true, prepared = true;
  PlanFlags plan;
};

int run(const RunFlags& f) {
  PhaseProgress progress("fftconv run", f.progress);
  const ConvProblem p = ConvProblem::parse(f.problem);
  const Pass pass = parse_pass(f.pass);
  const RefKind ref_kind = resolve_ref(parse_ref_kind(f.check), p);
  if (f.repeat < 1) throw InvalidArgument("repeat: must be >= 1, got " + std::to_string(f.repeat));
  PlanOptions opts = f.plan.to_options();
  const bool prepared = f.prepared && pass != Pass::accgrad;  // accGrad reads no weights
  opts.prepared_weights = prepared;                            // auto plans the run as run_plan() makes it
  const Backend& b = find_backend(f.backend);
  if (Support a = b.available(); !a.ok) throw Unsupported(std::string(b.name()) + ": not usable here: " + a.reason);
  if (Support s = b.supports(p, pass, DType::f32); !s.ok) throw Unsupported(std::string(b.name()) + ": " + s.reason);
  const GpuTimer timer = parse_gpu_timer(f.timer);
  if (arguments_only()) return kExitOk;
  progress.phase("planning " + std::string(b.name()));
  auto plan = b.plan(p, pass, opts);
  progress.phase("drawing the inputs");
  PassData d = make_pass_data(p, pass, f.seed);
  progress.phase("timing " + std::to_string(f.repeat) + " runs after a warm-up");
  const RunResult rr = run_plan(b, *plan, d, f.repeat, 0, timer, prepared);
  if (ref_kind != RefKind::none) progress.phase("computing the " + std::string(to_string(ref_kind)) + " reference");
  const std::vector<double> ref = reference_result(p, pass, d, ref_kind);
  progress.stop();
  const bool fft_like = b.name() != "direct" && b.name() != "im2col";
  const int64_t basis = fft_like ? pow2_basis_elems(p) : 1;
  Tolerance tol = tolerance(p, pass, DType::f32, basis, plan_product_math(*plan));
  ErrorStats e;
  bool ok = true;
  const int64_t unwritten = count_nan(d.result);  // checked even with --check none
  if (!ref.empty()) {
    const Verdict v = judge_result(p, pass, d, ref, basis, plan_product_math(*plan));
    e = v.error;
    tol = v.tol;
    ok = v.ok;
  }
  ok = ok && unwritten == 0;
  const double tred = p.madds() / (rr.time.median_ms * 1e-3) / 1e12;
  // The products' achieved rate: their flops over the CGEMM step of the breakdown.
  const ProductInfo products = plan->last_products();
  double gemm_ms = 0;
  for (const auto& [name, ms] : rr.breakdown)
    if (name == "CGEMM") gemm_ms += ms;
  if (f.json) {
    nlohmann::json j = {{"backend", b.name()}, {"pass", to_string(pass)}, {"problem", p.to_string()},
                        {"device", device_description(b.location(), opts.threads)},
                        {"time_ms", {{"min", rr.time.min_ms}, {"median", rr.time.median_ms}, {"repeat", f.repeat}, {"runs", rr.time.repeats}, {"timer", rr.timer}}},
                        {"tred_per_s", tred}, {"workspace_bytes", plan->workspace_bytes()}, {"plan", plan->describe()},
                        {"plan_candidates", plan->candidates()},
                        {"tile", nlohmann::json::parse(plan->tile_json())}, {"reference", to_string(ref_kind)},
                        {"ok", ok}, {"unwritten", unwritten}};
    if (!ref.empty())
      j["error"] = {{"rel_l2", e.rel_l2}, {"max_abs_rel", e.max_abs_rel}, {"nonfinite", e.nonfinite}};
    else
      j["error"] = nullptr;
    j["tolerance"] = {{"rel_l2", tol.rel_l2}, {"max_abs_rel", tol.max_abs_rel}};
    if (!rr.weights.empty())
      j["weights"] = {{"how", rr.weights}, {"prepare_ms", rr.prepare_ms >= 0 ? nlohmann::json(rr.prepare_ms) : nlohmann::json()}};
    if (!rr.breakdown.empty()) {
      nlohmann::json steps = nlohmann::json::object();
      for (const auto& [name, ms] : rr.breakdown) steps[name] = ms;
      j["breakdown_ms"] = steps;
    }
    if (!products.math.empty()) {
      j["math"] = products.math;
      j["products"] = {{"flops", products.flops}, {"peak_tflops", products.peak_tflops}};
      if (gemm_ms > 0) j["products"]["tflops"] = products.flops / (gemm_ms * 1e-3) / 1e12;
    }
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("problem   %s\npass      %s\nbackend   %s on %s\n", p.to_string().c_str(),
                std::string(to_string(pass)).c_str(), std::string(b.name()).c_str(),
                device_description(b.location(), opts.threads).c_str());
    std::printf("plan      %s\n", plan->describe().c_str());
    std::printf("time      min %.3f ms, median %.3f ms over %d runs (%.3g TRED/s; timer %s)\n", rr.time.min_ms,
                rr.time.median_ms, rr.time.repeats, tred, rr.timer.c_str());
    std::printf("workspace %zu bytes\n", plan->workspace_bytes());
    if (!rr.weights.empty()) {
      std::printf("weights   %s", rr.weights.c_str());
      if (rr.prepare_ms >= 0) std::printf(" (prepared in %.3f ms, not in the times above)", rr.prepare_ms);
      std::printf("\n");
    }
    for (const auto& [name, ms] : rr.breakdown) {
      std::printf("  step %-10s %.3f ms", name.c_str(), ms);
      if (name == "CGEMM" && gemm_ms > 0 && !products.math.empty())
        std::printf("  (%.1f TFLOP/s in %s; nominal peak of the mode %.0f TFLOP/s)",
                    products.flops / (gemm_ms * 1e-3) / 1e12, products.math.c_str(), products.peak_tflops);
      std::printf("\n");
    }
    if (ref.empty())
      std::printf("check     none\n");
    else
      std::printf("check     vs %s (float64): rel_l2 %.3e (tol %.1e), max_abs_rel %.3e (tol %.1e)%s -> %s\n",
                  std::string(to_string(ref_kind)).c_str(), e.rel_l2, tol.rel_l2, e.max_abs_rel, tol.max_abs_rel,
                  e.nonfinite ? " NON-FINITE" : "", ok ? "ok" : "FAILED");
    if (unwritten) std::printf("unwritten %lld result elements still NaN\n", (long long)unwritten);
  }
  return ok ? kExitOk : kExitCheckFailed;
}
}  // namespace

void add_run_command(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<RunFlags>();
  auto* cmd = app.add_subcommand("run", "Run one pass of one backend on random inputs, time it and check it against a "
                                        "float64 reference");
  cmd->add_option("--problem", f->problem, "Problem spec, e.g. L2,S=8 or S=8,f=16,fo=16,n=64,k=5,p=2,pad=mirror")
      ->required();
  cmd->add_option("--pass", f->pass, "fprop | bprop | accgrad")->capture_default_str();
  cmd->add_option("--backend", f->backend,
                  "Backend name (see `fftconv backends`), or auto: the fastest backend here (the GPU when one is "
                  "usable), modelled then timed, remembered in the plan cache")
      ->capture_default_str();
  cmd->add_option("--repeat", f->repeat, "Timed repetitions after one warm-up")->capture_default_str();
  add_timer_option(cmd, f->timer);
  cmd->add_option("--check", f->check,
                  "Reference: auto (direct when affordable, else fftw64), direct, fftw64 or none")
      ->capture_default_str();
  cmd->add_option("--seed", f->seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_flag("--json", f->json, "Print one JSON object");
  cmd->add_flag("!--no-prepared-weights", f->prepared,
                "fprop/bprop: transform the weights in every run; by default a backend that prepares weight "
                "spectra (Plan::prepare_weights: fbfft, fftw) prepares them once, untimed, every run reuses them, "
                "and auto chooses the plan fastest that way");
  cmd->add_flag("!--no-progress", f->progress, "No progress line on stderr (printed when a run takes over a second)");
  f->plan.add_to(cmd);
  cmd->callback([f, exit_code] { *exit_code = run(*f); });
}

}  // namespace fftconv::cli
