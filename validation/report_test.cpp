// Tests of the validation records: JSON round trip (with infinities), resume keys, reading a cut-off
// file, and the summary table / Markdown.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "common/errors.hpp"
#include "validation/report.hpp"

using namespace fftconv;

namespace {
Record rec(const std::string& backend, const std::string& pass, const std::string& status, double rel) {
  Record r;
  r.set = "smoke"; r.spec = "S=1,f=1,fo=1,h=5,w=5,kh=3,kw=3,ph=0,pw=0,pad=zero"; r.pass = pass;
  r.backend = backend; r.status = status; r.rel_l2 = rel; r.tol_rel_l2 = 1e-6; r.time_ms = 2;
  return r;
}
}  // namespace

TEST_CASE("records round-trip through JSON, infinities included") {
  Record r = rec("fftw", "bprop", "fail", std::numeric_limits<double>::infinity());
  r.describe = "fftw: basis 8x8 \"quoted\"";
  r.data_seed = 0xfeedfacecafebeefULL;
  r.basis = 64;
  const Record b = record_from_json(to_json_line(r));
  CHECK(b.key() == r.key());
  CHECK(std::isinf(b.rel_l2));
  CHECK(b.describe == r.describe);
  CHECK(b.data_seed == r.data_seed);
  CHECK(b.basis == 64);
  CHECK(b.failed());
  CHECK(to_json_line(r).find('\n') == std::string::npos);
  CHECK_THROWS_AS(record_from_json("{\"x\": 1}"), InvalidArgument);
  CHECK_THROWS_AS(record_from_json("not json"), InvalidArgument);
}

TEST_CASE("the resume key tells tiles and passes apart") {
  Record a = rec("fftw", "fprop", "pass", 1e-7), b = a;
  b.tile = "16";
  CHECK(a.key() != b.key());
  b = a;
  b.pass = "bprop";
  CHECK(a.key() != b.key());
}

TEST_CASE("read_records keeps the last of duplicate keys and ignores a cut-off last line") {
  const std::string path = "report_test_records.jsonl";
  {
    std::ofstream f(path);
    f << to_json_line(rec("fftw", "fprop", "fail", 1)) << "\n";
    f << to_json_line(rec("im2col", "fprop", "pass", 1e-7)) << "\n";
    f << to_json_line(rec("fftw", "fprop", "pass", 2e-7)) << "\n";
    f << to_json_line(rec("fftw", "bprop", "pass", 2e-7)).substr(0, 30);
  }
  const auto rs = read_records(path);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].status == "pass");
  CHECK(rs[0].rel_l2 == doctest::Approx(2e-7));
  CHECK(read_records("no_such_file.jsonl").empty());
  {
    std::ofstream f(path);
    f << "garbage\n" << to_json_line(rec("fftw", "fprop", "pass", 1)) << "\n";
  }
  CHECK_THROWS_AS(read_records(path), InvalidArgument);
  std::remove(path.c_str());
}

TEST_CASE("record_from_json reads integer fields from JSON integers only") {
  // A float where an integer belongs (a mutated file) must not be converted: 1.8e26 does not fit.
  const Record r = record_from_json(R"({"spec":"n=5","pass":"fprop","backend":"direct","data_seed":1.77854e+26,)"
                                    R"("basis":-3.5e300,"nonfinite":1e19})");
  CHECK(r.data_seed == 0);
  CHECK(r.basis == 0);
  CHECK(r.nonfinite == 0);
  CHECK(record_from_json(R"({"spec":"n=5","pass":"fprop","backend":"direct","data_seed":42,"basis":64})").basis == 64);
}

TEST_CASE("summary by backend x pass: counts, failures, skipped, worst spec") {
  std::vector<Record> rs = {rec("fftw", "fprop", "pass", 1e-7), rec("fftw", "fprop", "fail", 3e-5),
                            rec("fftw", "bprop", "skipped", 0), rec("im2col", "fprop", "pass", 2e-7),
                            rec("im2col", "adjoint", "error", 0)};
  rs[1].spec = "S=9,f=1,fo=1,h=5,w=5,kh=3,kw=3,ph=0,pw=0,pad=zero";
  const Summary s = summarize(rs);
  CHECK(s.records == 5);
  CHECK(s.failures == 2);
  CHECK(s.skipped == 1);
  CHECK(!s.ok());
  const SummaryCell& c = s.cells.at("fftw").at("fprop");
  CHECK(c.count == 2);
  CHECK(c.failures == 1);
  CHECK(c.worst_spec == rs[1].spec);
  CHECK(c.worst_ratio == doctest::Approx(30));
  const std::string table = summary_table(s);
  CHECK(table.find("worst rel_l2") != std::string::npos);
  CHECK(table.find(rs[1].spec) != std::string::npos);
  const std::string md = summary_markdown(s, rs, "smoke", environment_lines());
  CHECK(md.find("| backend |") != std::string::npos);
  CHECK(md.find("## Failures") != std::string::npos);
  CHECK(md.find("FFTW") != std::string::npos);
  CHECK(markdown_path_for("out/results.jsonl") == "out/results.md");
  CHECK(markdown_path_for("a.b/results") == "a.b/results.md");
}
