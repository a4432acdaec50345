// Tests of the `auto` backend on the host (api/auto_plan.hpp): its candidates (the tile=auto twin of
// a backend that tiles, Note [auto's timed candidates]), interleaved timing, dropping and the cache.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "api/auto_plan.hpp"
#include "api/fftconv.hpp"
#include "common/errors.hpp"
#include "validation/data.hpp"

using namespace fftconv;

namespace {

int g_plan_clock = 0;  // counts plan() calls of every SleepBackend

// A plan that sleeps `ms` per execute() and reports whether it is tiled.
class SleepPlan final : public Plan {
 public:
  SleepPlan(double ms, bool tiled, std::string note = {}) : ms_(ms), tiled_(tiled), note_(std::move(note)) {}
  std::size_t workspace_bytes() const override { return 0; }
  void execute(const Args&) const override {
    std::this_thread::sleep_for(std::chrono::microseconds(int64_t(ms_ * 1000)));
  }
  std::string describe() const override { return (tiled_ ? "tiled" : "untiled") + note_; }
  std::string tile_json() const override { return tiled_ ? "{\"fft_h\":8}" : "null"; }

 private:
  double ms_;
  bool tiled_;
  std::string note_;
};

// A host backend whose untiled plans take `untiled_ms`; with tile_ms > 0 it tiles (the planner's
// option keys), tiled plans taking tile_ms, except for problems with f == 1, which its planner keeps
// untiled.
class SleepBackend final : public Backend {
 public:
  SleepBackend(std::string name, double untiled_ms, double tile_ms, Location where = Location::host)
      : name_(std::move(name)), untiled_ms_(untiled_ms), tile_ms_(tile_ms), where_(where) {}
  std::string_view name() const override { return name_; }
  Location location() const override { return where_; }
  Support supports(const ConvProblem&, Pass, DType) const override { return {}; }
  std::vector<std::string_view> option_keys() const override {
    if (tile_ms_ > 0) return {"tiles_in_flight", "accgrad_reduction"};
    return {};
  }
  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass, const PlanOptions& o) const override {
    ++plans;
    planned_at = ++g_plan_clock;
    bound_ms = o.tune_bound_ms;
    deadline = o.tune_deadline;
    const bool tiled = tile_ms_ > 0 && o.tile.kind != TileSpec::Kind::none && p.f > 1;
    const double ms = tiled ? tile_ms_ : untiled_ms_;
    // As the cufft tuner does (Note [tuning bound]), though at a lower factor.
    const bool stopped = o.tune_bound_ms > 0 && ms > 1.2 * o.tune_bound_ms;
    // As the cufft tuner does past its deadline (Note [tuning budget]).
    const bool cut = o.tune_deadline && std::chrono::steady_clock::now() > *o.tune_deadline;
    return std::make_unique<SleepPlan>(ms, tiled,
                                       stopped ? "; " + std::string(kTuningStopped) + "slower than the bound"
                                       : cut   ? "; bases {1x1: 1 ms, 2 more: " + std::string(kTuningBudgetSpent) + "}"
                                               : "");
  }
  std::string_view summary() const override { return "sleeps"; }
  mutable int plans = 0;
  mutable int planned_at = 0;     // g_plan_clock at the last plan()
  mutable double bound_ms = -1;   // PlanOptions::tune_bound_ms of the last plan()
  mutable std::optional<std::chrono::steady_clock::time_point> deadline;  // and its tune_deadline

 private:
  std::string name_;
  double untiled_ms_, tile_ms_;
  Location where_;
};

const void* g_last_run = nullptr;  // the ColdPlan that executed last

// A plan whose execute() takes cold_ms right after another plan ran and warm_ms after itself, as
// an fftw plan does whose caches the previous candidate evicted.
class ColdPlan final : public Plan {
 public:
  ColdPlan(double cold_ms, double warm_ms) : cold_ms_(cold_ms), warm_ms_(warm_ms) {}
  std::size_t workspace_bytes() const override { return 0; }
  void execute(const Args&) const override {
    const double ms = g_last_run == this ? warm_ms_ : cold_ms_;
    g_last_run = this;
    std::this_thread::sleep_for(std::chrono::microseconds(int64_t(ms * 1000)));
  }
  std::string describe() const override { return "cold " + std::to_string(cold_ms_); }
  std::string tile_json() const override { return "null"; }
  static constexpr std::string_view kSummary = "cold after another plan";

 private:
  double cold_ms_, warm_ms_;
};

// A host backend whose plans are P(a_ms, b_ms).
template <class P>
class TimedBackend final : public Backend {
 public:
  TimedBackend(std::string name, double a_ms, double b_ms) : name_(std::move(name)), a_ms_(a_ms), b_ms_(b_ms) {}
  std::string_view name() const override { return name_; }
  Location location() const override { return Location::host; }
  Support supports(const ConvProblem&, Pass, DType) const override { return {}; }
  std::unique_ptr<Plan> plan(const ConvProblem&, Pass, const PlanOptions&) const override {
    return std::make_unique<P>(a_ms_, b_ms_);
  }
  std::string_view summary() const override { return P::kSummary; }

 private:
  std::string name_;
  double a_ms_, b_ms_;
};
using ColdBackend = TimedBackend<ColdPlan>;  // (cold_ms, warm_ms)

std::map<double, int> g_runs_at;  // execute() calls of the BurstPlans, by their time after the burst

// A plan that takes burst_ms in its first kBurstRuns runs (a burst of other work on the host over
// auto's five rounds of an untimed and a timed run) and ms after them.
class BurstPlan final : public Plan {
 public:
  static constexpr int kBurstRuns = 10;
  BurstPlan(double burst_ms, double ms) : burst_ms_(burst_ms), ms_(ms) {}
  std::size_t workspace_bytes() const override { return 0; }
  void execute(const Args&) const override {
    const int n = ++g_runs_at[ms_];
    std::this_thread::sleep_for(std::chrono::microseconds(int64_t((n <= kBurstRuns ? burst_ms_ : ms_) * 1000)));
  }
  std::string describe() const override { return "burst " + std::to_string(ms_); }
  std::string tile_json() const override { return "null"; }
  static constexpr std::string_view kSummary = "slow during a burst of other work";

 private:
  double burst_ms_, ms_;
};
using BurstBackend = TimedBackend<BurstPlan>;  // (burst_ms, ms)

struct SleepWeights final : PreparedWeights {
  std::string key() const override { return "sleep"; }
  std::size_t bytes() const override { return 0; }
};

int g_prepares = 0;  // prepare_weights() calls of every PreparingPlan

// A plan that spends weight_ms transforming the weights in each execute() and run_ms on the rest,
// so execute_with() on weights prepared once takes run_ms.
class PreparingPlan final : public Plan {
 public:
  PreparingPlan(double weight_ms, double run_ms) : weight_ms_(weight_ms), run_ms_(run_ms) {}
  std::size_t workspace_bytes() const override { return 0; }
  void execute(const Args&) const override { sleep(weight_ms_ + run_ms_); }
  void execute_with(const Args&, const PreparedWeights& w) const override {
    REQUIRE(w.key() == "sleep");
    sleep(run_ms_);
  }
  std::shared_ptr<const PreparedWeights> prepare_weights(const void*, void*) const override {
    ++g_prepares;
    return std::make_shared<SleepWeights>();
  }
  std::string describe() const override { return "preparing"; }
  static constexpr std::string_view kSummary = "transforms its weights";

 private:
  static void sleep(double ms) { std::this_thread::sleep_for(std::chrono::microseconds(int64_t(ms * 1000))); }
  double weight_ms_, run_ms_;
};

using PreparingBackend = TimedBackend<PreparingPlan>;  // (weight_ms, run_ms)

// The least share of a host sleep that a CUDA-event sample of it keeps on a device that other
// processes use too (see "auto on a device: candidates timed in interleaved rounds…").
constexpr double kSharedDevice = 0.8;

// A host backend whose plan() refuses every problem while `refuse` holds: Unsupported, or
// OutOfMemory for `oom_bytes`; else its plans take 1 ms.
class RefusingBackend final : public Backend {
 public:
  RefusingBackend(std::string name, std::size_t oom_bytes = 0) : name_(std::move(name)), oom_bytes_(oom_bytes) {}
  std::string_view name() const override { return name_; }
  Location location() const override { return Location::host; }
  Support supports(const ConvProblem&, Pass, DType) const override { return {}; }
  std::unique_ptr<Plan> plan(const ConvProblem&, Pass, const PlanOptions&) const override {
    if (!refuse) return std::make_unique<SleepPlan>(1.0, false);
    if (oom_bytes_ > 0) throw OutOfMemory(name_ + ": workspace of " + std::to_string(oom_bytes_) + " bytes", oom_bytes_);
    throw Unsupported(name_ + ": refuses this tile");
  }
  std::string_view summary() const override { return "refuses"; }
  bool refuse = true;

 private:
  std::string name_;
  std::size_t oom_bytes_;
};

const AutoCandidate& candidate(const AutoReport& r, const std::string& label) {
  for (const AutoCandidate& c : r.candidates)
    if (c.backend == label) return c;
  FAIL("no candidate " << label);
  throw Error("unreachable");
}

}  // namespace

TEST_CASE("auto on the host: the tile=auto twin, interleaved timing, dropping and the plan cache") {
  Registry reg;
  auto tiler = std::make_shared<SleepBackend>("tiler", 12.0, 3.0);
  auto slow = std::make_shared<SleepBackend>("slowpoke", 40.0, 0.0);
  reg.add(tiler);
  reg.add(slow);
  const AutoBackend host(reg, Location::host);
  PlanOptions o;
  o.tune_cache = "none";  // the plan cache in memory only
  const ConvProblem p = ConvProblem::parse("S=3,f=5,fo=7,n=11,k=3");

  AutoReport rep;
  auto plan = host.plan(p, Pass::fprop, o, &rep);
  INFO(rep.explain());
  CHECK(rep.chosen == "tiler tile=auto");
  CHECK(rep.chosen_backend == "tiler");
  CHECK(plan->describe().find("auto -> tiler tile=auto") == 0);
  CHECK(plan->tile_json() != "null");
  REQUIRE(rep.candidates.size() == 3);
  CHECK(candidate(rep, "tiler tile=auto").measured_ms >= 3.0);
  CHECK(candidate(rep, "tiler").measured_ms >= 12.0);
  // 40 ms against 3 ms: dropped after three rounds, not timed five times.
  CHECK(candidate(rep, "slowpoke").note.find("dropped after 3 rounds") == 0);

  // The cache replays the variant, planning only the winner.
  const int before = tiler->plans + slow->plans;
  AutoReport again;
  auto cached = host.plan(p, Pass::fprop, o, &again);
  CHECK(again.from_cache);
  CHECK(again.chosen == "tiler tile=auto");
  CHECK(again.chosen_backend == "tiler");
  CHECK(cached->tile_json() != "null");
  CHECK(tiler->plans + slow->plans == before + 1);

  // A tiling planner that keeps the problem untiled: its twin is the untiled plan, not timed twice.
  AutoReport kept;
  host.plan(ConvProblem::parse("S=3,f=1,fo=7,n=11,k=3"), Pass::fprop, o, &kept);
  CHECK(kept.chosen == "tiler");
  CHECK(kept.chosen_backend == "tiler");
  CHECK(candidate(kept, "tiler tile=auto").measured_ms < 0);
  CHECK(candidate(kept, "tiler tile=auto").note.find("keeps it untiled") != std::string::npos);

  // An explicit tile request is kept: no twin.
  PlanOptions fixed = o;
  fixed.tile = TileSpec::parse("8");
  AutoReport pinned;
  host.plan(p, Pass::bprop, fixed, &pinned);
  CHECK(pinned.candidates.size() == 2);
}

TEST_CASE("auto on the host times each sample right after a run of the same plan") {
  // Interleaved samples would time "fast" only after the other candidate (12 ms against 8 ms);
  // run after itself, as repeated calls of one layer run, it takes 3 ms and wins.
  Registry reg;
  reg.add(std::make_shared<ColdBackend>("fast", 12.0, 3.0));
  reg.add(std::make_shared<ColdBackend>("steady", 8.0, 8.0));
  const AutoBackend host(reg, Location::host);
  PlanOptions o;
  o.tune_cache = "none";
  AutoReport rep;
  host.plan(ConvProblem::parse("S=2,f=3,fo=4,n=9,k=3"), Pass::fprop, o, &rep);
  INFO(rep.explain());
  CHECK(rep.chosen == "fast");
  CHECK(candidate(rep, "fast").measured_ms < 8.0);
  CHECK(candidate(rep, "steady").measured_ms >= 8.0);
}

TEST_CASE("auto on the host gives its two fastest more rounds while they are close (Note [auto's timed candidates])") {
  // auto's report of two BurstBackends (name, burst ms, ms after it), counting their runs afresh.
  using Spec = std::tuple<std::string, double, double>;
  auto tune = [](const Spec& x, const Spec& y) {
    g_runs_at.clear();
    Registry reg;
    for (const auto& [name, burst_ms, ms] : {x, y}) reg.add(std::make_shared<BurstBackend>(name, burst_ms, ms));
    PlanOptions o;
    o.tune_cache = "none";
    AutoReport rep;
    AutoBackend(reg, Location::host).plan(ConvProblem::parse("S=2,f=3,fo=4,n=9,k=3"), Pass::fprop, o, &rep);
    return rep;
  };
  // "bursty" runs 7 ms through the five rounds, "steady" 6.5 ms: within 1.25x, so both run on;
  // after the burst "bursty" takes 5 ms and wins, and "steady" at 1.3x its time ends the rounds.
  const AutoReport close = tune({"bursty", 7.0, 5.0}, {"steady", 6.5, 6.5});
  INFO(close.explain());
  CHECK(close.chosen == "bursty");
  CHECK(candidate(close, "bursty").measured_ms < 6.5);
  // Each round more is an untimed and a timed run of each; one is enough, four at most.
  CHECK(g_runs_at[5.0] >= 2 * 6);
  CHECK(g_runs_at[5.0] <= 2 * 9);
  CHECK(g_runs_at[6.5] == g_runs_at[5.0]);

  // 4 ms against 6 ms after five rounds, 1.5x: no more rounds.
  const AutoReport apart = tune({"quick", 4.0, 4.0}, {"slower", 6.0, 6.0});
  INFO(apart.explain());
  CHECK(apart.chosen == "quick");
  CHECK(g_runs_at[4.0] == 2 * 5);
  CHECK(g_runs_at[6.0] == 2 * 5);
}

TEST_CASE("auto on the host forwards prepared weights to the fftw plan it chose") {
  Registry reg;
  reg.add(std::shared_ptr<const Backend>(&builtin_registry().get("fftw"), [](const Backend*) {}));
  const AutoBackend host(reg, Location::host);
  PlanOptions o;
  o.tune_cache = "none";
  o.basis_h = o.basis_w = 12;  // a pinned basis: no tile=auto twin, the untiled fftw plan alone
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=4,n=9,k=3,p=1");
  AutoReport rep;
  auto plan = host.plan(p, Pass::fprop, o, &rep);
  REQUIRE(rep.chosen == "fftw");
  CHECK(rep.chosen_backend == "fftw");
  CHECK(plan->fourier_basis() == std::pair<int64_t, int64_t>{12, 12});
  PassData d = make_pass_data(p, Pass::fprop, 5);
  const auto w = plan->prepare_weights(d.weight.data(), nullptr);
  CHECK_NOTHROW(plan->execute_with(d.args(), *w));
}

TEST_CASE("auto on the GPU: tile=auto twins only where the padded input exceeds fbfft's untiled bases") {
  Registry reg;
  reg.add(std::make_shared<SleepBackend>("gputiler", 1.0, 1.0, Location::cuda));
  const AutoBackend gpu(reg, Location::cuda);
  PlanOptions o;
  o.tune_cache = "none";
  o.autotune = false;  // the model's choice: no device needed
  auto labels = [&](const char* spec) {
    AutoReport rep;
    gpu.plan(ConvProblem::parse(spec), Pass::fprop, o, &rep);
    std::vector<std::string> out;
    for (const AutoCandidate& c : rep.candidates) out.push_back(c.backend);
    return out;
  };
  CHECK(labels("S=1,f=2,fo=2,n=124,k=5,p=2") == std::vector<std::string>{"gputiler"});  // 128: untiled only
  CHECK(labels("S=1,f=2,fo=2,h=20,w=130,k=3") == std::vector<std::string>{"gputiler", "gputiler tile=auto"});
  CHECK(labels("S=1,f=2,fo=2,n=300,k=9,p=4") == std::vector<std::string>{"gputiler", "gputiler tile=auto"});
}

TEST_CASE("auto on a device: candidates timed in interleaved rounds by CUDA events, the slow one dropped") {
  const Backend* device_backend = builtin_registry().find("cufft");
  if (!device_backend || !device_backend->available().ok) {
    MESSAGE("no CUDA device: skipping the device timing of auto");
    return;
  }
  // The events of a sample enclose the host's sleep between them, so a sleeping plan's sample on
  // an idle device is its sleep. Another process's work on the device (scripts/gpu-check.sh runs
  // ctest beside gpu_test) can hold the first event back while the second runs on time, so the
  // lower bounds allow kSharedDevice of the sleep (8.79 ms for 9 beside gpu_test on an H100).
  Registry reg;
  reg.add(std::make_shared<SleepBackend>("quick", 2.0, 0.0, Location::cuda));
  reg.add(std::make_shared<SleepBackend>("slowpoke", 9.0, 0.0, Location::cuda));
  const AutoBackend gpu(reg, Location::cuda);
  PlanOptions o;
  o.tune_cache = "none";
  AutoReport rep;
  auto plan = gpu.plan(ConvProblem::parse("S=2,f=3,fo=4,n=20,k=3"), Pass::accgrad, o, &rep);
  INFO(rep.explain());
  CHECK(rep.chosen == "quick");
  CHECK(rep.reason == "fastest of 2 timed");
  CHECK(candidate(rep, "quick").measured_ms >= kSharedDevice * 2.0);
  CHECK(candidate(rep, "quick").measured_ms < 9.0);
  CHECK(candidate(rep, "slowpoke").measured_ms >= kSharedDevice * 9.0);
  // Planned after "quick", bounded by its time: the note says so before it says the drop.
  CHECK(candidate(rep, "slowpoke").note.find("its tuning stopped at the bound of ") == 0);
  CHECK(candidate(rep, "slowpoke").note.find("; dropped after 3 rounds") != std::string::npos);
}

TEST_CASE("auto on a device plans the costly tuner last, bounded by the plan timed before (Note [tuning bound])") {
  // The model keys on the names: a 130x130 input takes cufft's 130 but fbfft's 256, so the model
  // ranks "cufft" first; its tuner is the costly one, so "fbfft" is planned and timed before it.
  auto fb = std::make_shared<SleepBackend>("fbfft", 2.0, 0.0, Location::cuda);
  auto cu = std::make_shared<SleepBackend>("cufft", 3.0, 0.0, Location::cuda);
  const ConvProblem p = ConvProblem::parse("S=8,f=32,fo=32,n=130,k=3");
  REQUIRE(model_time_ms(*cu, p, Pass::fprop) < model_time_ms(*fb, p, Pass::fprop));
  const Backend* device_backend = builtin_registry().find("cufft");
  if (!device_backend || !device_backend->available().ok) {
    MESSAGE("no CUDA device: skipping the tuning bound of auto");
    return;
  }
  Registry reg;
  reg.add(cu);
  reg.add(fb);
  const AutoBackend gpu(reg, Location::cuda);
  PlanOptions o;
  o.tune_cache = "none";
  AutoReport rep;
  gpu.plan(p, Pass::fprop, o, &rep);
  INFO(rep.explain());
  CHECK(fb->planned_at < cu->planned_at);
  CHECK(fb->bound_ms == 0);
  CHECK(cu->bound_ms >= kSharedDevice * 2.0);  // (the events' lower bounds: see the test before)
  CHECK(cu->bound_ms < 3.0);
  CHECK(rep.chosen == "fbfft");
  CHECK(candidate(rep, "cufft").measured_ms >= kSharedDevice * 3.0);
  CHECK(candidate(rep, "cufft").note.find("its tuning stopped at the bound of ") == 0);
  CHECK(candidate(rep, "fbfft").note.empty());
  // Both tuners had the same deadline, kAutoTuneBudgetMs after auto began (Note [tuning budget]).
  REQUIRE(fb->deadline);
  REQUIRE(cu->deadline);
  CHECK(*fb->deadline == *cu->deadline);
  const double left_ms =
      std::chrono::duration<double, std::milli>(*cu->deadline - std::chrono::steady_clock::now()).count();
  CHECK(left_ms > kAutoTuneBudgetMs - 1000);
  CHECK(left_ms <= kAutoTuneBudgetMs);
  // On the host neither a bound nor a deadline is passed.
  Registry host_reg;
  auto h1 = std::make_shared<SleepBackend>("fftw", 1.0, 0.0);
  auto h2 = std::make_shared<SleepBackend>("im2col", 1.5, 0.0);
  host_reg.add(h1);
  host_reg.add(h2);
  AutoBackend(host_reg, Location::host).plan(p, Pass::fprop, o, &rep);
  CHECK(h1->bound_ms == 0);
  CHECK(h2->bound_ms == 0);
  CHECK(!h1->deadline);
  CHECK(!h2->deadline);
  // A budget spent before cufft is planned: its plan says so, and so does auto's note.
  auto cu_close = std::make_shared<SleepBackend>("cufft", 2.1, 0.0, Location::cuda);
  Registry tight;
  tight.add(cu_close);
  tight.add(fb);
  ::setenv("FFTCONV_TUNE_BUDGET_MS", "0.001", 1);  // (new problems: the plan cache in memory knows p)
  AutoBackend(tight, Location::cuda).plan(ConvProblem::parse("S=8,f=32,fo=32,n=131,k=3"), Pass::fprop, o, &rep);
  INFO(rep.explain());
  CHECK(candidate(rep, "cufft").note.find("its tuning was cut at the budget of 0.001 ms") == 0);
  // No budget: no deadline.
  ::setenv("FFTCONV_TUNE_BUDGET_MS", "0", 1);
  AutoBackend(tight, Location::cuda).plan(ConvProblem::parse("S=8,f=32,fo=32,n=132,k=3"), Pass::fprop, o, &rep);
  ::unsetenv("FFTCONV_TUNE_BUDGET_MS");
  CHECK(!cu_close->deadline);
}

TEST_CASE("auto's tuning budget comes from FFTCONV_TUNE_BUDGET_MS, checked") {
  ::unsetenv("FFTCONV_TUNE_BUDGET_MS");
  CHECK(auto_tune_budget_ms() == kAutoTuneBudgetMs);
  ::setenv("FFTCONV_TUNE_BUDGET_MS", "250", 1);
  CHECK(auto_tune_budget_ms() == 250);
  ::setenv("FFTCONV_TUNE_BUDGET_MS", "0", 1);
  CHECK(auto_tune_budget_ms() == 0);
  for (const char* bad : {"-1", "fast", "12ms", "nan", "inf"}) {
    ::setenv("FFTCONV_TUNE_BUDGET_MS", bad, 1);
    CAPTURE(bad);
    try {
      auto_tune_budget_ms();
      FAIL("accepted");
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      CHECK(what.find("FFTCONV_TUNE_BUDGET_MS") != std::string::npos);
      CHECK(what.find(std::string("'") + bad + "'") != std::string::npos);
    }
  }
  ::unsetenv("FFTCONV_TUNE_BUDGET_MS");
}

TEST_CASE("auto's cost model: fbfft's basis is its next power of two or smooth register side") {
  // The model keys on the backend's name; a padded side of 46 takes fbfft's 48x48 (1,200
  // frequencies), 70 skips to 72 (70 = 2 x 35 has no register kernel), 84 stays 84, and 122 goes
  // to 128 (126 has no kernel either).
  const SleepBackend fbfft("fbfft", 1.0, 0.0, Location::cuda);
  auto model = [&](int64_t padded) {
    return model_time_ms(fbfft, ConvProblem::parse("S=64,f=64,fo=64,n=" + std::to_string(padded) + ",k=3,p=0"),
                         Pass::fprop);
  };
  CHECK(model(46) == doctest::Approx(model(48)));
  CHECK(model(46) < 0.7 * model(64));
  CHECK(model(70) == doctest::Approx(model(72)));
  CHECK(model(84) < 0.5 * model(128));
  CHECK(model(122) == doctest::Approx(model(128)));
  CHECK(model(118) < model(122));  // 120
}

TEST_CASE("auto's cost model: a tiled candidate is modelled at the planner's tiles (Note [tiled model])") {
  const SleepBackend fbfft("fbfft", 1.0, 0.0, Location::cuda), cufft("cufft", 1.0, 0.0, Location::cuda);
  const SleepBackend fftw("fftw", 1.0, 0.0);
  auto tiled = [](const char* tile) {
    PlanOptions o;
    o.tile = TileSpec::parse(tile);
    return o;
  };
  // img512_k15: untiled, fbfft would need a 1024x1024 basis; its 64x64 tiles ran 1.36 ms on the
  // H100 against cufft's tiles' 2.48 ms (bench/results/h100/layers_large.json).
  const ConvProblem img512 = ConvProblem::parse("S=4,f=32,fo=32,n=512,k=15,p=7");
  const double fb_tiles = model_time_ms(fbfft, img512, Pass::fprop, tiled("auto"));
  CHECK(fb_tiles == doctest::Approx(model_time_ms(fbfft, img512, Pass::fprop, tiled("64"))));
  CHECK(fb_tiles < 0.25 * model_time_ms(fbfft, img512, Pass::fprop));
  CHECK(fb_tiles < model_time_ms(cufft, img512, Pass::fprop, tiled("auto")));
  // Where the planner keeps the problem untiled, tile=auto is modelled untiled (L1 on the GPU) ...
  const ConvProblem l1 = ConvProblem::parse("S=128,f=3,fo=96,n=128,k=11");
  CHECK(model_time_ms(fbfft, l1, Pass::bprop, tiled("auto")) ==
        doctest::Approx(model_time_ms(fbfft, l1, Pass::bprop)));
  // ... except fbfft past its largest untiled basis, which runs its cheapest tile instead.
  const ConvProblem wide = ConvProblem::parse("S=2,f=1,fo=1,n=200,k=45,p=0");
  CHECK(model_time_ms(cufft, wide, Pass::fprop, tiled("auto")) ==
        doctest::Approx(model_time_ms(cufft, wide, Pass::fprop)));
  CHECK(model_time_ms(fbfft, wide, Pass::fprop, tiled("auto")) ==
        doctest::Approx(model_time_ms(fbfft, wide, Pass::fprop, tiled("64"))));
  // On the host the tile=auto twin of L2 at S = 2 is modelled below untiled fftw, where it measured
  // faster (6.2 against 6.9 ms on a 2-core EPYC, bench/results/cpu/auto-cpu.json); at S = 8 it stays
  // untiled.
  const ConvProblem l2 = ConvProblem::parse("S=2,f=64,fo=64,n=64,k=9");
  CHECK(model_time_ms(fftw, l2, Pass::fprop, tiled("auto")) < 0.6 * model_time_ms(fftw, l2, Pass::fprop));
  const ConvProblem l2_s8 = ConvProblem::parse("S=8,f=64,fo=64,n=64,k=9");
  CHECK(model_time_ms(fftw, l2_s8, Pass::fprop, tiled("auto")) ==
        doctest::Approx(model_time_ms(fftw, l2_s8, Pass::fprop)));
  // A tile option the planner refuses leaves the model untiled; the backend's plan says why.
  CHECK(model_time_ms(fftw, l2, Pass::fprop, tiled("4")) == doctest::Approx(model_time_ms(fftw, l2, Pass::fprop)));
}

TEST_CASE("auto plans for prepared weights when asked (Note [planning for prepared weights])") {
  // "spectral" spends 8 ms of its 10 on the weights; "plain" takes 4 ms and prepares nothing.
  Registry reg;
  reg.add(std::make_shared<PreparingBackend>("spectral", 8.0, 2.0));
  reg.add(std::make_shared<SleepBackend>("plain", 4.0, 0.0));
  const AutoBackend host(reg, Location::host);
  PlanOptions o;
  o.tune_cache = "none";
  const ConvProblem p = ConvProblem::parse("S=2,f=6,fo=6,n=9,k=3");
  AutoReport rep;
  host.plan(p, Pass::fprop, o, &rep);
  INFO(rep.explain());
  CHECK(rep.chosen == "plain");
  CHECK(candidate(rep, "spectral").measured_ms >= 9.9);

  o.prepared_weights = true;  // a separate choice, not the one cached above
  g_prepares = 0;
  host.plan(p, Pass::fprop, o, &rep);
  INFO(rep.explain());
  CHECK(!rep.from_cache);
  CHECK(rep.chosen == "spectral");
  CHECK(candidate(rep, "spectral").measured_ms >= 1.9);
  CHECK(candidate(rep, "spectral").measured_ms < 4.0);
  CHECK(candidate(rep, "plain").measured_ms >= 3.9);
  CHECK(g_prepares == 1);  // once for its five rounds, not once a run
  // The two choices are cached under their own keys.
  host.plan(p, Pass::fprop, o, &rep);
  CHECK((rep.from_cache && rep.chosen == "spectral"));
  o.prepared_weights = false;
  host.plan(p, Pass::fprop, o, &rep);
  CHECK((rep.from_cache && rep.chosen == "plain"));
  // accGrad reads no weights: the flag changes nothing there.
  o.prepared_weights = true;
  host.plan(p, Pass::accgrad, o, &rep);
  CHECK(rep.chosen == "plain");
}

TEST_CASE("auto falls back past candidates that refuse to plan, and names every reason (Note [auto's fallback])") {
  // fftw's model is far below im2col's on a large kernel: im2col is past kAutoModelSpread, so it is
  // planned only because fftw refuses.
  const ConvProblem p = ConvProblem::parse("S=1,f=16,fo=16,n=128,k=63");
  Registry reg;
  auto fftw = std::make_shared<RefusingBackend>("fftw");
  auto im2col = std::make_shared<SleepBackend>("im2col", 1.0, 0.0);
  reg.add(fftw);
  reg.add(im2col);
  REQUIRE(model_time_ms(*im2col, p, Pass::fprop) > kAutoModelSpread * model_time_ms(*fftw, p, Pass::fprop));
  const AutoBackend host(reg, Location::host);
  PlanOptions o;
  o.tune_cache = "none";
  for (const bool autotune : {true, false}) {
    CAPTURE(autotune);
    o.autotune = autotune;
    AutoReport rep;
    auto plan = host.plan(p, Pass::fprop, o, &rep);
    INFO(rep.explain());
    CHECK(rep.chosen == "im2col");
    CHECK(candidate(rep, "fftw").note == "unsupported: fftw: refuses this tile");
    CHECK(candidate(rep, "im2col").note.empty());
    if (!autotune) CHECK(rep.reason == "cost model (autotune off), the first in its order that planned");
  }

  // A cached winner that refuses now is chosen afresh, not replayed into an error.
  fftw->refuse = false;
  o.autotune = true;
  AutoReport cached;
  host.plan(p, Pass::accgrad, o, &cached);
  REQUIRE(cached.chosen == "fftw");
  fftw->refuse = true;
  AutoReport afresh;
  host.plan(p, Pass::accgrad, o, &afresh);
  INFO(afresh.explain());
  CHECK_FALSE(afresh.from_cache);
  CHECK(afresh.chosen == "im2col");

  // Every candidate refuses: one error naming each reason, of the class memory alone gives.
  auto plan_on = [&](std::vector<std::shared_ptr<const Backend>> backends) {
    Registry r;
    for (auto& b : backends) r.add(b);
    const AutoBackend h(r, Location::host);
    h.plan(p, Pass::bprop, o);
  };
  for (const bool autotune : {true, false}) {
    CAPTURE(autotune);
    o.autotune = autotune;
    try {
      plan_on({std::make_shared<RefusingBackend>("fftw"), std::make_shared<RefusingBackend>("im2col", 4096)});
      FAIL("no error");
    } catch (const OutOfMemory&) {
      FAIL("one candidate refused for another reason than memory");
    } catch (const Unsupported& e) {
      const std::string what = e.what();
      CHECK(what.find("auto: no candidate could be planned for S=1,f=16,fo=16,h=128,w=128,kh=63,kw=63") == 0);
      CHECK(what.find("fftw: unsupported: fftw: refuses this tile") != std::string::npos);
      CHECK(what.find("im2col: out of memory: im2col: workspace of 4096 bytes") != std::string::npos);
    }
    try {
      plan_on({std::make_shared<RefusingBackend>("fftw", 1024), std::make_shared<RefusingBackend>("im2col", 4096)});
      FAIL("no error");
    } catch (const OutOfMemory& e) {
      CHECK(e.bytes() == 4096);
      CHECK(std::string(e.what()).find("fftw: out of memory: fftw: workspace of 1024 bytes") != std::string::npos);
    }
  }
}
