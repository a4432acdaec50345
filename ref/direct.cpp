// Direct convolution in double (see direct.hpp). Loops stay simple on purpose: this is the reference.
// Every option is computed from its definition here, sharing no index map with api/lowering (the
// rewrite it checks) nor with common/padding.hpp. Parallel over independent result planes only,
// so results are deterministic.
#include "ref/direct.hpp"

#include <algorithm>
#include <vector>

#include "ref/parallel.hpp"

namespace fftconv {

namespace {

// The unpadded index that padded coordinate i of an axis of length n with padding p reads, or -1
// for a zero: zero padding, mirror (reflect without repeating the edge), circular (periodic).
int64_t source_index(int64_t i, int64_t n, int64_t p, Padding mode) {
  const int64_t j = i - p;
  if (j >= 0 && j < n) return j;
  switch (mode) {
    case Padding::zero: return -1;
    case Padding::mirror: return j < 0 ? -j : 2 * (n - 1) - j;
    case Padding::circular: return ((j % n) + n) % n;
  }
  return -1;
}

// The padded (h+2ph)×(w+2pw) plane of x as double.
template <class T>
void pad_plane(const ConvProblem& p, const T* x, std::vector<double>& out) {
  const int64_t hp = p.padded_h(), wp = p.padded_w();
  out.assign(hp * wp, 0.0);
  for (int64_t i = 0; i < hp; ++i) {
    const int64_t r = source_index(i, p.h, p.ph, p.padding);
    if (r < 0) continue;
    for (int64_t j = 0; j < wp; ++j) {
      const int64_t c = source_index(j, p.w, p.pw, p.padding);
      if (c >= 0) out[i * wp + j] = double(x[r * p.w + c]);
    }
  }
}

// The adjoint of pad_plane: every padded position adds its value onto the element it was read from.
void unpad_plane(const ConvProblem& p, const std::vector<double>& gpad, std::vector<double>& out) {
  const int64_t hp = p.padded_h(), wp = p.padded_w();
  std::fill(out.begin(), out.end(), 0.0);
  for (int64_t i = 0; i < hp; ++i) {
    const int64_t r = source_index(i, p.h, p.ph, p.padding);
    if (r < 0) continue;
    for (int64_t j = 0; j < wp; ++j) {
      const int64_t c = source_index(j, p.w, p.pw, p.padding);
      if (c >= 0) out[r * p.w + c] += gpad[i * wp + j];
    }
  }
}

}  // namespace

template <class T>
void direct_pass(const ConvProblem& p, Pass pass, const T* input, const T* weight, const T* grad_output,
                 T* result, const T* bias, T* grad_bias, int threads) {
  p.validate();
  const int team = plan_threads(threads);
  ParallelErrors errors("direct");  // Note [exceptions in parallel regions]
  const int64_t wp = p.padded_w(), oh = p.out_h(), ow = p.out_w();
  const int64_t kk = p.kh * p.kw, in_plane = p.h * p.w, out_plane = oh * ow;
  const int64_t fg = p.f / p.g, fog = p.fo / p.g;  // input and output channels per group
  // Padded row of output row y and tap u (and likewise columns).
  auto row = [&](int64_t y, int64_t u) { return y * p.sh + u * p.dh; };
  auto col = [&](int64_t x, int64_t v) { return x * p.sw + v * p.dw; };
  if (pass == Pass::fprop) {
    // output[s][o] = bias[o] + sum over the group's channels c of xpad[s][c] ⋆ w[o][c - group start]
#pragma omp parallel num_threads(team)
    {
      std::vector<double> xp, acc;
#pragma omp for schedule(dynamic)
      for (int64_t so = 0; so < p.S * p.fo; ++so) errors.run([&] {
        acc.resize(out_plane);
        const int64_t s = so / p.fo, o = so % p.fo, c0 = (o / fog) * fg;
        std::fill(acc.begin(), acc.end(), p.bias ? double(bias[o]) : 0.0);
        for (int64_t cl = 0; cl < fg; ++cl) {
          pad_plane(p, input + (s * p.f + c0 + cl) * in_plane, xp);
          const T* wk = weight + (o * fg + cl) * kk;
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t x = 0; x < ow; ++x) {
              double a = 0.0;
              for (int64_t u = 0; u < p.kh; ++u)
                for (int64_t v = 0; v < p.kw; ++v) a += xp[row(y, u) * wp + col(x, v)] * double(wk[u * p.kw + v]);
              acc[y * ow + x] += a;
            }
        }
        T* out = result + so * out_plane;
        for (int64_t e = 0; e < out_plane; ++e) out[e] = T(acc[e]);
      });
    }
  } else if (pass == Pass::bprop) {
    // gpad[s][c] = sum over the group's outputs o of the scatter of g[s][o] through w[o][c - start];
    // gradInput = the adjoint of the padding applied to gpad.
#pragma omp parallel num_threads(team)
    {
      std::vector<double> gp, unpadded;
#pragma omp for schedule(dynamic)
      for (int64_t sc = 0; sc < p.S * p.f; ++sc) errors.run([&] {
        gp.resize(p.padded_h() * wp);
        unpadded.resize(in_plane);
        const int64_t s = sc / p.f, c = sc % p.f, o0 = (c / fg) * fog, cl = c % fg;
        std::fill(gp.begin(), gp.end(), 0.0);
        for (int64_t o = o0; o < o0 + fog; ++o) {
          const T* g = grad_output + (s * p.fo + o) * out_plane;
          const T* wk = weight + (o * fg + cl) * kk;
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t x = 0; x < ow; ++x) {
              const double gv = double(g[y * ow + x]);
              for (int64_t u = 0; u < p.kh; ++u)
                for (int64_t v = 0; v < p.kw; ++v) gp[row(y, u) * wp + col(x, v)] += gv * double(wk[u * p.kw + v]);
            }
        }
        unpad_plane(p, gp, unpadded);
        T* out = result + sc * in_plane;
        for (int64_t e = 0; e < in_plane; ++e) out[e] = T(unpadded[e]);
      });
    }
  } else {
    // gradWeight[o][cl][u][v] = sum_s sum_{y,x} xpad[s][start+cl][row(y,u)][col(x,v)] * g[s][o][y][x]
#pragma omp parallel num_threads(team)
    {
      std::vector<double> xp, acc;
#pragma omp for schedule(dynamic)
      for (int64_t ocl = 0; ocl < p.fo * fg; ++ocl) errors.run([&] {
        acc.resize(kk);
        const int64_t o = ocl / fg, cl = ocl % fg, c = (o / fog) * fg + cl;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t s = 0; s < p.S; ++s) {
          pad_plane(p, input + (s * p.f + c) * in_plane, xp);
          const T* g = grad_output + (s * p.fo + o) * out_plane;
          for (int64_t u = 0; u < p.kh; ++u)
            for (int64_t v = 0; v < p.kw; ++v) {
              double a = 0.0;
              for (int64_t y = 0; y < oh; ++y)
                for (int64_t x = 0; x < ow; ++x) a += xp[row(y, u) * wp + col(x, v)] * double(g[y * ow + x]);
              acc[u * p.kw + v] += a;
            }
        }
        T* out = result + ocl * kk;
        for (int64_t e = 0; e < kk; ++e) out[e] = T(acc[e]);
      });
    }
    if (p.bias && grad_bias) {
#pragma omp parallel for schedule(static) num_threads(team)
      for (int64_t o = 0; o < p.fo; ++o) {
        double a = 0.0;
        for (int64_t s = 0; s < p.S; ++s) {
          const T* g = grad_output + (s * p.fo + o) * out_plane;
          for (int64_t e = 0; e < out_plane; ++e) a += double(g[e]);
        }
        grad_bias[o] = T(a);
      }
    }
  }
  errors.rethrow();
}

template void direct_pass<float>(const ConvProblem&, Pass, const float*, const float*, const float*, float*,
                                 const float*, float*, int);
template void direct_pass<double>(const ConvProblem&, Pass, const double*, const double*, const double*, double*,
                                  const double*, double*, int);

}  // namespace fftconv
