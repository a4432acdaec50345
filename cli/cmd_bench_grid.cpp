// `fftconv bench grid`: the paper's Table 3 grid timed for cuDNN and our backends, one JSON line per
// (configuration, pass, implementation) (bench/grid_bench.hpp), and `bench grid merge` for shard files.
// Exit 2 for bad input or an implementation this build or machine cannot run, 1 when a result of
// ours fails verification or errors; a run stopped by --seconds exits 0 (resume with --resume).
#include <cstdio>
#include <memory>

#include "bench/grid_bench.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "common/errors.hpp"
#include "validation/execute.hpp"

namespace fftconv::cli {

namespace {

struct GridArgs {
  bench::GridBenchOptions o;
  std::string shard;
  std::vector<std::string> passes;
  bool no_progress = false;
  PlanFlags plan;
};

struct GridMergeArgs {
  std::string out, set = "paper-grid";
  std::vector<std::string> inputs;
};

void run_grid(GridArgs& a, int* exit_code) {
  bench::GridBenchOptions& o = a.o;
  const auto [si, sn] = a.shard.empty() ? shard_from_environment() : parse_shard(a.shard);
  o.selection.shard_index = si, o.selection.shard_count = sn;
  if (!a.passes.empty()) {
    o.passes.clear();
    for (const auto& p : a.passes) o.passes.push_back(parse_pass(p));
  }
  o.plan = a.plan.to_options();
  o.progress = !a.no_progress;
  o.command = command_line("fftconv bench grid");
  if (arguments_only()) return;
  const std::string dev = select_device_for_rank(local_rank_from_environment());
  if (!dev.empty()) std::fprintf(stderr, "grid: %s\n", dev.c_str());

  const bench::GridBenchResult r = bench::run_grid_bench(o);
  std::printf("grid: %lld configurations x %zu passes x %zu implementations = %lld records; %lld were in %s, "
              "%lld written in %.1f s\n",
              (long long)r.configurations, o.passes.size(), o.impls.size(), (long long)r.records_total,
              (long long)r.records_before, o.out.c_str(), (long long)r.records_written, r.wall_s);
  for (const auto& [impl, counts] : r.counts) {
    std::printf("  %-10s", impl.c_str());
    for (const auto& [status, n] : counts) std::printf("  %s %lld", status.c_str(), (long long)n);
    std::printf("\n");
  }
  const int64_t left = r.records_total - r.records_before - r.records_written;
  if (r.stopped)
    std::fprintf(stderr, "grid: stopped after --seconds %g with %lld records left: run the same command with --resume "
                 "to continue\n", o.seconds, (long long)left);
  if (r.wrong > 0) {
    std::fprintf(stderr, "grid: %lld results of our backends failed verification or errored (status \"error\")\n",
                 (long long)r.wrong);
    *exit_code = kExitCheckFailed;
  }
}

void run_merge(const GridMergeArgs& m) {
  const bench::GridMergeResult r = bench::merge_grid_files(m.inputs, m.out, m.set);
  std::printf("merge: %lld records from %zu files (%lld run headers, %lld duplicate keys replaced) into %s\n",
              (long long)r.records, m.inputs.size(), (long long)r.headers, (long long)r.replaced, m.out.c_str());
  std::printf("merge: %lld of %lld configurations of %s have every pass of every implementation recorded\n",
              (long long)r.complete, (long long)r.configurations, m.set.c_str());
  for (const auto& [status, n] : r.statuses) std::printf("  %s: %lld\n", status.c_str(), (long long)n);
}

}  // namespace

void add_bench_grid_command(CLI::App& bench, int* exit_code) {
  auto a = std::make_shared<GridArgs>();
  auto m = std::make_shared<GridMergeArgs>();
  bench::GridBenchOptions& o = a->o;
  CLI::App* cmd = bench.add_subcommand(
      "grid", "Paper Figures 1-6: the Table 3 grid (8,232 configurations x 3 passes) for cuDNN's best FMA-math "
              "algorithm and our backends, one verified JSON line per cell; sharded, resumable, time-bounded");
  cmd->add_option("--set", o.set, "problem set (validation sets or specs joined by ';')")->capture_default_str();
  cmd->add_option("--backends", o.impls,
                  "implementations: cudnn (FMA math), cudnn-tc (tensor-op math), cufft, fbfft, auto; or host "
                  "backends alone (fftw, im2col, direct) for a CPU run")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--passes", a->passes, "fprop,bprop,accgrad (default: all)")->delimiter(',');
  cmd->add_option("--out", o.out, "output .jsonl or .jsonl.gz, required; an existing file is added to with --resume, else refused");
  cmd->add_flag("--resume", o.resume, "skip the records already in --out");
  cmd->add_flag("--redo-errors", o.redo_errors, "with --resume: make records of status \"error\" again");
  cmd->add_option("--shard", a->shard, "i/n: every n-th configuration from the i-th (default from SLURM_*, RANK/WORLD_SIZE)");
  cmd->add_option("--sample", o.selection.sample, "a seeded random sample of N configurations");
  cmd->add_option("--seed", o.selection.sample_seed, "seed of --sample")->capture_default_str();
  cmd->add_option("--max-elements", o.selection.max_elements, "shrink S, then skip, until the largest tensor has <= E elements");
  cmd->add_option("--batch", o.selection.batch, "cap the batch S of every configuration");
  cmd->add_option("--seconds", o.seconds, "stop between records after this many seconds, exit 0 (0: no limit)");
  cmd->add_option("--cell-seconds", o.cell.cell_seconds,
                  "cap on one cell's warm-up and timed runs; a cell that would exceed it is recorded as skipped")
      ->capture_default_str();
  cmd->add_option("--warmup", o.cell.warmup, "untimed runs before the timed ones")->capture_default_str();
  cmd->add_option("--repeat", o.cell.repeat, "timed runs, at most")->capture_default_str();
  cmd->add_option("--min-repeat", o.cell.min_repeat, "timed runs, at least")->capture_default_str();
  cmd->add_option("--budget-ms", o.cell.budget_ms, "measured time per cell aimed at (sets the runs between the two)")
      ->capture_default_str();
  cmd->add_option("--cudnn-candidates", o.cell.cudnn_candidates, "cuDNN algorithms timed in full after the probe")
      ->capture_default_str();
  cmd->add_option("--check", o.cell.check, "reference: auto | direct | fftw64 | gpu64")->capture_default_str();
  cmd->add_option("--data-seed", o.data_seed, "seed of the operands (each cell's derived from it)")->capture_default_str();
  cmd->add_option("--note", o.note, "text recorded in the run's header line (e.g. the commit)");
  cmd->add_flag("--no-progress", a->no_progress, "no progress line on stderr");
  a->plan.add_to(cmd);
  CLI::App* merge = cmd->add_subcommand("merge", "join grid files (shards, runs) into one, sorted in set order");
  merge->add_option("-o,--out", m->out, "output .jsonl or .jsonl.gz")->required();
  merge->add_option("--set", m->set, "the set whose coverage is reported")->capture_default_str();
  merge->add_option("inputs", m->inputs, "grid files")->required();
  merge->callback([m] {
    if (!arguments_only()) run_merge(*m);
  });
  cmd->callback([a, merge, exit_code] {
    if (merge->parsed()) return;
    run_grid(*a, exit_code);
  });
}

}  // namespace fftconv::cli
