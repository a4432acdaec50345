// The products of the GPU backends (see products.hpp): cuBLAS for fp32 and tf32, the warpgroup
// 3xTF32 kernel (wgmma_3xtf32.cu) and CUTLASS's Ampere-style one (cutlass_3xtf32.cu) for tf32x3.
#include "gpu/gemm/products.hpp"

#include <algorithm>

#include "common/errors.hpp"
#include "gpu/gemm/cutlass_3xtf32.hpp"
#include "gpu/gemm/wgmma_3xtf32.hpp"
#include "gpu/runtime/cuda_check.hpp"

namespace fftconv::products {

// Note [product precision]
// With many channels the per-frequency complex products dominate a pass (L5: about 70% of it). On
// CUDA cores cuBLAS reaches about 70% of the fp32 peak on these shapes; TF32 tensor cores are
// several times faster but keep 10 mantissa bits (about 1e-3 relative error). The 3xTF32 split
// keeps fp32 accuracy on tensor cores: each operand x = big + small, and a·b ≈ big_a·big_b +
// big_a·small_b + small_a·big_b. The split happens inside the GEMM, on the way from global memory
// to the tensor cores, so the frequency-major spectra are read in place, as the cuBLAS call reads
// them, and no operand is copied: in the warpgroup kernel (Note [warpgroup 3xtf32]) for most
// products, in CUTLASS's Ampere-style kernel (OpMultiplyAddComplexFastF32) where both sides of the
// product are at most kSmallProductSide. Both truncate big (round toward zero), so
// |small| < 2^-10·|x| and the dropped small·small term reaches 2^-20 of a product: one product can
// be 16 fp32 roundings off, while a sum of many carries errors of random sign that stay within the
// fp32 tolerance model. A one-element result of one product (S = f = fo = 1, a 1×1 kernel) is the
// exception: it measured 9.6 u against the model's 8 u, so a product of depth k < kSplitMinDepth,
// less than one tensor-core step, runs cuBLAS's fp32 CGEMM under tf32x3 too: the MMAs would pad it
// to a depth of 8 and run slower than fp32 (stem_7x7's k = 3 at 0.4-0.6x), and its few terms carry
// no averaging. `automatic` times fp32 against tf32x3 per plan (the products' shapes decide: small
// m, n or k leave the tensor-core tiles empty) and keeps tf32x3 only when it saves
// kTensorCoreMargin; tf32 is used only when asked for and is validated against its own tolerance.

namespace {

int to_int(int64_t v, const char* what) {
  if (v < 0 || v > int64_t(0x7fffffff))
    throw Unsupported(std::string("products: ") + what + " = " + std::to_string(v) + " exceeds cuBLAS's int range");
  return int(v);
}

void cublas_cgemm(cublasHandle_t handle, const StridedBatch& g, bool tf32) {
  const cuComplex one = make_cuComplex(1.f, 0.f), beta = make_cuComplex(g.accumulate ? 1.f : 0.f, 0.f);
  const int m = to_int(g.m, "m"), n = to_int(g.n, "n"), k = to_int(g.k, "k"), lda = to_int(g.lda, "lda"),
            ldb = to_int(g.ldb, "ldb"), ldc = to_int(g.ldc, "ldc"), batch = to_int(g.batch, "batch");
  if (!tf32) {
    FFTCONV_CUBLAS_CHECK(cublasCgemmStridedBatched(handle, g.opa, g.opb, m, n, k, &one, g.a, lda, g.stride_a, g.b, ldb,
                                                   g.stride_b, &beta, g.c, ldc, g.stride_c, batch));
    return;
  }
  FFTCONV_CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle, g.opa, g.opb, m, n, k, &one, g.a, CUDA_C_32F, lda, g.stride_a,
                                                  g.b, CUDA_C_32F, ldb, g.stride_b, &beta, g.c, CUDA_C_32F, ldc,
                                                  g.stride_c, batch, CUBLAS_COMPUTE_32F_FAST_TF32,
                                                  CUBLAS_GEMM_DEFAULT));
}

// Products whose sides are both at most this run on the Ampere-style kernel: they fill at most half
// of the warpgroup kernel's 128-row tile (L2's accGrad, 64×64×128 per frequency: 0.16 ms against
// 0.23 ms on the H100).
constexpr int64_t kSmallProductSide = 64;

cutlass3x::Ops ops_of(const StridedBatch& g) {
  if (g.opa == CUBLAS_OP_N && g.opb == CUBLAS_OP_N) return cutlass3x::Ops::nn;
  if (g.opa == CUBLAS_OP_C && g.opb == CUBLAS_OP_N) return cutlass3x::Ops::cn;
  if (g.opa == CUBLAS_OP_N && g.opb == CUBLAS_OP_C) return cutlass3x::Ops::nc;
  return cutlass3x::Ops::unsupported;
}

// Whether a tf32x3 product runs on the Ampere-style kernel (else the warpgroup kernel).
bool on_ampere_kernel(const StridedBatch& g) {
  return std::max(g.m, g.n) <= kSmallProductSide && g.batch <= cutlass3x::kMaxBatch &&
         ops_of(g) != cutlass3x::Ops::unsupported;
}

// The product in the warpgroup kernel's terms: C(m, n) = Σ_k op(A)(m, k)·op(B)(k, n), with op(B)
// read as the kernel's right side R(n, k).
wgmma3x::Args warpgroup_args(const StridedBatch& g) {
  wgmma3x::Args a;
  const bool a_stored_mk = g.opa == CUBLAS_OP_N, b_stored_kn = g.opb == CUBLAS_OP_N;
  a.left = {reinterpret_cast<const float2*>(g.a), a_stored_mk ? 1 : g.lda, a_stored_mk ? g.lda : 1, g.stride_a,
            g.opa == CUBLAS_OP_C};
  a.right = {reinterpret_cast<const float2*>(g.b), b_stored_kn ? g.ldb : 1, b_stored_kn ? 1 : g.ldb, g.stride_b,
             g.opb == CUBLAS_OP_C};
  a.c = reinterpret_cast<float2*>(g.c), a.c_row = 1, a.c_col = g.ldc, a.c_batch = g.stride_c;
  a.rows = to_int(g.m, "m"), a.cols = to_int(g.n, "n"), a.depth = to_int(g.k, "k");
  a.batch = g.batch, a.accumulate = g.accumulate;
  return a;
}

}  // namespace

StridedBatch pass_product(const ConvProblem& p, Pass pass, int64_t units, int64_t freqs) {
  StridedBatch g;
  g.batch = freqs;
  switch (pass) {
    case Pass::fprop: g.opa = CUBLAS_OP_C, g.m = p.fo, g.n = units, g.k = p.f; break;
    case Pass::bprop: g.m = p.f, g.n = units, g.k = p.fo; break;
    case Pass::accgrad: g.opb = CUBLAS_OP_C, g.m = p.f, g.n = p.fo, g.k = units; break;
  }
  return g;
}

std::string engine(ProductMath math, const StridedBatch& g) {
  switch (math) {
    case ProductMath::fp32: return "cublasCgemmStridedBatched";
    case ProductMath::tf32: return "cuBLAS TF32 tensor-core CGEMM";
    case ProductMath::tf32x3:
      if (g.k < kSplitMinDepth)
        return "cublasCgemmStridedBatched (depth " + std::to_string(g.k) + " < " + std::to_string(kSplitMinDepth) +
               ": fp32, Note [product precision])";
      return on_ampere_kernel(g) ? "CUTLASS's Ampere-style 3xTF32 CGEMM"
                                 : "the warpgroup-MMA 3xTF32 CGEMM (Note [warpgroup 3xtf32])";
    case ProductMath::automatic: break;
  }
  return "unresolved (math=auto)";
}

// Every resolved mode covers every operand form (N, T, C on either side).
bool supports(ProductMath math, const StridedBatch&) { return math != ProductMath::automatic; }

void cgemm(cublasHandle_t handle, ProductMath math, const StridedBatch& g) {
  if (g.batch == 0 || g.m == 0 || g.n == 0) return;
  switch (math) {
    case ProductMath::fp32: cublas_cgemm(handle, g, false); return;
    case ProductMath::tf32: cublas_cgemm(handle, g, true); return;
    case ProductMath::tf32x3: {
      if (g.k < kSplitMinDepth) {  // (Note [product precision])
        cublas_cgemm(handle, g, false);
        return;
      }
      cudaStream_t stream = nullptr;
      FFTCONV_CUBLAS_CHECK(cublasGetStream(handle, &stream));
      if (on_ampere_kernel(g)) {
        cutlass3x::Problem p{g.m, g.n, g.k, g.a, g.lda, g.stride_a, g.b, g.ldb, g.stride_b, g.c, g.ldc, g.stride_c,
                             g.batch, g.accumulate};
        cutlass3x::cgemm(ops_of(g), p, stream);
      } else {
        wgmma3x::cgemm(warpgroup_args(g), stream);
      }
      return;
    }
    case ProductMath::automatic: break;
  }
  throw InvalidArgument("products: math=auto must be resolved to fp32 or 3xtf32 before the products run");
}

double peak_tflops(ProductMath math) {
  int dev = 0, major = 0, sms = 0, khz = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) != cudaSuccess || major != 9)
    return 0;
  // sm_90, per SM and clock: 128 fp32 FMAs on CUDA cores, 1024 dense TF32 FMAs on tensor cores.
  const double fma_per_clock = math == ProductMath::fp32 ? 128.0 : 1024.0;
  const double tflops = 2.0 * fma_per_clock * double(sms) * double(khz) * 1e3 / 1e12;
  return math == ProductMath::tf32x3 ? tflops / 3.0 : tflops;
}

ProductMath model_choice(const StridedBatch& g) {
  return std::min({g.m, g.n, g.k}) >= kTensorCoreMinDim && supports(ProductMath::tf32x3, g) ? ProductMath::tf32x3
                                                                                             : ProductMath::fp32;
}

}  // namespace fftconv::products
