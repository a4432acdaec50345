// Random pass data (see data.hpp).
#include "validation/data.hpp"

#include <cmath>
#include <limits>
#include <random>

namespace fftconv {

void fill_normal(std::vector<float>& v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& x : v) x = nd(rng);
}

std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

int64_t count_nan(const std::vector<float>& v) {
  int64_t n = 0;
  for (float x : v) n += std::isnan(x) ? 1 : 0;
  return n;
}

PassData make_pass_data(const ConvProblem& p, Pass pass, uint64_t seed) {
  PassData d;
  if (pass != Pass::bprop) { d.input.resize(std::size_t(p.input_elems())); fill_normal(d.input, seed * 3 + 1); }
  if (pass != Pass::accgrad) { d.weight.resize(std::size_t(p.weight_elems())); fill_normal(d.weight, seed * 3 + 2); }
  if (pass != Pass::fprop) { d.grad_output.resize(std::size_t(p.output_elems())); fill_normal(d.grad_output, seed * 3 + 3); }
  d.result.assign(std::size_t(p.result_elems(pass)), std::numeric_limits<float>::quiet_NaN());
  return d;
}

Args PassData::args() {
  Args a;
  a.input = input.empty() ? nullptr : input.data();
  a.weight = weight.empty() ? nullptr : weight.data();
  a.grad_output = grad_output.empty() ? nullptr : grad_output.data();
  a.result = result.data();
  a.dtype = DType::f32;
  return a;
}

}  // namespace fftconv
