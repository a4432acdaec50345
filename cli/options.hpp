// Command-line flags that build PlanOptions, shared by run, validate and the benchmarks.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/backend.hpp"

namespace fftconv::cli {

struct PlanFlags {
  std::string tile = "none";
  std::string tile_sizes = "pow2";
  std::string workspace_limit = "0";
  std::string basis;                 // "" or N or HxW
  std::string tune_cache;
  bool no_autotune = false;
  bool breakdown = false;
  int threads = 0;
  std::string math = "auto";         // GPU products: auto | fp32 | 3xtf32 | tf32
  std::vector<std::string> opts;     // key=value backend pins

  void add_to(CLI::App* cmd);
  PlanOptions to_options() const;    // throws InvalidArgument naming the flag
};

// --timer calls|stream|graph (validation/run_plan.hpp GpuTimer) into `timer`, whose value is the default.
void add_timer_option(CLI::App* cmd, std::string& timer);

// "123", "64M", "2G" (binary units) -> bytes; throws InvalidArgument naming `flag`.
std::size_t parse_bytes(const std::string& s, const char* flag);
// --tile-sizes: pow2 or smooth (PlanOptions::tile_sizes) or a list of square sizes like 8,16,32
// (PlanOptions::tile_candidates); throws InvalidArgument naming the flag.
void parse_tile_sizes(const std::string& s, PlanOptions& o);
// KEY=VALUE pins (--opt and the like) into PlanOptions::extra; throws InvalidArgument naming `flag`.
std::map<std::string, std::string> parse_extra(const std::vector<std::string>& kvs, const char* flag);

}  // namespace fftconv::cli
