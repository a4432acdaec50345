// `fftconv bench layers` (see layers_bench.hpp): verification at a reduced batch against the float64
// reference, then timing at the full batch with CUDA events over rotated operand sets, for cuDNN
// (every algorithm) and each requested backend; table on stdout, JSON document returned.
#include "bench/layers_bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <ostream>

#include "common/backend.hpp"
#include "common/errors.hpp"

#ifdef FFTCONV_HAVE_CUDA
#include "api/fftconv.hpp"
#include "bench/cudnn_baseline.hpp"
#include "validation/gpu_timing.hpp"
#include "common/fft_size.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "gpu/runtime/fill_kernels.cuh"
#include "validation/compare.hpp"
#include "validation/data.hpp"
#include "validation/execute.hpp"
#include "validation/reference.hpp"
#include "validation/tolerance.hpp"
#include "validation/verdict.hpp"
#endif

namespace fftconv::bench {

LayersBenchScope check_layers_bench_options(const LayersBenchOptions& o) {
  if (o.batch < 0) throw InvalidArgument("--batch: must be >= 0 (0 = each layer's own), got " + std::to_string(o.batch));
  if (o.verify_batch < 1) throw InvalidArgument("--verify-batch: must be >= 1, got " + std::to_string(o.verify_batch));
  if (o.repeat < 1) throw InvalidArgument("--repeat: must be >= 1, got " + std::to_string(o.repeat));
  if (o.warmup < 0) throw InvalidArgument("--warmup: must be >= 0, got " + std::to_string(o.warmup));
  (void)TileSpec::parse(o.tile);
  (void)parse_product_math(o.math);
  LayersBenchScope scope;
  if (o.passes.empty()) throw InvalidArgument("--passes: names no pass (fprop, bprop, accgrad)");
  for (const std::string& s : o.passes) scope.passes.push_back(parse_pass(s));
  scope.layers = select_layers(resolve_layers(o.set, o.layers, o.batch), o.only);
  return scope;
}

#ifndef FFTCONV_HAVE_CUDA

bool layers_bench_available(std::string* why) {
  if (why) *why = "this build has no CUDA support (configure with nvcc and FFTCONV_CUDA)";
  return false;
}
std::string run_layers_bench(const LayersBenchOptions&, std::ostream&, bool*) {
  throw Unsupported("bench layers: this build has no CUDA support");
}

#else

namespace {

using nlohmann::json;

constexpr std::size_t kDefaultL2Bytes = std::size_t(50) << 20;  // H100
constexpr int kMaxOperandSets = 8;

struct Entry {
  std::string label;
  const Backend* backend = nullptr;
  PlanOptions opts;
};

// One set of full-batch device operands (only those the pass reads) and a result buffer.
struct OperandSet {
  DeviceBuffer input, weight, grad, result;
  DeviceOperands ops() const {
    return {input.as<float>(), weight.as<float>(), grad.as<float>(), result.as<float>()};
  }
  Args args(void* stream) const {
    Args a;
    a.input = input.get(), a.weight = weight.get(), a.grad_output = grad.get(), a.result = result.get();
    a.stream = stream;
    return a;
  }
};

std::size_t l2_bytes() {
  int dev = 0, l2 = 0;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&dev));
  FFTCONV_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  return l2 > 0 ? std::size_t(l2) : kDefaultL2Bytes;
}

// Enough sets that the data of consecutive repetitions never sits in L2 together.
std::vector<OperandSet> make_sets(const ConvProblem& p, Pass pass, cudaStream_t stream, uint64_t seed) {
  const int64_t xin = pass == Pass::bprop ? 0 : p.input_elems();
  const int64_t win = pass == Pass::accgrad ? 0 : p.weight_elems();
  const int64_t gin = pass == Pass::fprop ? 0 : p.output_elems();
  const int64_t res = p.result_elems(pass);
  const double bytes = 4.0 * double(xin + win + gin + res);
  const double l2 = double(l2_bytes());
  const int n = bytes >= 2 * l2 ? 1 : std::min(kMaxOperandSets, int(std::ceil(2 * l2 / bytes)));
  std::vector<OperandSet> sets(static_cast<size_t>(n));
  for (auto& s : sets) {
    auto make = [&](DeviceBuffer& b, int64_t elems) {
      if (!elems) return;
      b.allocate(std::size_t(elems) * sizeof(float));
      gpu_kernels::fill_uniform(b.as<float>(), elems, seed++, stream);
    };
    make(s.input, xin), make(s.weight, win), make(s.grad, gin);
    s.result.allocate(std::size_t(res) * sizeof(float));
    gpu_kernels::fill_nan(s.result.as<float>(), res, stream);
  }
  FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  return sets;
}


json device_json() {
  int dev = 0, driver = 0, runtime = 0, cufft = 0, blas_major = 0, blas_minor = 0, blas_patch = 0;
  FFTCONV_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  FFTCONV_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  FFTCONV_CUDA_CHECK(cudaDriverGetVersion(&driver));
  FFTCONV_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  FFTCONV_CUFFT_CHECK(cufftGetVersion(&cufft));
  FFTCONV_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &blas_major));
  FFTCONV_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &blas_minor));
  FFTCONV_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &blas_patch));
  return {{"name", prop.name},
          {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
          {"memory_bytes", prop.totalGlobalMem},
          {"l2_bytes", l2_bytes()},
          {"driver", driver},
          {"runtime", runtime},
          {"cufft", cufft},
          {"cublas", std::to_string(blas_major) + "." + std::to_string(blas_minor) + "." + std::to_string(blas_patch)},
          {"cudnn", cudnn_version()}};
}

std::vector<Entry> make_entries(const LayersBenchOptions& o) {
  const Registry& reg = builtin_registry();
  std::vector<Entry> out;
  auto add = [&](const std::string& label, const std::string& name, bool naive) {
    const Backend* b = name == "auto" ? &find_backend(name, Location::cuda) : reg.find(name);
    if (!b) reg.get(name);  // throws InvalidArgument listing the known names
    if (b->location() != Location::cuda)
      throw InvalidArgument("--backends: '" + name + "' runs on the host; bench layers times CUDA backends");
    Entry e{label, b, {}};
    e.opts.autotune = o.autotune;
    e.opts.tune_cache = o.tune_cache;
    e.opts.math = parse_product_math(o.math);
    if (naive) e.opts.extra["naive"] = "1";
    out.push_back(std::move(e));
  };
  const TileSpec tile = TileSpec::parse(o.tile);
  for (const std::string& name : o.backends) {
    if (name == "cufft-naive") add(name, "cufft", true);
    else add(name, name, false);
    if ((name == "fbfft" || name == "cufft") && tile.kind != TileSpec::Kind::none) {
      add(name + " tile=" + o.tile, name, false);
      out.back().opts.tile = tile;
    }
    if (name == "cufft" && o.naive &&
        std::find(o.backends.begin(), o.backends.end(), "cufft-naive") == o.backends.end())
      add("cufft-naive", "cufft", true);
  }
  return out;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string mib(std::size_t b) { return fmt("%.1f MiB", double(b) / (1024.0 * 1024.0)); }

using Layer = LayerProblem;

// What one row shares: the problem at both batches, the verification data and reference.
struct RowContext {
  const Layer& layer;
  Pass pass;
  ConvProblem pv;
  PassData d;
  std::vector<double> ref;
  Tolerance tol;
};

std::size_t device_free_bytes() {
  std::size_t free = 0, total = 0;
  FFTCONV_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

// cuDNN with one math mode: every algorithm verified at the reduced batch, then timed at the full
// batch. Returns the row's JSON block; *best_ms gets the fastest median (-1 when none ran).
json time_cudnn(const RowContext& c, bool tensor_ops, const LayersBenchOptions& o, cudaStream_t stream,
                uint64_t& seed, double* best_ms, std::ostream& out) {
  const ConvProblem& p = c.layer.p;
  const int64_t n = c.pv.result_elems(c.pass);
  DeviceBuffer x = upload(c.d.input), w = upload(c.d.weight), g = upload(c.d.grad_output);
  DeviceBuffer r(std::size_t(n) * sizeof(float));
  std::vector<float> host(static_cast<size_t>(n));
  CudnnRunOptions vopt;
  vopt.repeat = 0;
  vopt.tensor_op_math = tensor_ops;
  vopt.check = [&](const float* dev) {
    FFTCONV_CUDA_CHECK(cudaMemcpy(host.data(), dev, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return compare(host.data(), c.ref.data(), n).rel_l2;
  };
  const CudnnReport vr = run_cudnn_algorithms(
      c.pv, c.pass, {DeviceOperands{x.as<float>(), w.as<float>(), g.as<float>(), r.as<float>()}}, vopt, stream);
  std::map<std::string, double> verified;
  for (const auto& a : vr.algos) verified[a.algo] = a.rel_l2;
  CudnnReport tr = vr;
  if (vr.supported) {
    auto sets = make_sets(p, c.pass, stream, seed);
    seed += 16;
    std::vector<DeviceOperands> ops;
    for (const auto& s : sets) ops.push_back(s.ops());
    CudnnRunOptions topt{o.warmup, o.repeat, tensor_ops, {}};
    tr = run_cudnn_algorithms(p, c.pass, ops, topt, stream);
  }
  json cj{{"math", tensor_ops ? "tensor_op" : "fma"}, {"supported", tr.supported}, {"reason", tr.reason},
          {"max_count", tr.max_count}, {"algos", json::array()}};
  for (const auto& a : tr.algos)
    cj["algos"].push_back({{"algo", a.algo}, {"ran", a.ran}, {"status", a.status}, {"workspace_bytes", a.workspace_bytes},
                           {"median_ms", a.median_ms}, {"min_ms", a.min_ms},
                           {"verify_rel_l2", verified.count(a.algo) ? verified[a.algo] : -1.0}});
  *best_ms = -1;
  const std::string label = tensor_ops ? "cuDNN+TC" : "cuDNN";
  if (tr.best >= 0) {
    const auto& b = tr.algos[size_t(tr.best)];
    *best_ms = b.median_ms;
    const double err = verified.count(b.algo) ? verified[b.algo] : -1.0;
    cj["best"] = {{"algo", b.algo}, {"median_ms", b.median_ms}, {"min_ms", b.min_ms},
                  {"workspace_bytes", b.workspace_bytes}, {"tred_per_s", p.madds() / (b.median_ms * 1e-3) / 1e12},
                  {"verify_rel_l2", err}};
    out << c.layer.name << " " << to_string(c.pass) << "  " << label << " " << b.algo << "  "
        << fmt("%.3f", b.median_ms) << " ms [" << fmt("%.3f", b.min_ms) << "]  "
        << fmt("%.2f", p.madds() / (b.median_ms * 1e-3) / 1e12) << " TRED/s  ws " << mib(b.workspace_bytes)
        << "  rel_l2 " << fmt("%.2e", err) << "\n";
  } else {
    out << c.layer.name << " " << to_string(c.pass) << "  " << label << ": "
        << (tr.supported ? "no algorithm ran" : tr.reason) << "\n";
  }
  return cj;
}

// One of our backends on the row: verified at the reduced batch, planned at the full batch, dropped
// and planned again (the cost of a cached choice: the tuners' caches and the pooled cuFFT plans),
// timed, with its device memory.
json time_backend(const Entry& e, RowContext& c, const LayersBenchOptions& o, cudaStream_t stream, uint64_t& seed,
                  double cudnn_ms, double cudnn_tc_ms, double* median_ms, std::ostream& out) {
  const ConvProblem& p = c.layer.p;
  json bj{{"label", e.label}, {"backend", std::string(e.backend->name())}};
  if (Support s = e.backend->available(); !s.ok) throw Unsupported(s.reason);
  if (Support s = e.backend->supports(p, c.pass, DType::f32); !s.ok) throw Unsupported(s.reason);
  {  // verification at the reduced batch
    auto plan = e.backend->plan(c.pv, c.pass, e.opts);
    std::fill(c.d.result.begin(), c.d.result.end(), std::numeric_limits<float>::quiet_NaN());
    execute_pass(*e.backend, *plan, c.d);
    const int64_t n = c.pv.result_elems(c.pass);
    const ErrorStats err = compare(c.d.result.data(), c.ref.data(), n);
    const Tolerance tol = tolerance(c.pv, c.pass, DType::f32, pow2_basis_elems(c.pv), plan_product_math(*plan));
    const bool ok = err.finite_ok() && err.nonfinite == 0 && err.rel_l2 <= tol.rel_l2 &&
                    err.max_abs_rel <= tol.max_abs_rel;
    bj["verify"] = {{"rel_l2", err.rel_l2}, {"max_abs_rel", err.max_abs_rel}, {"nonfinite", err.nonfinite},
                    {"ok", ok}, {"within_1e-5", err.rel_l2 <= 1e-5}, {"tolerance_rel_l2", tol.rel_l2}};
  }
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t free_before = device_free_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  auto plan = e.backend->plan(p, c.pass, e.opts);
  const double plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  plan.reset();  // planned again as a user planning this problem a second time would: the timed plan
  const auto t1 = std::chrono::steady_clock::now();
  plan = e.backend->plan(p, c.pass, e.opts);
  const double cached_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  auto sets = make_sets(p, c.pass, stream, seed);
  seed += 16;
  plan->execute(sets[0].args(stream));
  FFTCONV_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::size_t sets_bytes = 0;
  for (const auto& s : sets)
    sets_bytes += s.input.bytes() + s.weight.bytes() + s.grad.bytes() + s.result.bytes();
  const std::size_t free_after = device_free_bytes();
  const std::size_t plan_memory = free_before > free_after + sets_bytes ? free_before - free_after - sets_bytes : 0;
  const GpuTiming t = time_gpu([&](int i) { plan->execute(sets[size_t(i) % sets.size()].args(stream)); }, o.warmup,
                               o.repeat, stream);
  *median_ms = t.median_ms;
  const ProductInfo products = plan->last_products();
  bj["median_ms"] = t.median_ms;
  bj["min_ms"] = t.min_ms;
  bj["plan_ms"] = plan_ms;
  bj["cached_plan_ms"] = cached_ms;
  bj["workspace_bytes"] = plan->workspace_bytes();
  bj["device_memory_bytes"] = plan_memory;
  bj["math"] = products.math;
  bj["plan"] = plan->describe();
  bj["tred_per_s"] = p.madds() / (t.median_ms * 1e-3) / 1e12;
  if (cudnn_ms > 0) bj["speedup_vs_cudnn"] = cudnn_ms / t.median_ms;
  if (cudnn_tc_ms > 0) bj["speedup_vs_cudnn_tensor_op"] = cudnn_tc_ms / t.median_ms;
  out << "    " << e.label << "  " << fmt("%.3f", t.median_ms) << " ms [" << fmt("%.3f", t.min_ms) << "]  "
      << (cudnn_ms > 0 ? fmt("x%.2f vs cuDNN", cudnn_ms / t.median_ms) : std::string("-"))
      << (cudnn_tc_ms > 0 ? fmt(" (x%.2f vs cuDNN+TC)", cudnn_tc_ms / t.median_ms) : std::string()) << "  "
      << fmt("%.2f", p.madds() / (t.median_ms * 1e-3) / 1e12) << " TRED/s  ws " << mib(plan->workspace_bytes())
      << "  mem " << mib(plan_memory) << "  plan " << fmt("%.1f", plan_ms) << " ms (again " << fmt("%.1f", cached_ms)
      << " ms)  math " << (products.math.empty() ? "-" : products.math) << "  rel_l2 "
      << fmt("%.2e", bj["verify"]["rel_l2"].get<double>()) << (bj["verify"]["ok"].get<bool>() ? "" : "  VERIFY FAILED")
      << "\n      " << plan->describe() << "\n";
  return bj;
}

double geomean(const std::vector<double>& r) {
  double log_sum = 0;
  for (double x : r) log_sum += std::log(x);
  return std::exp(log_sum / double(r.size()));
}

// The summary of the rows in `doc`: per label, the geometric mean of its time over cuDNN's best
// (FMA, and tensor-op math), cases faster than cuDNN, cufft against the naive pipeline, and whether
// every backend ran and verified; printed to *out when given.
json summarize(const json& doc, std::ostream* out) {
  std::map<std::string, std::vector<double>> ratios, ratios_tc;  // label -> ours / cuDNN best, per row
  int naive_wins = 0, naive_rows = 0;
  bool verified = true;
  auto best_ms = [](const json& row, const char* key) {
    const json& b = row.value(key, json::object()).value("best", json::object());
    return b.value("median_ms", -1.0);
  };
  for (const json& row : doc.at("rows")) {
    const double cudnn = best_ms(row, "cudnn"), cudnn_tc = best_ms(row, "cudnn_tensor_op");
    std::map<std::string, double> medians;
    for (const json& b : row.at("backends")) {
      const std::string label = b.at("label").get<std::string>();
      if (b.value("status", "").rfind("error", 0) == 0) verified = false;
      if (!b.contains("median_ms")) continue;
      if (!b.at("verify").at("ok").get<bool>()) verified = false;
      const double ms = b.at("median_ms").get<double>();
      medians[label] = ms;
      if (cudnn > 0) ratios[label].push_back(ms / cudnn);
      if (cudnn_tc > 0) ratios_tc[label].push_back(ms / cudnn_tc);
    }
    if (medians.count("cufft") && medians.count("cufft-naive")) {
      ++naive_rows;
      if (medians["cufft"] < medians["cufft-naive"]) ++naive_wins;
    }
  }
  json summary = json::object();
  for (const auto& [label, r] : ratios) {
    const double gm = geomean(r);
    summary[label] = {{"geomean_time_over_cudnn_best", gm}, {"rows", r.size()},
                      {"max_time_over_cudnn_best", *std::max_element(r.begin(), r.end())},
                      {"faster_than_cudnn", std::count_if(r.begin(), r.end(), [](double x) { return x < 1.0; })}};
    if (ratios_tc.count(label)) {
      const auto& t = ratios_tc[label];
      summary[label]["geomean_time_over_cudnn_tensor_op_best"] = geomean(t);
      summary[label]["faster_than_cudnn_tensor_op"] = std::count_if(t.begin(), t.end(), [](double x) { return x < 1.0; });
    }
    if (!out) continue;
    *out << "# " << label << ": geometric mean of time / cuDNN best = " << fmt("%.3f", gm) << " over " << r.size()
         << " cases (faster in " << summary[label]["faster_than_cudnn"].get<long>() << ")";
    if (ratios_tc.count(label))
      *out << "; / cuDNN with tensor cores = "
           << fmt("%.3f", summary[label]["geomean_time_over_cudnn_tensor_op_best"].get<double>()) << " (faster in "
           << summary[label]["faster_than_cudnn_tensor_op"].get<long>() << ")";
    *out << "\n";
  }
  if (naive_rows) {
    summary["cufft_faster_than_naive"] = {{"rows", naive_rows}, {"wins", naive_wins}};
    if (out) *out << "# cufft faster than cufft-naive in " << naive_wins << " of " << naive_rows << " cases\n";
  }
  summary["all_verified"] = verified;
  return summary;
}

}  // namespace

bool layers_bench_available(std::string* why) {
  const Support s = cuda_device_support();
  if (!s.ok && why) *why = s.reason;
  return s.ok;
}

std::string run_layers_bench(const LayersBenchOptions& o, std::ostream& out, bool* all_verified) {
  const LayersBenchScope scope = check_layers_bench_options(o);
  const std::vector<Pass>& passes = scope.passes;
  const std::vector<LayerProblem>& layers = scope.layers;
  const std::vector<Entry> entries = make_entries(o);

  const CudaStream owned_stream;
  const cudaStream_t stream = owned_stream.get();

  json doc{{"benchmark", "layers"}, {"set", o.set.empty() ? "custom" : o.set}, {"command", o.command_line},
           {"device", device_json()}, {"verify_batch", o.verify_batch}, {"repeat", o.repeat},
           {"warmup", o.warmup}, {"tolerance_model", tolerance_formula()}, {"labels", json::array()},
           {"rows", json::array()}};
  for (const Entry& e : entries) doc["labels"].push_back(e.label);
  out << "# " << doc["device"]["name"].get<std::string>() << ", cuDNN " << cudnn_version() << ", set "
      << doc["set"].get<std::string>() << ", verified at S=" << o.verify_batch << "; times are medians of " << o.repeat
      << " (min in brackets)\n";
  uint64_t seed = 1000;
  // Rows of an earlier run (same set, same backends) are kept as they are.
  std::set<std::pair<std::string, std::string>> done;
  if (!o.resume.empty()) {
    json prev;
    try {
      prev = json::parse(o.resume);
    } catch (const json::exception& ex) {
      throw InvalidArgument(std::string("--resume: the earlier results are not JSON: ") + ex.what());
    }
    if (prev.value("set", "") != doc["set"].get<std::string>())
      throw InvalidArgument("--resume: the earlier results are of set '" + prev.value("set", "") + "', not '" +
                            doc["set"].get<std::string>() + "'");
    if (prev.value("labels", json::array()) != doc["labels"])
      throw InvalidArgument("--resume: the earlier results time the backends " + prev.value("labels", json::array()).dump() +
                            ", not " + doc["labels"].dump());
    for (const json& row : prev.value("rows", json::array())) {
      done.insert({row.at("layer").get<std::string>(), row.at("pass").get<std::string>()});
      doc["rows"].push_back(row);
    }
    out << "# resuming: " << done.size() << " rows kept from the earlier results\n";
    seed += 100 * done.size();
  }

  for (const Layer& layer : layers) {
    const ConvProblem& p = layer.p;
    for (Pass pass : passes) {
      if (done.count({layer.name, std::string(to_string(pass))})) continue;
      RowContext c{layer, pass, p, {}, {}, {}};
      c.pv.S = std::min(o.verify_batch, p.S);
      c.d = make_pass_data(c.pv, pass, seed++);
      const RefKind ref_kind = resolve_ref(RefKind::automatic, c.pv);
      c.ref = reference_result(c.pv, pass, c.d, ref_kind);
      c.tol = tolerance(c.pv, pass, DType::f32, pow2_basis_elems(c.pv));
      json row{{"layer", layer.name}, {"pass", to_string(pass)}, {"problem", p.to_string()},
               {"verify_problem", c.pv.to_string()}, {"madds", p.madds()}, {"reference", to_string(ref_kind)},
               {"tolerance_rel_l2", c.tol.rel_l2}};
      double cudnn_ms = -1, cudnn_tc_ms = -1;
      row["cudnn"] = time_cudnn(c, false, o, stream, seed, &cudnn_ms, out);
      if (o.cudnn_tensor_ops) row["cudnn_tensor_op"] = time_cudnn(c, true, o, stream, seed, &cudnn_tc_ms, out);
      row["backends"] = json::array();
      for (const Entry& e : entries) {
        json bj;
        try {
          double ms = 0;
          bj = time_backend(e, c, o, stream, seed, cudnn_ms, cudnn_tc_ms, &ms, out);
        } catch (const Unsupported& ex) {
          bj = {{"label", e.label}, {"backend", std::string(e.backend->name())},
                {"status", std::string("unsupported: ") + ex.what()}};
          out << "    " << e.label << "  unsupported: " << ex.what() << "\n";
        } catch (const Error& ex) {  // keep the other rows of a precious GPU run
          bj = {{"label", e.label}, {"backend", std::string(e.backend->name())},
                {"status", std::string("error: ") + ex.what()}};
          out << "    " << e.label << "  ERROR: " << ex.what() << "\n";
        }
        out.flush();
        row["backends"].push_back(bj);
      }
      doc["rows"].push_back(row);
      if (o.checkpoint) {
        json partial = doc;
        partial["summary"] = summarize(doc, nullptr);
        o.checkpoint(partial.dump(2));
      }
    }
  }

  doc["summary"] = summarize(doc, &out);
  *all_verified = doc["summary"]["all_verified"].get<bool>();
  return doc.dump(2);
}

#endif  // FFTCONV_HAVE_CUDA

}  // namespace fftconv::bench
