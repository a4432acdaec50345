// JSON-lines files, plain or gzip (see line_store.hpp).
#include "bench/line_store.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/errors.hpp"

#ifdef FFTCONV_HAVE_ZLIB
#include <zlib.h>
#endif

namespace fftconv::bench {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, const std::string& why) {
  throw InvalidArgument(what + ": " + why + " '" + path + "'");
}

void require_gzip(const std::string& path, const std::string& what) {
  if (is_gzip_path(path) && !gzip_supported())
    fail(what, path, "this build has no zlib (write a .jsonl and compress it with gzip) for");
}

// Everything up to and including the last newline of `text`, split into lines.
std::vector<std::string> complete_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

std::string read_all(const std::string& path, const std::string& what) {
  std::string text;
#ifdef FFTCONV_HAVE_ZLIB
  // gzread reads plain files as they are, and gzip files member after member; at a truncated member it
  // returns what it could decompress and then reports the error.
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail(what, path, "cannot read");
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, std::size_t(n));
  gzclose(f);
#else
  require_gzip(path, what);
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(what, path, "cannot read");
  text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
#endif
  return text;
}

}  // namespace

bool gzip_supported() {
#ifdef FFTCONV_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

bool is_gzip_path(const std::string& path) { return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0; }

std::vector<std::string> read_lines(const std::string& path, const std::string& what) {
  require_gzip(path, what);
  if (!std::filesystem::exists(path)) return {};
  return complete_lines(read_all(path, what));
}

void write_lines(const std::string& path, const std::vector<std::string>& lines, const std::string& what) {
  const std::string tmp = path + (is_gzip_path(path) ? ".tmp.gz" : ".tmp");  // the same format
  {
    LineWriter w(tmp, false, what);
    for (const std::string& l : lines) w.write(l);
    w.close();
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail(what, path, "cannot rename " + tmp + " (" + ec.message() + ") to");
}

LineWriter::LineWriter(const std::string& path, bool append, const std::string& what)
    : path_(path), what_(what), gzip_(is_gzip_path(path)) {
  require_gzip(path, what);
  if (append && std::filesystem::exists(path)) {
    const std::vector<std::string> lines = read_lines(path, what);
    std::size_t bytes = 0;
    for (const std::string& l : lines) bytes += l.size() + 1;
    // A gzip file is rewritten as one member (a truncated member cannot be followed by another);
    // a plain one only when it ends in a partial line.
    if (gzip_ || bytes != std::filesystem::file_size(path)) write_lines(path, lines, what);
  }
  open(append ? "ab" : "wb");
}

void LineWriter::open(const std::string& mode) {
  if (gzip_) {
#ifdef FFTCONV_HAVE_ZLIB
    gz_ = gzopen(path_.c_str(), (mode + "9").c_str());
#endif
    if (!gz_) fail(what_, path_, "cannot open for writing");
  } else {
    file_ = std::fopen(path_.c_str(), mode.c_str());
    if (!file_) fail(what_, path_, std::string("cannot open (") + std::strerror(errno) + ") for writing");
  }
  last_flush_ = std::chrono::steady_clock::now();
}

LineWriter::~LineWriter() {
  try {
    close();
  } catch (...) {  // a destructor does not throw; close() explicitly to see the error
  }
}

void LineWriter::write(const std::string& line) {
  if (file_) {
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fputc('\n', file_) == EOF ||
        std::fflush(file_) != 0)
      fail(what_, path_, "write failed on");
    return;
  }
#ifdef FFTCONV_HAVE_ZLIB
  if (gz_) {
    auto gz = static_cast<gzFile>(gz_);
    if (gzwrite(gz, line.data(), unsigned(line.size())) != int(line.size()) || gzputc(gz, '\n') != '\n')
      fail(what_, path_, "write failed on");
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_flush_).count() >= kGzipFlushSeconds) {
      if (gzflush(gz, Z_SYNC_FLUSH) != Z_OK) fail(what_, path_, "flush failed on");
      last_flush_ = now;
    }
    return;
  }
#endif
  fail(what_, path_, "write after close on");
}

void LineWriter::close() {
  if (file_) {
    const bool ok = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!ok) fail(what_, path_, "close failed on");
  }
#ifdef FFTCONV_HAVE_ZLIB
  if (gz_) {
    const int rc = gzclose(static_cast<gzFile>(gz_));
    gz_ = nullptr;
    if (rc != Z_OK) fail(what_, path_, "close failed on");
  }
#endif
}

}  // namespace fftconv::bench
