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

TEST_CASE("merge: the shards' summaries give the sweep's command and device once, or each with its file") {
  const auto summary = [](const std::string& jsonl, const std::string& shard, const std::string& device) {
    std::ofstream f(markdown_path_for(jsonl), std::ios::trunc);
    f << "# fftconv validate --set smoke --tile none --shard " << shard << " --backends fbfft\n\n- host: vm\n"
      << "- device 0 of 1: " << device << "\n- CUDA driver: 13000\n- problems: 32, wall time 9.5 s\n- result: x\n";
  };
  const std::string a = shard_file("merge_test_sum_a.jsonl", {"0/2"});
  const std::string b = shard_file("merge_test_sum_b.jsonl", {"1/2"});
  summary(a, "0/2", "H100");
  summary(b, "1/2", "H100");
  CHECK(shard_summary_lines({a, b}) ==
        std::vector<std::string>{"sweep: `fftconv validate --set smoke --tile none --shard i/2 --backends fbfft`",
                                 "device 0 of 1: H100 (where the shards ran)",
                                 "CUDA driver: 13000 (where the shards ran)",
                                 "problems: 32, wall time 9.5 s (merge_test_sum_a.jsonl)",
                                 "problems: 32, wall time 9.5 s (merge_test_sum_b.jsonl)"});
  summary(b, "1/2", "H200");
  const std::vector<std::string> mixed = shard_summary_lines({a, b});
  CHECK(mixed[1] == "device 0 of 1: H100 (merge_test_sum_a.jsonl)");
  CHECK(mixed[3] == "device 0 of 1: H200 (merge_test_sum_b.jsonl)");
  std::remove(markdown_path_for(b).c_str());
  CHECK(shard_summary_lines({a, b}).back() == "no summary beside merge_test_sum_b.jsonl");
  std::remove(markdown_path_for(a).c_str());
  CHECK(shard_summary_lines({a, b}).empty());
  std::remove(a.c_str());
  std::remove(b.c_str());
}
