// The `fftconv` command built with only the subcommands a command line can reach gives the same exit
// status, stdout and stderr as with the full tree (Note [reachable command tree] in app.cpp).
#include "cli/app.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"

namespace fftconv::cli {
namespace {

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string read_all(std::FILE* f) {
  std::string s;
  std::rewind(f);
  for (int c; (c = std::fgetc(f)) != EOF;) s += char(c);
  return s;
}

// Sends stdout and stderr to temporary files until destroyed (also when run_cli throws).
class Captured {
 public:
  Captured() : out_(std::tmpfile()), err_(std::tmpfile()) {
    REQUIRE((out_ && err_));
    flush();
    dup2(fileno(out_), 1);
    dup2(fileno(err_), 2);
  }
  ~Captured() {
    restore();
    std::fclose(out_);
    std::fclose(err_);
  }
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  void restore() {
    if (saved_out_ < 0) return;
    flush();
    dup2(saved_out_, 1);
    dup2(saved_err_, 2);
    close(saved_out_);
    close(saved_err_);
    saved_out_ = saved_err_ = -1;
  }
  std::string out() const { return read_all(out_); }
  std::string err() const { return read_all(err_); }

 private:
  static void flush() {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
  }
  std::FILE* out_;
  std::FILE* err_;
  int saved_out_ = dup(1), saved_err_ = dup(2);
};

// Runs `fftconv WORDS...` (arguments only: no work, no files) with stdout and stderr captured.
Outcome run_captured(const std::vector<std::string>& words, CommandTree tree) {
  std::vector<const char*> argv{"fftconv"};
  for (const auto& w : words) argv.push_back(w.c_str());
  Captured captured;
  Outcome o;
  o.status = run_cli(int(argv.size()), argv.data(), tree);
  captured.restore();
  o.out = captured.out();
  o.err = captured.err();
  return o;
}

void check_same(const std::vector<std::string>& words) {
  std::string line = "fftconv";
  for (const auto& w : words) line += " '" + w + "'";
  CAPTURE(line);
  const Outcome full = run_captured(words, CommandTree::full);
  const Outcome reach = run_captured(words, CommandTree::reachable);
  CHECK(reach.status == full.status);
  CHECK(reach.out == full.out);
  CHECK(reach.err == full.err);
}

}  // namespace

TEST_CASE("cli: the reachable command tree behaves as the full one") {
  arguments_only() = true;
  const std::vector<std::vector<std::string>> lines = {
      {}, {"--help"}, {"-h"}, {"--version"}, {"nonsense"}, {"--bogus", "run"},
      {"backends"}, {"backends", "--help"}, {"backends", "extra"}, {"backends", "run"},
      {"run"}, {"run", "--help"}, {"run", "--version"}, {"run", "plan"}, {"run", "--bogus"},
      {"run", "--problem", "bench"}, {"run", "--problem", "S=1,n=8,k=3", "--threads", "abc"},
      {"run", "--problem", "S=1,n=8,k=3", "--help"}, {"run", "merge"}, {"run", "layers"},
      {"plan", "--help"}, {"plan", "--problem", "S=2,f=3,fo=4,n=16,k=5"}, {"plan", "validate", "--help"},
      {"validate", "--help"}, {"validate", "--set", "smoke", "--sample", "2"}, {"validate", "--set", "nope"},
      {"validate", "merge"}, {"validate", "merge", "--help"}, {"validate", "merge", "a.md", "b.jsonl"},
      {"validate", "merge", "a.md", "run"}, {"validate", "merge", "a.md", "grid"}, {"validate", "--out", "bench"},
      {"bench"}, {"bench", "--help"}, {"bench", "--version"}, {"bench", "nosuch"}, {"bench", "run"},
      {"bench", "layers", "--help"}, {"bench", "grid", "--help"}, {"bench", "grid", "merge", "--help"},
      {"bench", "networks", "--help"}, {"bench", "fft", "--help"}, {"bench", "tiling", "--help"},
      {"bench", "conv", "--help"}, {"bench", "step", "--help"}, {"bench", "tiling", "conv"},
      {"bench", "conv", "bench"}, {"bench", "step", "plan"}, {"bench", "tiling", "--bogus"},
      {"bench", "conv", "--backend", "fftw", "--baseline", "nope"}, {"bench", "--help", "layers"},
  };
  for (const auto& words : lines) check_same(words);
}

TEST_CASE("cli: the reachable command tree behaves as the full one on the fuzz seeds") {
  arguments_only() = true;
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FFTCONV_CLI_FUZZ_SEEDS)) {
    std::ifstream f(entry.path(), std::ios::binary);
    std::vector<std::string> words;
    for (std::string w; std::getline(f, w);) words.push_back(w);
    check_same(words);
    ++seeds;
  }
  CHECK(seeds > 0);
}

TEST_CASE("cli: plan and run read --tile-sizes and --workspace-limit alike") {
  arguments_only() = true;
  const std::string spec = "S=1,f=2,fo=2,n=16,k=3";
  const std::vector<std::vector<std::string>> bad = {
      {"--tile-sizes", "8,x"}, {"--tile-sizes", "8,,16"}, {"--tile-sizes", "8x16"}, {"--tile-sizes", ","},
      {"--workspace-limit", "3T"}, {"--workspace-limit", "-1"}, {"--workspace-limit", "64MB"}};
  for (const auto& flag : bad) {
    std::vector<std::string> plan{"plan", "--problem", spec, "--pass", "fprop"}, run{"run", "--problem", spec};
    plan.insert(plan.end(), flag.begin(), flag.end());
    run.insert(run.end(), flag.begin(), flag.end());
    CAPTURE(flag[1]);
    const Outcome p = run_captured(plan, CommandTree::full), r = run_captured(run, CommandTree::full);
    CHECK(p.status == 2);
    CHECK(r.status == 2);
    CHECK(p.err == r.err);
    CHECK(p.err.find(flag[0].substr(2) + ": expected") != std::string::npos);
  }
  for (const char* ok : {"64m", "64M", "4k", "2G", "0"}) {
    const Outcome p = run_captured({"plan", "--problem", spec, "--pass", "fprop", "--workspace-limit", ok},
                                   CommandTree::full);
    CAPTURE(ok);
    CHECK(p.status == 0);
  }
}

TEST_CASE("cli: bench layers refuses bad options before it asks for a device") {
  arguments_only() = true;
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"bench", "layers", "--set", "nope"}, "unknown layer set 'nope'"},
      {{"bench", "layers", "--set", "L", "--only", "L1,L9"}, "--only: no layer 'L9' in the layers to run"},
      {{"bench", "layers", "--passes", "fprop,backward"}, "pass: unknown value 'backward'"},
      {{"bench", "layers", "--math", "fp16"}, "math: expected"},
      {{"bench", "layers", "--repeat", "0"}, "--repeat: must be >= 1, got 0"},
      {{"bench", "layers", "--warmup", "-1"}, "--warmup: must be >= 0, got -1"},
      {{"bench", "layers", "--verify-batch", "0"}, "--verify-batch: must be >= 1, got 0"},
      {{"bench", "layers", "--layers", "S=0,n=8,k=3"}, "S: must be >= 1, got 0"},
      {{"bench", "layers", "--set", "large", "--only", "L2", "--list"}, "--only: no layer 'L2' in the layers to run"}};
  for (const auto& [words, message] : bad) {
    CAPTURE(message);
    const Outcome o = run_captured(words, CommandTree::full);
    CHECK(o.status == 2);
    CHECK(o.err.find(message) != std::string::npos);
  }
  CHECK(run_captured({"bench", "layers", "--set", "large", "--only", "big_k45,L1"}, CommandTree::full).status == 0);
  const Outcome list = run_captured({"bench", "layers", "--set", "large", "--only", "big_k45,L1", "--list"},
                                    CommandTree::full);
  CHECK(list.status == 0);
  CHECK(list.out.find("\"big_k45\"") < list.out.find("\"L1\""));  // in --only's order
  CHECK(list.out.find("img512_k15") == std::string::npos);
}

TEST_CASE("cli: bench fft refuses sizes without a kernel and bad batches before it asks for a device") {
  arguments_only() = true;
  [[maybe_unused]] const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"bench", "fft", "--sizes", "11"}, "fbfft has no kernel for size 11x11"},
      {{"bench", "fft", "--dims", "1", "--sizes", "512"}, "fbfft has no kernel for size 512"},
      {{"bench", "fft", "--batches", "0"}, "batch 0 out of range [1, 2^30]"}};
#ifdef FFTCONV_HAVE_CUDA  // (a build without CUDA refuses the benchmark itself)
  for (const auto& [words, message] : bad) {
    CAPTURE(message);
    const Outcome o = run_captured(words, CommandTree::full);
    CHECK(o.status == 2);
    CHECK(o.err.find(message) != std::string::npos);
  }
#endif
  CHECK(run_captured({"bench", "fft", "--sizes", "12,128", "--rects", "42x54"}, CommandTree::full).status == 0);
}

TEST_CASE("cli: validate's summary title names every option that shapes the sweep") {
  arguments_only() = false;
  const std::string out = "app_test_validate_title.jsonl", md = "app_test_validate_title.md";
  std::remove(out.c_str());
  std::remove(md.c_str());
  const Outcome v = run_captured({"validate", "--set", "S=1,f=1,fo=1,n=4,k=3", "--backends", "fftw", "--math", "fp32",
                                  "--plan-opt", "fftw_cgemm=eigen", "--no-progress", "--out", out},
                                 CommandTree::full);
  CHECK(v.status == 0);
  std::ifstream in(md);
  std::string title;
  std::getline(in, title);
  CHECK(title == "# fftconv validate --set S=1,f=1,fo=1,n=4,k=3 --tile none --check auto --backends fftw --math fp32 "
                 "--plan-opt fftw_cgemm=eigen");
  std::remove(out.c_str());
  std::remove(md.c_str());
}

TEST_CASE("cli: bench step's JSON names the device beside both timings") {
  arguments_only() = false;
  const std::string json = "app_test_step.json";
  std::remove(json.c_str());
  const Outcome v = run_captured({"bench", "step", "--problem", "S=2,f=3,fo=4,n=9,k=3", "--backend", "fftw",
                                  "--threads", "1", "--repeat", "2", "--json", json},
                                 CommandTree::full);
  CHECK(v.status == 0);
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j.at("benchmark") == "step");
  CHECK(j.at("device") == "host CPU (1 OpenMP threads)");
  CHECK(j.at("ok") == true);
  CHECK(j.at("independent_ms").get<double>() > 0);
  CHECK(j.at("shared_ms").get<double>() > 0);
  std::remove(json.c_str());
}

TEST_CASE("cli: plan --prepared-weights keys auto's choice apart (Note [planning for prepared weights])") {
  arguments_only() = false;
  const std::vector<std::string> base{"plan", "--problem", "S=2,f=3,fo=4,n=9,k=3", "--pass", "fprop",
                                      "--backend", "auto", "--tile", "none", "--tune-cache", "none", "--json"};
  auto plan_json = [&](std::vector<std::string> args) {
    const Outcome o = run_captured(args, CommandTree::full);
    REQUIRE(o.status == 0);
    return nlohmann::json::parse(o.out);
  };
  std::vector<std::string> prepared = base;
  prepared.push_back("--prepared-weights");
  CHECK(plan_json(base).at("from_cache") == false);
  CHECK(plan_json(base).at("from_cache") == true);
  CHECK(plan_json(prepared).at("from_cache") == false);  // not the choice for weights transformed per call
  CHECK(plan_json(prepared).at("from_cache") == true);
}

}  // namespace fftconv::cli

TEST_CASE("cli: recorded commands quote what a shell would split or expand") {
  using fftconv::cli::shell_quote;
  CHECK(shell_quote("S=4,f=8,fo=8,n=13,k=3") == "S=4,f=8,fo=8,n=13,k=3");
  CHECK(shell_quote("/tmp/b/fftconv") == "/tmp/b/fftconv");
  CHECK(shell_quote("S=4,n=13;S=8,n=27") == "'S=4,n=13;S=8,n=27'");
  CHECK(shell_quote("two words") == "'two words'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("$HOME") == "'$HOME'");
  // This test program's own command line: its path first, plain.
  const std::string self = fftconv::cli::command_line("none");
  CHECK(self.find("cli_test") != std::string::npos);
}
