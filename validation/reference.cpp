// The host reference ladder (see reference.hpp).
#include "validation/reference.hpp"

#include "api/fftconv.hpp"
#include "common/errors.hpp"

namespace fftconv {

RefKind parse_ref_kind(std::string_view s) {
  if (s == "auto") return RefKind::automatic;
  if (s == "direct") return RefKind::direct;
  if (s == "fftw64") return RefKind::fftw64;
  if (s == "none") return RefKind::none;
  throw InvalidArgument("check: expected auto, direct, fftw64 or none, got '" + std::string(s) + "'");
}

std::string_view to_string(RefKind k) {
  switch (k) {
    case RefKind::automatic: return "auto";
    case RefKind::direct: return "direct";
    case RefKind::fftw64: return "fftw64";
    case RefKind::none: return "none";
  }
  return "?";
}

RefKind resolve_ref(RefKind k, const ConvProblem& p) {
  if (k != RefKind::automatic) return k;
  return p.madds() <= kDirectMaxMadds ? RefKind::direct : RefKind::fftw64;
}

std::vector<double> reference_result(const ConvProblem& p, Pass pass, const PassData& d, RefKind k) {
  k = resolve_ref(k, p);
  if (k == RefKind::none) return {};
  std::vector<double> x = to_double(d.input), w = to_double(d.weight), g = to_double(d.grad_output),
                      bias = to_double(d.bias);
  std::vector<double> out(std::size_t(pass_result_elems(p, pass)));
  PlanOptions o;
  o.dtype = DType::f64;
  Args a;
  a.input = x.empty() ? nullptr : x.data();
  a.weight = w.empty() ? nullptr : w.data();
  a.grad_output = g.empty() ? nullptr : g.data();
  a.result = out.data();
  a.bias = bias.empty() ? nullptr : bias.data();
  a.grad_bias = pass == Pass::accgrad && p.bias ? out.data() + p.result_elems(pass) : nullptr;
  a.dtype = DType::f64;
  const Backend& b = builtin_registry().get(k == RefKind::direct ? "direct" : "fftw");
  b.plan(p, pass, o)->execute(a);
  return out;
}

}  // namespace fftconv
