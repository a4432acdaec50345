// CUTLASS 3xTF32 complex GEMM instances (see cutlass_3xtf32.hpp): Ampere-style tensor-op kernels
// (mma.sync m16n8k8 TF32), which run on sm_90, with the fp32 split done in registers.
#include "gpu/gemm/cutlass_3xtf32.hpp"

#include <string>

#include "common/errors.hpp"
#include "cutlass/complex.h"
#include "cutlass/gemm/device/gemm_universal.h"
#include "gpu/runtime/cuda_check.hpp"

namespace fftconv::products::cutlass3x {
namespace {

using Complex = cutlass::complex<float>;
using ColMajor = cutlass::layout::ColumnMajor;
using RowMajor = cutlass::layout::RowMajor;
using cutlass::ComplexTransform;

// One instance per operand form. A conjugate-transposed operand is the stored matrix read row-major
// with the conjugation applied at load.
template <class LayoutA, ComplexTransform TA, class LayoutB, ComplexTransform TB>
using Gemm = cutlass::gemm::device::GemmUniversal<
    Complex, LayoutA, Complex, LayoutB, Complex, ColMajor, Complex, cutlass::arch::OpClassTensorOp,
    cutlass::arch::Sm80, cutlass::gemm::GemmShape<64, 64, 16>, cutlass::gemm::GemmShape<32, 32, 16>,
    cutlass::gemm::GemmShape<16, 8, 8>, cutlass::epilogue::thread::LinearCombination<Complex, 1, Complex, Complex>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, 1, 1,
    cutlass::arch::OpMultiplyAddComplexFastF32, TA, TB>;

using GemmNN = Gemm<ColMajor, ComplexTransform::kNone, ColMajor, ComplexTransform::kNone>;
using GemmCN = Gemm<RowMajor, ComplexTransform::kConjugate, ColMajor, ComplexTransform::kNone>;
using GemmNC = Gemm<ColMajor, ComplexTransform::kNone, RowMajor, ComplexTransform::kConjugate>;

template <class G>
void run(const Problem& p, cudaStream_t stream) {
  if (p.batch > kMaxBatch)
    throw Unsupported("products: the Ampere-style 3xtf32 kernel takes at most " + std::to_string(kMaxBatch) +
                      " products per batch, got " + std::to_string(p.batch));
  const Complex one(1.f, 0.f), beta(p.accumulate ? 1.f : 0.f, 0.f);
  typename G::Arguments args(cutlass::gemm::GemmUniversalMode::kBatched,
                             {int(p.m), int(p.n), int(p.k)}, int(p.batch), {one, beta}, p.a, p.b, p.c, p.c,
                             p.stride_a, p.stride_b, p.stride_c, p.stride_c, p.lda, p.ldb, p.ldc, p.ldc);
  G gemm;
  cutlass::Status s = gemm.can_implement(args);
  if (s != cutlass::Status::kSuccess)
    throw Unsupported(std::string("products: CUTLASS 3xtf32 cannot run this product (") +
                      cutlassGetStatusString(s) + ")");
  if (G::get_workspace_size(args) != 0)
    throw Unsupported("products: CUTLASS 3xtf32 asks for a workspace in batched mode");
  s = gemm.initialize(args, nullptr, stream);
  if (s == cutlass::Status::kSuccess) s = gemm.run(stream);
  if (s != cutlass::Status::kSuccess)
    throw CudaError(std::string("products: CUTLASS 3xtf32 launch failed (") + cutlassGetStatusString(s) + ")");
  FFTCONV_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void cgemm(Ops ops, const Problem& p, cudaStream_t stream) {
  switch (ops) {
    case Ops::nn: run<GemmNN>(p, stream); return;
    case Ops::cn: run<GemmCN>(p, stream); return;
    case Ops::nc: run<GemmNC>(p, stream); return;
    case Ops::unsupported: break;
  }
  throw Unsupported("products: math=3xtf32 covers the N/N, C/N and N/C products only");
}

}  // namespace fftconv::products::cutlass3x
