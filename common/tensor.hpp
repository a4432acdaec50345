// Non-owning 4-D tensor views (NCHW, row-major) and a small owning host tensor.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "common/problem.hpp"

namespace fftconv {

// View of a dense row-major d0×d1×d2×d3 tensor.
template <class T>
struct TensorView4 {
  T* data = nullptr;
  std::array<int64_t, 4> shape{0, 0, 0, 0};

  int64_t size() const { return shape[0] * shape[1] * shape[2] * shape[3]; }
  T& operator()(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return data[((a * shape[1] + b) * shape[2] + c) * shape[3] + d];
  }
  // The (a, b) plane of shape[2]×shape[3] elements.
  T* plane(int64_t a, int64_t b) const { return data + (a * shape[1] + b) * shape[2] * shape[3]; }
};

// Owning host tensor (std::vector storage).
template <class T>
struct HostTensor {
  std::array<int64_t, 4> shape{0, 0, 0, 0};
  std::vector<T> values;

  HostTensor() = default;
  explicit HostTensor(std::array<int64_t, 4> s, T fill = T(0))
      : shape(s), values(static_cast<size_t>(s[0] * s[1] * s[2] * s[3]), fill) {}
  TensorView4<T> view() { return {values.data(), shape}; }
  TensorView4<const T> view() const { return {values.data(), shape}; }
  T* data() { return values.data(); }
  const T* data() const { return values.data(); }
  int64_t size() const { return static_cast<int64_t>(values.size()); }
};

// Shapes of the tensors of a problem.
inline std::array<int64_t, 4> input_shape(const ConvProblem& p) { return {p.S, p.f, p.h, p.w}; }
inline std::array<int64_t, 4> weight_shape(const ConvProblem& p) { return {p.fo, p.f / p.g, p.kh, p.kw}; }
inline std::array<int64_t, 4> output_shape(const ConvProblem& p) { return {p.S, p.fo, p.out_h(), p.out_w()}; }
// The tensor each pass writes: output (fprop), gradInput (bprop), gradWeight (accgrad).
inline std::array<int64_t, 4> result_shape(const ConvProblem& p, Pass pass) {
  return pass == Pass::fprop ? output_shape(p) : pass == Pass::bprop ? input_shape(p) : weight_shape(p);
}

}  // namespace fftconv
