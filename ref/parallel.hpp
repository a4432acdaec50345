// Exceptions out of OpenMP parallel regions: one that escapes a region ends the process through
// std::terminate, so every region in ref/ runs its work through ParallelErrors (Note below).
#pragma once
#include <atomic>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <omp.h>

#include "common/backend.hpp"
#include "common/errors.hpp"

namespace fftconv {

// Note [exceptions in parallel regions]
// No exception may leave an OpenMP region (std::terminate: an out-of-memory killed the CLI and
// the Python interpreter), and none may make a thread skip a worksharing loop or barrier that the
// rest of its team reaches (a deadlock). So in every region of ref/:
//   - the work of each loop iteration runs inside ParallelErrors::run(), which keeps the first
//     exception and makes later run() calls return at once, so the loop drains quickly;
//   - per-thread scratch is allocated inside run(), on the thread's first iteration (never between
//     the start of the region and its worksharing loop);
//   - after the region, rethrow() throws the kept exception; a std::bad_alloc becomes OutOfMemory.
class ParallelErrors {
 public:
  explicit ParallelErrors(const char* where) : where_(where) {}
  template <class F>
  void run(F&& work) noexcept {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
      work();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }
  // Called after the region: throws the first exception run() kept, if any.
  void rethrow() const {
    if (!first_) return;
    try {
      std::rethrow_exception(first_);
    } catch (const std::bad_alloc&) {
      throw OutOfMemory(std::string(where_) + ": out of host memory inside a parallel region (std::bad_alloc)", 0);
    }
  }

 private:
  const char* where_;
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::exception_ptr first_;
};

// The OpenMP team of a CPU plan: `requested` (PlanOptions::threads, checked by check_threads) when
// > 0, else OpenMP's default.
inline int plan_threads(int requested) {
  check_threads(requested);
  return requested > 0 ? requested : omp_get_max_threads();
}

// std::vector<T>(n), but an allocation failure throws OutOfMemory naming `what` and the bytes.
template <class T>
std::vector<T> checked_vector(std::size_t n, const char* what) {
  try {
    return std::vector<T>(n);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(std::string(what) + ": allocation of " + std::to_string(n * sizeof(T)) + " bytes failed",
                      n * sizeof(T));
  }
}

}  // namespace fftconv
