// tile=auto measured on the device (Note [measured tile choice], measured_tile.hpp).
#include "gpu/tiles/measured_tile.hpp"

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "common/errors.hpp"
#include "common/forwarding_plan.hpp"
#include "gpu/runtime/choice_cache.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/cuda_graph.hpp"
#include "gpu/runtime/cuda_stream.hpp"
#include "gpu/runtime/fill_kernels.cuh"
#include "gpu/runtime/tuning_timer.hpp"

namespace fftconv {
namespace {

// The chosen plan with the measurement appended to its description.
class MeasuredPlan final : public ForwardingPlan {
 public:
  MeasuredPlan(std::unique_ptr<Plan> inner, std::string note)
      : ForwardingPlan(std::move(inner)), note_(std::move(note)) {}
  std::string describe() const override { return ForwardingPlan::describe() + "; " + note_; }

 private:
  std::string note_;
};

// The operands of one pass, uniform in [-1, 1) (zeros can time faster than data).
struct Operands {
  DeviceBuffer x, w, g, r;
  Operands(const ConvProblem& p, Pass pass, cudaStream_t st) {
    if (pass != Pass::bprop) x.allocate(std::size_t(p.input_elems()) * sizeof(float));
    if (pass != Pass::accgrad) w.allocate(std::size_t(p.weight_elems()) * sizeof(float));
    if (pass != Pass::fprop) g.allocate(std::size_t(p.output_elems()) * sizeof(float));
    r.allocate(std::size_t(p.result_elems(pass)) * sizeof(float));
    uint64_t seed = 0x7153;
    for (DeviceBuffer* d : {&x, &w, &g})
      if (d->bytes()) gpu_kernels::fill_uniform(d->as<float>(), int64_t(d->bytes() / sizeof(float)), seed++, st);
  }
  Args args(cudaStream_t st) const {
    Args a;
    a.input = x.get();
    a.weight = w.get();
    a.grad_output = g.get();
    a.result = r.get();
    a.stream = st;
    return a;
  }
};

}  // namespace

std::vector<const Candidate*> cheapest_tiled(const TilingChoice& c,
                                             const std::function<bool(const Candidate&)>& runnable) {
  return timed_tile_candidates(c, runnable, kMeasuredTiles);
}

std::unique_ptr<Plan> fastest_plan(std::string_view backend, const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                   std::vector<PlanCandidate> cands,
                                   const std::function<std::unique_ptr<Plan>()>& fallback, const std::string& what) {
  // The winner of an earlier measurement of the same key (Note [persistent choices]).
  const std::string key = "fastest|" + std::string(backend) + "|" + current_device_name() + "|" + p.to_string() + "|" +
                          std::string(to_string(pass)) + "|" + what + "|" + options_key(opts);
  const std::string file = choices_file(opts.tune_cache);
  if (const std::optional<std::string> text = device_choices().find(key, file)) {
    std::string label, note;
    try {
      const nlohmann::json w = nlohmann::json::parse(*text);
      label = w.at("label").get<std::string>(), note = w.at("note").get<std::string>();
    } catch (const std::exception&) {  // a damaged entry: measure again, and overwrite it
    }
    for (PlanCandidate& c : cands)
      if (!label.empty() && c.label == label) return std::make_unique<MeasuredPlan>(c.make(), "chosen earlier, " + note);
  }
  const CudaStream stream;
  const cudaStream_t st = stream.get();
  std::unique_ptr<Operands> ops;
  try {
    ops = std::make_unique<Operands>(p, pass, st);
  } catch (const OutOfMemory&) {
    return std::make_unique<MeasuredPlan>(fallback(), what + " not measured (no memory for the operands): the default choice");
  }
  std::unique_ptr<Plan> best;
  double best_ms = 0;
  std::string best_label;
  std::ostringstream note;
  note << what << " measured:";
  for (PlanCandidate& c : cands) {
    std::unique_ptr<Plan> plan;
    try {
      plan = c.make();
    } catch (const Unsupported& e) {
      note << " " << c.label << " skipped (" << e.what() << "),";
      continue;
    } catch (const OutOfMemory& e) {
      note << " " << c.label << " skipped (" << e.what() << "),";
      continue;
    }
    const Args a = ops->args(st);
    plan->execute(a);  // first-run costs (workspace, cuBLAS) outside the capture
    FFTCONV_CUDA_CHECK(cudaStreamSynchronize(st));
    const CudaGraph graph([&] { plan->execute(a); }, st);
    // A plan that cannot be captured (breakdown's host-side event reads) is timed call by call.
    const double ms = graph.ok() ? median_time_ms(st, 5, [&] { graph.launch(st); })
                                 : median_time_ms(st, 5, [&] { plan->execute(a); });
    note << " " << c.label << " " << ms << " ms,";
    if (!best || ms < best_ms) {
      best = std::move(plan);
      best_ms = ms;
      best_label = c.label;
    }
  }
  if (!best) throw Unsupported(what + ": no candidate plan could be built for " + p.to_string() + " (" + note.str() + ")");
  note << " fastest " << best_label;
  if (opts.tune_bound_ms <= 0)  // a bounded choice may rest on partial tunings (Note [tuning bound])
    device_choices().store(key, nlohmann::json{{"label", best_label}, {"note", note.str()}}.dump(), file);
  return std::make_unique<MeasuredPlan>(std::move(best), note.str());
}

}  // namespace fftconv
