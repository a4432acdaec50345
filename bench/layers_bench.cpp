// `fftconv bench layers` (see layers_bench.hpp): verification at a reduced batch against the float64
// reference, then timing at the full batch with CUDA events over rotated operand sets, for cuDNN
// (every algorithm) and each requested backend; table on stdout, JSON document returned.
#include "bench/layers_bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>

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
    const Backend* b = reg.find(name);
    if (!b) reg.get(name);  // throws InvalidArgument listing the known names
    if (b->location() != Location::cuda)
      throw InvalidArgument("--backends: '" + name + "' runs on the host; bench layers times CUDA backends");
    Entry e{label, b, {}};
    e.opts.autotune = o.autotune;
    e.opts.tune_cache = o.tune_cache;
    if (naive) e.opts.extra["naive"] = "1";
    out.push_back(std::move(e));
  };
  for (const std::string& name : o.backends) {
    if (name == "cufft-naive") add(name, "cufft", true);
    else add(name, name, false);
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

}  // namespace

bool layers_bench_available(std::string* why) {
  const Support s = cuda_device_support();
  if (!s.ok && why) *why = s.reason;
  return s.ok;
}

std::string run_layers_bench(const LayersBenchOptions& o, std::ostream& out, bool* all_verified) {
  if (o.batch < 1) throw InvalidArgument("--batch: must be >= 1, got " + std::to_string(o.batch));
  if (o.verify_batch < 1) throw InvalidArgument("--verify-batch: must be >= 1, got " + std::to_string(o.verify_batch));
  if (o.repeat < 1) throw InvalidArgument("--repeat: must be >= 1, got " + std::to_string(o.repeat));
  std::vector<Pass> passes;
  for (const auto& s : o.passes) passes.push_back(parse_pass(s));
  std::vector<ConvProblem> layers;
  for (const auto& spec : o.layers) {
    ConvProblem p = ConvProblem::parse(spec);
    p.S = o.batch;
    p.validate();
    layers.push_back(p);
  }
  const std::vector<Entry> entries = make_entries(o);
  *all_verified = true;

  const CudaStream owned_stream;
  const cudaStream_t stream = owned_stream.get();

  json doc{{"benchmark", "layers"},   {"command", o.command_line}, {"device", device_json()},
           {"batch", o.batch},        {"verify_batch", o.verify_batch}, {"repeat", o.repeat},
           {"warmup", o.warmup},      {"tolerance_model", tolerance_formula()}, {"rows", json::array()}};
  out << "# " << doc["device"]["name"].get<std::string>() << ", cuDNN " << cudnn_version() << ", S=" << o.batch
      << ", verified at S=" << o.verify_batch << "; times are medians of " << o.repeat << " (min in brackets)\n";
  std::map<std::string, std::vector<double>> ratios;  // label -> ours / cuDNN best, per row
  int naive_wins = 0, naive_rows = 0;
  uint64_t seed = 1000;

  for (size_t li = 0; li < layers.size(); ++li) {
    const ConvProblem& p = layers[li];
    for (Pass pass : passes) {
      ConvProblem pv = p;
      pv.S = std::min(o.verify_batch, p.S);
      json row{{"layer", o.layers[li]}, {"pass", to_string(pass)}, {"problem", p.to_string()},
               {"verify_problem", pv.to_string()}, {"madds", p.madds()}};
      // Reference at the verification batch.
      PassData d = make_pass_data(pv, pass, seed++);
      const RefKind ref_kind = resolve_ref(RefKind::automatic, pv);
      const std::vector<double> ref = reference_result(pv, pass, d, ref_kind);
      const int64_t n = pv.result_elems(pass);
      const Tolerance tol = tolerance(pv, pass, DType::f32, pow2_basis_elems(pv));
      row["reference"] = std::string(to_string(ref_kind));
      row["tolerance_rel_l2"] = tol.rel_l2;

      // cuDNN: verify every algorithm at the reduced batch, then time them at the full batch.
      json cj;
      double cudnn_best_ms = -1;
      {
        DeviceBuffer x = upload(d.input), w = upload(d.weight), g = upload(d.grad_output);
        DeviceBuffer r(std::size_t(n) * sizeof(float));
        std::vector<float> host(static_cast<size_t>(n));
        CudnnRunOptions vopt;
        vopt.repeat = 0;
        vopt.check = [&](const float* dev) {
          FFTCONV_CUDA_CHECK(cudaMemcpy(host.data(), dev, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
          return compare(host.data(), ref.data(), n).rel_l2;
        };
        const CudnnReport vr = run_cudnn_algorithms(
            pv, pass, {DeviceOperands{x.as<float>(), w.as<float>(), g.as<float>(), r.as<float>()}}, vopt, stream);
        std::map<std::string, double> verified;
        for (const auto& a : vr.algos) verified[a.algo] = a.rel_l2;

        CudnnReport tr;
        if (vr.supported) {
          auto sets = make_sets(p, pass, stream, seed);
          seed += 16;
          std::vector<DeviceOperands> ops;
          for (const auto& s : sets) ops.push_back(s.ops());
          tr = run_cudnn_algorithms(p, pass, ops, CudnnRunOptions{o.warmup, o.repeat, false, {}}, stream);
        } else {
          tr = vr;
        }
        cj = {{"supported", tr.supported}, {"reason", tr.reason}, {"max_count", tr.max_count}, {"algos", json::array()}};
        for (const auto& a : tr.algos)
          cj["algos"].push_back({{"algo", a.algo}, {"ran", a.ran}, {"status", a.status},
                                 {"workspace_bytes", a.workspace_bytes}, {"median_ms", a.median_ms},
                                 {"min_ms", a.min_ms}, {"verify_rel_l2", verified.count(a.algo) ? verified[a.algo] : -1.0}});
        if (tr.best >= 0) {
          const auto& b = tr.algos[size_t(tr.best)];
          cudnn_best_ms = b.median_ms;
          cj["best"] = {{"algo", b.algo}, {"median_ms", b.median_ms}, {"min_ms", b.min_ms},
                        {"workspace_bytes", b.workspace_bytes}, {"tred_per_s", p.madds() / (b.median_ms * 1e-3) / 1e12},
                        {"verify_rel_l2", verified.count(b.algo) ? verified[b.algo] : -1.0}};
          out << o.layers[li] << " " << to_string(pass) << "  cuDNN " << b.algo << "  " << fmt("%.3f", b.median_ms)
              << " ms [" << fmt("%.3f", b.min_ms) << "]  " << fmt("%.2f", p.madds() / (b.median_ms * 1e-3) / 1e12)
              << " TRED/s  ws " << mib(b.workspace_bytes) << "\n";
        } else {
          out << o.layers[li] << " " << to_string(pass) << "  cuDNN: "
              << (tr.supported ? "no algorithm ran" : tr.reason) << "\n";
        }
      }
      row["cudnn"] = cj;

      // Our backends.
      row["backends"] = json::array();
      std::map<std::string, double> medians;
      for (const Entry& e : entries) {
        json bj{{"label", e.label}, {"backend", std::string(e.backend->name())}};
        try {
          if (Support s = e.backend->available(); !s.ok) throw Unsupported(s.reason);
          if (Support s = e.backend->supports(p, pass, DType::f32); !s.ok) throw Unsupported(s.reason);
          {  // verification at the reduced batch
            auto plan = e.backend->plan(pv, pass, e.opts);
            std::fill(d.result.begin(), d.result.end(), std::numeric_limits<float>::quiet_NaN());
            execute_pass(*e.backend, *plan, d);
            const ErrorStats err = compare(d.result.data(), ref.data(), n);
            const bool ok = err.finite_ok() && err.nonfinite == 0 && err.rel_l2 <= tol.rel_l2 &&
                            err.max_abs_rel <= tol.max_abs_rel;
            bj["verify"] = {{"rel_l2", err.rel_l2}, {"max_abs_rel", err.max_abs_rel}, {"nonfinite", err.nonfinite},
                            {"ok", ok}, {"within_1e-5", err.rel_l2 <= 1e-5}};
            if (!ok) *all_verified = false;
          }
          auto plan = e.backend->plan(p, pass, e.opts);
          auto sets = make_sets(p, pass, stream, seed);
          seed += 16;
          const GpuTiming t = time_gpu([&](int i) { plan->execute(sets[size_t(i) % sets.size()].args(stream)); },
                                       o.warmup, o.repeat, stream);
          medians[e.label] = t.median_ms;
          bj["median_ms"] = t.median_ms;
          bj["min_ms"] = t.min_ms;
          bj["workspace_bytes"] = plan->workspace_bytes();
          bj["plan"] = plan->describe();
          bj["tred_per_s"] = p.madds() / (t.median_ms * 1e-3) / 1e12;
          if (cudnn_best_ms > 0) {
            bj["speedup_vs_cudnn"] = cudnn_best_ms / t.median_ms;
            ratios[e.label].push_back(t.median_ms / cudnn_best_ms);
          }
          out << "    " << e.label << "  " << fmt("%.3f", t.median_ms) << " ms [" << fmt("%.3f", t.min_ms) << "]  "
              << (cudnn_best_ms > 0 ? fmt("x%.2f vs cuDNN", cudnn_best_ms / t.median_ms) : std::string("-")) << "  "
              << fmt("%.2f", p.madds() / (t.median_ms * 1e-3) / 1e12) << " TRED/s  ws "
              << mib(plan->workspace_bytes()) << "  rel_l2 " << fmt("%.2e", bj["verify"]["rel_l2"].get<double>())
              << (bj["verify"]["ok"].get<bool>() ? "" : "  VERIFY FAILED") << "\n      " << plan->describe() << "\n";
        } catch (const Unsupported& ex) {
          bj["status"] = std::string("unsupported: ") + ex.what();
          out << "    " << e.label << "  unsupported: " << ex.what() << "\n";
        } catch (const Error& ex) {  // keep the other rows of a precious GPU run
          bj["status"] = std::string("error: ") + ex.what();
          *all_verified = false;
          out << "    " << e.label << "  ERROR: " << ex.what() << "\n";
        }
        out.flush();
        row["backends"].push_back(bj);
      }
      if (medians.count("cufft") && medians.count("cufft-naive")) {
        ++naive_rows;
        if (medians["cufft"] < medians["cufft-naive"]) ++naive_wins;
      }
      doc["rows"].push_back(row);
    }
  }

  json summary = json::object();
  for (const auto& [label, r] : ratios) {
    double log_sum = 0;
    for (double x : r) log_sum += std::log(x);
    const double gm = std::exp(log_sum / double(r.size()));
    summary[label] = {{"geomean_time_over_cudnn_best", gm}, {"rows", r.size()},
                      {"max_time_over_cudnn_best", *std::max_element(r.begin(), r.end())}};
    out << "# " << label << ": geometric mean of time / cuDNN best = " << fmt("%.3f", gm) << " over " << r.size()
        << " cases\n";
  }
  if (naive_rows) {
    summary["cufft_faster_than_naive"] = {{"rows", naive_rows}, {"wins", naive_wins}};
    out << "# cufft faster than cufft-naive in " << naive_wins << " of " << naive_rows << " cases\n";
  }
  summary["all_verified"] = *all_verified;
  doc["summary"] = summary;
  return doc.dump(2);
}

#endif  // FFTCONV_HAVE_CUDA

}  // namespace fftconv::bench
