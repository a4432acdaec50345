// Merging the record files of a sharded sweep (`fftconv validate merge`): every shard i/n present
// exactly once, or the merge fails naming what is missing or duplicated.
#pragma once
#include <string>
#include <vector>

#include "validation/report.hpp"

namespace fftconv {

struct MergedShards {
  std::vector<Record> records;  // every file's records; a key seen again replaces the earlier one
  int64_t shard_count = 0;      // n of the shards merged (0 when every file is empty)
  int64_t empty_files = 0;      // files without records (a shard that selected no problem)
  std::string shards;           // "0/2, 1/2"
};

// Reads the files in order. Throws InvalidArgument when a file is missing or malformed, when a
// record's shard is not i/n, when the files mix shard counts, when shard i/n appears in two files
// ("shard 1/2 is duplicated: a.jsonl and b.jsonl"), or when a shard is missing and no empty file
// can stand for it ("shard 1/2 is missing").
MergedShards merge_shard_files(const std::vector<std::string>& paths);

// What the shards' own summaries (each X.jsonl's X.md, where present) say about the sweep, as lines
// for the merged summary: "sweep: `<command>`" with the shard generalised to i/n when every summary
// names the same command, else one "shard command:" line each; the device lines the summaries share
// once, with "(where the shards ran)", else each summary's under its file name; and each summary's
// problems and wall time. Files without a summary are named in one line; none at all gives {}.
std::vector<std::string> shard_summary_lines(const std::vector<std::string>& paths);

}  // namespace fftconv
