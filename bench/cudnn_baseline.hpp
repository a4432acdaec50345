// The cuDNN baseline of the layer benchmark: for one problem and pass, every algorithm cuDNN offers
// (implicit GEMM, GEMM, FFT, FFT_TILING, Winograd, ...) run explicitly in strict fp32 (CUDNN_FMA_MATH,
// no TF32) or with tensor-core math allowed, each with its own workspace, timed with CUDA events;
// the fastest is the baseline.
// Compiled only with CUDA (bench/*.cu); without cuDNN every call reports "unsupported".
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common/problem.hpp"

namespace fftconv {

// Device operands of one execution (the pass decides which are read; result is written).
struct DeviceOperands {
  const float* input = nullptr;
  const float* weight = nullptr;
  const float* grad_output = nullptr;
  float* result = nullptr;
};

struct CudnnAlgoResult {
  std::string algo;                // e.g. "FWD_IMPLICIT_PRECOMP_GEMM"
  bool ran = false;                // false: skipped, status says why
  std::string status;              // "ok", "not supported", "workspace allocation failed", ...
  std::size_t workspace_bytes = 0;
  double median_ms = 0, min_ms = 0;
  double rel_l2 = -1;              // from CudnnRunOptions::check, -1 when not checked
};

struct CudnnReport {
  bool supported = false;
  std::string reason;              // when !supported
  int max_count = 0;               // cudnnGet*AlgorithmMaxCount
  std::vector<CudnnAlgoResult> algos;
  int best = -1;                   // index of the fastest algorithm that ran, -1 when none
};

struct CudnnRunOptions {
  int warmup = 3, repeat = 20;     // repeat = 0: run each algorithm once, untimed (verification)
  bool tensor_op_math = false;     // CUDNN_TENSOR_OP_MATH (TF32 allowed) instead of CUDNN_FMA_MATH
  // Called after each algorithm's first run with the device result; returns its rel_l2.
  std::function<double(const float* device_result)> check;
};

// Was the library built with cuDNN? Its version as "9.19.0" (or the reason it is absent).
bool cudnn_built();
std::string cudnn_version();

// Runs every algorithm of `pass` for problem p. Repetition r uses operand set r % sets.size()
// (rotation defeats the L2 cache). stream is a cudaStream_t (nullptr = default stream).
// Mirror padding is reported unsupported (cuDNN pads with zeros only).
// A non-empty `only` runs the algorithms of those names (CudnnAlgoResult::algo) and leaves the others
// out of the report.
CudnnReport run_cudnn_algorithms(const ConvProblem& p, Pass pass, const std::vector<DeviceOperands>& sets,
                                 const CudnnRunOptions& opts, void* stream, const std::vector<std::string>& only = {});

}  // namespace fftconv
