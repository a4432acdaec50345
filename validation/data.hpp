// Random operands of a pass (fresh, seeded, standard normal) and their float64 copies.
#include <cstdint>
#pragma once
#include <utility>
#include <vector>

#include "common/backend.hpp"
#include "common/problem.hpp"

namespace fftconv {

// The host tensors of one pass: the two operands it reads (others empty), the bias when fprop of a
// problem with bias reads it, and a result buffer poisoned with NaN. For accgrad of a problem with
// bias, result holds gradWeight followed by gradBias (fo values, from grad_bias_offset), so that
// the comparison and the tolerance (the same reduction length S·out_h·out_w) cover both.
struct PassData {
  std::vector<float> input, weight, grad_output, bias, result;
  int64_t grad_bias_offset = -1;  // >= 0: gradBias starts there in result
  Args args();  // host pointers, float32
  // args() on other copies of the same tensors (device buffers, for CUDA backends).
  Args args_at(const float* x, const float* w, const float* g, const float* b, float* out) const;
};

// Elements of PassData::result for (p, pass): the pass's result, plus fo for accgrad with bias.
int64_t pass_result_elems(const ConvProblem& p, Pass pass);

// The seed each operand of a pass's data drawn with `seed` is filled with (host and device alike).
struct OperandSeeds {
  uint64_t input, weight, grad_output, bias;
};
constexpr OperandSeeds operand_seeds(uint64_t seed) {
  return {seed * 3 + 1, seed * 3 + 2, seed * 3 + 3, seed * 3 + 0x9e3779b97f4a7c15ull};
}

PassData make_pass_data(const ConvProblem& p, Pass pass, uint64_t seed);
// The same tensors drawn in parallel for large sweeps: standard normal by Box–Muller over a
// counter-based generator (splitmix64 of seed and index), so the values depend only on the seed,
// never on the thread count. Different values from make_pass_data for the same seed.
PassData make_pass_data_parallel(const ConvProblem& p, Pass pass, uint64_t seed);
void fill_normal_parallel(std::vector<float>& v, uint64_t seed);
void fill_normal(std::vector<float>& v, uint64_t seed);
std::vector<double> to_double(const std::vector<float>& v);
// The two operands a pass reads, in the order the verdict names them: fprop (input, weight),
// bprop (grad_output, weight), accgrad (input, grad_output).
template <class T>
std::pair<T, T> pass_operands(Pass pass, T input, T weight, T grad_output) {
  switch (pass) {
    case Pass::fprop: return {input, weight};
    case Pass::bprop: return {grad_output, weight};
    case Pass::accgrad: break;
  }
  return {input, grad_output};
}

// Root mean square of the two operands the pass reads (input/weight, grad_output/weight,
// input/grad_output), for Note [cancellation].
std::pair<double, double> operand_rms(const PassData& d, Pass pass);

// Number of NaN-poisoned elements that were never written (still NaN with a finite reference).
int64_t count_nan(const std::vector<float>& v);

}  // namespace fftconv
