// The FFT benchmark's copy kernel (bench/fft_bench_kernels.cuh), which times the same-size and
// same-shape copy baselines: what it reads, writes and leaves alone, for both shapes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "bench/fft_bench_kernels.cuh"
#include "gpu/runtime/test_device.hpp"

namespace fftconv {
namespace {

// Copies n_in pieces into a destination of `cap` pieces poisoned with NaN, writing n_out with k pieces per
// thread; returns it.
std::vector<float> run_copy(const std::vector<float>& src_host, int64_t n_in, int64_t n_out, int64_t cap, bool dependent, int k) {
  DeviceBuffer src(src_host.size() * sizeof(float)), dst(std::size_t(cap) * 16);
  FFTCONV_CUDA_CHECK(cudaMemcpy(src.get(), src_host.data(), src_host.size() * sizeof(float), cudaMemcpyHostToDevice));
  FFTCONV_CUDA_CHECK(cudaMemset(dst.get(), 0xff, std::size_t(cap) * 16));
  bench::copy_device(dst.as<float4>(), n_out, src.as<float4>(), n_in, nullptr, dependent, k);
  FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out(std::size_t(cap) * 4);
  FFTCONV_CUDA_CHECK(cudaMemcpy(out.data(), dst.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("bench copy kernel: same-size and same-shape copies read n_in, write n_out and nothing else") {
    FFTCONV_SKIP_WITHOUT_DEVICE("bench copy kernel");
    // counts that straddle the kernel's 256-, 512- and 1,024-piece blocks and its 256-piece strides
    for (const auto& [n_in, n_out] : std::vector<std::pair<int64_t, int64_t>>{{3000, 3000}, {2048, 2560}, {2560, 2048}, {1, 1025}, {1025, 0}}) {
      CAPTURE(n_in);
      CAPTURE(n_out);
      std::vector<float> src(std::size_t(n_in) * 4);
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = float(i % 9973) + 0.5f;
      const int64_t cap = std::max(n_in, n_out) + 300;
      for (int k : {1, 2, 4}) {
        for (bool dependent : {false, true}) {
          CAPTURE(k);
          CAPTURE(dependent);
          const std::vector<float> got = run_copy(src, n_in, n_out, cap, dependent, k);
          int64_t wrong = 0;
          for (int64_t i = 0; i < cap * 4; ++i) {
            const int64_t piece = i / 4;
            if (piece < std::min(n_in, n_out))
              wrong += got[i] != src[i];
            else if (piece < n_out)
              wrong += got[i] != 0.f;
            else
              wrong += !std::isnan(got[i]);  // untouched poison
          }
          CHECK(wrong == 0);
        }
      }
    }
    CHECK_THROWS_AS(bench::copy_device(nullptr, -1, nullptr, 4, nullptr, false), InvalidArgument);
    CHECK_THROWS_AS(bench::copy_device(nullptr, 4, nullptr, 4, nullptr, false, 3), InvalidArgument);
  }
}

}  // namespace fftconv
