// `fftconv bench tiling`: a backend's tiled plans against its untiled one (time, workspace, check),
// and per candidate tile size the planner's predicted cost beside the measured time, ranked both ways.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "api/fftconv.hpp"
#include "validation/run_plan.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "ref/fftw_pass.hpp"
#include "tiling/planner.hpp"
#include "validation/reference.hpp"
#include "validation/report.hpp"
#include "validation/verdict.hpp"

namespace fftconv::cli {

namespace {
struct Flags {
  // The large kernels (k = 31, 63) show that auto's untiled candidate is the --tile none plan
  // (Note [auto's untiled candidate]).
  std::vector<std::string> problems{"S=8,f=16,fo=16,n=128,k=5", "S=8,f=16,fo=16,n=256,k=3", "L1,S=4",
                                    "S=8,f=8,fo=8,n=66,k=31", "S=4,f=8,fo=8,n=130,k=63"};
  std::vector<std::string> passes{"fprop", "bprop", "accgrad"};
  std::vector<std::string> backends{"fftw"};
  std::string json_path;
  int repeat = 3;
  int rounds = 5;
  bool candidates = false;
};

struct Measured {
  double median_ms = 0, rel_l2 = 0;
  std::size_t workspace = 0;
  bool ok = false;
  std::string tile = "null", describe;
};

// One plan under test: built once, timed in several rounds (see measure_interleaved).
struct Timed {
  std::unique_ptr<Plan> plan;
  std::vector<double> round_medians;
  Measured m;
};

// Times each plan `rounds` times, round-robin, `repeat` runs per round, and reports the median of
// the round medians: on a shared, noisy machine a burst of load then hits every plan alike rather
// than the one that happened to run during it. Each plan's result is checked once against `ref`.
// CUDA plans are timed back to back on one stream (no host launch latency in the times).
void measure_interleaved(const Backend& b, const ConvProblem& p, Pass pass, std::vector<Timed>& plans, PassData& d,
                         const std::vector<double>& ref, int repeat, int rounds) {
  const GpuTimer timer = b.location() == Location::cuda ? GpuTimer::stream : GpuTimer::calls;
  for (int r = 0; r < rounds; ++r)
    for (Timed& t : plans)
      if (t.plan) t.round_medians.push_back(run_plan(b, *t.plan, d, repeat, 0, timer).time.median_ms);
  for (Timed& t : plans) {
    if (!t.plan) continue;
    std::fill(d.result.begin(), d.result.end(), std::numeric_limits<float>::quiet_NaN());
    run_plan(b, *t.plan, d, 1);
    const Verdict v = judge_result(p, pass, d, ref, pow2_basis_elems(p));
    std::vector<double> m = t.round_medians;
    std::nth_element(m.begin(), m.begin() + std::ptrdiff_t(m.size() / 2), m.end());
    t.m.median_ms = m[m.size() / 2];
    t.m.rel_l2 = v.error.rel_l2;
    t.m.ok = v.ok;
    t.m.workspace = t.plan->workspace_bytes();
    t.m.tile = t.plan->tile_json();
    t.m.describe = t.plan->describe();
  }
}

// The terms of a candidate's modeled cost (Note [cost model]), so that a refit of the model's
// constants (bench/tools/fit_cost_model.py) can recompute every prediction from the JSON.
nlohmann::json cost_terms(const TileCost& c) {
  return {{"transforms", c.transforms},         {"transform_flops", c.transform_flops},
          {"pointwise_flops", c.pointwise_flops}, {"extra_flops", c.extra_flops},
          {"traffic_bytes", c.traffic_bytes},   {"workspace_bytes", c.workspace_bytes},
          {"cost", c.cost}};
}

// The options the backend's tile=auto hands the planner: fftw pins the untiled candidate to the
// basis its untiled plan uses (Note [auto's untiled candidate]).
PlanOptions planner_options(const std::string& backend, const ConvProblem& p, Pass pass, PlanOptions o) {
  if (backend != "fftw") return o;
  const BasisChoice b = choose_basis(p.padded_h(), p.padded_w(), pass_shape(p, pass), o);
  o.basis_h = b.nh;
  o.basis_w = b.nw;
  return o;
}

std::string fmt(const char* f, double v) {
  char b[32];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// The backend's plan for `o`, or nullptr with the reason when it does not support it.
std::unique_ptr<Plan> plan_or_reason(const Backend& b, const ConvProblem& p, Pass pass, const PlanOptions& o,
                                     std::string& why) {
  try {
    return b.plan(p, pass, o);
  } catch (const Unsupported& e) {
    why = e.what();
    return nullptr;
  }
}

int run(const Flags& f) {
  if (f.repeat < 1) throw InvalidArgument("repeat: must be >= 1, got " + std::to_string(f.repeat));
  if (f.rounds < 1) throw InvalidArgument("rounds: must be >= 1, got " + std::to_string(f.rounds));
  std::vector<const Backend*> backends;
  for (const std::string& name : f.backends) {
    backends.push_back(&builtin_registry().get(name));
    if (!runs_planner_tiles(*backends.back()))
      throw InvalidArgument("backend: '" + name + "' runs untiled plans only; bench tiling times backends that run "
                            "the tiling planner's tiles");
    if (backends.back()->location() != backends.front()->location())
      throw InvalidArgument("backend: '" + name + "' runs on another device than '" + f.backends.front() +
                            "'; one bench times the backends of one device");
  }
  if (backends.empty()) throw InvalidArgument("backend: needs at least one backend");
  const Location where = backends.front()->location();
  for (const auto& spec : f.problems) ConvProblem::parse(spec);  // every bad input before any work
  for (const auto& ps : f.passes) parse_pass(ps);
  if (arguments_only()) return kExitOk;
  nlohmann::json rows = nlohmann::json::array();
  bool all_ok = true;
  const std::string command = command_line("fftconv bench tiling");
  // The JSON is rewritten after every row: a run cut short keeps the rows it measured.
  auto write_json = [&] {
    if (f.json_path.empty()) return;
    write_json_file(f.json_path,
                    nlohmann::json{{"device", device_description(where)}, {"environment", environment_lines()},
                                   {"command", command}, {"repeat", f.repeat}, {"rounds", f.rounds}, {"rows", rows}}
                        .dump(2),
                    "--json");
  };
  std::printf("%-28s %-8s %10s %10s %7s %12s %12s %-28s %s\n", "problem", "pass", "none ms", "auto ms", "speedup",
              "none ws MiB", "auto ws MiB", "auto tile", "check");
  for (const auto& spec : f.problems) {
    const ConvProblem p = ConvProblem::parse(spec);
    for (const auto& ps : f.passes) {
      const Pass pass = parse_pass(ps);
      PassData d = make_pass_data(p, pass, 7);
      const auto ref = reference_result(p, pass, d, RefKind::automatic);
      for (std::size_t bi = 0; bi < backends.size(); ++bi) {
        const Backend& b = *backends[bi];
        const std::string& backend = f.backends[bi];
        PlanOptions none, autop;
        autop.tile = TileSpec::parse("auto");
        std::vector<Timed> pair(2);
        std::string none_unsupported;  // why the backend has no untiled plan (fbfft above 128 per side)
        pair[0].plan = plan_or_reason(b, p, pass, none, none_unsupported);
        pair[1].plan = b.plan(p, pass, autop);
        measure_interleaved(b, p, pass, pair, d, ref, f.repeat, f.rounds);
        const Measured &mn = pair[0].m, &ma = pair[1].m;
        const bool has_none = pair[0].plan != nullptr;
        const bool ok = (!has_none || mn.ok) && ma.ok;
        const TilingChoice choice = plan_tiling(p, pass, planner_options(backend, p, pass, autop));
        all_ok = all_ok && ok;
        std::string tile_label = choice.candidates[choice.chosen].label();
        std::printf("%-28s %-8s %10s %10.2f %7s %12s %12.1f %-28s %s\n", p.to_string().substr(0, 28).c_str(),
                    ps.c_str(),
                    has_none ? fmt("%.2f", mn.median_ms).c_str() : "-", ma.median_ms,
                    has_none ? fmt("%.2fx", mn.median_ms / ma.median_ms).c_str() : "-",
                    has_none ? fmt("%.1f", mn.workspace / 1048576.0).c_str() : "-", ma.workspace / 1048576.0,
                    tile_label.c_str(), ok ? "ok" : "FAILED");
        if (!has_none) std::printf("    no untiled plan: %s\n", none_unsupported.c_str());
        if (!choice.plan.tiled) std::printf("    planner chose none: %s\n", choice.reason.c_str());
        const nlohmann::json none_json =
            has_none ? nlohmann::json{{"median_ms", mn.median_ms}, {"workspace_bytes", mn.workspace},
                                      {"rel_l2", mn.rel_l2}}
                     : nlohmann::json{{"unsupported", none_unsupported}};
        nlohmann::json row = {{"problem", p.to_string()}, {"pass", ps}, {"backend", backend},
                               {"none", none_json},
                               {"auto", {{"median_ms", ma.median_ms}, {"workspace_bytes", ma.workspace},
                                         {"rel_l2", ma.rel_l2},
                                         {"tile", nlohmann::json::parse(ma.tile)}, {"plan", ma.describe}}},
                               {"reason", choice.reason}, {"ok", ok}};
        if (f.candidates) {
          nlohmann::json cands = nlohmann::json::array();
          const double base_cost = choice.candidates.front().cost.cost;
          std::printf("    %-16s %14s %14s %12s %12s\n", "candidate", "pred. ratio", "meas. ratio", "median ms",
                      "ws MiB");
          std::vector<const Candidate*> feasible;
          std::vector<std::string> unsupported;  // per feasible candidate: why the backend cannot plan it
          std::vector<Timed> timed(1);  // [0]: the untiled plan again, the baseline of this round robin
          std::string why_not;
          timed[0].plan = plan_or_reason(b, p, pass, none, why_not);
          for (const Candidate& c : choice.candidates) {
            if (!c.feasible) continue;
            PlanOptions o;
            if (c.tiled) {
              o.tile.kind = TileSpec::Kind::fixed;
              o.tile.fft_h = c.fft_h;
              o.tile.fft_w = c.fft_w;
              o.extra["accgrad_reduction"] = std::string(to_string(c.reduction));
            } else {
              o.basis_h = c.fft_h;
              o.basis_w = c.fft_w;
            }
            feasible.push_back(&c);
            timed.emplace_back().plan = plan_or_reason(b, p, pass, o, unsupported.emplace_back());
          }
          measure_interleaved(b, p, pass, timed, d, ref, f.repeat, f.rounds);
          // Ranks among the candidates the backend ran: by the model's cost and by the measured time.
          std::vector<std::size_t> ran;
          for (std::size_t i = 0; i < feasible.size(); ++i)
            if (timed[i + 1].plan) ran.push_back(i);
          auto rank_of = [&](std::size_t i, auto key) {
            return 1 + std::count_if(ran.begin(), ran.end(), [&](std::size_t j) { return key(j) < key(i); });
          };
          const auto cost = [&](std::size_t j) { return feasible[j]->cost.cost; };
          const auto time = [&](std::size_t j) { return timed[j + 1].m.median_ms; };
          for (std::size_t i = 0; i < feasible.size(); ++i) {
            const Candidate& c = *feasible[i];
            const double pred = c.cost.cost / base_cost;
            if (!timed[i + 1].plan) {
              std::printf("    %-16s %14.3f %14s %12s %12s  %s\n", c.label().c_str(), pred, "-", "-", "-",
                          unsupported[i].c_str());
              cands.push_back({{"label", c.label()}, {"predicted_cost_ratio", pred}, {"unsupported", unsupported[i]},
                               {"cost", cost_terms(c.cost)}});
              continue;
            }
            const Measured& mc = timed[i + 1].m;
            all_ok = all_ok && mc.ok;
            const nlohmann::json meas =
                timed[0].plan ? nlohmann::json(mc.median_ms / timed[0].m.median_ms) : nlohmann::json(nullptr);
            std::printf("    %-16s %14.3f %14s %12.2f %12.1f  rank %lld/%lld%s\n", c.label().c_str(), pred,
                        meas.is_null() ? "-" : fmt("%.3f", meas.get<double>()).c_str(), mc.median_ms,
                        mc.workspace / 1048576.0, static_cast<long long>(rank_of(i, cost)),
                        static_cast<long long>(rank_of(i, time)), mc.ok ? "" : "  FAILED");
            cands.push_back({{"label", c.label()}, {"predicted_cost_ratio", pred}, {"measured_time_ratio", meas},
                             {"median_ms", mc.median_ms}, {"workspace_bytes", mc.workspace}, {"ok", mc.ok},
                             {"predicted_rank", rank_of(i, cost)}, {"measured_rank", rank_of(i, time)},
                             {"cost", cost_terms(c.cost)}});
          }
          row["candidates"] = cands;
          row["untiled_cost"] = cost_terms(choice.candidates.front().cost);  // the ratios' denominator
        }
        rows.push_back(row);
        write_json();
        std::fflush(stdout);
      }
    }
  }
  return all_ok ? kExitOk : kExitCheckFailed;
}
}  // namespace

void add_bench_tiling_command(CLI::App& bench, int* exit_code) {
  auto f = std::make_shared<Flags>();
  auto* cmd = bench.add_subcommand("tiling", "Tiled (--tile auto) against untiled (--tile none) with backends of one "
                                             "device: time, workspace, and predicted vs measured cost per candidate "
                                             "tile");
  cmd->add_option("--problems", f->problems, "Problem specs")->delimiter(';')->capture_default_str();
  cmd->add_option("--passes", f->passes, "Passes")->delimiter(',')->capture_default_str();
  cmd->add_option("--backend", f->backends, "Backends that run the tile plans (comma-separated, one device)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--repeat", f->repeat, "Timed repetitions per round")->capture_default_str();
  cmd->add_option("--rounds", f->rounds, "Rounds: the plans compared are timed round-robin, the median of the round "
                                         "medians is reported")->capture_default_str();
  cmd->add_flag("--candidates", f->candidates, "Also time every feasible candidate of the planner");
  cmd->add_option("--json", f->json_path, "Write the rows as JSON to this path");
  cmd->callback([f, exit_code] { *exit_code = run(*f); });
}

}  // namespace fftconv::cli
