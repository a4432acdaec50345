// `fftconv bench grid`: the paper's Figures 1-6 on today's hardware. Every configuration of the
// paper-grid set (Table 3: S, f, f', k, y; validation/problem_sets.hpp) and every pass, timed for each
// implementation (cuDNN's best FMA-math algorithm, cufft, fbfft, auto; host backends for a CPU run)
// by bench/cell_bench.hpp: one JSON line per (configuration, pass, implementation), its result
// verified at the timed batch. Runs are sharded, resumable and bounded in time (Note [grid runs]).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cell_bench.hpp"
#include "common/backend.hpp"
#include "validation/problem_sets.hpp"

namespace fftconv::bench {

// Note [grid runs]
// The output (--out, .jsonl or .jsonl.gz) holds three kinds of lines: {"header": {...}} when a run
// starts (device, versions, command, selection, timing options), one record per (configuration,
// pass, implementation) as it is made ({"label", "spec", "pass"} and bench/cell_bench.hpp's fields),
// and {"end": {...}} when a run ends (wall time, records written, whether --seconds stopped it).
// --resume keeps the file's records and skips their keys (spec, pass, impl); without it an existing
// file is refused, never overwritten. So the grid is run in bounded calls: --seconds N stops between
// records once N seconds have passed and exits 0, and the same command with --resume continues. --shard i/n splits the configurations for several GPUs (or
// LOCAL_RANK / RANK / WORLD_SIZE); `fftconv bench grid merge` joins the shards' files, sorted in set
// order, and reports how much of the set is covered. A cell's operands are drawn from
// cell_seed(data_seed, spec, pass), so a record reproduces from its spec and the header.
struct GridBenchOptions {
  std::string set = "paper-grid";
  SetSelection selection;
  std::vector<std::string> impls{"cudnn", "cufft", "fbfft"};
  std::vector<Pass> passes{Pass::fprop, Pass::bprop, Pass::accgrad};
  CellOptions cell;
  PlanOptions plan;
  std::string out;               // required
  bool resume = false;
  bool redo_errors = false;      // with resume: records of status "error" are made again
  double seconds = 0;            // stop between records after this many seconds (0: no limit)
  uint64_t data_seed = 1;
  bool progress = true;
  std::string command, note;     // recorded in the header
};

struct GridBenchResult {
  int64_t configurations = 0;    // selected
  int64_t records_total = 0;     // configurations x passes x implementations
  int64_t records_before = 0;    // of those, found in --out
  int64_t records_written = 0;
  bool stopped = false;          // --seconds ran out before the end
  int64_t wrong = 0;             // backend results outside the tolerance model, or errors
  std::map<std::string, std::map<std::string, int64_t>> counts;  // impl -> status -> records written
  double wall_s = 0;
};

// Throws InvalidArgument or Unsupported before any work (bad options; an implementation that this
// build or machine cannot run).
GridBenchResult run_grid_bench(const GridBenchOptions& o);

// "spec|pass|impl" of a record line's JSON; empty for header and end lines.
std::string grid_record_key(const nlohmann::json& line);

struct GridMergeResult {
  int64_t records = 0, headers = 0, replaced = 0;  // replaced: duplicate keys (the later file wins)
  int64_t configurations = 0;   // in the set
  int64_t complete = 0;         // of them, every pass of every implementation the headers name recorded
  std::map<std::string, int64_t> statuses;
};
// Reads `inputs`, keeps every header and end line and one record per key, and writes `out` (.gz
// compresses) with the records in the order of `set`.
GridMergeResult merge_grid_files(const std::vector<std::string>& inputs, const std::string& out,
                                 const std::string& set = "paper-grid");

}  // namespace fftconv::bench
