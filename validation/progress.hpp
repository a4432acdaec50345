// A progress line on stderr for long runs: done/total, rate, elapsed and time left, and a tail the
// caller supplies; at most twice a second on a terminal, every 30 s otherwise (logs stay short).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace fftconv {

class ProgressLine {
 public:
  ProgressLine(std::string label, int64_t total, bool on);
  // n more items done in this run (they count in the rate and the time left).
  void add(int64_t n, const std::string& tail = {});
  // n items found done already (a resumed run): they advance the count but not the rate.
  void skip(int64_t n);
  // Prints the last state (and ends the line on a terminal).
  void finish(const std::string& tail = {});
  // "h:mm:ss".
  static std::string clock_text(double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  void print(const std::string& tail);
  std::string label_;
  int64_t total_, done_ = 0, skipped_ = 0, printed_ = -1;
  bool on_, tty_;
  Clock::time_point start_, last_;
};

}  // namespace fftconv
