// libFuzzer target (clang -fsanitize=fuzzer,address,undefined; scripts/fuzz.sh): `validate merge`
// on mutated shard sets. The input is split at lines "--" into up to four shard files; merging them
// either throws InvalidArgument or returns every shard 0..n-1 exactly once (empty files standing in
// for shards that selected nothing), and its summary and Markdown render.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "validation/merge.hpp"
#include "validation/problem_sets.hpp"

using namespace fftconv;

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  for (std::size_t start = 0; parts.size() < 4;) {
    const std::size_t cut = text.find("\n--\n", start);
    parts.push_back(text.substr(start, cut == std::string::npos ? std::string::npos : cut + 1 - start));
    if (cut == std::string::npos) break;
    start = cut + 4;
  }
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    paths.push_back("/tmp/fftconv_fuzz_merge_" + std::to_string(getpid()) + "_" + std::to_string(i) + ".jsonl");
    std::ofstream(paths.back(), std::ios::binary | std::ios::trunc) << parts[i];
  }
  MergedShards m;
  try {
    m = merge_shard_files(paths);
  } catch (const InvalidArgument&) {
    return 0;
  }
  std::set<std::string> keys, shards;
  for (const Record& r : m.records) {
    require(keys.insert(r.key()).second);  // one record per key
    const auto [i, n] = parse_shard(r.shard);
    require(n == m.shard_count && i >= 0 && i < n);
    shards.insert(r.shard);
  }
  require(int64_t(shards.size()) + m.empty_files >= m.shard_count);
  require(m.empty_files <= int64_t(paths.size()));
  const Summary s = summarize(m.records);
  require(s.records == int64_t(m.records.size()));
  require(!summary_markdown(s, m.records, "fuzz", {}).empty());
  require(!summary_table(s).empty());
  return 0;
}
