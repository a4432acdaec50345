// Backends and plans: fftconv.backends(), _make_plan() (backend selection, tiling option,
// fallback of the default tile), and _Plan with a checked, GIL-free, serialized execute().
#include <map>
#include <optional>
#include <vector>

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#if FFTCONV_PY_CUDA
#include <cuda_runtime.h>
#endif

#include "api/auto_plan.hpp"
#include "bindings.hpp"
#include "common/errors.hpp"
#include "tiling/planner.hpp"

namespace fftconv::py {

namespace {

#if FFTCONV_PY_CUDA
// Makes `device` current for a scope (plans and kernels use the current device).
class DeviceGuard {
 public:
  DeviceGuard(bool active, int device) {
    if (!active) return;
    if (cudaGetDevice(&old_) != cudaSuccess) old_ = -1;
    if (old_ != device && cudaSetDevice(device) != cudaSuccess)
      throw CudaError("cudaSetDevice(" + std::to_string(device) + ") failed");
  }
  ~DeviceGuard() {
    if (old_ >= 0) cudaSetDevice(old_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int old_ = -1;
};
#else
struct DeviceGuard {
  DeviceGuard(bool, int) {}
};
#endif

// A plan with everything needed to check the arrays given to execute().
struct PyPlan {
  ConvProblem problem;
  Pass pass = Pass::fprop;
  DType dtype = DType::f32;
  Location location = Location::host;
  int device = 0;
  std::string backend;
  PlanOptions options;       // as the plan was made (tile after any fallback)
  std::string tile_note;     // why the default tile fell back to none, if it did
  std::unique_ptr<Plan> plan;
  std::unique_ptr<std::mutex> mu = std::make_unique<std::mutex>();  // one execute at a time
};

const Backend& pick_backend(const ConvProblem& p, Pass pass, DType dtype, Location loc, const std::string& name) {
  const Registry& reg = builtin_registry();
  const Backend& b = name == "auto" ? find_backend(name, loc) : reg.get(name);
  if (b.location() != loc)
    throw InvalidArgument("backend: '" + name + "' runs on " + std::string(to_string(b.location())) +
                          " memory but the arrays are on " + std::string(to_string(loc)));
  if (Support a = b.available(); !a.ok)
    throw Unsupported("backend: '" + name + "' is not available here: " + a.reason);
  if (Support s = b.supports(p, pass, dtype); !s.ok)
    throw Unsupported("backend: '" + name + "' does not support " + p.to_string() + " " +
                      std::string(to_string(pass)) + " " + std::string(to_string(dtype)) + ": " + s.reason);
  return b;
}

PyPlan make_plan(const ConvProblem& p, std::string_view pass_name, const std::string& backend,
                 std::optional<std::string> tile, std::string_view dtype, std::string_view location, int device,
                 std::string_view tile_sizes, std::vector<int64_t> tile_candidates, std::size_t workspace_limit,
                 int threads, std::map<std::string, std::string> extra, std::string_view math,
                 bool prepared_weights) {
  PyPlan out;
  out.problem = p;
  out.pass = parse_pass(pass_name);
  out.dtype = parse_dtype(dtype);
  out.location = parse_location(location);
  out.device = device;
  check_threads(threads);
  p.validate();
  PlanOptions o;
  o.dtype = out.dtype;
  o.tile_sizes = parse_size_policy(tile_sizes);
  for (int64_t c : tile_candidates)
    if (c < 2 || c > 4096) throw InvalidArgument("tile_candidates: sizes must be in [2, 4096], got " + std::to_string(c));
  o.tile_candidates = std::move(tile_candidates);
  o.workspace_limit = workspace_limit;
  o.threads = threads;
  o.math = parse_product_math(math);
  o.extra = std::move(extra);
  o.prepared_weights = prepared_weights;
  const bool default_tile = !tile.has_value();
  o.tile = TileSpec::parse(default_tile ? "auto" : *tile);

  DeviceGuard guard(out.location == Location::cuda, device);
  const Backend& b = pick_backend(p, out.pass, out.dtype, out.location, backend);
  // `auto` reports the backend it chose, which Plan.backend names.
  const auto* automatic = dynamic_cast<const AutoBackend*>(&b);
  AutoReport report;
  auto make = [&] { return automatic ? automatic->plan(p, out.pass, o, &report) : b.plan(p, out.pass, o); };
  try {
    out.plan = make();
  } catch (const Unsupported& e) {
    // Note [default tile]: tile=None means "auto where the backend tiles": a backend that does
    // not tile (direct, im2col) or cannot tile this request plans untiled instead.
    if (!default_tile) throw;
    out.tile_note = std::string("tile=auto fell back to none: ") + e.what();
    o.tile = TileSpec{};
    out.plan = make();
  }
  out.backend = automatic ? report.chosen_backend : std::string(b.name());
  out.options = o;
  return out;
}

// Weight spectra made by Plan.prepare_weights(), for Plan.execute(prepared=...).
struct PyPrepared {
  std::shared_ptr<const PreparedWeights> w;
};

nb::object execute(PyPlan& pl, nb::handle input, nb::handle weight, nb::handle grad_output, nb::handle out,
                   uintptr_t stream, nb::handle bias, nb::handle grad_bias, const PyPrepared* prepared) {
  const ConvProblem& p = pl.problem;
  auto spec = [&](const char* name, Shape4 shape) { return OperandSpec{name, shape, pl.dtype, pl.location, pl.device}; };
  Operand in, wt, go;
  if (pl.pass != Pass::bprop) in = check_operand(input, spec("input", input_shape(p)), false);
  if (pl.pass != Pass::accgrad && !prepared) wt = check_operand(weight, spec("weight", weight_shape(p)), false);
  if (pl.pass != Pass::fprop) go = check_operand(grad_output, spec("grad_output", output_shape(p)), false);
  const char* out_name = pl.pass == Pass::fprop ? "out (output)" : pl.pass == Pass::bprop ? "out (grad_input)"
                                                                                            : "out (grad_weight)";
  Operand res = check_operand(out, spec(out_name, result_shape(p, pl.pass)), true);
  // bias and gradBias arrive as 1×1×1×fo views of the fo values (fftconv/_plan.py).
  Operand bs, gb;
  if (p.bias && pl.pass == Pass::fprop) bs = check_operand(bias, spec("bias", {1, 1, 1, p.fo}), false);
  if (p.bias && pl.pass == Pass::accgrad) gb = check_operand(grad_bias, spec("grad_bias", {1, 1, 1, p.fo}), true);
  if (pl.location == Location::host) {
    check_no_alias(res, in, out_name, "input");
    check_no_alias(res, wt, out_name, "weight");
    check_no_alias(res, go, out_name, "grad_output");
    check_no_alias(res, bs, out_name, "bias");
    check_no_alias(gb, in, "grad_bias", "input");
    check_no_alias(gb, go, "grad_bias", "grad_output");
    check_no_alias(gb, res, "grad_bias", out_name);
  }
  Args a;
  a.input = in.data;
  a.weight = wt.data;
  a.grad_output = go.data;
  a.result = res.data;
  a.bias = bs.data;
  a.grad_bias = gb.data;
  a.dtype = pl.dtype;
  a.stream = reinterpret_cast<void*>(stream);
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*pl.mu);
    DeviceGuard guard(pl.location == Location::cuda, pl.device);
    if (prepared)
      pl.plan->execute_with(a, *prepared->w);
    else
      pl.plan->execute(a);
  }
  return nb::borrow(out);
}

PyPrepared prepare_weights(PyPlan& pl, nb::handle weight, uintptr_t stream) {
  const ConvProblem& p = pl.problem;
  const Operand wt = check_operand(weight, OperandSpec{"weight", weight_shape(p), pl.dtype, pl.location, pl.device}, false);
  nb::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(*pl.mu);
  DeviceGuard guard(pl.location == Location::cuda, pl.device);
  return {pl.plan->prepare_weights(wt.data, reinterpret_cast<void*>(stream))};
}

}  // namespace

void bind_plan(nb::module_& m) {
  m.def(
      "backends",
      [] {
        nb::list out;
        for (const auto& b : builtin_registry().all()) {
          const Support a = b->available();
          nb::dict d;
          d["name"] = std::string(b->name());
          d["location"] = std::string(to_string(b->location()));
          d["available"] = a.ok;
          d["reason"] = a.reason;
          d["summary"] = std::string(b->summary());
          nb::list keys;
          for (std::string_view k : b->option_keys()) keys.append(std::string(k));
          d["options"] = keys;
          out.append(d);
        }
        return out;
      },
      "The built-in backends in selection order: dicts with name, location ('host'|'cuda'),\n"
      "available, reason (why not available), summary and options (the keys plan(extra=...) accepts).");

  nb::class_<PyPlan>(m, "_Plan")
      .def_prop_ro("backend", [](const PyPlan& p) { return p.backend; })
      .def_prop_ro("problem", [](const PyPlan& p) { return p.problem; })
      .def_prop_ro("pass_", [](const PyPlan& p) { return std::string(to_string(p.pass)); })
      .def_prop_ro("dtype", [](const PyPlan& p) { return std::string(to_string(p.dtype)); })
      .def_prop_ro("location", [](const PyPlan& p) { return std::string(to_string(p.location)); })
      .def_prop_ro("device", [](const PyPlan& p) { return p.device; })
      .def_prop_ro("tile", [](const PyPlan& p) { return p.options.tile.to_string(); })
      .def_prop_ro("tile_sizes", [](const PyPlan& p) { return std::string(to_string(p.options.tile_sizes)); })
      .def_prop_ro("tile_candidates", [](const PyPlan& p) { return p.options.tile_candidates; })
      .def_prop_ro("workspace_limit", [](const PyPlan& p) { return p.options.workspace_limit; })
      .def_prop_ro("extra", [](const PyPlan& p) { return p.options.extra; })
      .def_prop_ro("tiling_extra",  // the planner's keys of extra, for fftconv.tiling()
                   [](const PyPlan& p) {
                     std::map<std::string, std::string> out;
                     for (std::string_view k : tiling_option_keys())
                       if (auto it = p.options.extra.find(std::string(k)); it != p.options.extra.end()) out.insert(*it);
                     return out;
                   })
      .def_prop_ro("tile_note", [](const PyPlan& p) { return p.tile_note; })
      .def_prop_ro("workspace_bytes", [](const PyPlan& p) { return p.plan->workspace_bytes(); })
      .def("describe", [](const PyPlan& p) { return p.plan->describe(); })
      .def("tile_json", [](const PyPlan& p) { return p.plan->tile_json(); })
      .def("last_breakdown", [](const PyPlan& p) { return p.plan->last_breakdown(); })
      .def_prop_ro("math", [](const PyPlan& p) { return p.plan->last_products().math; })
      .def("execute", &execute, nb::arg("input").none(), nb::arg("weight").none(), nb::arg("grad_output").none(),
           nb::arg("out").none(), nb::arg("stream") = 0, nb::arg("bias").none() = nb::none(),
           nb::arg("grad_bias").none() = nb::none(), nb::arg("prepared").none() = nb::none())
      .def("prepare_weights", &prepare_weights, nb::arg("weight"), nb::arg("stream") = 0);

  nb::class_<PyPrepared>(m, "_PreparedWeights")
      .def_prop_ro("key", [](const PyPrepared& w) { return w.w->key(); })
      .def_prop_ro("bytes", [](const PyPrepared& w) { return w.w->bytes(); });

  m.def("_make_plan", &make_plan, nb::arg("problem"), nb::arg("pass_"), nb::arg("backend") = "auto",
        nb::arg("tile").none() = nb::none(), nb::arg("dtype") = "float32", nb::arg("location") = "host",
        nb::arg("device") = 0, nb::arg("tile_sizes") = "pow2", nb::arg("tile_candidates") = std::vector<int64_t>{},
        nb::arg("workspace_limit") = 0, nb::arg("threads") = 0,
        nb::arg("extra") = std::map<std::string, std::string>{}, nb::arg("math") = "auto",
        nb::arg("prepared_weights") = false);
}

}  // namespace fftconv::py
