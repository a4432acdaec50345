// The validation sweep (see runner.hpp): reference once per (problem, pass), every backend compared
// with it, JSON lines flushed as they are made, a rate-limited progress line on stderr.
#include "validation/runner.hpp"
#include "validation/verdict.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>
#include <random>
#include <regex>
#include <set>

#include "api/fftconv.hpp"
#include "common/counter_rng.hpp"
#include "common/fft_size.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/execute.hpp"
#include "validation/reference.hpp"
#include "validation/results_file.hpp"
#include "validation/sweep_data.hpp"
#include "validation/tolerance.hpp"

namespace fftconv {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }


// done/total, rate, time left; at most twice a second on a terminal, every 30 s otherwise.
class Progress {
 public:
  Progress(int64_t total, bool on) : total_(total), on_(on), tty_(isatty(2) != 0), start_(Clock::now()), last_(start_) {}
  void add(int64_t n, int64_t failures) {
    done_ += n;
    failures_ = failures;
    if (!on_) return;
    const auto now = Clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (since < (tty_ ? 0.5 : 30.0) && done_ < total_) return;
    last_ = now;
    print();
  }
  void finish() {
    if (!on_) return;
    if (printed_ != done_) print();
    if (tty_) std::fputc('\n', stderr);
  }

 private:
  void print() {
    printed_ = done_;
    const double el = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = el > 0 ? double(done_) / el : 0;
    const double left = rate > 0 ? double(total_ - done_) / rate : 0;
    std::fprintf(stderr, "%svalidate: %lld/%lld (%.1f%%), %.1f/s, elapsed %s, left %s, %lld failures%s",
                 tty_ ? "\r" : "", (long long)done_, (long long)total_, total_ ? 100.0 * double(done_) / double(total_) : 100.0,
                 rate, clock_text(el).c_str(), clock_text(left).c_str(), (long long)failures_, tty_ ? "   " : "\n");
    std::fflush(stderr);
  }
  static std::string clock_text(double s) {
    char b[32];
    const long t = long(s);
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    return b;
  }
  int64_t total_, done_ = 0, failures_ = 0, printed_ = -1;
  bool on_, tty_;
  Clock::time_point start_, last_;
};

// Appends records to the output file and stdout as they are made; a failed write ends the run.
class Sink {
 public:
  Sink(const ValidateOptions& o, std::ostream* json_out) : json_out_(o.json ? json_out : nullptr) {
    if (!o.out.empty()) file_ = std::make_unique<LineWriter>(o.out, o.resume, "out");
  }
  void put(Record r, std::vector<Record>& all) {
    const std::string line = to_json_line(r);
    if (file_) file_->write_line(line);
    if (json_out_) { *json_out_ << line << '\n'; json_out_->flush(); }
    failures_ += r.failed() ? 1 : 0;
    all.push_back(std::move(r));
  }
  int64_t failures() const { return failures_; }

 private:
  std::unique_ptr<LineWriter> file_;
  std::ostream* json_out_;
  int64_t failures_ = 0;
};

std::vector<const Backend*> resolve_backends(const Registry& reg, const std::vector<std::string>& names) {
  std::vector<const Backend*> out;
  if (names.empty()) {
    for (const auto& b : reg.all())
      if (b->available().ok) out.push_back(b.get());
    return out;
  }
  for (const auto& n : names)  // throws InvalidArgument naming the known ones
    out.push_back(n == "auto" ? &find_backend(n) : &reg.get(n));
  return out;
}

// Each backend's plan options, with the extra keys it accepts (Note [options of several backends]).
// Throws InvalidArgument for a key of o.plan_extra that none of the backends accepts.
std::map<const Backend*, PlanOptions> backend_options(const ValidateOptions& o, const TileSpec& tile,
                                                      const std::vector<const Backend*>& backends) {
  check_option_keys(backends, o.plan_extra);
  PlanOptions po;
  po.tile = tile;
  po.extra = o.plan_defaults;
  for (const auto& [key, value] : o.plan_extra) po.extra[key] = value;
  po.threads = o.threads;
  po.autotune = o.autotune;
  const bool gpu = std::any_of(backends.begin(), backends.end(),
                               [](const Backend* b) { return b->location() == Location::cuda; });
  if (!gpu && o.math != ProductMath::automatic && o.math != ProductMath::fp32)
    throw InvalidArgument("math: '" + std::string(to_string(o.math)) +
                          "' sets the products of the GPU backends, and the sweep has none");
  std::map<const Backend*, PlanOptions> out;
  for (const Backend* b : backends) {
    out[b] = options_for(*b, po);
    if (b->location() == Location::cuda) out[b].math = o.math;
  }
  return out;
}

Record base_record(const ValidateOptions& o, const LabeledProblem& lp, std::string_view pass, const Backend& b) {
  Record r;
  r.set = o.set;
  r.label = lp.label;
  r.spec = lp.problem.to_string();
  r.pass = std::string(pass);
  r.backend = std::string(b.name());
  r.tile = o.tile;
  r.shard = std::to_string(o.selection.shard_index) + "/" + std::to_string(o.selection.shard_count);
  return r;
}

// Why `b` cannot run (p, pass) here, or "" when it can.
std::string skip_reason(const Backend& b, const ConvProblem& p, Pass pass) {
  const Support av = b.available();
  if (!av.ok) return "unavailable: " + av.reason;
  const Support s = b.supports(p, pass, DType::f32);
  if (!s.ok) return "unsupported: " + s.reason;
  return {};
}

struct Planned {
  std::unique_ptr<Plan> plan;
  double plan_ms = 0;
  int64_t basis = 1;
};

Planned make_plan(const Backend& b, const ConvProblem& p, Pass pass, const PlanOptions& po) {
  Planned out;
  const auto t0 = Clock::now();
  out.plan = b.plan(p, pass, po);
  out.plan_ms = ms_since(t0);
  out.basis = plan_basis_elems(std::string(b.name()), out.plan->describe(), out.plan->tile_json(), p);
  return out;
}

// Fills r from a verdict on one backend's result.
void record_verdict(Record& r, const Verdict& v) {
  const ErrorStats& e = v.error;
  r.rel_l2 = e.rel_l2;
  r.max_abs_rel = e.max_abs_rel;
  r.tol_rel_l2 = v.tol.rel_l2;
  r.tol_max_abs_rel = v.tol.max_abs_rel;
  r.nonfinite = e.finite_ok() ? 0 : e.nonfinite;
  r.status = v.ok ? "pass" : "fail";
  if (!e.finite_ok()) r.reason = std::to_string(e.nonfinite) + " non-finite or unwritten elements";
  else if (!v.ok) r.reason = "outside tolerance";
}

// The adjoint identity for one backend on fresh x, w, g (Note [adjoint tolerance]).
void adjoint_check(Record& r, SweepData& data, const Backend& b, const ConvProblem& p, const PlanOptions& po,
                   uint64_t seed) {
  std::array<Planned, 3> pl;
  int64_t basis = 1;
  double plan_ms = 0;
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    Planned& x = pl[std::size_t(pass)];
    x = make_plan(b, p, pass, po);
    basis = std::max(basis, x.basis);
    plan_ms += x.plan_ms;
  }
  const AdjointSums s = data.adjoint(b, p, {pl[0].plan.get(), pl[1].plan.get(), pl[2].plan.get()}, seed);
  const double err = s.error();
  r.basis = basis;
  r.rel_l2 = r.max_abs_rel = err;
  // One pass in tf32 carries that mode's error into the identity (Note [tf32 tolerance]).
  ProductMath products = ProductMath::fp32;
  for (const Planned& x : pl)
    if (plan_product_math(*x.plan) == ProductMath::tf32) products = ProductMath::tf32;
  r.math = products == ProductMath::tf32 ? "tf32" : pl[0].plan->last_products().math;
  r.tol_rel_l2 = r.tol_max_abs_rel = adjoint_tolerance(p, DType::f32, basis, products);
  r.time_ms = s.ms;
  r.plan_ms = plan_ms;
  r.describe = pl[0].plan->describe();
  r.ref = "identity";
  r.data_seed = seed;
  r.status = err <= r.tol_rel_l2 ? "pass" : "fail";
  if (r.status == "fail") r.reason = "<fprop(x,w),g> = " + std::to_string(s.lhs) + ", <x,bprop(g,w)> = " +
                                     std::to_string(s.mid) + ", <w,accgrad(x,g)> = " + std::to_string(s.rhs);
}

// Runs `fn` and turns a thrown error into status error/skipped on r.
void guarded(Record& r, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Unsupported& e) {
    r.status = "skipped";
    r.reason = std::string("unsupported: ") + e.what();
  } catch (const OutOfMemory& e) {
    r.status = "error";
    r.reason = std::string("out of memory: ") + e.what();
  } catch (const std::exception& e) {
    r.status = "error";
    r.reason = e.what();
  }
}

}  // namespace

std::string resolve_check(const std::string& check, const ConvProblem& p) {
  if (check == "direct" || check == "fftw64") return check;
  if (check == "gpu64") {
    if (!gpu_reference_available()) throw Unsupported("check gpu64: no CUDA device in this build or machine");
    return check;
  }
  if (check != "auto") throw InvalidArgument("check: expected auto, direct, fftw64 or gpu64, got '" + check + "'");
  const bool gpu = gpu_reference_available() && p.is_dense();  // direct64 computes the dense problem only
  if (p.madds() <= (gpu ? 1e7 : kDirectMaxMadds)) return "direct";
  return gpu ? "gpu64" : "fftw64";
}

int64_t plan_basis_elems(const std::string& backend, const std::string& describe, const std::string& tile_json,
                         const ConvProblem& p) {
  if (!tile_json.empty() && tile_json != "null") {
    try {
      const auto j = nlohmann::json::parse(tile_json);
      if (j.is_object() && j.contains("fft_h") && j.contains("fft_w") && j["fft_h"].is_number() && j["fft_w"].is_number())
        return std::max<int64_t>(1, j["fft_h"].get<int64_t>() * j["fft_w"].get<int64_t>());
    } catch (const nlohmann::json::exception&) {
    }
  }
  static const std::regex kBasis(R"((basis|tile)[^0-9;]{0,24}?(\d+)x(\d+))");
  std::smatch m;
  if (std::regex_search(describe, m, kBasis)) return std::max<int64_t>(1, std::stoll(m[2]) * std::stoll(m[3]));
  if (backend == "direct" || backend == "im2col") return 1;
  return pow2_basis_elems(p);
}

ValidateResult run_validation(const ValidateOptions& o, std::ostream* json_out, const Registry* registry) {
  const auto t_start = Clock::now();
  // Everything that can be rejected is rejected before any work or any file is touched.
  const TileSpec tile = TileSpec::parse(o.tile);
  if (o.check != "auto" && o.check != "direct" && o.check != "fftw64" && o.check != "gpu64")
    throw InvalidArgument("check: expected auto, direct, fftw64 or gpu64, got '" + o.check + "'");
  if (o.check == "gpu64" && !gpu_reference_available())
    throw InvalidArgument("check: gpu64 needs a CUDA build and a CUDA device");
  if (o.passes.empty()) throw InvalidArgument("passes: empty list");
  check_threads(o.threads);
  const std::vector<LabeledProblem> problems = select_problems(problem_set(o.set, o.set_seed, o.random_count), o.selection);
  const std::vector<const Backend*> backends = resolve_backends(registry ? *registry : builtin_registry(), o.backends);
  if (backends.empty()) throw InvalidArgument("backends: none available");
  if (o.dry_run) {
    ValidateResult dry;
    dry.problems = int64_t(problems.size());
    return dry;
  }

  const std::map<const Backend*, PlanOptions> options = backend_options(o, tile, backends);
  ValidateResult res;
  res.problems = int64_t(problems.size());
  std::set<std::string> done;
  if (o.resume && !o.out.empty()) {
    res.records = read_records(o.out);
    for (const Record& r : res.records) done.insert(r.key());
  }
  Sink sink(o, json_out);
  const uint64_t run_seed = o.data_seed ? o.data_seed : (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  const int64_t per_problem = int64_t(backends.size()) * (int64_t(o.passes.size()) + (o.adjoint ? 1 : 0));
  Progress progress(per_problem * res.problems, o.progress);

  // Operands live on the device when every backend does (Note in sweep_data.hpp), else on the host.
  bool all_cuda = gpu_reference_available();
  for (const Backend* b : backends) all_cuda = all_cuda && b->location() == Location::cuda;
  const std::unique_ptr<SweepData> data = all_cuda ? make_device_sweep_data() : make_host_sweep_data();
  res.operands = data->where();

  const int64_t resumed_failures = summarize(res.records).failures;
  for (const LabeledProblem& lp : problems) {
    const ConvProblem& p = lp.problem;
    const std::string spec = p.to_string();
    const uint64_t pseed = splitmix64(run_seed ^ std::hash<std::string>{}(spec));
    for (Pass pass : o.passes) {
      std::vector<const Backend*> todo;
      for (const Backend* b : backends)
        if (!done.count(base_record(o, lp, to_string(pass), *b).key())) todo.push_back(b);
      progress.add(int64_t(backends.size() - todo.size()), resumed_failures + sink.failures());
      if (todo.empty()) continue;
      const uint64_t seed = splitmix64(pseed + uint64_t(pass) + 1);
      data->make(p, pass, seed);
      // The reference, once for every backend that can run this (problem, pass).
      std::string ref_kind, ref_error;
      double ref_ms = 0;
      bool any = false;
      for (const Backend* b : todo) any = any || skip_reason(*b, p, pass).empty();
      if (any) {
        try {
          ref_kind = resolve_check(o.check, p);
          const auto t0 = Clock::now();
          data->reference(ref_kind);
          ref_ms = ms_since(t0);
        } catch (const std::exception& e) {
          ref_error = std::string("reference ") + ref_kind + " failed: " + e.what();
        }
      }
      for (const Backend* b : todo) {
        Record r = base_record(o, lp, to_string(pass), *b);
        r.ref = ref_kind;
        r.ref_ms = ref_ms;
        r.data_seed = seed;
        const std::string why = skip_reason(*b, p, pass);
        if (!why.empty()) {
          r.status = "skipped";
          r.reason = why;
        } else if (!ref_error.empty()) {
          r.status = "error";
          r.reason = ref_error;
        } else {
          guarded(r, [&] {
            Planned pl = make_plan(*b, p, pass, options.at(b));
            r.plan_ms = pl.plan_ms;
            r.basis = pl.basis;
            r.describe = pl.plan->describe();
            r.time_ms = data->run(*b, *pl.plan);
            r.math = pl.plan->last_products().math;
            record_verdict(r, data->judge(r.basis, plan_product_math(*pl.plan)));
          });
        }
        sink.put(std::move(r), res.records);
        progress.add(1, resumed_failures + sink.failures());
      }
    }
    if (!o.adjoint) continue;
    for (const Backend* b : backends) {
      Record r = base_record(o, lp, "adjoint", *b);
      if (done.count(r.key())) { progress.add(1, resumed_failures + sink.failures()); continue; }
      std::string why;
      for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad})
        if (why.empty()) why = skip_reason(*b, p, pass);
      if (!why.empty()) {
        r.status = "skipped";
        r.reason = why;
      } else {
        guarded(r, [&] { adjoint_check(r, *data, *b, p, options.at(b), splitmix64(pseed + 17)); });
      }
      sink.put(std::move(r), res.records);
      progress.add(1, resumed_failures + sink.failures());
    }
  }
  progress.finish();
  res.summary = summarize(res.records);
  res.wall_s = ms_since(t_start) / 1e3;
  return res;
}

}  // namespace fftconv
