// Shard merging with its completeness checks (see merge.hpp).
#include "validation/merge.hpp"

#include <sys/stat.h>

#include <map>

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

}  // namespace fftconv
