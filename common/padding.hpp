// Index maps of the two padding modes, shared by every backend so that all of them
// pad (fprop, accgrad) and un-pad (bprop's adjoint) the same way.
#pragma once
#include <cstdint>

#include "common/problem.hpp"

namespace fftconv {

// Source row/column of padded coordinate i (0 <= i < n + 2p) in an unpadded axis of length n,
// or -1 when it reads a zero. Mirror = reflect without repeating the edge: -1 -> 1, n -> n-2;
// circular = periodic: -1 -> n-1, n -> 0 (p <= n, ConvProblem::validate).
constexpr int64_t padded_source(int64_t i, int64_t n, int64_t p, Padding mode) {
  int64_t j = i - p;
  if (j >= 0 && j < n) return j;
  if (mode == Padding::zero) return -1;
  if (mode == Padding::circular) return j < 0 ? j + n : j - n;
  if (j < 0) j = -j;
  if (j >= n) j = 2 * (n - 1) - j;
  return j;
}

// The distinct padded coordinates y in [0, n+2p) with padded_source(y, n, p, mode) == r, in a fixed
// order, each passed once to visit(y) (1 for zero padding or inside; up to 3 for mirror and circular).
// With mirror padding p < n (ConvProblem::validate), so a coordinate reflects at most once and the
// candidates are r+p (inside), p-r (reflected at the start) and p+2(n-1)-r (reflected at the end);
// circular padding (p <= n) wraps at most once: r+p, r+p-n, r+p+n. A candidate equal to an earlier
// one is either the same accepted coordinate or equally rejected, so comparing values removes the
// duplicates without a list: device code keeps everything in registers.
// constexpr so that device code uses it too (nvcc --expt-relaxed-constexpr).
template <class Visit>
constexpr void for_each_padded_position(int64_t r, int64_t n, int64_t p, Padding mode, Visit&& visit) {
  const auto ok = [&](int64_t y) { return y >= 0 && y < n + 2 * p && padded_source(y, n, p, mode) == r; };
  const int64_t c0 = r + p;
  if (ok(c0)) visit(c0);
  if (mode == Padding::zero) return;
  const int64_t c1 = mode == Padding::circular ? r + p - n : p - r;
  const int64_t c2 = mode == Padding::circular ? r + p + n : p + 2 * (n - 1) - r;
  if (c1 != c0 && ok(c1)) visit(c1);
  if (c2 != c0 && c2 != c1 && ok(c2)) visit(c2);
}

// The same coordinates written to out; returns how many.
constexpr int padded_positions(int64_t r, int64_t n, int64_t p, Padding mode, int64_t out[3]) {
  int k = 0;
  for_each_padded_position(r, n, p, mode, [&](int64_t y) { out[k++] = y; });
  return k;
}

// Note [bprop padding adjoint]
// fprop reads x_pad = P x, where P copies (zero) or copies and reflects (mirror).
// bprop must return P^T g_pad: for zero padding, the crop of the full correlation to the
// unpadded window; for mirror padding, additionally every padded position adds its value
// onto the source it was reflected from (PyTorch's reflection_pad backward does the same).
// Every backend computes g_pad on the padded (h+2ph)×(w+2pw) grid, then applies
// fold_padded_plane below (or the same map inside its own kernels).

// out[r][c] (h×w) = sum of in[i][j] ((h+2ph)×(w+2pw), row stride in_ld) over padded
// positions (i, j) whose source is (r, c). Overwrites out.
template <class Tin, class Tout>
void fold_padded_plane(const Tin* in, int64_t in_ld, Tout* out, const ConvProblem& p) {
  const int64_t hp = p.padded_h(), wp = p.padded_w();
  for (int64_t r = 0; r < p.h; ++r)
    for (int64_t c = 0; c < p.w; ++c) out[r * p.w + c] = Tout(in[(r + p.ph) * in_ld + (c + p.pw)]);
  if (p.padding == Padding::zero) return;
  for (int64_t i = 0; i < hp; ++i) {
    const int64_t r = padded_source(i, p.h, p.ph, p.padding);
    const bool row_inside = (i >= p.ph && i < p.ph + p.h);
    for (int64_t j = 0; j < wp; ++j) {
      if (row_inside && j >= p.pw && j < p.pw + p.w) continue;  // already copied
      const int64_t c = padded_source(j, p.w, p.pw, p.padding);
      out[r * p.w + c] += Tout(in[i * in_ld + j]);
    }
  }
}

}  // namespace fftconv
