// `fftconv plan`: runs the tiling planner for one problem and pass and prints the chosen plan
// with the candidate table (text) or one JSON object (--json).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/tile_json.hpp"
#include "common/errors.hpp"
#include "api/auto_plan.hpp"
#include "api/fftconv.hpp"
#include "common/lowering.hpp"
#include "tiling/planner.hpp"

namespace fftconv::cli {

namespace {

struct PlanArgs {
  std::string problem, pass, tile_sizes = "pow2", workspace_limit = "0", tile = "auto";
  std::size_t max_rows = 24;
  bool json = false;
  std::string backend;  // "" = the tiling planner alone
  std::string math = "auto", tune_cache;
  bool no_autotune = false, prepared_weights = false;
};

void run_plan(const PlanArgs& a, int* exit_code) {
  ConvProblem p = ConvProblem::parse(a.problem);
  if (!p.is_dense()) {  // the backends tile the dense problem the lowering runs (Note [lowering])
    const LoweringMap m = make_lowering(p, p.sh == 1 && p.sw == 1 ? StrideLowering::none : StrideLowering::polyphase,
                                        false);
    if (!a.json) std::printf("%s\n", m.summary().c_str());
    p = m.inner;
  }
  const Pass pass = parse_pass(a.pass);
  PlanOptions o;
  o.tile = TileSpec::parse(a.tile);
  parse_tile_sizes(a.tile_sizes, o);
  o.workspace_limit = parse_bytes(a.workspace_limit, "workspace-limit");
  if (!a.backend.empty()) {  // the backend's plan (auto: what was modelled and timed, and why)
    o.math = parse_product_math(a.math);
    o.autotune = !a.no_autotune;
    o.tune_cache = a.tune_cache;
    o.prepared_weights = a.prepared_weights;
    const Backend& b = find_backend(a.backend);
    if (Support s = b.available(); !s.ok) throw Unsupported(std::string(b.name()) + ": not usable here: " + s.reason);
    if (Support s = b.supports(p, pass); !s.ok) throw Unsupported(std::string(b.name()) + ": " + s.reason);
    if (arguments_only()) return;
    AutoReport report;
    const auto* automatic = dynamic_cast<const AutoBackend*>(&b);
    auto plan = automatic ? automatic->plan(p, pass, o, &report) : b.plan(p, pass, o);
    if (a.json) {
      nlohmann::json j = {{"backend", b.name()}, {"plan", plan->describe()},
                          {"workspace_bytes", plan->workspace_bytes()}};
      if (automatic) {
        j["chosen"] = report.chosen, j["reason"] = report.reason, j["from_cache"] = report.from_cache;
        j["tune_ms"] = report.tune_ms, j["device_init_ms"] = report.device_init_ms;
        j["candidates"] = nlohmann::json::array();
        for (const AutoCandidate& c : report.candidates)
          j["candidates"].push_back({{"backend", c.backend}, {"model_ms", c.model_ms}, {"plan_ms", c.plan_ms},
                                     {"measured_ms", c.measured_ms}, {"note", c.note}});
      }
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      if (automatic) std::printf("%s", report.explain().c_str());
      std::printf("plan: %s\nworkspace: %zu bytes\n", plan->describe().c_str(), plan->workspace_bytes());
    }
    *exit_code = kExitOk;
    return;
  }
  const TilingChoice c = plan_tiling(p, pass, o);
  if (a.json) std::printf("%s\n", tiling_choice_to_json(c).dump(2).c_str());
  else std::printf("%s", explain(c, a.max_rows).c_str());
  *exit_code = kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Tiling planner: the chosen tile basis for a problem and pass, with the candidate table");
  cmd->add_option("--problem", args->problem, "Problem spec, e.g. 'S=8,f=16,fo=16,n=128,k=5' or 'L1,S=4'")
      ->required();
  cmd->add_option("--pass", args->pass, "fprop | bprop | accgrad")->required();
  cmd->add_option("--tile-sizes", args->tile_sizes,
                  "Candidate tile bases: pow2 (8..64), smooth (2,3,5,7-smooth 8..64) or a list '8,12,16'")
      ->capture_default_str();
  cmd->add_option("--workspace-limit", args->workspace_limit, "Workspace limit in bytes (K/M/G suffix; 0 = none)")
      ->capture_default_str();
  cmd->add_option("--tile", args->tile, "none | auto | N | HxW")->capture_default_str();
  cmd->add_option("--max-rows", args->max_rows, "Candidate rows shown in the text table (0 = all)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object (tile, candidates, reason)");
  cmd->add_option("--backend", args->backend,
                  "Plan with this backend instead of showing the tiling planner alone; 'auto' prints the candidates "
                  "it modelled and timed and why the winner won");
  cmd->add_option("--math", args->math, "With --backend: GPU products auto | fp32 | 3xtf32 | tf32")
      ->capture_default_str();
  cmd->add_flag("--no-autotune", args->no_autotune,
                "With --backend: the cost model alone, nothing timed (with timing, auto's GPU tuners stop at "
                "$FFTCONV_TUNE_BUDGET_MS, default 1500; 0 = no limit)");
  cmd->add_option("--tune-cache", args->tune_cache,
                  "With --backend: tune cache file (its folder also holds auto's plan cache; 'none' = in memory; "
                  "default $FFTCONV_PLAN_CACHE or ~/.cache/fftconv)");
  cmd->add_flag("--prepared-weights", args->prepared_weights,
                "With --backend auto, fprop/bprop: plan for weight spectra prepared once and reused, as `fftconv "
                "run` runs them by default (Plan::prepare_weights; without it, the weights are transformed in "
                "every call)");
  cmd->callback([args, exit_code] { run_plan(*args, exit_code); });
}

}  // namespace fftconv::cli
