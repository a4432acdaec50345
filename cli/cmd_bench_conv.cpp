// `fftconv bench conv`: one backend against a baseline backend over a grid of square problems —
// by default the paper's fbfft experiment (3x3 kernels, x in {13,16,27,32,57,64},
// S = f = fo = p in {16,32,64,128}, all three passes): every row and the geometric-mean speedup.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <vector>
#include <nlohmann/json.hpp>

#include "api/fftconv.hpp"
#include "validation/run_plan.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "validation/reference.hpp"
#include "validation/verdict.hpp"

namespace fftconv::cli {

namespace {
struct Flags {
  std::string backend = "fbfft", baseline = "cufft", json_path;
  std::vector<int64_t> inputs{13, 16, 27, 32, 57, 64}, sizes{16, 32, 64, 128};
  std::vector<std::string> passes{"fprop", "bprop", "accgrad"};
  int64_t kernel = 3;
  int repeat = 20;
  double min_ms = 20;
  std::string timer = "graph";
  int64_t verify_batch = 2;
  std::vector<std::string> baseline_opts;
  PlanFlags plan;
};

// Checks a backend on the problem at a reduced batch against the float64 reference.
bool verify(const Backend& b, ConvProblem p, Pass pass, const PlanOptions& o, int64_t batch, double* rel) {
  p.S = std::min(p.S, batch);
  PassData d = make_pass_data(p, pass, 11);
  auto plan = b.plan(p, pass, o);
  run_plan(b, *plan, d, 1);
  const auto ref = reference_result(p, pass, d, RefKind::automatic);
  const Verdict v = judge_result(p, pass, d, ref, pow2_basis_elems(p));
  *rel = v.error.rel_l2;
  return v.ok;
}

int run(const Flags& f) {
  if (f.min_ms < 0) throw InvalidArgument("min-time-ms: must be >= 0, got " + std::to_string(f.min_ms));
  if (f.repeat < 1) throw InvalidArgument("repeat: must be >= 1, got " + std::to_string(f.repeat));
  const GpuTimer timer = parse_gpu_timer(f.timer);
  const Backend& b = builtin_registry().get(f.backend);
  const Backend& base = builtin_registry().get(f.baseline);
  for (const Backend* x : {&b, &base})
    if (Support a = x->available(); !a.ok) throw Unsupported(std::string(x->name()) + ": not usable here: " + a.reason);
  // --opt's pins go to both backends (Note [options of several backends]) unless --baseline-opt
  // gives the baseline its own.
  PlanOptions o = f.plan.to_options(), ob = o;
  if (f.baseline_opts.empty()) {
    check_option_keys(std::vector<const Backend*>{&b, &base}, o.extra);
  } else {
    ob.extra = parse_extra(f.baseline_opts, "baseline-opt");
    check_option_keys(b, o);
    check_option_keys(base, ob);
  }
  o = options_for(b, o);
  ob = options_for(base, ob);
  if (arguments_only()) return kExitOk;
  nlohmann::json rows = nlohmann::json::array();
  double log_sum = 0, worst = std::numeric_limits<double>::infinity();
  int n = 0;
  bool all_ok = true;
  std::printf("%-34s %-8s %12s %12s %8s %10s %10s\n", "problem", "pass", (f.backend + " ms").c_str(),
              (f.baseline + " ms").c_str(), "speedup", "rel_l2", "base rel");
  for (int64_t x : f.inputs)
    for (int64_t s : f.sizes)
      for (const auto& ps : f.passes) {
        ConvProblem p;
        p.S = p.f = p.fo = s;
        p.h = p.w = x;
        p.kh = p.kw = f.kernel;
        p.validate();
        const Pass pass = parse_pass(ps);
        nlohmann::json row = {{"problem", p.to_string()}, {"pass", ps}};
        const Support sb = b.supports(p, pass, DType::f32), sa = base.supports(p, pass, DType::f32);
        if (!sb.ok || !sa.ok) {
          std::printf("%-34s %-8s skipped: %s\n", p.to_string().substr(0, 34).c_str(), ps.c_str(),
                      (!sb.ok ? sb.reason : sa.reason).c_str());
          row["skipped"] = !sb.ok ? sb.reason : sa.reason;
          rows.push_back(row);
          continue;
        }
        double rel_b = 0, rel_a = 0;
        const bool ok = verify(b, p, pass, o, f.verify_batch, &rel_b) && verify(base, p, pass, ob, f.verify_batch, &rel_a);
        all_ok = all_ok && ok;
        PassData d = make_pass_data(p, pass, 5);
        auto pb = b.plan(p, pass, o);
        auto pa = base.plan(p, pass, ob);
        const RunResult rb = run_plan(b, *pb, d, f.repeat, f.min_ms, timer);
        const RunResult ra = run_plan(base, *pa, d, f.repeat, f.min_ms, timer);
        const Timing &tb = rb.time, &ta = ra.time;
        const double speedup = ta.median_ms / tb.median_ms;
        log_sum += std::log(speedup);
        worst = std::min(worst, speedup);
        ++n;
        std::printf("%-34s %-8s %12.4f %12.4f %7.2fx %10.2e %10.2e%s\n", p.to_string().substr(0, 34).c_str(), ps.c_str(),
                    tb.median_ms, ta.median_ms, speedup, rel_b, rel_a, ok ? "" : "  CHECK FAILED");
        for (const RunResult* rr : {&rb, &ra})
          if (rr->timer != f.timer) std::printf("    timed as %s\n", rr->timer.c_str());
        std::fflush(stdout);
        row.update({{"time_ms", tb.median_ms}, {"baseline_time_ms", ta.median_ms}, {"speedup", speedup},
                    {"rel_l2", rel_b}, {"baseline_rel_l2", rel_a}, {"ok", ok}, {"plan", pb->describe()},
                    {"baseline_plan", pa->describe()}, {"workspace_bytes", pb->workspace_bytes()},
                    {"baseline_workspace_bytes", pa->workspace_bytes()}, {"timer", rb.timer},
                    {"baseline_timer", ra.timer}, {"runs", tb.repeats}, {"baseline_runs", ta.repeats}});
        rows.push_back(row);
      }
  const double geo = n ? std::exp(log_sum / n) : 0.0;
  std::printf("%d rows: geometric-mean speedup of %s over %s %.3fx, minimum %.3fx\n", n, f.backend.c_str(),
              f.baseline.c_str(), geo, n ? worst : 0.0);
  if (!f.json_path.empty()) {
    std::ofstream out(f.json_path);
    if (!out) throw InvalidArgument("json: cannot write '" + f.json_path + "'");
    out << nlohmann::json{{"device", device_description(b.location())}, {"backend", f.backend},
                          {"baseline", f.baseline}, {"options", o.extra}, {"baseline_options", ob.extra}, {"repeat", f.repeat}, {"min_time_ms", f.min_ms}, {"timer", f.timer},
                          {"geomean_speedup", geo}, {"min_speedup", n ? worst : 0.0},
                          {"rows", rows}}
               .dump(2)
        << "\n";
  }
  return all_ok ? kExitOk : kExitCheckFailed;
}
}  // namespace

void add_bench_conv_command(CLI::App& bench, int* exit_code) {
  auto f = std::make_shared<Flags>();
  auto* cmd = bench.add_subcommand("conv", "Backend against a baseline backend on a grid of square problems "
                                           "(default: the paper's fbfft vs cuFFT experiment)");
  cmd->add_option("--backend", f->backend, "Backend under test")->capture_default_str();
  cmd->add_option("--baseline", f->baseline, "Baseline backend")->capture_default_str();
  cmd->add_option("--inputs", f->inputs, "Input sizes x = h = w")->delimiter(',')->capture_default_str();
  cmd->add_option("--sizes", f->sizes, "Problem sizes p = S = f = fo")->delimiter(',')->capture_default_str();
  cmd->add_option("--kernel", f->kernel, "Kernel size k")->capture_default_str();
  cmd->add_option("--passes", f->passes, "Passes")->delimiter(',')->capture_default_str();
  cmd->add_option("--repeat", f->repeat, "Timed repetitions (at least)")->capture_default_str();
  cmd->add_option("--min-time-ms", f->min_ms,
                  "GPU: run each plan untimed for a quarter of this, then repeat until this much time is measured "
                  "(steadies clocks on sub-millisecond rows)")
      ->capture_default_str();
  add_timer_option(cmd, f->timer);
  cmd->add_option("--verify-batch", f->verify_batch, "Batch of the correctness check")->capture_default_str();
  cmd->add_option("--json", f->json_path, "Write every row as JSON to this path");
  cmd->add_option("--baseline-opt", f->baseline_opts,
                  "Pins KEY=VALUE for the baseline only (instead of --opt's, which then go to the backend "
                  "under test only), repeatable: e.g. --backend fbfft --baseline fbfft --opt kernel=fourstep "
                  "--baseline-opt kernel=registers. Without it, --opt's pins go to both, each backend taking "
                  "the keys it accepts");
  f->plan.add_to(cmd);
  cmd->callback([f, exit_code] { *exit_code = run(*f); });
}

}  // namespace fftconv::cli
