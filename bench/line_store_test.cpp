// The benchmarks' JSON-lines files (line_store.hpp): round trips, appends, and files cut short by a
// killed run, plain and gzip.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "bench/line_store.hpp"
#include "common/errors.hpp"

using namespace fftconv;
using namespace fftconv::bench;

namespace {

std::filesystem::path fresh_dir() {
  const auto d = std::filesystem::temp_directory_path() /
                 ("fftconv_line_store_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(d);
  return d;
}

std::vector<std::string> numbered(int from, int to) {
  std::vector<std::string> v;
  for (int i = from; i < to; ++i) v.push_back("{\"i\": " + std::to_string(i) + ", \"pad\": \"" + std::string(i % 50, 'x') + "\"}");
  return v;
}

void write_all(const std::string& path, bool append, const std::vector<std::string>& lines) {
  LineWriter w(path, append, "out");
  for (const auto& l : lines) w.write(l);
  w.close();
}

void chop(const std::string& path, std::uintmax_t bytes) {
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - bytes);
}

}  // namespace

TEST_CASE("plain line files: round trip, append, a partial last line dropped and repaired") {
  const auto dir = fresh_dir();
  const std::string path = (dir / "a.jsonl").string();
  CHECK(read_lines(path, "out").empty());  // missing file
  write_all(path, false, numbered(0, 10));
  CHECK(read_lines(path, "out") == numbered(0, 10));
  write_all(path, true, numbered(10, 15));
  CHECK(read_lines(path, "out") == numbered(0, 15));
  write_all(path, false, numbered(3, 5));  // truncating
  CHECK(read_lines(path, "out") == numbered(3, 5));
  chop(path, 4);  // a run killed in the middle of its last line
  CHECK(read_lines(path, "out") == numbered(3, 4));
  write_all(path, true, numbered(7, 8));  // the partial line does not glue onto the next one
  CHECK(read_lines(path, "out") == std::vector<std::string>{numbered(3, 4)[0], numbered(7, 8)[0]});
  std::filesystem::remove_all(dir);
}

TEST_CASE("gzip line files: members appended, a truncated member read up to its last line") {
  const auto dir = fresh_dir();
  const std::string path = (dir / "a.jsonl.gz").string();
  CHECK(is_gzip_path(path));
  CHECK_FALSE(is_gzip_path((dir / "a.jsonl").string()));
  if (!gzip_supported()) {
    CHECK_THROWS_AS(read_lines(path, "out"), InvalidArgument);
    CHECK_THROWS_AS(LineWriter(path, false, "out"), InvalidArgument);
    MESSAGE("built without zlib: gzip round trips skipped");
    return;
  }
  write_all(path, false, numbered(0, 200));
  std::ifstream raw(path, std::ios::binary);
  unsigned char magic[2] = {0, 0};
  raw.read(reinterpret_cast<char*>(magic), 2);
  CHECK(magic[0] == 0x1f);  // really gzip
  CHECK(magic[1] == 0x8b);
  CHECK(read_lines(path, "out") == numbered(0, 200));
  write_all(path, true, numbered(200, 400));
  CHECK(read_lines(path, "out") == numbered(0, 400));
  // Cut into the second member: the first member's lines survive, and no line comes back torn.
  chop(path, 40);
  const std::vector<std::string> got = read_lines(path, "out");
  REQUIRE(got.size() >= 200);
  REQUIRE(got.size() < 400);
  const std::vector<std::string> all = numbered(0, 400);
  CHECK(got == std::vector<std::string>(all.begin(), all.begin() + long(got.size())));
  // An append after the damage rewrites the file whole: every line is readable again.
  write_all(path, true, numbered(1000, 1001));
  std::vector<std::string> want = got;
  want.push_back(numbered(1000, 1001)[0]);
  CHECK(read_lines(path, "out") == want);
  std::filesystem::remove_all(dir);
}

TEST_CASE("line files name the option and the path when they cannot be written") {
  try {
    LineWriter w("/nonexistent-dir/x.jsonl", false, "out");
    FAIL("opened a file in a missing directory");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("out:") == 0);
    CHECK(std::string(e.what()).find("/nonexistent-dir/x.jsonl") != std::string::npos);
  }
}
