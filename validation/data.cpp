// Random pass data (see data.hpp).
#include "validation/data.hpp"

#include <cmath>
#include <limits>
#include <random>

#include "common/counter_rng.hpp"

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

namespace {
double rms(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * double(x);
  return v.empty() ? 0.0 : std::sqrt(s / double(v.size()));
}
}  // namespace

std::pair<double, double> operand_rms(const PassData& d, Pass pass) {
  const auto [a, b] = pass_operands(pass, &d.input, &d.weight, &d.grad_output);
  return {rms(*a), rms(*b)};
}

namespace {
// The operands pass reads, each drawn by fill with its operand_seeds(seed), and the NaN-poisoned result.
PassData pass_data(const ConvProblem& p, Pass pass, uint64_t seed, void (*fill)(std::vector<float>&, uint64_t)) {
  PassData d;
  auto draw = [&](std::vector<float>& v, int64_t elems, uint64_t s) {
    v.resize(std::size_t(elems));
    fill(v, s);
  };
  const OperandSeeds s = operand_seeds(seed);
  if (pass != Pass::bprop) draw(d.input, p.input_elems(), s.input);
  if (pass != Pass::accgrad) draw(d.weight, p.weight_elems(), s.weight);
  if (pass != Pass::fprop) draw(d.grad_output, p.output_elems(), s.grad_output);
  if (pass == Pass::fprop && p.bias) draw(d.bias, p.fo, s.bias);
  if (pass == Pass::accgrad && p.bias) d.grad_bias_offset = p.result_elems(pass);
  d.result.assign(std::size_t(pass_result_elems(p, pass)), std::numeric_limits<float>::quiet_NaN());
  return d;
}
}  // namespace

PassData make_pass_data(const ConvProblem& p, Pass pass, uint64_t seed) { return pass_data(p, pass, seed, fill_normal); }

void fill_normal_parallel(std::vector<float>& v, uint64_t seed) {
  const int64_t n = int64_t(v.size()), pairs = (n + 1) / 2;
  const uint64_t key = normal_key(seed);
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < pairs; ++i) {
    float a = 0, b = 0;
    normal_pair(key, i, a, b);
    v[std::size_t(2 * i)] = a;
    if (2 * i + 1 < n) v[std::size_t(2 * i + 1)] = b;
  }
}

PassData make_pass_data_parallel(const ConvProblem& p, Pass pass, uint64_t seed) {
  return pass_data(p, pass, seed, fill_normal_parallel);
}

int64_t pass_result_elems(const ConvProblem& p, Pass pass) {
  return p.result_elems(pass) + (pass == Pass::accgrad && p.bias ? p.fo : 0);
}

Args PassData::args_at(const float* x, const float* w, const float* g, const float* b, float* out) const {
  Args a;
  a.input = input.empty() ? nullptr : x;
  a.weight = weight.empty() ? nullptr : w;
  a.grad_output = grad_output.empty() ? nullptr : g;
  a.bias = bias.empty() ? nullptr : b;
  a.result = out;
  a.grad_bias = grad_bias_offset >= 0 ? out + grad_bias_offset : nullptr;
  a.dtype = DType::f32;
  return a;
}

Args PassData::args() {
  return args_at(input.data(), weight.data(), grad_output.data(), bias.data(), result.data());
}

}  // namespace fftconv
