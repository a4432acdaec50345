// Random dense problems for the planner's property tests (tiling/, gpu/tiles/): up to 200×200
// planes, zero or mirror padding up to 8, kernels up to 40 per side. Tests only; not installed.
#pragma once
#include <algorithm>
#include <random>

#include "common/problem.hpp"

namespace fftconv::testing {

inline ConvProblem random_tiling_problem(std::mt19937& rng) {
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ConvProblem p;
  p.S = uni(1, 8), p.f = uni(1, 16), p.fo = uni(1, 16);
  p.h = uni(1, 200), p.w = uni(1, 200);
  p.padding = uni(0, 1) ? Padding::mirror : Padding::zero;
  p.ph = uni(0, std::min<int64_t>(p.padding == Padding::mirror ? p.h - 1 : 8, 8));
  p.pw = uni(0, std::min<int64_t>(p.padding == Padding::mirror ? p.w - 1 : 8, 8));
  p.kh = uni(1, std::min<int64_t>(p.padded_h(), 40));
  p.kw = uni(1, std::min<int64_t>(p.padded_w(), 40));
  return p;
}

inline Pass random_pass(std::mt19937& rng) { return Pass(std::uniform_int_distribution<int>(0, 2)(rng)); }

}  // namespace fftconv::testing
