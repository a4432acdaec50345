// CUTLASS's 3xTF32 complex GEMM (OpMultiplyAddComplexFastF32, Note [product precision]), batched
// and strided, for the three operand forms of the passes. Internal to gpu/gemm.
#pragma once
#include <cuComplex.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace fftconv::products::cutlass3x {

// op(A), op(B): N/N (bprop), C/N (fprop: W^H X), N/C (accGrad: X G^H).
enum class Ops { nn, cn, nc, unsupported };

struct Problem {
  int64_t m, n, k;
  const cuComplex* a;
  int64_t lda, stride_a;
  const cuComplex* b;
  int64_t ldb, stride_b;
  cuComplex* c;
  int64_t ldc, stride_c;
  int64_t batch;
  bool accumulate;
};

// Products per launch: the batch is the grid's z extent.
inline constexpr int64_t kMaxBatch = 65535;

// Launches the product on `stream`; throws CudaError / Unsupported when CUTLASS cannot run it.
void cgemm(Ops ops, const Problem& p, cudaStream_t stream);

}  // namespace fftconv::products::cutlass3x
