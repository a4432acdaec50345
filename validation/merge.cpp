// Shard merging with its completeness checks (see merge.hpp).
#include "validation/merge.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>

#include "common/errors.hpp"
#include "validation/problem_sets.hpp"

namespace fftconv {

MergedShards merge_shard_files(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InvalidArgument("merge: no input files");
  MergedShards out;
  std::map<std::string, std::size_t> where;
  std::map<int64_t, std::string> file_of;  // shard index -> the file that holds it
  for (const std::string& path : paths) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) throw InvalidArgument("merge: no such file '" + path + "'");
    if (S_ISDIR(st.st_mode)) throw InvalidArgument("merge: '" + path + "' is a directory");
    std::vector<Record> records = read_records(path);
    if (records.empty()) ++out.empty_files;
    std::map<int64_t, bool> here;
    for (Record& r : records) {
      std::pair<int64_t, int64_t> s;
      try {
        s = parse_shard(r.shard);
      } catch (const InvalidArgument&) {
        throw InvalidArgument("merge: " + path + ": record of " + r.spec + " has shard '" + r.shard +
                              "', expected i/n");
      }
      if (out.shard_count == 0) out.shard_count = s.second;
      if (s.second != out.shard_count)
        throw InvalidArgument("merge: " + path + " holds shard " + r.shard + " but another file holds shards of " +
                              std::to_string(out.shard_count));
      here[s.first] = true;
      auto [it, fresh] = where.emplace(r.key(), out.records.size());
      if (fresh) out.records.push_back(std::move(r));
      else out.records[it->second] = std::move(r);
    }
    for (const auto& [index, _] : here) {
      const std::string name = std::to_string(index) + "/" + std::to_string(out.shard_count);
      auto [it, fresh] = file_of.emplace(index, path);
      if (!fresh) throw InvalidArgument("merge: shard " + name + " is duplicated: " + it->second + " and " + path);
    }
  }
  // Each empty file may stand for one shard that selected no problem.
  int64_t missing = 0, first_missing = -1;
  for (int64_t i = 0; i < out.shard_count && missing <= out.empty_files; ++i)
    if (!file_of.count(i)) {
      if (first_missing < 0) first_missing = i;
      ++missing;
    }
  if (missing > out.empty_files)
    throw InvalidArgument("merge: shard " + std::to_string(first_missing) + "/" + std::to_string(out.shard_count) +
                          " is missing (" + std::to_string(file_of.size()) + " of " +
                          std::to_string(out.shard_count) + " shards given)");
  for (const auto& [index, _] : file_of)
    out.shards += (out.shards.empty() ? "" : ", ") + std::to_string(index) + "/" + std::to_string(out.shard_count);
  return out;
}

std::vector<std::string> shard_summary_lines(const std::vector<std::string>& paths) {
  struct Shard {
    std::string file, command;
    std::vector<std::string> device, problems;
  };
  static const std::regex kShard(R"(--shard \d+/(\d+))");
  std::vector<Shard> shards;
  std::vector<std::string> missing;
  for (const std::string& path : paths) {
    std::ifstream in(markdown_path_for(path));
    std::string line;
    if (!in || !std::getline(in, line) || line.rfind("# ", 0) != 0) {
      missing.push_back(path);
      continue;
    }
    Shard s{path, std::regex_replace(line.substr(2), kShard, "--shard i/$1"), {}, {}};
    while (std::getline(in, line)) {
      if (line.rfind("- device", 0) == 0 || line.rfind("- CUDA", 0) == 0 || line.rfind("- cuFFT", 0) == 0)
        s.device.push_back(line.substr(2));
      else if (line.rfind("- problems:", 0) == 0)
        s.problems.push_back(line.substr(2));
    }
    shards.push_back(std::move(s));
  }
  if (shards.empty()) return {};
  std::vector<std::string> out;
  const auto same = [&](auto field) {
    return std::all_of(shards.begin(), shards.end(), [&](const Shard& s) { return field(s) == field(shards[0]); });
  };
  if (same([](const Shard& s) { return s.command; }))
    out.push_back("sweep: `" + shards[0].command + "`");
  else
    for (const Shard& s : shards) out.push_back("shard command: `" + s.command + "` (" + s.file + ")");
  if (same([](const Shard& s) { return s.device; })) {
    for (const std::string& d : shards[0].device) out.push_back(d + " (where the shards ran)");
  } else {
    for (const Shard& s : shards)
      for (const std::string& d : s.device) out.push_back(d + " (" + s.file + ")");
  }
  for (const Shard& s : shards)
    for (const std::string& p : s.problems) out.push_back(p + " (" + s.file + ")");
  if (!missing.empty()) {
    std::string m = "no summary beside";
    for (const std::string& f : missing) m += " " + f;
    out.push_back(m);
  }
  return out;
}

}  // namespace fftconv
