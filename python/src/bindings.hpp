// Shared declarations of the _fftconv extension: the per-area binding functions, the plan
// wrapper and the array checks that turn NumPy / DLPack tensors into raw pointers safely.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <nanobind/nanobind.h>

#include "api/fftconv.hpp"

namespace fftconv::py {

namespace nb = nanobind;

void bind_problem(nb::module_& m);  // bind_problem.cpp: Problem, passes
void bind_plan(nb::module_& m);     // bind_plan.cpp: backends(), _Plan, make_plan()
void bind_tiling(nb::module_& m);   // bind_tiling.cpp: the tiling planner as plain Python data

DType parse_dtype(std::string_view s);        // "float32" | "float64"; ValueError otherwise
Location parse_location(std::string_view s);  // "host" | "cuda"; ValueError otherwise

// Tensor shapes: input_shape, weight_shape, output_shape, result_shape (common/tensor.hpp).
using Shape4 = std::array<int64_t, 4>;

// What an operand must be: its name (for messages), shape, element type and location.
struct OperandSpec {
  const char* name;
  Shape4 shape;
  DType dtype;
  Location location;
  int device = 0;  // CUDA device ordinal (cuda only)
};

// A checked operand: the data pointer, its byte range (for alias checks), and the array handle
// that keeps the memory alive while the pointer is used.
struct Operand {
  void* data = nullptr;
  std::size_t bytes = 0;
  nb::object keep;
  int device = 0;
};

// Raises TypeError (not an array, wrong dtype) or ValueError (wrong ndim, shape, layout, device)
// naming spec.name and what was expected; never returns an unusable pointer.
Operand check_operand(nb::handle obj, const OperandSpec& spec, bool writable);
// ValueError when the written result overlaps a read operand (host memory only).
void check_no_alias(const Operand& out, const Operand& in, const char* out_name, const char* in_name);

}  // namespace fftconv::py
