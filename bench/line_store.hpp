// JSON-lines files of the benchmarks, plain or gzip-compressed (a name ending in .gz, through zlib),
// written a line at a time so that an interrupted run keeps what it wrote and a later one resumes.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace fftconv::bench {

// Was the library built with zlib (can it read and write .gz files)?
bool gzip_supported();
bool is_gzip_path(const std::string& path);

// The complete lines of `path` (a missing file has none). A gzip file may be a series of members and
// may end in a truncated one (a run killed mid-write): what decompresses up to its last newline is
// returned. Throws InvalidArgument naming `what` when the file cannot be read, or is .gz in a build
// without zlib.
std::vector<std::string> read_lines(const std::string& path, const std::string& what);

// Writes lines to `path`. Plain files are flushed after every line; gzip files every
// kGzipFlushSeconds (a sync flush: everything before it decompresses even if the process dies).
class LineWriter {
 public:
  static constexpr double kGzipFlushSeconds = 2.0;
  // append = false: truncates. append = true: keeps the file's complete lines (rewritten first, through
  // a temporary file, when they are not the whole file: a truncated tail is dropped) and adds after
  // them. Throws InvalidArgument naming `what` when the file cannot be opened.
  LineWriter(const std::string& path, bool append, const std::string& what);
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  void write(const std::string& line);  // `line` without its newline
  void close();                         // flushes and closes (the gzip trailer); idempotent

 private:
  void open(const std::string& mode);
  std::string path_, what_;
  bool gzip_ = false;
  std::FILE* file_ = nullptr;
  void* gz_ = nullptr;  // gzFile
  std::chrono::steady_clock::time_point last_flush_;
};

// Writes `lines` to `path` as a whole (through a temporary file renamed over it).
void write_lines(const std::string& path, const std::vector<std::string>& lines, const std::string& what);

}  // namespace fftconv::bench
