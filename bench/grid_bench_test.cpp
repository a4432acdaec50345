// The grid benchmark's run control on the CPU backends (Note [grid runs]): records and their header,
// resume, a run stopped by --seconds and continued, shards merged, gzip output, and bad options.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <set>

#include "bench/grid_bench.hpp"
#include "bench/line_store.hpp"
#include "common/errors.hpp"
#include "validation/execute.hpp"

using namespace fftconv;
using namespace fftconv::bench;
using nlohmann::json;

namespace {

constexpr const char* kSpecs = "S=1,f=2,fo=3,n=5,k=3;S=2,f=1,fo=2,n=6,k=3;S=2,f=3,fo=1,n=7,k=5;S=1,f=1,fo=1,n=4,k=3";

std::filesystem::path fresh_dir() {
  const auto d = std::filesystem::temp_directory_path() / ("fftconv_grid_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(d);
  return d;
}

GridBenchOptions cpu_options(const std::string& out) {
  GridBenchOptions o;
  o.set = kSpecs;
  o.impls = {"fftw", "im2col"};
  o.out = out;
  o.progress = false;
  o.cell.warmup = 0, o.cell.repeat = 2, o.cell.min_repeat = 1, o.cell.budget_ms = 0;
  return o;
}

struct Lines {
  std::vector<json> headers, ends, records;
};

Lines read(const std::string& path) {
  Lines l;
  for (const std::string& s : read_lines(path, "test")) {
    const json j = json::parse(s);
    if (j.contains("header")) l.headers.push_back(j["header"]);
    else if (j.contains("end")) l.ends.push_back(j["end"]);
    else l.records.push_back(j);
  }
  return l;
}

std::set<std::string> keys(const Lines& l) {
  std::set<std::string> k;
  for (const json& r : l.records) k.insert(grid_record_key(r));
  return k;
}

}  // namespace

TEST_CASE("a CPU grid run writes a header, one verified record per cell and an end line; resume adds none") {
  const auto dir = fresh_dir();
  const std::string out = (dir / "g.jsonl").string();
  const GridBenchResult r = run_grid_bench(cpu_options(out));
  CHECK(r.configurations == 4);
  CHECK(r.records_total == 4 * 3 * 2);
  CHECK(r.records_written == 24);
  CHECK_FALSE(r.stopped);
  CHECK(r.wrong == 0);
  CHECK(r.counts.at("fftw").at("ok") == 12);
  Lines l = read(out);
  REQUIRE(l.headers.size() == 1);
  CHECK(l.headers[0]["benchmark"] == "grid");
  CHECK(l.headers[0]["impls"] == json({"fftw", "im2col"}));
  CHECK(l.headers[0]["device"].get<std::string>().find("host") == 0);
  REQUIRE(l.ends.size() == 1);
  CHECK(l.ends[0]["records_written"] == 24);
  CHECK(keys(l).size() == 24);
  for (const json& rec : l.records) {
    INFO(rec.dump());
    CHECK(rec["status"] == "ok");
    CHECK(rec["verified"] == true);
    CHECK(rec["rel_l2"].get<double>() < rec["tol_rel_l2"].get<double>());
    CHECK(rec["median_ms"].get<double>() > 0);
    CHECK(rec["label"].get<std::string>().find("spec#") == 0);
  }
  GridBenchOptions o = cpu_options(out);
  CHECK_THROWS_AS(run_grid_bench(o), InvalidArgument);  // a result file is never overwritten
  o.resume = true;
  const GridBenchResult again = run_grid_bench(o);
  CHECK(again.records_before == 24);
  CHECK(again.records_written == 0);
  l = read(out);
  CHECK(l.records.size() == 24);
  CHECK(l.headers.size() == 2);  // each run leaves its header
  std::filesystem::remove_all(dir);
}

TEST_CASE("--seconds stops a grid run between records and --resume finishes it") {
  const auto dir = fresh_dir();
  const std::string out = (dir / "g.jsonl").string();
  GridBenchOptions o = cpu_options(out);
  o.seconds = 1e-9;  // spent before the first record
  const GridBenchResult first = run_grid_bench(o);
  CHECK(first.stopped);
  CHECK(first.records_written == 0);
  Lines l = read(out);
  REQUIRE(l.ends.size() == 1);
  CHECK(l.ends[0]["stopped"] == true);
  o.seconds = 0;
  o.resume = true;
  o.passes = {Pass::fprop};  // a part of the grid ...
  CHECK(run_grid_bench(o).records_written == 8);
  o.passes = {Pass::fprop, Pass::bprop, Pass::accgrad};  // ... then the rest
  const GridBenchResult rest = run_grid_bench(o);
  CHECK(rest.records_before == 8);
  CHECK(rest.records_written == 16);
  CHECK(keys(read(out)).size() == 24);
  std::filesystem::remove_all(dir);
}

TEST_CASE("shards split the configurations and merge joins them in set order, gzip or plain") {
  const auto dir = fresh_dir();
  const std::string ext = gzip_supported() ? ".jsonl.gz" : ".jsonl";
  std::vector<std::string> files;
  std::set<std::string> specs[2];
  for (int i = 0; i < 2; ++i) {
    files.push_back((dir / ("shard" + std::to_string(i) + ext)).string());
    GridBenchOptions o = cpu_options(files.back());
    o.selection.shard_index = i, o.selection.shard_count = 2;
    CHECK(run_grid_bench(o).configurations == 2);
    for (const json& r : read(files.back()).records) specs[i].insert(r["spec"].get<std::string>());
    CHECK(specs[i].size() == 2);
  }
  for (const std::string& s : specs[0]) CHECK_FALSE(specs[1].count(s));  // disjoint
  const std::string merged = (dir / ("all" + ext)).string();
  const GridMergeResult m = merge_grid_files(files, merged, kSpecs);
  CHECK(m.records == 24);
  CHECK(m.headers == 2);
  CHECK(m.replaced == 0);
  CHECK(m.configurations == 4);
  CHECK(m.complete == 4);
  CHECK(m.statuses.at("ok") == 24);
  const Lines l = read(merged);
  REQUIRE(l.records.size() == 24);
  std::vector<std::string> order;  // set order: spec#0's records first
  for (const json& r : l.records) order.push_back(r["label"].get<std::string>());
  CHECK(std::is_sorted(order.begin(), order.end()));
  // A shard merged twice: the duplicates are replaced, not added.
  const GridMergeResult twice = merge_grid_files({files[0], files[0]}, merged, kSpecs);
  CHECK(twice.records == 12);
  CHECK(twice.replaced == 12);
  CHECK(twice.complete == 2);
  CHECK(twice.headers == 1);  // one run read twice: its header and end line once
  CHECK(read(merged).headers.size() == 1);
  CHECK(read(merged).ends.size() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("bad grid options are refused before any work") {
  const auto dir = fresh_dir();
  GridBenchOptions o = cpu_options((dir / "g.jsonl").string());
  o.out.clear();
  CHECK_THROWS_AS(run_grid_bench(o), InvalidArgument);
  o = cpu_options((dir / "g.jsonl").string());
  o.impls = {"fftw", "fftw"};
  CHECK_THROWS_AS(run_grid_bench(o), InvalidArgument);
  o = cpu_options((dir / "g.jsonl").string());
  o.redo_errors = true;  // without --resume
  CHECK_THROWS_AS(run_grid_bench(o), InvalidArgument);
  o = cpu_options((dir / "g.jsonl").string());
  o.cell.repeat = 0;
  CHECK_THROWS_AS(run_grid_bench(o), InvalidArgument);
  o = cpu_options((dir / "g.jsonl").string());
  o.impls = {"cudnn", "cufft"};
  if (!gpu_reference_available()) CHECK_THROWS_AS(run_grid_bench(o), Unsupported);
  CHECK_FALSE(std::filesystem::exists(dir / "g.jsonl"));  // nothing was written
  CHECK(grid_record_key(json{{"header", json::object()}}).empty());
  std::filesystem::remove_all(dir);
}

TEST_SUITE("gpu") {
TEST_CASE("a GPU grid run: cuDNN, cufft and fbfft records, every one verified") {
  if (!gpu_reference_available()) {
    MESSAGE("no CUDA device: skipping the GPU grid test");
    return;
  }
  const auto dir = fresh_dir();
  GridBenchOptions o = cpu_options((dir / "g.jsonl").string());
  o.impls = {"cudnn", "cufft", "fbfft"};
  o.plan.autotune = false;
  const GridBenchResult r = run_grid_bench(o);
  CHECK(r.records_written == 4 * 3 * 3);
  CHECK(r.wrong == 0);
  for (const json& rec : read((dir / "g.jsonl").string()).records) {
    INFO(rec.dump());
    CHECK(rec["status"] == "ok");
    CHECK(rec["verified"] == true);
  }
  std::filesystem::remove_all(dir);
}
}  // TEST_SUITE
