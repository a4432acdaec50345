// Out of memory inside the CPU backends' OpenMP regions (Note [exceptions in parallel regions]):
// under an address-space cap (RLIMIT_AS, in a forked child) an execute whose per-thread scratch
// does not fit throws OutOfMemory naming the bytes, and the process goes on working.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "api/fftconv.hpp"
#include "ref/parallel.hpp"
#include "validation/data.hpp"

using namespace fftconv;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;  // its shadow memory reserves terabytes of address space
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// Bytes of address space this process holds now (VmSize), or 0 when unknown.
std::size_t address_space_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::size_t(std::stoull(line.substr(7))) * 1024;
  return 0;
}

// Runs `body` in a forked child under an address-space cap of (what the child holds now + extra)
// and returns its exit status (128 + signal when it died of one).
template <class F>
int in_capped_child(std::size_t extra, F body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit cap{address_space_bytes() + extra, RLIM_INFINITY};
    if (address_space_bytes() == 0 || setrlimit(RLIMIT_AS, &cap) != 0) _exit(3);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("fftw: out of memory inside a parallel region throws OutOfMemory naming the bytes") {
  if (kAddressSanitizer || address_space_bytes() == 0) {
    MESSAGE("skipped: needs /proc/self/status and no AddressSanitizer");
    return;
  }
  // Untiled 4096x4096 basis, one thread: the operands (134 MB) and the frequency buffers (200 MB)
  // fit 400 MB above what the child holds, the thread's scratch (1.1 GB) does not.
  const ConvProblem p = ConvProblem::parse("S=1,n=4096,k=3");
  const int status = in_capped_child(std::size_t(400) << 20, [&] {
    PlanOptions o;
    o.threads = 1;
    o.extra["fftw_planner"] = "estimate";
    const auto plan = builtin_registry().get("fftw").plan(p, Pass::fprop, o);
    PassData d = make_pass_data(p, Pass::fprop, 1);
    try {
      plan->execute(d.args());
      return 10;  // it fit after all: the test proves nothing
    } catch (const OutOfMemory& e) {
      if (e.bytes() == 0 || std::string(e.what()).find(std::to_string(e.bytes()) + " bytes") == std::string::npos)
        return 11;
    }
    // Alive and usable: a small problem still runs.
    const ConvProblem q = ConvProblem::parse("S=2,f=3,fo=2,n=9,k=3");
    PassData e = make_pass_data(q, Pass::fprop, 2);
    builtin_registry().get("fftw").plan(q, Pass::fprop, o)->execute(e.args());
    return count_nan(e.result) == 0 ? 0 : 12;
  });
  CHECK(status == 0);
}

TEST_CASE("ParallelErrors carries the first exception out of a region; bad_alloc becomes OutOfMemory") {
  ParallelErrors errors("test region");
  int ran = 0;
#pragma omp parallel for reduction(+ : ran)
  for (int i = 0; i < 64; ++i)
    errors.run([&] {
      ++ran;
      if (i == 5) throw InvalidArgument("item 5");
    });
  CHECK(errors.failed());
  CHECK(ran >= 1);
  CHECK_THROWS_WITH_AS(errors.rethrow(), "item 5", InvalidArgument);
  ParallelErrors alloc("alloc region");
  alloc.run([] { throw std::bad_alloc(); });
  CHECK_THROWS_WITH_AS(alloc.rethrow(), doctest::Contains("alloc region: out of host memory"), OutOfMemory);
  ParallelErrors fine("fine");
  fine.run([] {});
  CHECK_NOTHROW(fine.rethrow());
  if (!kAddressSanitizer)  // whose operator new reports a failed allocation and aborts instead of throwing
    CHECK_THROWS_WITH_AS(checked_vector<double>(std::size_t(1) << 56, "huge"),
                         doctest::Contains("huge: allocation of 576460752303423488 bytes failed"), OutOfMemory);
}
