// Result files written without losing data: writability probed before any work, records appended
// with every write checked, a line cut off by a killed run dropped before a resume appends to it.
#pragma once
#include <string>
#include <string_view>

namespace fftconv {

// Throws InvalidArgument naming `flag` and `path` unless `path` can be created or appended to and
// takes data. Some files open for writing but refuse every write (/proc/version): a zero-byte
// write() probes that. Creates `path` empty when it did not exist.
void require_writable(const std::string& path, std::string_view flag);

// Appends lines to a file (truncated first unless `append`); a failed write throws InvalidArgument
// naming `flag`, so no record is lost silently. With `append`, a last line without its newline is
// first completed when it is a whole record, else (a run killed mid-write, which read_records
// ignores) removed, so that the next line starts clean.
class LineWriter {
 public:
  LineWriter(const std::string& path, bool append, std::string_view flag);
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  void write_line(const std::string& line);

 private:
  std::string path_, flag_;
  int fd_ = -1;
};

// Writes `text` to `path` (truncating), every write checked; throws InvalidArgument naming `flag`.
void write_text_file(const std::string& path, const std::string& text, std::string_view flag);

}  // namespace fftconv
