// The frequency-domain products of the GPU backends: one strided-batched complex GEMM per pass, in
// the precision PlanOptions::math asks for (Note [product precision]). Both backends call this.
#pragma once
#include <cublas_v2.h>
#include <cuComplex.h>

#include <cstdint>
#include <string>

#include "common/backend.hpp"

namespace fftconv::products {

// C[q] = op(A[q]) op(B[q]) (+ C[q] when accumulate) for q in [0, batch): column-major m×n result,
// op(A) m×k, op(B) k×n, operands `s*` elements apart. op is N or C (conjugate transpose).
struct StridedBatch {
  cublasOperation_t opa = CUBLAS_OP_N, opb = CUBLAS_OP_N;
  int64_t m = 0, n = 0, k = 0;
  const cuComplex* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const cuComplex* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  cuComplex* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  int64_t batch = 0;
  bool accumulate = false;

  // Real-equivalent floating-point operations (8 per complex multiply-add).
  double flops() const { return 8.0 * double(m) * double(n) * double(k) * double(batch); }
};

// The shape of a pass's product over `units` images (or tile items) at `freqs` frequencies, as both
// backends issue it on the frequency-major spectra (operand pointers left null):
//   fprop C/N m=fo n=units k=f,  bprop N/N m=f n=units k=fo,  accgrad N/C m=f n=fo k=units.
StridedBatch pass_product(const ConvProblem& p, Pass pass, int64_t units, int64_t freqs);

// Runs `g` on the handle's stream in `math` (fp32, tf32x3 or tf32; not automatic). Throws
// InvalidArgument for automatic, Unsupported for a product too large for one tensor-core launch,
// CudaError on a failed launch.
void cgemm(cublasHandle_t handle, ProductMath math, const StridedBatch& g);

// The kernel that runs `g` in `math` (resolved), as plan descriptions name it: cuBLAS's CGEMM for
// fp32 and tf32; for tf32x3 the warpgroup kernel, or CUTLASS's Ampere-style one where both sides are
// at most 64 (kSmallProductSide in products.cu), and cuBLAS's fp32 CGEMM below kSplitMinDepth.
std::string engine(ProductMath math, const StridedBatch& g);

// tf32x3 runs products of a smaller depth k in fp32: one tensor-core step is 8 deep, and the 3xTF32
// error of a sum of fewer terms can exceed the fp32 model (Note [product precision]).
inline constexpr int64_t kSplitMinDepth = 8;

// Does `math` (resolved) cover this product?
bool supports(ProductMath math, const StridedBatch& g);

// Nominal peak of the unit a mode uses on the current device, in TFLOP/s (real-equivalent): the fp32
// CUDA-core rate for fp32, the dense TF32 tensor-core rate for tf32, a third of it for tf32x3 (three
// products). 0 when the device's rates are not known (an architecture other than sm_90).
double peak_tflops(ProductMath math);

// The mode `automatic` resolves to without timing (no autotune): tf32x3 where every dimension of
// the product is at least kTensorCoreMinDim (the tensor-core tiles are then filled), else fp32.
inline constexpr int64_t kTensorCoreMinDim = 64;
ProductMath model_choice(const StridedBatch& g);

// Timed (autotune), tf32x3 is kept only when its pass takes at most this fraction of the fp32 pass's
// time: on a tie (within the timing spread of a tuned pass, about 2%) the fp32 products win, whose
// error per product is one fp32 rounding (Note [product precision]).
inline constexpr double kTensorCoreMargin = 0.98;

}  // namespace fftconv::products
