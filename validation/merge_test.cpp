// Tests of `validate merge`'s shard checks: duplicated, missing and mixed shards are errors; a
// complete set merges; an empty file stands for a shard that selected nothing.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include "common/errors.hpp"
#include "validation/merge.hpp"

using namespace fftconv;

namespace {

std::string shard_file(const std::string& name, const std::vector<std::string>& shards) {
  std::ofstream f(name, std::ios::trunc);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    Record r;
    r.spec = "n=" + std::to_string(5 + i) + "," + name;
    r.pass = "fprop";
    r.backend = "direct";
    r.status = "pass";
    r.shard = shards[i];
    f << to_json_line(r) << "\n";
  }
  return name;
}

}  // namespace

TEST_CASE("merge: every shard exactly once, or an error naming the shard") {
  const std::string a = shard_file("merge_test_a.jsonl", {"0/2", "0/2"});
  const std::string b = shard_file("merge_test_b.jsonl", {"1/2"});
  const std::string c = shard_file("merge_test_c.jsonl", {"0/3"});
  const std::string bad = shard_file("merge_test_bad.jsonl", {"2/2"});
  const std::string none = shard_file("merge_test_empty.jsonl", {});

  const MergedShards m = merge_shard_files({a, b});
  CHECK(m.records.size() == 3);
  CHECK(m.shard_count == 2);
  CHECK(m.shards == "0/2, 1/2");
  CHECK_THROWS_WITH_AS(merge_shard_files({a, a}), doctest::Contains("shard 0/2 is duplicated"), InvalidArgument);
  CHECK_THROWS_WITH_AS(merge_shard_files({a}), doctest::Contains("shard 1/2 is missing"), InvalidArgument);
  CHECK_THROWS_WITH_AS(merge_shard_files({b}), doctest::Contains("shard 0/2 is missing"), InvalidArgument);
  CHECK_THROWS_WITH_AS(merge_shard_files({a, c}), doctest::Contains("shards of 2"), InvalidArgument);
  CHECK_THROWS_WITH_AS(merge_shard_files({bad}), doctest::Contains("expected i/n"), InvalidArgument);
  CHECK_THROWS_WITH_AS(merge_shard_files({a, "merge_test_nosuch.jsonl"}), doctest::Contains("no such file"),
                       InvalidArgument);
  CHECK(merge_shard_files({a, none}).empty_files == 1);  // shard 1/2 selected no problem
  for (const auto& f : {a, b, c, bad, none}) std::remove(f.c_str());
}
