// fftconv_cgemm_probe: the frequency-domain products of Table 4's layers (L1..L5 at S=128, one
// complex GEMM per frequency, the shapes and strides of the cufft backend's CGEMM step for each
// pass) through cublasCgemmStridedBatched and through cublasLt (every algorithm its heuristic
// offers, each timed), with the results compared. It answers two questions the layer benchmark
// raises: what the CGEMM alone costs against cuDNN's whole convolution, and whether cuBLASLt's
// algorithm choice beats the classic API on these shapes.
//   usage: fftconv_cgemm_probe [repeat]      (GPU host; prints one line per layer and pass)
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/tools/probe_common.cuh"

using namespace fftconv::probe;

namespace {

struct Layer {
  const char* name;
  int f, fo, freqs;  // freqs: the basis's half-spectrum size (cufft's tuned basis; L5fb: fbfft's 16x16)
};

}  // namespace

int main(int argc, char** argv) {
  fftconv::probe::program = "fftconv_cgemm_probe";
  const int repeat = argc > 1 ? std::atoi(argv[1]) : 20;
  if (repeat < 1) {
    std::fprintf(stderr, "fftconv_cgemm_probe: repeat must be >= 1, got '%s'\n", argv[1]);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "fftconv_cgemm_probe: no CUDA device\n");
    return 2;
  }
  cublasHandle_t h;
  cublasLtHandle_t lt;
  check(cublasCreate(&h), "cublasCreate");
  check(cublasLtCreate(&lt), "cublasLtCreate");
  size_t ws_bytes = size_t(64) << 20;
  void* ws = nullptr;
  check(cudaMalloc(&ws, ws_bytes), "cudaMalloc workspace");
  check(cublasSetWorkspace(h, ws, ws_bytes), "cublasSetWorkspace");
  const Layer layers[] = {{"L1", 3, 96, 128 * 65}, {"L2", 64, 64, 64 * 33}, {"L3", 128, 128, 32 * 17},
                          {"L4", 128, 128, 16 * 9}, {"L5", 384, 384, 14 * 8}, {"L5fb", 384, 384, 16 * 9}};
  const long S = 128;
  for (const Layer& L : layers)
    for (int pass = 0; pass < 3; ++pass) {
      // The cufft backend's CGEMM operands (gpu/cufft/cufft_pipeline.cu, one chunk of S images).
      cublasOperation_t opa = CUBLAS_OP_N, opb = CUBLAS_OP_N;
      long m, n, k, lda, ldb, ldc, sa, sb, sc;
      if (pass == 0) {  // fprop: Y = W^H X
        opa = CUBLAS_OP_C, m = L.fo, n = S, k = L.f, lda = L.f, sa = long(L.f) * L.fo, ldb = L.f, sb = L.f * S, ldc = L.fo,
        sc = S * L.fo;
      } else if (pass == 1) {  // bprop: Gp = W G
        m = L.f, n = S, k = L.fo, lda = L.f, sa = long(L.f) * L.fo, ldb = L.fo, sb = L.fo * S, ldc = L.f, sc = S * L.f;
      } else {  // accGrad: GW = X G^H
        opb = CUBLAS_OP_C, m = L.f, n = L.fo, k = S, lda = L.f, sa = L.f * S, ldb = L.fo, sb = S * L.fo, ldc = L.f,
        sc = long(L.fo) * L.f;
      }
      const int count = L.freqs;
      cuComplex *A, *B, *C, *C2;
      check(cudaMalloc(&A, sa * count * 8), "cudaMalloc A");
      check(cudaMalloc(&B, sb * count * 8), "cudaMalloc B");
      check(cudaMalloc(&C, sc * count * 8), "cudaMalloc C");
      check(cudaMalloc(&C2, sc * count * 8), "cudaMalloc C2");
      fill_kernel<<<1024, 256>>>(reinterpret_cast<float*>(A), sa * count * 2, 1);
      fill_kernel<<<1024, 256>>>(reinterpret_cast<float*>(B), sb * count * 2, 2);
      const cuComplex one = make_cuComplex(1, 0), zero = make_cuComplex(0, 0);
      const float t_classic = median_ms([&] {
        check(cublasCgemmStridedBatched(h, opa, opb, int(m), int(n), int(k), &one, A, int(lda), sa, B, int(ldb), sb, &zero, C,
                                        int(ldc), sc, count),
              "cublasCgemmStridedBatched");
      }, repeat);
      cublasLtMatmulDesc_t md;
      check(cublasLtMatmulDescCreate(&md, CUBLAS_COMPUTE_32F, CUDA_C_32F), "cublasLtMatmulDescCreate");
      check(cublasLtMatmulDescSetAttribute(md, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa), "TRANSA");
      check(cublasLtMatmulDescSetAttribute(md, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb), "TRANSB");
      auto layout = [&](long rows, long cols, long ld, long stride) {
        cublasLtMatrixLayout_t l;
        check(cublasLtMatrixLayoutCreate(&l, CUDA_C_32F, rows, cols, ld), "cublasLtMatrixLayoutCreate");
        check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count), "BATCH_COUNT");
        const int64_t st = stride;
        check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &st, sizeof st), "BATCH_OFFSET");
        return l;
      };
      cublasLtMatrixLayout_t la = opa == CUBLAS_OP_N ? layout(m, k, lda, sa) : layout(k, m, lda, sa);
      cublasLtMatrixLayout_t lb = opb == CUBLAS_OP_N ? layout(k, n, ldb, sb) : layout(n, k, ldb, sb);
      cublasLtMatrixLayout_t lc = layout(m, n, ldc, sc);
      cublasLtMatmulPreference_t pref;
      check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
      check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes),
            "MAX_WORKSPACE_BYTES");
      cublasLtMatmulHeuristicResult_t res[32];
      int found = 0;
      check(cublasLtMatmulAlgoGetHeuristic(lt, md, la, lb, lc, lc, pref, 32, res, &found), "cublasLtMatmulAlgoGetHeuristic");
      float best = 0;
      int best_i = -1;
      for (int i = 0; i < found; ++i) {
        const float t = median_ms([&] {
          check(cublasLtMatmul(lt, md, &one, A, la, B, lb, &zero, C2, lc, C2, lc, &res[i].algo, ws, ws_bytes, nullptr),
                "cublasLtMatmul");
        }, repeat);
        if (best_i < 0 || t < best) best = t, best_i = i;
      }
      double rel = 0;
      if (best_i >= 0) {
        check(cublasLtMatmul(lt, md, &one, A, la, B, lb, &zero, C2, lc, C2, lc, &res[best_i].algo, ws, ws_bytes, nullptr),
              "cublasLtMatmul");
        std::vector<float> h1(sc * count * 2), h2(sc * count * 2);
        check(cudaMemcpy(h1.data(), C, h1.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
        check(cudaMemcpy(h2.data(), C2, h2.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
        double d = 0, r = 0;
        for (size_t i = 0; i < h1.size(); ++i) d += double(h1[i] - h2[i]) * (h1[i] - h2[i]), r += double(h1[i]) * h1[i];
        rel = std::sqrt(d / r);
      }
      const double flop = 8.0 * double(m) * n * k * count;
      std::printf("%-5s %-7s m=%ld n=%ld k=%ld batch=%d | CgemmStridedBatched %.4f ms (%.1f TFLOP/s) | cublasLt best of %d: "
                  "%.4f ms (%.1f TFLOP/s), %.2fx, rel diff %.1e\n",
                  L.name, pass == 0 ? "fprop" : pass == 1 ? "bprop" : "accgrad", m, n, k, count, t_classic,
                  flop / t_classic / 1e9, found, best, best_i >= 0 ? flop / best / 1e9 : 0.0,
                  best_i >= 0 ? t_classic / best : 0.0, rel);
      cudaFree(A);
      cudaFree(B);
      cudaFree(C);
      cudaFree(C2);
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatrixLayoutDestroy(lb);
      cublasLtMatrixLayoutDestroy(lc);
      cublasLtMatmulDescDestroy(md);
    }
  cudaFree(ws);
  cublasLtDestroy(lt);
  cublasDestroy(h);
  return 0;
}
