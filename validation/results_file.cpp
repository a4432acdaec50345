// Checked writes of result files (see results_file.hpp).
#include "validation/results_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/errors.hpp"
#include "validation/report.hpp"

namespace fftconv {

namespace {

[[noreturn]] void fail(std::string_view flag, const std::string& path, const char* what, int err) {
  throw InvalidArgument(std::string(flag) + ": cannot " + what + " '" + path + "': " + std::strerror(err));
}

int open_for_writing(const std::string& path, int mode_flags, std::string_view flag) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | mode_flags, 0644);
  if (fd < 0) fail(flag, path, "open for writing", errno);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    fail(flag, path, "write", EISDIR);
  }
  if (::write(fd, "", 0) < 0) {  // files that open but take no data fail here
    const int err = errno;
    ::close(fd);
    fail(flag, path, "write", err);
  }
  return fd;
}

void write_all(int fd, const char* data, std::size_t n, std::string_view flag, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail(flag, path, "write", w < 0 ? errno : EIO);
    data += w;
    n -= std::size_t(w);
  }
}

// Ends the file on a newline the way read_records reads it: a last line without its newline is
// completed when it is a whole record, else (cut off mid-write) removed.
void finish_last_line(int fd, std::string_view flag, const std::string& path) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return;
  char buf[4096];
  std::string tail;  // the bytes after the last newline
  off_t end = size, keep = 0;
  while (end > 0) {
    const off_t start = end > off_t(sizeof buf) ? end - off_t(sizeof buf) : 0;
    const ssize_t got = ::pread(fd, buf, std::size_t(end - start), start);
    if (got != ssize_t(end - start)) return;  // unreadable (e.g. opened write-only): leave it
    ssize_t i = got;
    while (i > 0 && buf[i - 1] != '\n') --i;
    tail.insert(0, buf + i, std::size_t(got - i));
    if (i > 0) {
      keep = start + i;
      break;
    }
    end = start;
  }
  if (tail.empty()) return;
  bool whole = false;
  try {
    whole = !record_from_json(tail).spec.empty();
  } catch (const InvalidArgument&) {
  }
  if (whole) write_all(fd, "\n", 1, flag, path);
  else if (::ftruncate(fd, keep) != 0) fail(flag, path, "truncate the cut-off last line of", errno);
}

}  // namespace

void require_writable(const std::string& path, std::string_view flag) {
  ::close(open_for_writing(path, O_APPEND, flag));
}

LineWriter::LineWriter(const std::string& path, bool append, std::string_view flag) : path_(path), flag_(flag) {
  if (append) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);  // read access: to find the last newline
    if (fd_ < 0) fd_ = open_for_writing(path, 0, flag);
    else if (::write(fd_, "", 0) < 0) {
      const int err = errno;
      ::close(fd_);
      fail(flag, path, "write", err);
    }
    finish_last_line(fd_, flag, path);
    if (::lseek(fd_, 0, SEEK_END) < 0) fail(flag, path, "seek to the end of", errno);
  } else {
    fd_ = open_for_writing(path, O_TRUNC, flag);
  }
}

LineWriter::~LineWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void LineWriter::write_line(const std::string& line) {
  std::string s = line;
  s += '\n';
  write_all(fd_, s.data(), s.size(), flag_, path_);
}

void write_text_file(const std::string& path, const std::string& text, std::string_view flag) {
  const int fd = open_for_writing(path, O_TRUNC, flag);
  try {
    write_all(fd, text.data(), text.size(), flag, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail(flag, path, "write", errno);
}

}  // namespace fftconv
