// The progress line (see progress.hpp).
#include "validation/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace fftconv {

ProgressLine::ProgressLine(std::string label, int64_t total, bool on)
    : label_(std::move(label)), total_(total), on_(on), tty_(isatty(2) != 0), start_(Clock::now()), last_(start_) {}

void ProgressLine::skip(int64_t n) {
  done_ += n;
  skipped_ += n;
}

void ProgressLine::add(int64_t n, const std::string& tail) {
  done_ += n;
  if (!on_) return;
  const auto now = Clock::now();
  if (std::chrono::duration<double>(now - last_).count() < (tty_ ? 0.5 : 30.0) && done_ < total_) return;
  last_ = now;
  print(tail);
}

void ProgressLine::finish(const std::string& tail) {
  if (!on_) return;
  if (printed_ != done_) print(tail);
  if (tty_) std::fputc('\n', stderr);
}

void ProgressLine::print(const std::string& tail) {
  printed_ = done_;
  const double el = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = el > 0 ? double(done_ - skipped_) / el : 0;
  const double left = rate > 0 ? double(total_ - done_) / rate : 0;
  std::fprintf(stderr, "%s%s: %lld/%lld (%.1f%%), %.2f/s, elapsed %s, left %s%s%s%s", tty_ ? "\r" : "", label_.c_str(),
               (long long)done_, (long long)total_, total_ ? 100.0 * double(done_) / double(total_) : 100.0, rate,
               clock_text(el).c_str(), rate > 0 ? clock_text(left).c_str() : "?", tail.empty() ? "" : ", ",
               tail.c_str(), tty_ ? "   " : "\n");
  std::fflush(stderr);
}

std::string ProgressLine::clock_text(double s) {
  char b[32];
  const long t = long(s);
  std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  return b;
}

}  // namespace fftconv
