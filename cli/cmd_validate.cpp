// `fftconv validate`: runs a problem set through every backend against the reference ladder
// (validation/runner.hpp), and `fftconv validate merge` combines shard outputs into one summary.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/errors.hpp"
#include "validation/execute.hpp"
#include "validation/merge.hpp"
#include "validation/problem_sets.hpp"
#include "validation/report.hpp"
#include "validation/results_file.hpp"
#include "validation/runner.hpp"

namespace fftconv::cli {

namespace {

struct ValidateArgs {
  std::string set, tile = "none", out, md, shard, check = "auto", math = "auto";
  std::vector<std::string> backends, passes, plan_opts;
  bool resume = false, json = false, no_adjoint = false, no_progress = false, no_autotune = false, dry_run = false;
  int64_t sample = 0, max_elements = 0, batch = 0, count = 200, threads = 0;
  uint64_t seed = 1, data_seed = 0;
};

struct MergeArgs {
  std::string md;
  std::vector<std::string> inputs;
};

std::string shard_text(int64_t i, int64_t n) { return std::to_string(i) + "/" + std::to_string(n); }

void run_validate(const ValidateArgs& a, int* exit_code) {
  if (a.set.empty()) throw InvalidArgument("set: required (smoke, paper-grid, layers, random, or problem specs)");
  if (a.resume && a.out.empty()) throw InvalidArgument("resume: needs --out FILE");
  ValidateOptions o;
  o.set = a.set;
  o.set_seed = a.seed;
  o.random_count = a.count;
  o.selection.batch = a.batch;
  o.selection.max_elements = a.max_elements;
  o.selection.sample = a.sample;
  o.selection.sample_seed = a.seed;
  const auto [si, sn] = a.shard.empty() ? shard_from_environment() : parse_shard(a.shard);
  o.selection.shard_index = si;
  o.selection.shard_count = sn;
  o.backends = a.backends;
  if (!a.passes.empty()) {
    o.passes.clear();
    for (const auto& p : a.passes) o.passes.push_back(parse_pass(p));
  }
  o.tile = TileSpec::parse(a.tile).to_string();
  o.check = a.check;
  o.adjoint = !a.no_adjoint;
  o.data_seed = a.data_seed;
  o.plan_extra = parse_extra(a.plan_opts, "plan-opt");
  check_threads(a.threads);
  o.threads = int(a.threads);
  o.autotune = !a.no_autotune;
  o.math = parse_product_math(a.math);
  o.out = a.out;
  o.resume = a.resume;
  o.json = a.json;
  o.progress = !a.no_progress;
  o.dry_run = a.dry_run || arguments_only();
  if (o.dry_run) {
    const ValidateResult dry = run_validation(o, &std::cout);
    if (!arguments_only()) std::printf("validate --dry-run: %lld problems selected\n", (long long)dry.problems);
    return;
  }

  const std::string dev = select_device_for_rank(local_rank_from_environment());
  if (!dev.empty()) std::fprintf(stderr, "validate: %s\n", dev.c_str());
  if (sn > 1) std::fprintf(stderr, "validate: shard %s\n", shard_text(si, sn).c_str());

  // Both outputs must take data before the sweep starts.
  const std::string md_path = !a.md.empty() ? a.md : a.out.empty() ? "" : markdown_path_for(a.out);
  if (!a.out.empty()) require_writable(a.out, "out");
  if (!md_path.empty()) require_writable(md_path, "md");
  const ValidateResult r = run_validation(o, &std::cout);
  if (r.problems == 0) std::fprintf(stderr, "validate: warning: no problems selected\n");

  std::string title = "fftconv validate --set " + a.set + " --tile " + o.tile + " --check " + a.check;
  if (a.sample) title += " --sample " + std::to_string(a.sample) + " --seed " + std::to_string(a.seed);
  if (a.max_elements) title += " --max-elements " + std::to_string(a.max_elements);
  if (a.batch) title += " --batch " + std::to_string(a.batch);
  if (sn > 1) title += " --shard " + shard_text(si, sn);
  if (!a.backends.empty()) {
    title += " --backends ";
    for (std::size_t i = 0; i < a.backends.size(); ++i) title += (i ? "," : "") + a.backends[i];
  }
  if (a.no_autotune) title += " --no-autotune";
  if (a.math != "auto") title += " --math " + a.math;
  for (const auto& [key, value] : o.plan_extra) title += " --plan-opt " + key + "=" + value;
  std::vector<std::string> env = environment_lines();
  env.push_back("operands: on the " + r.operands);
  env.push_back("problems: " + std::to_string(r.problems) + ", wall time " + std::to_string(r.wall_s) + " s");
  if (!md_path.empty()) write_text_file(md_path, summary_markdown(r.summary, r.records, title, env), "md");

  const std::string table = summary_table(r.summary);
  if (a.json) {
    nlohmann::json s = {{"summary", {{"records", r.summary.records}, {"failures", r.summary.failures},
                                     {"skipped", r.summary.skipped}, {"problems", r.problems}, {"wall_s", r.wall_s}}}};
    std::cout << s.dump() << "\n";
    std::fputs(table.c_str(), stderr);
  } else {
    std::cout << table;
    std::printf("wall time %.1f s%s\n", r.wall_s, md_path.empty() ? "" : (", summary in " + md_path).c_str());
  }
  std::cout.flush();
  if (!r.summary.ok()) *exit_code = kExitCheckFailed;
}

void run_merge(const MergeArgs& m, int* exit_code) {
  if (arguments_only()) return;
  const MergedShards merged = merge_shard_files(m.inputs);
  const Summary s = summarize(merged.records);
  std::vector<std::string> env = environment_lines();
  for (auto& e : env) e += " (merging host)";
  std::string files = "merged " + std::to_string(m.inputs.size()) + " files, shards " + merged.shards;
  if (merged.empty_files) files += " and " + std::to_string(merged.empty_files) + " empty";
  env.insert(env.begin(), files);
  const std::vector<std::string> shards = shard_summary_lines(m.inputs);
  env.insert(env.begin() + 1, shards.begin(), shards.end());
  write_text_file(m.md, summary_markdown(s, merged.records, "fftconv validate merge", env), "merge");
  std::cout << summary_table(s);
  if (!s.ok()) *exit_code = kExitCheckFailed;
}

}  // namespace

void add_validate_command(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ValidateArgs>();
  auto m = std::make_shared<MergeArgs>();
  CLI::App* v = app.add_subcommand("validate", "Check every backend against the reference on a problem set");
  v->add_option("--set", a->set, "smoke | paper-grid | layers | random | torch-parity (PyTorch's conv2d test shapes: stride, dilation, groups, bias, padding modes) | specs joined by ';'");
  v->add_option("--backends", a->backends, "Comma list (default: every backend available here)")->delimiter(',');
  v->add_option("--passes", a->passes, "Comma list of fprop, bprop, accgrad (default: all)")->delimiter(',');
  v->add_option("--tile", a->tile, "none | auto | N | HxW (default none)");
  v->add_option("--out", a->out, "Write one JSON line per record (appended to with --resume); summary Markdown beside it");
  v->add_option("--md", a->md, "Markdown summary path (default: --out with .md)");
  v->add_flag("--resume", a->resume, "Skip records already in --out");
  v->add_flag("--json", a->json, "Print records as JSON lines on stdout");
  v->add_option("--shard", a->shard, "i/n (default from SLURM_*, OMPI_COMM_WORLD_*, RANK/WORLD_SIZE)");
  v->add_option("--check", a->check, "Reference: auto | direct | fftw64 | gpu64 (default auto)");
  v->add_option("--sample", a->sample, "Keep a seeded random sample of N problems");
  v->add_option("--seed", a->seed, "Seed of --sample and of the random set (default 1)");
  v->add_option("--count", a->count, "Size of the random set (default 200)");
  v->add_option("--max-elements", a->max_elements, "Shrink S, then skip, until the largest tensor has <= E elements");
  v->add_option("--batch", a->batch, "Cap the batch S of every problem");
  v->add_option("--data-seed", a->data_seed, "Seed of the random operands (default: fresh, recorded per line)");
  v->add_option("--plan-opt", a->plan_opts, "Backend pin KEY=VALUE (PlanOptions::extra), repeatable; a key must be one that a "
                  "backend of the sweep accepts, and each backend gets the keys it accepts");
  v->add_option("--threads", a->threads,
                "CPU threads, 1 to the machine's hardware threads (" + std::to_string(hardware_threads()) +
                    " here; more is an error); 0 = OpenMP's default");
  v->add_flag("--no-adjoint", a->no_adjoint, "Skip the adjoint-identity records");
  v->add_flag("--no-progress", a->no_progress, "No progress line on stderr");
  v->add_flag("--dry-run", a->dry_run, "Check the options, print how many problems are selected, run nothing");
  v->add_flag("--no-autotune", a->no_autotune, "Plan without timing candidates (PlanOptions::autotune off)");
  v->add_option("--math", a->math,
                "Products of the GPU backends: auto | fp32 | 3xtf32 | tf32 (tf32 is judged by its own tolerance "
                "and summarized in its own rows); the CPU backends keep fp32")
      ->capture_default_str();
  CLI::App* merge = v->add_subcommand("merge", "Combine shard outputs: merge OUT.md IN1.jsonl IN2.jsonl ...");
  merge->add_option("out", m->md, "Markdown summary to write")->required();
  merge->add_option("inputs", m->inputs, "Shard .jsonl files")->required();
  merge->callback([m, exit_code] { run_merge(*m, exit_code); });
  v->callback([a, merge, exit_code] {
    if (merge->parsed()) return;
    run_validate(*a, exit_code);
  });
}

}  // namespace fftconv::cli
