// The grid benchmark's run loop, resume and merge (see grid_bench.hpp, Note [grid runs]).
#include "bench/grid_bench.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <tuple>

#include "bench/line_store.hpp"
#include "common/errors.hpp"
#include "validation/progress.hpp"
#include "validation/report.hpp"

namespace fftconv::bench {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::vector<std::string> pass_names(const std::vector<Pass>& passes) {
  std::vector<std::string> out;
  for (Pass p : passes) out.emplace_back(to_string(p));
  return out;
}

json header_json(const GridBenchOptions& o, bool device, int64_t configurations) {
  const SetSelection& s = o.selection;
  json sel{{"shard", std::to_string(s.shard_index) + "/" + std::to_string(s.shard_count)}};
  if (s.sample) sel["sample"] = s.sample, sel["seed"] = s.sample_seed;
  if (s.max_elements) sel["max_elements"] = s.max_elements;
  if (s.batch) sel["batch"] = s.batch;
  json h{{"benchmark", "grid"},
         {"format", 1},
         {"set", o.set},
         {"selection", sel},
         {"configurations", configurations},
         {"impls", o.impls},
         {"passes", pass_names(o.passes)},
         {"device", bench_device(device)},
         {"environment", environment_lines()},
         {"started", utc_now()},
         {"command", o.command},
         {"cell", cell_options_json(o.cell)},
         {"plan", {{"autotune", o.plan.autotune}, {"tile", o.plan.tile.to_string()}, {"extra", o.plan.extra}}},
         {"timer", device ? "CUDA events around each run, runs queued back to back on one stream, operand sets "
                            "rotated past the L2 cache"
                          : "steady clock around each run"},
         {"data_seed", o.data_seed}};
  if (!o.note.empty()) h["note"] = o.note;
  return {{"header", h}};
}

// The records of a grid file by key (a later line replaces an earlier one), its other lines apart.
struct GridFile {
  std::vector<std::string> others;             // header and end lines, in file order, each once
  std::map<std::string, std::string> records;  // key -> line
  int64_t replaced = 0;
};

void read_grid_file(const std::string& path, const std::string& what, GridFile& into) {
  const std::vector<std::string> lines = read_lines(path, what);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    json j;
    try {
      j = json::parse(lines[i]);
    } catch (const json::exception& e) {
      throw InvalidArgument(what + ": line " + std::to_string(i + 1) + " of '" + path + "' is not JSON (" + e.what() + ")");
    }
    const std::string key = grid_record_key(j);
    if (key.empty()) {  // a run's header or end line; the same run read twice (a re-merge) keeps one copy
      if (std::find(into.others.begin(), into.others.end(), lines[i]) == into.others.end())
        into.others.push_back(lines[i]);
      continue;
    }
    into.replaced += into.records.count(key) ? 1 : 0;
    into.records[key] = lines[i];
  }
}

}  // namespace

std::string grid_record_key(const json& j) {
  if (!j.is_object() || !j.contains("spec") || !j.contains("pass") || !j.contains("impl")) return {};
  if (!j["spec"].is_string() || !j["pass"].is_string() || !j["impl"].is_string()) return {};
  return j["spec"].get<std::string>() + "|" + j["pass"].get<std::string>() + "|" + j["impl"].get<std::string>();
}

GridBenchResult run_grid_bench(const GridBenchOptions& o) {
  const auto t_start = Clock::now();
  o.cell.validate();
  if (o.out.empty()) throw InvalidArgument("out: required (a .jsonl or .jsonl.gz file)");
  if (o.passes.empty()) throw InvalidArgument("passes: empty list");
  if (!(o.seconds >= 0)) throw InvalidArgument("seconds: must be >= 0, got " + std::to_string(o.seconds));
  if (o.redo_errors && !o.resume) throw InvalidArgument("redo-errors: needs --resume");
  if (!o.resume && std::filesystem::exists(o.out) && std::filesystem::file_size(o.out) > 0)
    throw InvalidArgument("out: '" + o.out + "' exists: --resume adds to it (remove it to start again)");
  std::set<std::string> seen;
  for (const std::string& i : o.impls)
    if (!seen.insert(i).second) throw InvalidArgument("backends: '" + i + "' named twice");
  const std::vector<LabeledProblem> problems = select_problems(problem_set(o.set, o.selection.sample_seed), o.selection);
  const bool device = device_operands_for(o.impls);

  GridBenchResult res;
  res.configurations = int64_t(problems.size());
  res.records_total = res.configurations * int64_t(o.passes.size() * o.impls.size());
  std::set<std::string> done;
  if (o.resume) {
    GridFile f;
    read_grid_file(o.out, "out", f);
    for (const auto& [key, line] : f.records)
      if (!o.redo_errors || json::parse(line).value("status", "") != "error") done.insert(key);
  }

  LineWriter w(o.out, o.resume, "out");
  w.write(header_json(o, device, res.configurations).dump());
  CellBench bench(o.cell, device);
  ProgressLine progress("grid", res.records_total, o.progress);
  for (const LabeledProblem& lp : problems) {
    const std::string spec = lp.problem.to_string();
    for (Pass pass : o.passes) {
      std::vector<std::string> todo;
      for (const std::string& impl : o.impls)
        if (done.count(spec + "|" + std::string(to_string(pass)) + "|" + impl)) ++res.records_before;
        else todo.push_back(impl);
      progress.skip(int64_t(o.impls.size() - todo.size()));
      if (todo.empty()) continue;
      bench.prepare(lp.problem, pass, cell_seed(o.data_seed, spec, pass));
      for (const std::string& impl : todo) {
        if (o.seconds > 0 && std::chrono::duration<double>(Clock::now() - t_start).count() >= o.seconds) {
          res.stopped = true;
          break;
        }
        const CellResult r = bench.time_impl(impl, o.plan);
        json rec{{"label", lp.label}, {"spec", spec}, {"pass", to_string(pass)}};
        rec.update(cell_json(r));
        w.write(rec.dump());
        ++res.records_written;
        ++res.counts[impl][r.status];
        if (!is_cudnn_impl(impl) && r.status == "error") ++res.wrong;
        progress.add(1, lp.label + " " + std::string(to_string(pass)) + " " + impl + ": " + r.status);
        std::string why;
        if (r.status == "error" && !bench.device_ok(&why))
          throw CudaError("grid: the device is in an error state after " + lp.label + " " + std::string(to_string(pass)) +
                          " " + impl + " (" + why + "); the records so far are in " + o.out +
                          ": run again with --resume to go on");
      }
      if (res.stopped) break;
    }
    if (res.stopped) break;
  }
  progress.finish();
  res.wall_s = std::chrono::duration<double>(Clock::now() - t_start).count();
  w.write(json{{"end", {{"finished", utc_now()}, {"wall_s", round_significant(res.wall_s, 5)},
                        {"records_written", res.records_written}, {"stopped", res.stopped}}}}
              .dump());
  w.close();
  return res;
}

GridMergeResult merge_grid_files(const std::vector<std::string>& inputs, const std::string& out, const std::string& set) {
  if (inputs.empty()) throw InvalidArgument("merge: no input files");
  GridFile all;
  for (const std::string& in : inputs) {
    if (!std::filesystem::exists(in)) throw InvalidArgument("merge: no such file '" + in + "'");
    read_grid_file(in, "merge", all);
  }
  GridMergeResult res;
  res.replaced = all.replaced;
  // The implementations and passes the runs were asked for, and the set's order of specs.
  std::set<std::string> impls, passes;
  for (const std::string& line : all.others) {
    const json j = json::parse(line);
    if (!j.contains("header")) continue;
    ++res.headers;
    for (const auto& x : j["header"].value("impls", json::array())) impls.insert(x.get<std::string>());
    for (const auto& x : j["header"].value("passes", json::array())) passes.insert(x.get<std::string>());
  }
  const std::vector<LabeledProblem> problems = problem_set(set);
  std::map<std::string, std::size_t> order;
  for (const LabeledProblem& lp : problems) order.emplace(lp.problem.to_string(), order.size());
  res.configurations = int64_t(problems.size());
  struct Row {
    std::size_t spec_order;
    int pass;
    std::string impl, line;
  };
  std::vector<Row> rows;
  std::map<std::string, int64_t> per_spec;
  for (const auto& [key, line] : all.records) {
    const json j = json::parse(line);
    const std::string spec = j["spec"].get<std::string>();
    const auto it = order.find(spec);
    rows.push_back({it == order.end() ? order.size() : it->second, int(parse_pass(j["pass"].get<std::string>())),
                    j["impl"].get<std::string>(), line});
    ++res.statuses[j.value("status", "?")];
    if (impls.count(j["impl"].get<std::string>()) && passes.count(j["pass"].get<std::string>())) ++per_spec[spec];
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.spec_order, a.pass, a.impl) < std::tie(b.spec_order, b.pass, b.impl);
  });
  std::vector<std::string> lines = all.others;
  for (const Row& r : rows) lines.push_back(r.line);
  write_lines(out, lines, "merge");
  res.records = int64_t(rows.size());
  const int64_t want = int64_t(impls.size() * passes.size());
  for (const auto& [spec, n] : per_spec)
    if (order.count(spec) && want > 0 && n == want) ++res.complete;
  return res;
}

}  // namespace fftconv::bench
