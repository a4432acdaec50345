// Tests of the fftw backend's per-frequency complex products (Note [frequency CGEMM]): the AVX-512
// kernel against a double-precision loop on every edge shape and conjugation, and the backend with
// the kernel against the backend with Eigen's products; the spectrum transpositions (Note [spectrum
// transposition]) against the definition.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "api/fftconv.hpp"
#include "ref/freq_kernels.hpp"
#include "validation/compare.hpp"
#include "validation/data.hpp"

using namespace fftconv;

TEST_CASE("freq_cgemm matches a double-precision product for every edge shape and conjugation") {
  if (!have_freq_cgemm()) {
    MESSAGE("this build has no AVX-512 kernel (ref/ built without AVX-512): the fftw backend uses Eigen");
    CHECK_THROWS_AS(freq_cgemm(nullptr, nullptr, nullptr, 1, 1, 1, false, false, false), Error);
    return;
  }
  using C = std::complex<float>;
  std::mt19937_64 rng(20261124);
  std::normal_distribution<float> normal;
  const float guard = -12345.f;
  int checked = 0;
  for (int64_t M : {1, 3, 7, 8, 9, 17, 64})
    for (int64_t K : {1, 5, 8, 64})
      for (int64_t N : {1, 3, 5, 8, 13, 64})
        for (int flags = 0; flags < 8; ++flags) {
          const bool ca = flags & 1, cb = flags & 2, acc = flags & 4;
          std::vector<C> a(std::size_t(M * K)), b(std::size_t(K * N)), c(std::size_t(M * N + 9), C(guard, guard));
          for (auto* v : {&a, &b})
            for (C& x : *v) x = C(normal(rng), normal(rng));
          for (int64_t e = 0; e < M * N; ++e) c[std::size_t(e)] = acc ? C(normal(rng), normal(rng)) : C(NAN, NAN);
          const std::vector<C> c0 = c;
          freq_cgemm(a.data(), b.data(), c.data(), M, K, N, ca, cb, acc);
          double err = 0, norm = 0;
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
              std::complex<double> s = acc ? std::complex<double>(c0[std::size_t(m * N + n)]) : 0.0;
              for (int64_t k = 0; k < K; ++k) {
                std::complex<double> x(a[std::size_t(m * K + k)]), y(b[std::size_t(k * N + n)]);
                s += (ca ? std::conj(x) : x) * (cb ? std::conj(y) : y);
              }
              err += std::norm(std::complex<double>(c[std::size_t(m * N + n)]) - s);
              norm += std::norm(s);
            }
          INFO("M=", M, " K=", K, " N=", N, " conj_a=", ca, " conj_b=", cb, " accumulate=", acc);
          CHECK(std::sqrt(err / norm) < 2e-6);
          bool guards = true;  // nothing written past C
          for (std::size_t e = std::size_t(M * N); e < c.size(); ++e) guards = guards && c[e] == C(guard, guard);
          CHECK(guards);
          std::vector<C> again = c0;  // the same order of sums: bit for bit
          freq_cgemm(a.data(), b.data(), again.data(), M, K, N, ca, cb, acc);
          CHECK(std::equal(again.begin(), again.end(), c.begin(), [](C x, C y) {
            return std::memcmp(&x, &y, sizeof x) == 0;
          }));
          ++checked;
        }
  MESSAGE(checked, " shapes x conjugations checked");
}

TEST_CASE("fftw: the AVX-512 products agree with Eigen's; fftw_cgemm takes auto or eigen") {
  const ConvProblem p = ConvProblem::parse("S=8,f=16,fo=24,n=20,k=5,p=2");
  const Backend& b = builtin_registry().get("fftw");
  for (Pass pass : {Pass::fprop, Pass::bprop, Pass::accgrad}) {
    PassData d = make_pass_data(p, pass, 7);
    std::vector<float> out[2];
    for (int e = 0; e < 2; ++e) {
      PlanOptions o;
      o.extra["fftw_planner"] = "estimate";
      o.extra["fftw_cgemm"] = e ? "eigen" : "auto";
      auto plan = b.plan(p, pass, o);
      CHECK(plan->describe().find(e || !have_freq_cgemm() ? "products Eigen" : "products avx512 kernel") != std::string::npos);
      std::fill(d.result.begin(), d.result.end(), std::numeric_limits<float>::quiet_NaN());
      plan->execute(d.args());
      out[e] = d.result;
    }
    std::vector<double> ref(out[1].begin(), out[1].end());
    const ErrorStats s = compare(out[0].data(), ref.data(), int64_t(ref.size()));
    INFO(to_string(pass), " rel_l2 ", s.rel_l2);
    CHECK(s.rel_l2 < 1e-6);
  }
  PlanOptions bad;
  bad.extra["fftw_cgemm"] = "blas";
  try {
    (void)b.plan(p, Pass::fprop, bad);
    FAIL("fftw_cgemm=blas was accepted");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("fftw_cgemm") != std::string::npos);
    CHECK(std::string(e.what()).find("blas") != std::string::npos);
  }
}

TEST_CASE("transpose moves every element bit for bit and nothing else, at every edge shape") {
  std::mt19937_64 rng(7);
  auto check = [&](auto zero) {
    using C = decltype(zero);
    using R = typename C::value_type;
    std::uniform_real_distribution<R> u(-1, 1);
    int checked = 0;
    for (int64_t rows : {1, 7, 8, 9, 16, 21})
      for (int64_t cols : {1, 5, 8, 15, 16, 67}) {
        const int64_t src_ld = cols + 3, dst_ld = rows + 5;
        std::vector<C> src(std::size_t(rows * src_ld)), dst(std::size_t(cols * dst_ld), C(-7, -7));
        for (C& x : src) x = C(u(rng), u(rng));
        transpose(src.data(), src_ld, dst.data(), dst_ld, rows, cols);
        bool same = true, untouched = true;
        for (int64_t c = 0; c < cols; ++c)
          for (int64_t r = 0; r < dst_ld; ++r) {
            const C got = dst[std::size_t(c * dst_ld + r)];
            if (r < rows) same = same && std::memcmp(&got, &src[std::size_t(r * src_ld + c)], sizeof(C)) == 0;
            else untouched = untouched && got == C(-7, -7);
          }
        INFO("rows=", rows, " cols=", cols, " element bytes=", sizeof(C));
        CHECK(same);
        CHECK(untouched);
        ++checked;
      }
    return checked;
  };
  const int checked = check(std::complex<float>{}) + check(std::complex<double>{});
  MESSAGE(checked, " shapes checked");
}
