// Tests of the frequency-domain products: in doctest suite "gpu" the 3xTF32 split (Note [product
// precision]) against a double reference and the fp32 products, on the operands that hurt it:
// random values, a wide dynamic range, values at TF32's rounding boundary, denormals, and NaN/Inf,
// in the three forms the passes use (N/N, C/N, N/C), batched, at sizes that run each 3xTF32 kernel;
// the warpgroup kernel's tiles whole and split over clusters (Note [split tail wave]). Outside it,
// which kernel a description names and how a launch splits its last wave, without a device.
#include <cublas_v2.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "gpu/gemm/products.hpp"
#include "gpu/gemm/wgmma_3xtf32.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/runtime/test_device.hpp"

using namespace fftconv;
namespace wgmma3x = fftconv::products::wgmma3x;

namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

struct Form {
  cublasOperation_t opa, opb;
  const char* name;
};
constexpr Form kForms[] = {{CUBLAS_OP_N, CUBLAS_OP_N, "N/N"}, {CUBLAS_OP_C, CUBLAS_OP_N, "C/N"}, {CUBLAS_OP_N, CUBLAS_OP_C, "N/C"}};
constexpr int64_t kK = 72, kBatch = 3;

// The products' two kernels (Note [product precision]): 40×24 has both sides at most 64 and runs on
// the Ampere-style kernel, 96×40 on the warpgroup kernel (Note [warpgroup 3xtf32]).
struct Sides {
  int64_t m, n;
};
constexpr Sides kSides[] = {{40, 24}, {96, 40}};

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// The stored operands of one batched product in `form`: A is m×k (k×m when conjugated), B k×n (n×k).
struct Operands {
  Form form;
  int64_t m, n;
  int64_t lda, ldb, sa, sb;
  std::vector<cf> a, b;
  Operands(Form f, Sides sides) : form(f), m(sides.m), n(sides.n) {
    lda = f.opa == CUBLAS_OP_N ? m : kK;
    ldb = f.opb == CUBLAS_OP_N ? kK : n;
    sa = m * kK, sb = kK * n;
    a.resize(std::size_t(sa * kBatch)), b.resize(std::size_t(sb * kBatch));
  }
  cd opa(int64_t q, int64_t i, int64_t l) const {
    return form.opa == CUBLAS_OP_N ? cd(a[std::size_t(q * sa + i + l * lda)]) : std::conj(cd(a[std::size_t(q * sa + l + i * lda)]));
  }
  cd opb(int64_t q, int64_t l, int64_t j) const {
    return form.opb == CUBLAS_OP_N ? cd(b[std::size_t(q * sb + l + j * ldb)]) : std::conj(cd(b[std::size_t(q * sb + j + l * ldb)]));
  }
  // C (m×n column-major per batch) in double.
  std::vector<cd> reference() const {
    std::vector<cd> c(std::size_t(m * n * kBatch));
    for (int64_t q = 0; q < kBatch; ++q)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          cd s = 0;
          for (int64_t l = 0; l < kK; ++l) s += opa(q, i, l) * opb(q, l, j);
          c[std::size_t(q * m * n + i + j * m)] = s;
        }
    return c;
  }
};

// C of the operands in `math` on the GPU.
std::vector<cf> run(const Operands& o, ProductMath math) {
  const int64_t m = o.m, n = o.n;
  DeviceBuffer a = upload(o.a), b = upload(o.b), c(std::size_t(m * n * kBatch) * sizeof(cf));
  cublasHandle_t h = nullptr;
  FFTCONV_CUBLAS_CHECK(cublasCreate(&h));
  products::StridedBatch g;
  g.opa = o.form.opa, g.opb = o.form.opb, g.m = m, g.n = n, g.k = kK, g.batch = kBatch;
  g.a = a.as<cuComplex>(), g.lda = o.lda, g.stride_a = o.sa;
  g.b = b.as<cuComplex>(), g.ldb = o.ldb, g.stride_b = o.sb;
  g.c = c.as<cuComplex>(), g.ldc = m, g.stride_c = m * n;
  try {
    products::cgemm(h, math, g);
    FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (...) {
    cublasDestroy(h);
    throw;
  }
  cublasDestroy(h);
  return download<cf>(c, std::size_t(m * n * kBatch));
}

// Normwise relative error of `got` against `ref`.
double rel_l2(const std::vector<cf>& got, const std::vector<cd>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) num += std::norm(cd(got[i]) - ref[i]), den += std::norm(ref[i]);
  return std::sqrt(num / den);
}

// The fp32 tolerance model (Note [tolerance model]) of a sum without a transform: 4 · 2^-24 · sqrt(K')
// with K' = 2K real products per complex element, plus one rounding.
double fp32_tolerance() { return 4.0 * std::ldexp(1.0, -24) * (1.0 + std::sqrt(2.0 * double(kK))); }

// Fills both operands with gen(rng) (real and imaginary parts drawn separately).
void fill(Operands& o, std::mt19937& rng, const std::function<float(std::mt19937&)>& gen) {
  for (auto* v : {&o.a, &o.b})
    for (cf& x : *v) x = cf(gen(rng), gen(rng));
}

// Both products of one operand class within the fp32 model, in every form; 3xtf32 no more than
// `worse` times fp32's error (floored at one fp32 rounding).
void check_class(const char* what, const std::function<float(std::mt19937&)>& gen, double worse) {
  for (const Sides& sides : kSides)
    for (const Form& f : kForms) {
      CAPTURE(what);
      CAPTURE(f.name);
      CAPTURE(sides.m);
      Operands o(f, sides);
      std::mt19937 rng(7);
      fill(o, rng, gen);
      const auto ref = o.reference();
      const double e32 = rel_l2(run(o, ProductMath::fp32), ref), e3x = rel_l2(run(o, ProductMath::tf32x3), ref);
      const double e1 = rel_l2(run(o, ProductMath::tf32), ref);
      const std::string label = std::string(what) + " " + f.name + " " + std::to_string(sides.m) + "x" +
                                std::to_string(sides.n);
      MESSAGE(label << ": rel_l2 fp32 " << e32 << ", 3xtf32 " << e3x << ", tf32 " << e1 << " (model " << fp32_tolerance() << ")");
      CHECK(e32 <= fp32_tolerance());
      CHECK(e3x <= fp32_tolerance());
      CHECK(e3x <= worse * std::max(e32, std::ldexp(1.0, -24)));
      CHECK(e1 > 8 * e3x);  // one TF32 product is visibly less accurate: the split is doing the work
    }
}

}  // namespace

TEST_SUITE("gpu") {
  TEST_CASE("products: 3xtf32 keeps fp32 accuracy on random, wide-range and TF32-boundary operands (Note [product precision])") {
    FFTCONV_SKIP_WITHOUT_DEVICE("products");
    check_class("uniform [-1, 1)", [](std::mt19937& r) { return std::uniform_real_distribution<float>(-1, 1)(r); }, 8);
    // Magnitudes 2^-40 .. 2^40: each sum is dominated by its largest terms, whose small parts must not be lost.
    check_class("wide range", [](std::mt19937& r) {
      const float m = std::uniform_real_distribution<float>(0.5f, 1)(r) * (r() % 2 ? 1.f : -1.f);
      return std::ldexp(m, int(r() % 81) - 40);
    }, 8);
    // The 13 bits TF32 drops at (0x1000), just below (0x0fff) and just above (0x1001) half a TF32 ulp:
    // where truncating and rounding the big part differ most.
    check_class("TF32 boundary", [](std::mt19937& r) {
      static constexpr uint32_t kLow[] = {0x1000, 0x0fff, 0x1001, 0x1fff};
      const uint32_t bits = 0x3f800000u | ((uint32_t(r()) & 0x3ffu) << 13) | kLow[r() % 4] | (r() % 2 ? 0x80000000u : 0);
      return from_bits(bits);
    }, 8);
  }

  TEST_CASE("products: denormal operands: fp32 accuracy beside normal values, an absolute floor of 2^-136 alone") {
    FFTCONV_SKIP_WITHOUT_DEVICE("products");
    // A denormal k·2^-149 (k < 2^23) beside values of order 1 adds below the sums' fp32 rounding.
    check_class("a quarter denormal", [](std::mt19937& r) {
      if (r() % 4) return std::uniform_real_distribution<float>(-1, 1)(r);
      return std::ldexp(float(int(r() % (1u << 23))), -149) * (r() % 2 ? 1.f : -1.f);
    }, 8);
    // A all denormal, B of order 1. TF32 keeps 10 fraction bits, which for a denormal are an absolute
    // quantum of 2^-136: the split then holds a to 2^-137 per component, so each element of C is off
    // by at most 2^-136·Σ_l |op(B)(l, j)| (plus its own fp32 rounding), about 1e-3 of these sums,
    // where fp32 keeps its usual relative accuracy. Flushed denormals would lose whole sums.
    for (const Sides& sides : kSides)
      for (const Form& f : kForms) {
        CAPTURE(f.name);
        CAPTURE(sides.m);
        Operands o(f, sides);
        const int64_t m = o.m, n = o.n;
        std::mt19937 rng(11);
        auto den = [&] { return std::ldexp(float(int(rng() % (1u << 23))), -149) * (rng() % 2 ? 1.f : -1.f); };
        for (cf& x : o.a) x = cf(den(), den());
        for (cf& x : o.b) x = cf(std::uniform_real_distribution<float>(-1, 1)(rng), std::uniform_real_distribution<float>(-1, 1)(rng));
        const auto ref = o.reference();
        const auto c32 = run(o, ProductMath::fp32), c3x = run(o, ProductMath::tf32x3);
        const double e32 = rel_l2(c32, ref), e3x = rel_l2(c3x, ref);
        int64_t over = 0;
        double worst = 0;  // the largest error over its bound
        for (int64_t q = 0; q < kBatch; ++q)
          for (int64_t j = 0; j < n; ++j) {
            double sum_b = 0;
            for (int64_t l = 0; l < kK; ++l) sum_b += std::abs(o.opb(q, l, j));
            for (int64_t i = 0; i < m; ++i) {
              const std::size_t at = std::size_t(q * m * n + i + j * m);
              const double bound = std::ldexp(sum_b, -136) + 8 * std::ldexp(std::abs(ref[at]), -24);
              const double err = std::abs(cd(c3x[at]) - ref[at]);
              worst = std::max(worst, err / bound);
              over += err > bound;
            }
          }
        const std::string form(f.name);
        MESSAGE(form << " " << m << "x" << n << " all-denormal A: rel_l2 fp32 " << e32 << ", 3xtf32 " << e3x << "; worst 3xtf32 error / floor " << worst);
        CHECK(e32 <= fp32_tolerance());
        CHECK(over == 0);
      }
  }

  TEST_CASE("products: NaN and Inf in an operand reach the results they touch, in every mode") {
    FFTCONV_SKIP_WITHOUT_DEVICE("products");
    for (const Sides& sides : kSides)
      for (const Form& f : kForms)
        for (const float bad : {std::nanf(""), INFINITY, -INFINITY}) {
          CAPTURE(f.name);
          CAPTURE(bad);
          CAPTURE(sides.m);
          Operands o(f, sides);
          std::mt19937 rng(5);
          fill(o, rng, [](std::mt19937& r) { return std::uniform_real_distribution<float>(0.25f, 1)(r); });
          // One bad value in A's batch 1 at op(A)(i=3, l=5): row 3 of C in batch 1 turns non-finite, nothing else.
          const int64_t i = 3, l = 5, q = 1;
          const std::size_t at = std::size_t(q * o.sa + (f.opa == CUBLAS_OP_N ? i + l * o.lda : l + i * o.lda));
          o.a[at] = cf(bad, 0.5f);
          for (ProductMath m : {ProductMath::fp32, ProductMath::tf32x3, ProductMath::tf32}) {
            const std::string mode(to_string(m));
            CAPTURE(mode);
            const auto c = run(o, m);
            int64_t wrong = 0;
            for (int64_t qq = 0; qq < kBatch; ++qq)
              for (int64_t j = 0; j < o.n; ++j)
                for (int64_t ii = 0; ii < o.m; ++ii) {
                  const cf v = c[std::size_t(qq * o.m * o.n + ii + j * o.m)];
                  const bool finite = std::isfinite(v.real()) && std::isfinite(v.imag());
                  wrong += finite == (qq == q && ii == i);
                }
            CHECK(wrong == 0);
          }
        }
  }

  TEST_CASE("products: 3xtf32 runs a product shallower than one tensor-core step as fp32 does (Note [product precision])") {
    FFTCONV_SKIP_WITHOUT_DEVICE("products");
    cublasHandle_t raw = nullptr;
    FFTCONV_CUBLAS_CHECK(cublasCreate(&raw));
    const std::unique_ptr<cublasContext, decltype(&cublasDestroy)> handle(raw, &cublasDestroy);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    constexpr int64_t m = 3, n = 2, batch = 4;
    for (int64_t k = 1; k <= products::kSplitMinDepth; ++k) {
      CAPTURE(k);
      std::vector<cf> a(std::size_t(m * k * batch)), b(std::size_t(k * n * batch));
      for (auto* v : {&a, &b})
        for (cf& x : *v) x = cf(u(rng), u(rng));
      const DeviceBuffer da = upload(a), db = upload(b);
      DeviceBuffer dc(std::size_t(m * n * batch) * sizeof(cf));
      products::StridedBatch g;
      g.m = m, g.n = n, g.k = k, g.batch = batch;
      g.a = da.as<cuComplex>(), g.lda = m, g.stride_a = m * k;
      g.b = db.as<cuComplex>(), g.ldb = k, g.stride_b = k * n;
      g.c = dc.as<cuComplex>(), g.ldc = m, g.stride_c = m * n;
      std::vector<cf> got[2];
      for (const ProductMath math : {ProductMath::fp32, ProductMath::tf32x3}) {
        products::cgemm(handle.get(), math, g);
        FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
        got[math == ProductMath::tf32x3] = download<cf>(dc, std::size_t(m * n * batch));
      }
      if (k < products::kSplitMinDepth) CHECK(got[1] == got[0]);  // the same cuBLAS call
      else CHECK(got[1] != got[0]);                                 // the split, from a depth of 8
    }
  }

  TEST_CASE("products: the warpgroup kernel gives the same sums with its tiles whole, split, persistent or all, by TMA or copies (Note [split tail wave], Note [tma operand loads])") {
    FFTCONV_SKIP_WITHOUT_DEVICE("products");
    int device = 0, major = 0;
    FFTCONV_CUDA_CHECK(cudaGetDevice(&device));
    FFTCONV_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major != 9) {
      MESSAGE("the warpgroup kernel needs sm_90: skipping");
      return;
    }
    // 200×70 per batch: 2×2 ragged tiles, 9 ragged slices of K, 3 batches = 12 tiles. With a
    // side's K contiguous, its rows are `pitch` apart: an even depth, an odd one in an even pitch
    // (the last slice ends inside an aligned pair of values) and an odd one in an odd pitch (no row
    // after the first is 16-byte aligned, so that side is read by copies, not TMA); and 3 slices,
    // fewer than a cluster of 4 or 8 has CTAs, so that some CTAs' parts of K hold none.
    constexpr int kRows = 200, kCols = 70, kBatches = 3;
    struct Depth {
      int depth, pitch;
    };
    for (const Depth d : {Depth{130, 130}, Depth{131, 132}, Depth{131, 131}, Depth{40, 40}}) {
      const int kDepth = d.depth;
      std::mt19937 rng(11);
      std::uniform_real_distribution<float> u(-1.f, 1.f);
      std::vector<cf> l(std::size_t(kRows) * d.pitch * kBatches), r(std::size_t(kCols) * d.pitch * kBatches),
          c0(std::size_t(kRows) * kCols * kBatches);
      for (auto* v : {&l, &r, &c0})
        for (cf& x : *v) x = cf(u(rng), u(rng));
      const DeviceBuffer dl = upload(l), dr = upload(r);
      DeviceBuffer dc = upload(c0);
      const double tol = 4.0 * std::ldexp(1.0, -24) * (1.0 + std::sqrt(2.0 * kDepth));
      for (const bool k_contig : {true, false})  // R's K contiguous or its rows
        for (const bool conj : {false, true})
          for (const bool accumulate : {false, true}) {
            const bool left_k = conj;  // L's K contiguous (read conjugated, as fprop's weights) or its rows
            wgmma3x::Args a;
            // L and R as left_k and k_contig say; C column-major per batch.
            a.left = {dl.as<float2>(), left_k ? d.pitch : 1, left_k ? 1 : kRows, int64_t(kRows) * d.pitch, conj};
            a.right = {dr.as<float2>(), k_contig ? d.pitch : 1, k_contig ? 1 : kCols, int64_t(kCols) * d.pitch, !conj};
            a.c = dc.as<float2>(), a.c_row = 1, a.c_col = kRows, a.c_batch = int64_t(kRows) * kCols;
            a.rows = kRows, a.cols = kCols, a.depth = kDepth, a.batch = kBatches, a.accumulate = accumulate;
            std::vector<cd> ref(c0.size());
            for (int q = 0; q < kBatches; ++q)
              for (int j = 0; j < kCols; ++j)
                for (int i = 0; i < kRows; ++i) {
                  cd sum = accumulate ? cd(c0[std::size_t(q * kRows * kCols + i + j * kRows)]) : cd(0);
                  for (int k = 0; k < kDepth; ++k) {
                    cd x = l[std::size_t(q * kRows * d.pitch) + (left_k ? std::size_t(k + i * d.pitch)
                                                                        : std::size_t(i + k * kRows))];
                    const std::size_t rj = std::size_t(q * kCols * d.pitch) + (k_contig ? std::size_t(k + j * d.pitch)
                                                                                         : std::size_t(j + k * kCols));
                    cd y = r[rj];
                    if (conj) x = std::conj(x);
                    else y = std::conj(y);
                    sum += x * y;
                  }
                  ref[std::size_t(q * kRows * kCols + i + j * kRows)] = sum;
                }
            CAPTURE(kDepth);
            CAPTURE(d.pitch);
            CAPTURE(k_contig);
            CAPTURE(conj);
            CAPTURE(accumulate);
            // a side with K contiguous in an odd pitch is read by copies; rows contiguous, by TMA
            CHECK(wgmma3x::loads_by_tma(a) == (d.pitch % 2 == 0 || (!left_k && !k_contig)));
            std::vector<cf> whole;
            // (whole tiles on one CTA each, on 5 CTAs of 3 or 2 tiles each (Note [persistent tiles]),
            // split tails, and both at once)
            for (const wgmma3x::TailSplit how :
                 {wgmma3x::TailSplit{12, 1}, wgmma3x::TailSplit{12, 1, 5}, wgmma3x::TailSplit{0, 2},
                  wgmma3x::TailSplit{0, 8}, wgmma3x::TailSplit{5, 4}, wgmma3x::TailSplit{7, 2, 3}}) {
              CAPTURE(how.whole);
              CAPTURE(how.split);
              CAPTURE(how.ctas);
              FFTCONV_CUDA_CHECK(cudaMemcpy(dc.get(), c0.data(), c0.size() * sizeof(cf), cudaMemcpyHostToDevice));
              wgmma3x::cgemm(a, nullptr, &how);
              FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
              const std::vector<cf> got = download<cf>(dc, c0.size());
              CHECK(rel_l2(got, ref) <= tol);
              {  // the copies read the same values: the same bits
                wgmma3x::Args copies = a;
                copies.loads = wgmma3x::Loads::copies;
                FFTCONV_CUDA_CHECK(cudaMemcpy(dc.get(), c0.data(), c0.size() * sizeof(cf), cudaMemcpyHostToDevice));
                wgmma3x::cgemm(copies, nullptr, &how);
                FFTCONV_CUDA_CHECK(cudaDeviceSynchronize());
                CHECK(download<cf>(dc, c0.size()) == got);
              }
              if (how.split == 1 && how.ctas == 0) whole = got;
              else if (how.split == 1) CHECK(got == whole);  // the same sums, in the same order, on fewer CTAs
              else {
                std::vector<cd> w(whole.begin(), whole.end());
                CHECK(rel_l2(got, w) <= tol);  // the split sums K in another order, to within rounding
              }
            }
          }
    }
  }
}

TEST_CASE("products: a description names the kernel that runs the product, without a device") {
  auto shape = [](int64_t m, int64_t n, int64_t batch) {
    products::StridedBatch g;
    g.opa = CUBLAS_OP_C, g.m = m, g.n = n, g.k = kK, g.batch = batch;
    return g;
  };
  const std::string ampere = "CUTLASS's Ampere-style 3xTF32 CGEMM";
  const std::string warpgroup = "the warpgroup-MMA 3xTF32 CGEMM (Note [warpgroup 3xtf32])";
  for (const Sides& sides : kSides) {
    CAPTURE(sides.m);
    const products::StridedBatch g = shape(sides.m, sides.n, kBatch);
    CHECK(products::engine(ProductMath::tf32x3, g) == (std::max(sides.m, sides.n) <= 64 ? ampere : warpgroup));
    CHECK(products::engine(ProductMath::fp32, g) == "cublasCgemmStridedBatched");
    CHECK(products::engine(ProductMath::tf32, g) == "cuBLAS TF32 tensor-core CGEMM");
  }
  CHECK(products::engine(ProductMath::tf32x3, shape(64, 64, 65535)) == ampere);
  CHECK(products::engine(ProductMath::tf32x3, shape(64, 64, 65536)) == warpgroup);  // past the Ampere grid
  CHECK(products::engine(ProductMath::tf32x3, shape(65, 8, 1)) == warpgroup);
  products::StridedBatch shallow = shape(128, 128, kBatch);
  shallow.k = products::kSplitMinDepth - 1;
  CHECK(products::engine(ProductMath::tf32x3, shallow) ==
        "cublasCgemmStridedBatched (depth 7 < 8: fp32, Note [product precision])");
  shallow.k = products::kSplitMinDepth;
  CHECK(products::engine(ProductMath::tf32x3, shallow) == warpgroup);
}

TEST_CASE("products: the warpgroup kernel splits only its last, partial wave (Note [split tail wave])") {
  // waves[1]: 132 resident CTAs; waves[s]: resident clusters of s (an H100's GPCs: 16 of 8, 32 of 4).
  const int waves[wgmma3x::kMaxSplit + 1] = {0, 132, 66, 0, 32, 0, 0, 0, 16};
  auto split = [&](int64_t tiles, int stages) { return wgmma3x::tail_split(tiles, stages, waves); };
  CHECK(split(672, 24).whole == 660);  // L5 fprop: 5 whole waves, 12 tiles in clusters of 8
  CHECK(split(672, 24).split == 8);
  CHECK(split(288, 32).whole == 264);  // 24 tiles: 8·24 > 132, 4·24 <= 132
  CHECK(split(288, 32).split == 4);
  CHECK(split(288, 8).split == 1);  // K = 128 (L4): clusters of 4 would save 6 slices a CTA
  CHECK(split(288, 16).split == 4);  // K = 256: 12 slices a CTA
  CHECK(split(288, 16).whole == 264);
  CHECK(split(264, 24).whole == 264);  // whole waves only
  CHECK(split(264, 24).split == 1);
  CHECK(split(40, 32).whole == 0);  // under one wave: every tile split, 40 clusters of 2 (40 > 32 of 4)
  CHECK(split(40, 32).split == 2);
  CHECK(split(40, 8).split == 1);  // K = 128 in clusters of 2 would save 4 slices a CTA
  CHECK(split(40, 24).split == 2);  // K = 384: 12
  CHECK(split(3, 24).split == 8);
  CHECK(split(131, 24).split == 1);  // 131 tiles: no cluster shape fits 131 in one wave
}
