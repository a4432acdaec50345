// A progress line on stderr for commands that may run long: silent for the first second, then the
// current phase and the elapsed time, redrawn in place on a terminal, a line every 10 s otherwise.
#pragma once
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace fftconv::cli {

class PhaseProgress {
 public:
  // `what` prefixes every line ("run"); nothing is printed when `on` is false.
  PhaseProgress(std::string what, bool on) : what_(std::move(what)), tty_(isatty(2) != 0) {
    if (on) watcher_ = std::thread([this] { watch(); });
  }
  ~PhaseProgress() { stop(); }
  PhaseProgress(const PhaseProgress&) = delete;
  PhaseProgress& operator=(const PhaseProgress&) = delete;

  void phase(std::string name) {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = std::move(name);
  }
  // Ends the line (if one was printed) before the command writes its results.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    if (watcher_.joinable()) watcher_.join();
  }

 private:
  using Clock = std::chrono::steady_clock;
  void watch() {
    const auto start = Clock::now();
    auto next = start + std::chrono::seconds(1);
    bool printed = false;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_until(lock, next, [this] { return done_; })) {
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      std::fprintf(stderr, "%s%s: %s, %.0f s elapsed%s", tty_ ? "\r\033[K" : "", what_.c_str(), phase_.c_str(), s,
                   tty_ ? "" : "\n");
      std::fflush(stderr);
      printed = true;
      next += std::chrono::milliseconds(tty_ ? 500 : 10000);
    }
    if (printed && tty_) std::fputs("\r\033[K", stderr);
  }

  std::string what_, phase_ = "starting";
  bool tty_;
  bool done_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread watcher_;
};

}  // namespace fftconv::cli
