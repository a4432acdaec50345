// Computes a small fprop with the installed library's fftw backend and checks it against direct.
#include <fftconv/api/fftconv.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using namespace fftconv;
  const ConvProblem p = ConvProblem::parse("S=2,f=3,fo=4,n=12,k=3,p=1");
  std::vector<float> x(p.input_elems()), w(p.weight_elems()), y(p.output_elems()), ref(p.output_elems());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.1f * float(i));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.3f * float(i));
  Args a;
  a.input = x.data();
  a.weight = w.data();
  a.result = y.data();
  builtin_registry().get("fftw").plan(p, Pass::fprop, PlanOptions{})->execute(a);
  a.result = ref.data();
  builtin_registry().get("direct").plan(p, Pass::fprop, PlanOptions{})->execute(a);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    num += (y[i] - ref[i]) * (y[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  const double rel = std::sqrt(num / den);
  std::printf("consumer: %zu backends, fftw vs direct rel_l2 = %.2e\n", builtin_registry().all().size(), rel);
  return rel < 1e-5 ? 0 : 1;
}
