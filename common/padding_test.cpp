// Tests of the padding index maps and the adjoint fold.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "common/padding.hpp"

using namespace fftconv;

TEST_CASE("mirror reflects without repeating the edge") {
  // n = 4, p = 2: padded index 0..7 -> 2 1 0 1 2 3 2 1
  const int64_t expect[] = {2, 1, 0, 1, 2, 3, 2, 1};
  for (int i = 0; i < 8; ++i) CHECK(padded_source(i, 4, 2, Padding::mirror) == expect[i]);
  CHECK(padded_source(0, 4, 2, Padding::zero) == -1);
  CHECK(padded_source(3, 4, 2, Padding::zero) == 1);
}

TEST_CASE("fold_padded_plane is the adjoint of padding") {
  std::mt19937 rng(3);
  std::normal_distribution<double> nd;
  for (Padding mode : {Padding::zero, Padding::mirror}) {
    ConvProblem p;
    p.h = 5; p.w = 7; p.ph = 3; p.pw = 2; p.padding = mode;
    const int64_t hp = p.padded_h(), wp = p.padded_w();
    std::vector<double> x(p.h * p.w), g(hp * wp), gx(p.h * p.w);
    for (auto& v : x) v = nd(rng);
    for (auto& v : g) v = nd(rng);
    double lhs = 0;  // <P x, g>
    for (int64_t i = 0; i < hp; ++i)
      for (int64_t j = 0; j < wp; ++j) {
        int64_t r = padded_source(i, p.h, p.ph, mode), c = padded_source(j, p.w, p.pw, mode);
        if (r >= 0 && c >= 0) lhs += x[r * p.w + c] * g[i * wp + j];
      }
    fold_padded_plane(g.data(), wp, gx.data(), p);
    double rhs = 0;  // <x, P^T g>
    for (int64_t i = 0; i < p.h * p.w; ++i) rhs += x[i] * gx[i];
    CHECK(lhs == doctest::Approx(rhs).epsilon(1e-12));
  }
}

TEST_CASE("padded_positions lists every padded coordinate of a source exactly once") {
  for (Padding mode : {Padding::zero, Padding::mirror})
    for (int64_t n = 1; n <= 9; ++n)
      for (int64_t p = 0; p <= (mode == Padding::mirror ? n - 1 : 4); ++p) {
        std::vector<int> seen(std::size_t(n + 2 * p), 0);
        for (int64_t r = 0; r < n; ++r) {
          int64_t pos[3];
          const int k = padded_positions(r, n, p, mode, pos);
          CHECK(k >= 1);
          for (int j = 0; j < k; ++j) {
            CHECK(padded_source(pos[j], n, p, mode) == r);
            ++seen[std::size_t(pos[j])];
          }
        }
        for (int64_t y = 0; y < n + 2 * p; ++y)  // zeros (source -1) are nobody's position
          CHECK(seen[std::size_t(y)] == (padded_source(y, n, p, mode) >= 0 ? 1 : 0));
      }
}
