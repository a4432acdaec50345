// write_file_atomically: concurrent writers of one file leave one writer's whole contents and no
// temporary files; a folder that does not exist gives a reason, not an exception.
#include "common/atomic_write.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace fftconv;

TEST_CASE("write_file_atomically: concurrent writers never tear the file") {
  const auto dir = std::filesystem::temp_directory_path() / ("fftconv_atomic_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "cache.json").string();
  // Each writer's text is one repeated character, long enough that interleaved writes would mix.
  const std::size_t len = 1 << 16;
  std::vector<std::thread> writers;
  std::vector<std::string> failures(4);
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      const std::string text(len, char('a' + t));
      for (int i = 0; i < 50; ++i)
        if (std::string why = write_file_atomically(file, text); !why.empty()) failures[t] = why;
    });
  for (auto& w : writers) w.join();
  for (const auto& f : failures) CHECK(f.empty());
  std::ifstream in(file, std::ios::binary);
  std::stringstream got;
  got << in.rdbuf();
  const std::string s = got.str();
  REQUIRE(s.size() == len);
  CHECK(s.find_first_not_of(s[0]) == std::string::npos);
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++entries;
    CHECK(e.path().filename() == "cache.json");
  }
  CHECK(entries == 1);
  std::filesystem::remove_all(dir);

  const std::string why = write_file_atomically((dir / "missing" / "x.json").string(), "{}");
  CHECK(why.find("cannot write") != std::string::npos);
}
