// One benchmark cell: verified single run, planned repetitions, cuDNN's probe and candidates (see
// cell_bench.hpp, Note [cell repetitions]).
#include "bench/cell_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>

#include "api/fftconv.hpp"
#include "bench/cudnn_baseline.hpp"
#include "common/counter_rng.hpp"
#include "common/errors.hpp"
#include "validation/run_plan.hpp"
#include "validation/runner.hpp"
#include "validation/sweep_data.hpp"
#include "validation/timing.hpp"
#include "validation/verdict.hpp"

#if __has_include("api/auto_plan.hpp")
#define FFTCONV_BENCH_AUTO 1  // the `auto` backend (api/auto_plan.hpp, reached through find_backend)
#endif

#ifdef FFTCONV_HAVE_CUDA
#include "gpu/reference/sweep_ops.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "validation/gpu_timing.hpp"
#endif

namespace fftconv::bench {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string fixed(double v, const char* fmt) {
  char b[48];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

// The start of a plan's describe(): the "<backend> <pass> <spec>: " prefix dropped, cut at the first
// ';' and at 120 characters (the full text is `fftconv plan`'s).
std::string short_describe(const std::string& d, const ConvProblem& p) {
  std::string s = d;
  const std::string spec = p.to_string() + ": ";
  if (auto at = s.find(spec); at != std::string::npos) s = s.substr(at + spec.size());
  s = s.substr(0, s.find(';'));
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

// Runs fn and turns what it throws into the result's status (the cell's record survives).
void guarded(CellResult& r, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Unsupported& e) {
    r.status = "unsupported";
    r.reason = e.what();
  } catch (const OutOfMemory& e) {
    r.status = "out of memory";
    r.reason = e.what();
  } catch (const std::exception& e) {
    r.status = "error";
    r.reason = e.what();
  }
}

void record_verdict(CellResult& r, const Verdict& v) {
  r.rel_l2 = v.error.rel_l2;
  r.tol_rel_l2 = v.tol.rel_l2;
  r.verified = v.ok;
}

std::string outside_tolerance(const Verdict& v) {
  if (!v.error.finite_ok()) return "outside tolerance: " + std::to_string(v.error.nonfinite) + " non-finite or unwritten elements";
  return "outside tolerance: rel_l2 " + fixed(v.error.rel_l2, "%.3g") + " (tolerance " + fixed(v.tol.rel_l2, "%.3g") +
         "), max_abs_rel " + fixed(v.error.max_abs_rel, "%.3g") + " (tolerance " + fixed(v.tol.max_abs_rel, "%.3g") + ")";
}

}  // namespace

void CellOptions::validate() const {
  auto bad = [](const char* flag, const std::string& v, const char* want) {
    throw InvalidArgument(std::string(flag) + ": " + want + ", got " + v);
  };
  if (warmup < 0) bad("warmup", std::to_string(warmup), "must be >= 0");
  if (repeat < 1) bad("repeat", std::to_string(repeat), "must be >= 1");
  if (min_repeat < 1 || min_repeat > repeat)
    bad("min-repeat", std::to_string(min_repeat), ("must be in [1, repeat = " + std::to_string(repeat) + "]").c_str());
  if (!(budget_ms >= 0)) bad("budget-ms", std::to_string(budget_ms), "must be >= 0");
  if (!(cell_seconds >= 0)) bad("cell-seconds", std::to_string(cell_seconds), "must be >= 0");
  if (cudnn_candidates < 1) bad("cudnn-candidates", std::to_string(cudnn_candidates), "must be >= 1");
  if (check != "auto" && check != "direct" && check != "fftw64" && check != "gpu64")
    bad("check", "'" + check + "'", "expected auto, direct, fftw64 or gpu64");
}

int cell_repetitions(const CellOptions& o, double one_run_ms, std::string* why) {
  const double t = std::max(one_run_ms, 1e-4);
  int n = int(std::clamp(std::ceil(o.budget_ms / t), double(o.min_repeat), double(o.repeat)));
  if (o.cell_seconds > 0) {
    const double fit = std::floor(o.cell_seconds * 1e3 / t) - o.warmup;
    if (fit < o.min_repeat) {
      if (why)
        *why = "time cap: one run takes " + fixed(one_run_ms, "%.4g") + " ms, so " + std::to_string(o.warmup) + " + " +
               std::to_string(o.min_repeat) + " runs exceed --cell-seconds " + fixed(o.cell_seconds, "%g");
      return 0;
    }
    n = std::min(n, int(fit));
  }
  return n;
}

double round_significant(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, digits - 1 - int(std::floor(std::log10(std::abs(x)))));
  return std::round(x * scale) / scale;
}

nlohmann::json cell_json(const CellResult& r) {
  nlohmann::json j{{"impl", r.impl}, {"status", r.status}};
  if (!r.reason.empty()) j["reason"] = r.reason;
  auto put = [&](const char* k, double v, int digits) {
    if (v >= 0) j[k] = round_significant(v, digits);
  };
  put("median_ms", r.median_ms, 5);
  put("min_ms", r.min_ms, 5);
  if (r.runs) j["runs"] = r.runs;
  put("probe_ms", r.probe_ms, 4);
  put("plan_ms", r.plan_ms, 4);
  if (r.workspace_bytes) j["workspace_bytes"] = r.workspace_bytes;
  if (!r.choice.empty()) j["choice"] = r.choice;
  if (r.rel_l2 >= 0) {
    j["rel_l2"] = round_significant(r.rel_l2, 3);
    j["tol_rel_l2"] = round_significant(r.tol_rel_l2, 3);
    j["verified"] = r.verified;
  }
  if (!r.ref.empty()) j["ref"] = r.ref;
  return j;
}

uint64_t cell_seed(uint64_t data_seed, const std::string& spec, Pass pass) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the spec: the same on every platform
  for (unsigned char c : spec) h = (h ^ c) * 0x100000001b3ull;
  return splitmix64(data_seed ^ h) + uint64_t(pass);
}

bool is_cudnn_impl(const std::string& name) { return name == "cudnn" || name == "cudnn-tc"; }

const Backend& bench_backend(const std::string& name) {
  if (name == "auto") {
#ifdef FFTCONV_BENCH_AUTO
    return find_backend(name);
#else
    throw InvalidArgument("backends: 'auto' is not part of this build (known: cudnn, cudnn-tc and the registry's backends)");
#endif
  }
  if (!builtin_registry().find(name)) {
    std::string known = "cudnn, cudnn-tc";
    for (const auto& b : builtin_registry().all()) known += ", " + std::string(b->name());
    throw InvalidArgument("backends: unknown implementation '" + name + "' (known: " + known + ")");
  }
  return builtin_registry().get(name);
}

constexpr const char* kHostHint = " (cuDNN needs a CUDA build and a device; host backends such as fftw and im2col run here)";

bool device_operands_for(const std::vector<std::string>& names) {
  if (names.empty()) throw InvalidArgument("backends: empty list");
  bool any_host = false, any_cuda = false;
  for (const std::string& n : names) {
    if (is_cudnn_impl(n)) {
#ifdef FFTCONV_HAVE_CUDA
      if (!cudnn_built()) throw Unsupported(n + ": " + cudnn_version());
      if (Support s = cuda_device_support(); !s.ok) throw Unsupported(n + ": " + s.reason + kHostHint);
#else
      throw Unsupported(n + ": this build has no CUDA" + kHostHint);
#endif
      any_cuda = true;
      continue;
    }
    const Backend& b = bench_backend(n);
    if (Support s = b.available(); !s.ok) throw Unsupported(n + ": not usable here: " + s.reason);
    (b.location() == Location::cuda ? any_cuda : any_host) = true;
  }
  if (any_host && any_cuda)
    throw InvalidArgument("backends: CUDA implementations and host backends are timed in separate runs");
  return any_cuda;
}

std::string bench_device(bool device) {
  if (!device) return device_description(Location::host);
#ifdef FFTCONV_HAVE_CUDA
  return device_description(Location::cuda) + ", cuDNN " + cudnn_version();
#else
  return device_description(Location::cuda);
#endif
}

nlohmann::json cell_options_json(const CellOptions& o) {
  return {{"warmup", o.warmup},       {"repeat", o.repeat},           {"min_repeat", o.min_repeat},
          {"budget_ms", o.budget_ms}, {"cell_seconds", o.cell_seconds}, {"cudnn_candidates", o.cudnn_candidates},
          {"check", o.check}};
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

struct CellBench::State {
  CellOptions o;
  bool device = false;
  std::unique_ptr<SweepData> data;
  ConvProblem p;
  Pass pass = Pass::fprop;
  uint64_t seed = 0;
  bool have_ref = false;
  std::string ref_kind, ref_error;
  CellResult operands;  // the status of drawing the operands: not ok, every cell of them reports it
#ifdef FFTCONV_HAVE_CUDA
  std::unique_ptr<CudaStream> stream;
  std::vector<DeviceBuffer> extra;  // operands and results of the rotated sets after the first
  std::vector<Args> sets;
#endif

  void ensure_reference() {
    if (have_ref) return;
    if (!ref_error.empty()) throw Error(ref_error);
    try {
      ref_kind = resolve_check(o.check, p);
      data->reference(ref_kind);
      have_ref = true;
    } catch (const std::exception& e) {
      ref_error = "reference " + (ref_kind.empty() ? o.check : ref_kind) + " failed: " + e.what();
      throw Error(ref_error);
    }
  }

  // Times `launch` (which runs one execution on the set it is given): `reps` runs after o.warmup
  // untimed ones; on the device with events over rotated operand sets, on the host with a clock.
  Timing time_runs(const std::function<void(const Args&)>& launch, int reps) {
    if (!device) {
      const Args a = data->poisoned_args();
      return time_host([&] { launch(a); }, reps, o.warmup);
    }
#ifdef FFTCONV_HAVE_CUDA
    const std::vector<Args>& s = timing_sets();
    const GpuTiming t = time_gpu([&](int i) { launch(s[std::size_t(i) % s.size()]); }, o.warmup, reps, stream->get());
    return Timing{t.min_ms, t.median_ms, t.repeat};
#else
    throw Unsupported("device timing: this build has no CUDA");
#endif
  }

#ifdef FFTCONV_HAVE_CUDA
  // The cell's own operands first, then (for problems smaller than twice the L2 cache) copies with
  // fresh values, so that consecutive runs do not find their data in L2; each with its own result.
  const std::vector<Args>& timing_sets() {
    if (!sets.empty()) return sets;
    Args first = data->poisoned_args();
    first.stream = stream->get();
    sets.push_back(first);
    const int64_t xin = pass == Pass::bprop ? 0 : p.input_elems(), win = pass == Pass::accgrad ? 0 : p.weight_elems();
    const int64_t gin = pass == Pass::fprop ? 0 : p.output_elems(), res = p.result_elems(pass);
    const double bytes = 4.0 * double(xin + win + gin + res);
    int dev = 0, l2 = 0;
    FFTCONV_CUDA_CHECK(cudaGetDevice(&dev));
    FFTCONV_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    const double two_l2 = 2.0 * std::max(l2, 1 << 20);
    const int n = bytes >= two_l2 ? 1 : std::min(8, int(std::ceil(two_l2 / bytes)));
    uint64_t fill_seed = seed * 1000003 + 17;
    auto make = [&](int64_t elems, bool nan) -> float* {
      if (!elems) return nullptr;
      extra.emplace_back(std::size_t(elems) * sizeof(float));
      float* ptr = extra.back().as<float>();
      if (nan) fill_nan_device(ptr, elems);
      else fill_normal_device(ptr, elems, fill_seed++);
      return ptr;
    };
    for (int i = 1; i < n; ++i) {
      Args a = first;
      a.input = make(xin, false), a.weight = make(win, false), a.grad_output = make(gin, false), a.result = make(res, true);
      sets.push_back(a);
    }
    FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
    return sets;
  }
#endif
};

CellBench::CellBench(const CellOptions& o, bool device) : s_(std::make_unique<State>()) {
  o.validate();
  s_->o = o;
  s_->device = device;
  s_->data = device ? make_device_sweep_data() : make_host_sweep_data();
#ifdef FFTCONV_HAVE_CUDA
  if (device) s_->stream = std::make_unique<CudaStream>();
#endif
}

CellBench::~CellBench() = default;

void CellBench::prepare(const ConvProblem& p, Pass pass, uint64_t seed) {
  State& s = *s_;
#ifdef FFTCONV_HAVE_CUDA
  s.sets.clear();
  s.extra.clear();
#endif
  s.p = p, s.pass = pass, s.seed = seed;
  s.have_ref = false;
  s.ref_kind.clear(), s.ref_error.clear();
  s.operands = CellResult{};
  guarded(s.operands, [&] { s.data->make(p, pass, seed); });
  if (!s.operands.ok()) s.operands.reason = "operands: " + s.operands.reason;
}

bool CellBench::device_ok(std::string* why) const {
#ifdef FFTCONV_HAVE_CUDA
  if (!s_->device) return true;
  const cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return true;
  if (why) *why = cudaGetErrorString(e);
  return false;
#else
  (void)why;
  return true;
#endif
}

CellResult CellBench::time_impl(const std::string& name, const PlanOptions& po) {
  if (name == "cudnn") return time_cudnn(false);
  if (name == "cudnn-tc") return time_cudnn(true);
  return time_backend(bench_backend(name), po);
}

CellResult CellBench::time_backend(const Backend& b, const PlanOptions& po) {
  State& s = *s_;
  CellResult r;
  r.impl = std::string(b.name());
  if (!s.operands.ok()) {
    r.status = s.operands.status, r.reason = s.operands.reason;
    return r;
  }
  if (Support a = b.available(); !a.ok) {
    r.status = "unsupported", r.reason = "unavailable: " + a.reason;
    return r;
  }
  if (Support sp = b.supports(s.p, s.pass, DType::f32); !sp.ok) {
    r.status = "unsupported", r.reason = sp.reason;
    return r;
  }
  guarded(r, [&] {
    const auto t0 = Clock::now();
    const std::unique_ptr<Plan> plan = b.plan(s.p, s.pass, po);
    r.plan_ms = ms_since(t0);
    const std::string describe = plan->describe();
    r.choice = short_describe(describe, s.p);
    r.workspace_bytes = plan->workspace_bytes();
    const int64_t basis = plan_basis_elems(r.impl, describe, plan->tile_json(), s.p);
    s.ensure_reference();
    r.ref = s.ref_kind;
    r.probe_ms = s.data->run(b, *plan);
    const Verdict v = s.data->judge(basis);
    record_verdict(r, v);
    if (!v.ok) {
      r.status = "error", r.reason = outside_tolerance(v);
      return;
    }
    const int reps = cell_repetitions(s.o, r.probe_ms, &r.reason);
    if (reps == 0) {
      r.status = "skipped";
      return;
    }
    const Timing t = s.time_runs([&](const Args& a) { plan->execute(a); }, reps);
    r.median_ms = t.median_ms, r.min_ms = t.min_ms, r.runs = t.repeats;
  });
  return r;
}

CellResult CellBench::time_cudnn(bool tensor_op_math) {
  State& s = *s_;
  CellResult r;
  r.impl = tensor_op_math ? "cudnn-tc" : "cudnn";
#ifndef FFTCONV_HAVE_CUDA
  (void)s;
  r.status = "unsupported", r.reason = "this build has no CUDA";
#else
  if (!s.device) {
    r.status = "unsupported", r.reason = "cuDNN runs on device operands (every implementation of the run a CUDA one)";
    return r;
  }
  if (!s.operands.ok()) {
    r.status = s.operands.status, r.reason = s.operands.reason;
    return r;
  }
  guarded(r, [&] {
    s.ensure_reference();
    r.ref = s.ref_kind;
    const Args a = s.data->poisoned_args();
    const DeviceOperands ops{static_cast<const float*>(a.input), static_cast<const float*>(a.weight),
                             static_cast<const float*>(a.grad_output), static_cast<float*>(a.result)};
    const int64_t basis = pow2_basis_elems(s.p);
    // The probe: each algorithm once verified (in the order they run), once timed.
    std::vector<Verdict> verdicts;
    CudnnRunOptions probe;
    probe.warmup = 0, probe.repeat = 1, probe.tensor_op_math = tensor_op_math;
    probe.check = [&](const float*) {
      verdicts.push_back(s.data->judge(basis));
      s.data->poisoned_args();  // the next algorithm writes over NaN again
      return verdicts.back().error.rel_l2;
    };
    const CudnnReport rep = run_cudnn_algorithms(s.p, s.pass, {ops}, probe, s.stream->get());
    if (!rep.supported) throw Unsupported(rep.reason);
    std::map<std::string, Verdict> verdict_of;
    std::vector<const CudnnAlgoResult*> ran;
    std::string statuses;
    bool oom = false;
    for (const CudnnAlgoResult& x : rep.algos) {
      if (!x.ran) {
        statuses += (statuses.empty() ? "" : "; ") + x.algo + ": " + x.status;
        oom = oom || x.status.find("could not be allocated") != std::string::npos;
        continue;
      }
      verdict_of[x.algo] = verdicts.at(ran.size());
      ran.push_back(&x);
    }
    if (ran.empty()) {
      r.status = oom ? "out of memory" : "unsupported";
      r.reason = "no algorithm ran: " + statuses.substr(0, 400);
      return;
    }
    // Candidates: verified (fp32 tolerance; tensor-op math is not held to it), fastest probe first.
    std::vector<const CudnnAlgoResult*> cand;
    for (const CudnnAlgoResult* x : ran)
      if (tensor_op_math || verdict_of[x->algo].ok) cand.push_back(x);
    if (cand.empty()) {
      const CudnnAlgoResult* best = *std::min_element(ran.begin(), ran.end(), [](auto* x, auto* y) { return x->median_ms < y->median_ms; });
      record_verdict(r, verdict_of[best->algo]);
      r.choice = best->algo;
      r.status = "error", r.reason = "no algorithm within tolerance; fastest " + best->algo + " " + outside_tolerance(verdict_of[best->algo]);
      return;
    }
    std::sort(cand.begin(), cand.end(), [](auto* x, auto* y) { return x->median_ms < y->median_ms; });
    const double fastest = cand.front()->median_ms;
    std::vector<std::string> names;
    double round_ms = 0;  // one run of every candidate
    for (const CudnnAlgoResult* x : cand)
      if (int(names.size()) < s.o.cudnn_candidates && x->median_ms <= 2 * fastest + 0.01) {
        names.push_back(x->algo);
        round_ms += x->median_ms;
      }
    r.probe_ms = fastest;
    r.choice = cand.front()->algo;
    record_verdict(r, verdict_of[r.choice]);
    const int reps = cell_repetitions(s.o, round_ms, &r.reason);
    if (reps == 0) {
      r.status = "skipped";
      return;
    }
    std::vector<DeviceOperands> sets;
    for (const Args& x : s.timing_sets())
      sets.push_back({static_cast<const float*>(x.input), static_cast<const float*>(x.weight),
                      static_cast<const float*>(x.grad_output), static_cast<float*>(x.result)});
    CudnnRunOptions timed;
    timed.warmup = s.o.warmup, timed.repeat = reps, timed.tensor_op_math = tensor_op_math;
    const CudnnReport t = run_cudnn_algorithms(s.p, s.pass, sets, timed, s.stream->get(), names);
    if (t.best < 0) throw Error("cudnn: no candidate algorithm ran in the timed round");
    const CudnnAlgoResult& best = t.algos[std::size_t(t.best)];
    r.choice = best.algo;
    record_verdict(r, verdict_of[best.algo]);
    r.median_ms = best.median_ms, r.min_ms = best.min_ms, r.runs = reps;
    r.workspace_bytes = best.workspace_bytes;
  });
#endif
  return r;
}

}  // namespace fftconv::bench
