// Direct convolution in double (see direct.hpp). Loops stay simple on purpose: this is the reference.
// Parallel over independent result planes only, so results are deterministic.
#include "ref/direct.hpp"

#include <vector>

#include "common/padding.hpp"
#include "ref/parallel.hpp"

namespace fftconv {

namespace {
// The padded (h+2ph)×(w+2pw) plane of x as double.
template <class T>
void pad_plane(const ConvProblem& p, const T* x, std::vector<double>& out) {
  const int64_t hp = p.padded_h(), wp = p.padded_w();
  out.assign(hp * wp, 0.0);
  for (int64_t i = 0; i < hp; ++i) {
    const int64_t r = padded_source(i, p.h, p.ph, p.padding);
    if (r < 0) continue;
    for (int64_t j = 0; j < wp; ++j) {
      const int64_t c = padded_source(j, p.w, p.pw, p.padding);
      if (c >= 0) out[i * wp + j] = double(x[r * p.w + c]);
    }
  }
}
}  // namespace

template <class T>
void direct_pass(const ConvProblem& p, Pass pass, const T* input, const T* weight, const T* grad_output,
                 T* result, int threads) {
  p.validate();
  const int team = plan_threads(threads);
  const int64_t hp = p.padded_h(), wp = p.padded_w(), oh = p.out_h(), ow = p.out_w();
  const int64_t kk = p.kh * p.kw, in_plane = p.h * p.w, out_plane = oh * ow;
  ParallelErrors errors("direct");  // Note [exceptions in parallel regions]
  if (pass == Pass::fprop) {
    // output[s][j] = sum_i xpad[s][i] ⋆ w[j][i]
#pragma omp parallel num_threads(team)
    {
      std::vector<double> xp, acc;
#pragma omp for schedule(dynamic)
      for (int64_t sj = 0; sj < p.S * p.fo; ++sj) errors.run([&] {
        acc.resize(out_plane);
        const int64_t s = sj / p.fo, j = sj % p.fo;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t i = 0; i < p.f; ++i) {
          pad_plane(p, input + (s * p.f + i) * in_plane, xp);
          const T* wk = weight + (j * p.f + i) * kk;
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t x = 0; x < ow; ++x) {
              double a = 0.0;
              for (int64_t u = 0; u < p.kh; ++u)
                for (int64_t v = 0; v < p.kw; ++v) a += xp[(y + u) * wp + (x + v)] * double(wk[u * p.kw + v]);
              acc[y * ow + x] += a;
            }
        }
        T* out = result + sj * out_plane;
        for (int64_t e = 0; e < out_plane; ++e) out[e] = T(acc[e]);
      });
    }
  } else if (pass == Pass::bprop) {
    // gpad[s][i] = sum_j full-correlation of g[s][j] with w[j][i]; gradInput = P^T gpad.
#pragma omp parallel num_threads(team)
    {
      std::vector<double> gp, folded;
#pragma omp for schedule(dynamic)
      for (int64_t si = 0; si < p.S * p.f; ++si) errors.run([&] {
        gp.resize(hp * wp);
        folded.resize(in_plane);
        const int64_t s = si / p.f, i = si % p.f;
        std::fill(gp.begin(), gp.end(), 0.0);
        for (int64_t j = 0; j < p.fo; ++j) {
          const T* g = grad_output + (s * p.fo + j) * out_plane;
          const T* wk = weight + (j * p.f + i) * kk;
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t x = 0; x < ow; ++x) {
              const double gv = double(g[y * ow + x]);
              for (int64_t u = 0; u < p.kh; ++u)
                for (int64_t v = 0; v < p.kw; ++v) gp[(y + u) * wp + (x + v)] += gv * double(wk[u * p.kw + v]);
            }
        }
        fold_padded_plane(gp.data(), wp, folded.data(), p);
        T* out = result + si * in_plane;
        for (int64_t e = 0; e < in_plane; ++e) out[e] = T(folded[e]);
      });
    }
  } else {
    // gradWeight[j][i][u][v] = sum_s sum_{y,x} xpad[s][i][y+u][x+v] * g[s][j][y][x]
#pragma omp parallel num_threads(team)
    {
      std::vector<double> xp, acc;
#pragma omp for schedule(dynamic)
      for (int64_t ji = 0; ji < p.fo * p.f; ++ji) errors.run([&] {
        acc.resize(kk);
        const int64_t j = ji / p.f, i = ji % p.f;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t s = 0; s < p.S; ++s) {
          pad_plane(p, input + (s * p.f + i) * in_plane, xp);
          const T* g = grad_output + (s * p.fo + j) * out_plane;
          for (int64_t u = 0; u < p.kh; ++u)
            for (int64_t v = 0; v < p.kw; ++v) {
              double a = 0.0;
              for (int64_t y = 0; y < oh; ++y)
                for (int64_t x = 0; x < ow; ++x) a += xp[(y + u) * wp + (x + v)] * double(g[y * ow + x]);
              acc[u * p.kw + v] += a;
            }
        }
        T* out = result + ji * kk;
        for (int64_t e = 0; e < kk; ++e) out[e] = T(acc[e]);
      });
    }
  }
  errors.rethrow();
}

template void direct_pass<float>(const ConvProblem&, Pass, const float*, const float*, const float*, float*, int);
template void direct_pass<double>(const ConvProblem&, Pass, const double*, const double*, const double*, double*,
                                  int);

}  // namespace fftconv
