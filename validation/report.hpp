// Validation records (one JSON line per problem × pass × backend), reading them back, and the
// summary by backend × pass as a text table and as Markdown.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace fftconv {

// One outcome. status: "pass" | "fail" (outside tolerance, non-finite or unwritten values, or a
// violated adjoint identity) | "error" (the backend threw: counts as a failure) | "skipped"
// (supports() said no, or the plan is Unsupported: reason says why; not a failure).
struct Record {
  std::string set, label, spec, pass, backend, tile = "none";
  std::string status, reason;
  double rel_l2 = 0, max_abs_rel = 0;          // against the reference (adjoint: identity error)
  double tol_rel_l2 = 0, tol_max_abs_rel = 0;  // from the tolerance model
  int64_t basis = 0;                           // Nh·Nw used for the tolerance (1 = time domain)
  int64_t nonfinite = 0;                       // non-finite or never-written result elements
  double time_ms = 0, plan_ms = 0, ref_ms = 0;
  std::string ref;                             // reference rung: direct | fftw64 | gpu64
  std::string describe;                        // the plan's describe()
  std::string math;                            // GPU products' precision (fp32 | 3xtf32 | tf32), "" = none
  uint64_t data_seed = 0;
  std::string shard;                           // "i/n"

  bool failed() const { return status == "fail" || status == "error"; }
  // What --resume matches on: spec + pass + backend + tile.
  std::string key() const;
};

std::string to_json_line(const Record& r);
Record record_from_json(const std::string& line);  // throws InvalidArgument on malformed JSON
// Records of a .jsonl file (missing file: empty); later duplicates of a key replace earlier ones.
// A last line without its newline that is not a record (a run killed mid-write) is ignored; any
// other line that is not a record throws InvalidArgument naming the file and line.
std::vector<Record> read_records(const std::string& path);

struct SummaryCell {
  int64_t count = 0, failures = 0, skipped = 0;
  double worst_rel_l2 = -1;     // over checked (non-skipped) records
  double worst_ratio = -1;      // max rel_l2 / tol_rel_l2
  std::string worst_spec;       // the spec of the worst rel_l2
  std::string worst_fail;       // spec + reason of the first failure
  double total_ms = 0;
};

struct Summary {
  std::map<std::string, std::map<std::string, SummaryCell>> cells;  // backend -> pass -> cell
  int64_t records = 0, failures = 0, skipped = 0;
  bool ok() const { return failures == 0; }
};

Summary summarize(const std::vector<Record>& records);
// Fixed-width table: backend, pass, count, failures, skipped, worst rel_l2, worst/tol, spec.
std::string summary_table(const Summary& s);
// Markdown document: title, environment lines, the table, the failures (up to 50).
std::string summary_markdown(const Summary& s, const std::vector<Record>& records, const std::string& title,
                             const std::vector<std::string>& environment);
// Machine and library versions: host, compiler, FFTW, and (CUDA builds) device, driver, runtime.
std::vector<std::string> environment_lines();
// results.jsonl -> results.md (replaces the extension, or appends .md).
std::string markdown_path_for(const std::string& jsonl_path);

}  // namespace fftconv
