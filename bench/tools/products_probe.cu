// fftconv_products_probe: the frequency-domain products of the paper's layers (L1..L5 at S=128) and
// of the modern set, one complex GEMM per frequency of a smooth basis, in the three operand forms
// of the passes, through the library's product modes (products::cgemm): fp32 (cuBLAS CGEMM) and
// 3xtf32 (the tensor-core split, Note [product precision]), timed in one run, with the 3xtf32 result's difference from
// the fp32 one. It measures the products alone, apart from the transforms of a pass, and beside each
// the time its operands and result take to cross DRAM once at the device-to-device copy rate
// measured in the same run: no product kernel whose operands start in DRAM runs faster. Layers of at
// most kMaxSmallK input channels also time the small-K kernels (Note [small-K products]), which the
// fbfft backend times against the CGEMM there, on the same values in the layouts the pipeline gives
// them (gradOutput's spectra, and the fprop's and bprop's results, in the standard [plane][freq]).
//   usage: fftconv_products_probe [--repeat N] [--json FILE] [--only LAYER,...]      (GPU host)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "bench/tools/probe_common.cuh"
#include "gpu/cufft/cufft_kernels.cuh"
#include "gpu/fbfft/fbfft_small_products.hpp"
#include "gpu/gemm/products.hpp"
#include "validation/gpu_timing.hpp"

using namespace fftconv::probe;

namespace {

struct Layer {
  const char* name;
  long S, f, fo, freqs;  // freqs: half-spectrum size of the basis the fbfft backend plans
};

std::vector<float> download(const cuComplex* p, size_t n) {
  std::vector<float> h(2 * n);
  check(cudaMemcpy(h.data(), p, h.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return h;
}

// The device-to-device copy rate in bytes per second (read + written), of 1 GiB copies, the median of
// `repeat`.
double copy_rate(int repeat) {
  constexpr size_t kBytes = size_t(1) << 30;
  void *src = nullptr, *dst = nullptr;
  check(cudaMalloc(&src, kBytes), "cudaMalloc copy source");
  check(cudaMalloc(&dst, kBytes), "cudaMalloc copy destination");
  check(cudaMemset(src, 0, kBytes), "cudaMemset");
  const float ms = median_ms([&] { check(cudaMemcpyAsync(dst, src, kBytes, cudaMemcpyDeviceToDevice), "copy"); }, repeat);
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * double(kBytes) / (double(ms) * 1e-3);
}

// The standard-layout result `standard` ([plane][freq]) in the freq_major order of the CGEMM's.
std::vector<float> to_freq_major(const std::vector<float>& standard, int64_t planes, int64_t freqs) {
  std::vector<float> fm(standard.size());
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t q = 0; q < freqs; ++q)
      for (int h = 0; h < 2; ++h) fm[2 * (q * planes + p) + h] = standard[2 * (p * freqs + q) + h];
  return fm;
}

double rel_diff(const std::vector<float>& got, const std::vector<float>& ref) {
  double d = 0, r = 0;
  for (size_t i = 0; i < ref.size(); ++i) d += double(got[i] - ref[i]) * (got[i] - ref[i]), r += double(ref[i]) * ref[i];
  return std::sqrt(d / r);
}

}  // namespace

int main(int argc, char** argv) {
  fftconv::probe::program = "fftconv_products_probe";
  int repeat = 20;
  std::string json_path, only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--only" && i + 1 < argc) only.append(",").append(argv[++i]).append(",");
    else {
      std::fprintf(stderr, "usage: fftconv_products_probe [--repeat N] [--json FILE] [--only LAYER,...]\n");
      return 2;
    }
  }
  if (repeat < 1) {
    std::fprintf(stderr, "fftconv_products_probe: --repeat must be >= 1\n");
    return 2;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "fftconv_products_probe: no CUDA device\n");
    return 2;
  }
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  using fftconv::ProductMath;
  namespace products = fftconv::products;
  const Layer layers[] = {
      {"L1", 128, 3, 96, 128 * 65},         {"L2", 128, 64, 64, 64 * 33},        {"L3", 128, 128, 128, 32 * 17},
      {"L4", 128, 128, 128, 16 * 9},        {"L5", 128, 384, 384, 14 * 8},       {"vgg_conv3", 64, 128, 256, 60 * 31},
      {"vgg_conv4", 64, 512, 512, 30 * 16}, {"resnet_s2", 128, 128, 128, 30 * 16}, {"resnet_s4", 128, 512, 512, 9 * 5},
      {"inception_5x5", 128, 32, 96, 32 * 17}, {"stem_7x7", 32, 3, 64, 120 * 61}, {"odd_rect", 64, 64, 64, 42 * 28},
      {"large_15", 32, 128, 128, 48 * 25}, {"large_21", 16, 64, 64, 84 * 43}};
  int driver = 0, runtime = 0, cublas = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cublasGetVersion(h, &cublas);
  std::string command = "fftconv_products_probe";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  char date[32];
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const nlohmann::json device{{"name", prop.name}, {"driver", driver}, {"runtime", runtime},
                              {"cublas", std::to_string(cublas / 10000) + "." + std::to_string(cublas / 100 % 100) + "." +
                                             std::to_string(cublas % 100)}};
  const double rate = copy_rate(repeat);
  std::printf("device-to-device copy: %.0f GB/s (read + written)\n", rate / 1e9);
  nlohmann::json doc{{"benchmark", "products"}, {"device", device}, {"command", command}, {"date", date},
                     {"repeat", repeat}, {"copy_gbps", rate / 1e9},
                     {"what", "per-frequency complex products of the layers (batch = frequencies of the fbfft basis), "
                              "dense operands in the passes' forms; TFLOP/s real-equivalent (8 per complex multiply-add)"},
                     {"timing", "*_ms: median of calls enqueued back to back on one stream (the GPU's own time, "
                                "the host's launch latency hidden); *_alone_ms: median of calls each alone on an "
                                "idle device, the host's launch latency included"},
                     {"peak_tflops", {{"fp32", products::peak_tflops(ProductMath::fp32)},
                                      {"3xtf32", products::peak_tflops(ProductMath::tf32x3)}}},
                     {"rows", nlohmann::json::array()}};
  for (const Layer& L : layers)
    for (const fftconv::Pass pass : {fftconv::Pass::fprop, fftconv::Pass::bprop, fftconv::Pass::accgrad}) {
      if (!only.empty() && only.find("," + std::string(L.name) + ",") == std::string::npos) continue;
      // The pass's product as the backends issue it, on dense operands (fprop Y = W^H X, bprop
      // Gp = W G, accGrad GW = X G^H).
      fftconv::ConvProblem p;
      p.S = L.S, p.f = L.f, p.fo = L.fo;
      products::StridedBatch g = products::pass_product(p, pass, L.S, L.freqs);
      g.lda = g.opa == CUBLAS_OP_N ? g.m : g.k, g.ldb = g.opb == CUBLAS_OP_N ? g.k : g.n, g.ldc = g.m;
      const long sa = g.m * g.k, sb = g.k * g.n, sc = g.m * g.n;
      g.stride_a = sa, g.stride_b = sb, g.stride_c = sc;
      // Operand sets the timed calls rotate among, together at least three L2 capacities (the larger
      // shapes need one): between two calls on one set, at least 1.5 L2 capacities of other operands
      // pass, so a call's operands start in DRAM, as the floor assumes. Every set holds the same values.
      const double bytes = double(sa + sb + sc) * double(L.freqs) * 8;
      const int sets = int(std::clamp(std::ceil(3.0 * prop.l2CacheSize / bytes), 1.0, 8.0));
      std::vector<cuComplex*> As(sets), Bs(sets), Cs(sets), Gs(sets, nullptr);
      for (int i = 0; i < sets; ++i) {
        check(cudaMalloc(&As[i], sa * L.freqs * 8), "cudaMalloc A");
        check(cudaMalloc(&Bs[i], sb * L.freqs * 8), "cudaMalloc B");
        check(cudaMalloc(&Cs[i], sc * L.freqs * 8), "cudaMalloc C");
        fill_kernel<<<1024, 256>>>(reinterpret_cast<float*>(As[i]), sa * L.freqs * 2, 1);
        fill_kernel<<<1024, 256>>>(reinterpret_cast<float*>(Bs[i]), sb * L.freqs * 2, 2);
      }
      const size_t nc = size_t(sc * L.freqs);
      // A call's time queued behind the call before, the host's launch latency hidden, and alone
      // (`alone`); call(i) runs on set i; the result is set 0's.
      auto timed = [&](auto&& call, std::vector<float>* result, float* alone) {
        call(0);
        check(cudaDeviceSynchronize(), "product");
        *result = download(Cs[0], nc);
        int next = 0;
        auto run = [&] { call(++next % sets); };
        *alone = median_ms(run, repeat);
        try {  // queued on the default stream, as the library's benchmarks time a convolution
          return float(fftconv::time_gpu([&](int) { run(); }, 3, repeat, nullptr).median_ms);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "fftconv_products_probe: %s\n", e.what());
          std::exit(1);
        }
      };
      auto product = [&](ProductMath math) {
        return [&, math](int i) {
          products::StridedBatch gi = g;
          gi.a = As[i], gi.b = Bs[i], gi.c = Cs[i];
          products::cgemm(h, math, gi);
        };
      };
      std::vector<float> c32, c3x;
      float a32 = 0, a3x = 0;
      const float t32 = timed(product(ProductMath::fp32), &c32, &a32);
      const float t3x = timed(product(ProductMath::tf32x3), &c3x, &a3x);
      const double flop = g.flops(), diff = rel_diff(c3x, c32), floor_ms = bytes / rate * 1e3;
      const std::string pass_name(fftconv::to_string(pass));
      std::printf("%-13s %-7s m=%-4ld n=%-4ld k=%-4ld batch=%-5ld | fp32 %.4f ms %5.1f TFLOP/s | 3xtf32 %.4f ms %5.1f "
                  "TFLOP/s, %.2fx fp32's speed (alone %.2fx), rel diff %.1e | DRAM floor %.4f ms\n",
                  L.name, pass_name.c_str(), long(g.m), long(g.n), long(g.k), long(g.batch), t32, flop / t32 / 1e9, t3x,
                  flop / t3x / 1e9, t32 / t3x, a32 / a3x, diff, floor_ms);
      nlohmann::json row{{"layer", L.name}, {"pass", pass_name}, {"m", g.m}, {"n", g.n}, {"k", g.k},
                         {"batch", g.batch}, {"fp32_ms", t32}, {"fp32_tflops", flop / t32 / 1e9}, {"tf32x3_ms", t3x},
                         {"tf32x3_tflops", flop / t3x / 1e9}, {"tf32x3_speedup", t32 / t3x},
                         {"fp32_alone_ms", a32}, {"tf32x3_alone_ms", a3x}, {"tf32x3_alone_speedup", a32 / a3x},
                         {"tf32x3_rel_diff", diff}, {"bytes", bytes}, {"dram_floor_ms", floor_ms}, {"operand_sets", sets}};
      if (L.f <= fftconv::fbfft_conv::kMaxSmallK) {
        // fprop: x = B, w = A, c standard. bprop and accGrad: gradOutput (B) in the standard layout
        // against A; bprop's c standard, accGrad's freq_major as the CGEMM's (Note [small-K products]).
        namespace fc = fftconv::fbfft_conv;
        if (pass != fftconv::Pass::fprop)
          for (int i = 0; i < sets; ++i) {
            check(cudaMalloc(&Gs[i], sb * L.freqs * 8), "cudaMalloc standard gradOutput");
            fftconv::gpu_kernels::transpose_complex(Bs[i], L.freqs, sb, Gs[i], nullptr);  // [freq][plane] -> [plane][freq]
          }
        auto call = [&](int i) {
          const auto* a = reinterpret_cast<const float2*>(As[i]);
          auto* c = reinterpret_cast<float2*>(Cs[i]);
          if (pass == fftconv::Pass::fprop)
            fc::small_k_products(
                fc::fprop_small_products(reinterpret_cast<const float2*>(Bs[i]), a, c, L.S, sb, L.f, L.fo, L.freqs),
                nullptr);
          else
            fc::small_k_grad_products(fc::grad_small_products(pass, reinterpret_cast<const float2*>(Gs[i]), a, c, L.S,
                                                              sa, L.f, L.fo, L.freqs, false),
                                      nullptr);
        };
        std::vector<float> csk;
        float ask = 0;
        const float tsk = timed(call, &csk, &ask);
        if (pass != fftconv::Pass::accgrad) csk = to_freq_major(csk, sc, L.freqs);
        const double dsk = rel_diff(csk, c32);
        std::printf("%-13s %-7s small-K kernel %.4f ms, %.2fx fp32's speed, rel diff %.1e\n", L.name, pass_name.c_str(),
                    tsk, t32 / tsk, dsk);
        row["smallk_ms"] = tsk, row["smallk_speedup"] = t32 / tsk, row["smallk_rel_diff"] = dsk;
        row["smallk_alone_ms"] = ask, row["smallk_alone_speedup"] = a32 / ask;
      }
      std::fflush(stdout);
      doc["rows"].push_back(row);
      for (int i = 0; i < sets; ++i) {
        cudaFree(As[i]);
        cudaFree(Bs[i]);
        cudaFree(Cs[i]);
        cudaFree(Gs[i]);
      }
    }
  cublasDestroy(h);
  if (!json_path.empty()) std::ofstream(json_path) << doc.dump(2) << "\n";
  return 0;
}
