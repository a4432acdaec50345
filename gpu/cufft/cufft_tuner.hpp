// Choosing a cufft configuration (paper Sections 3.2-3.4): Fourier basis per dimension among the
// smooth sizes up to the next power of two (prime factors up to 13 by default: cuFFT has radix-11
// and radix-13 kernels, and the exact 13-point basis of L5 saves 19% of the products; the paper's
// 2,3,5,7-smooth space with extra["max_prime"]="7"), CGEMM strategy, and a batch chunk that keeps
// the workspace under PlanOptions::workspace_limit — by hand (pins), from the tune cache, by timing
// candidates (autotune), or by a heuristic (autotune off).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/backend.hpp"
#include "gpu/cufft/cufft_pipeline.hpp"

namespace fftconv {

// Largest prime factor of the bases the tuner and the heuristic consider (2, 3, 5, 7, 11 or 13).
inline constexpr int64_t kDefaultMaxPrime = 13;

// Choices pinned through PlanOptions (basis_h/basis_w, extra["gemm"], ["layout"], ["edges"], ["weights"], ["max_prime"],
// ["naive"]).
struct CufftPins {
  int64_t nh = 0, nw = 0;  // 0 = choose
  std::optional<GemmStrategy> gemm;
  std::optional<SpectrumLayout> layout;
  std::optional<EdgeMode> edges;  // extra["edges"]
  std::optional<WeightTransform> weights;  // extra["weights"]
  int64_t max_prime = kDefaultMaxPrime;  // extra["max_prime"]: largest prime factor of a chosen basis
  std::optional<ProductMath> math;        // PlanOptions::math unless automatic
  bool naive = false;      // extra["naive"]="1": the naive pipeline of the benchmark
  // A tiled plan of the shared planner (PlanOptions::tile): the basis is the tile's, the chunks hold
  // at most its tiles_in_flight items, and basis_h/basis_w are not used.
  std::optional<TilePlan> tiles;
};
// The cufft backend's option keys: gemm, layout, edges, weights, max_prime, naive and the tiling
// planner's.
const std::vector<std::string_view>& cufft_option_keys();
// Validates the options against the problem; throws InvalidArgument naming the option, or naming
// cufft and its keys for a key not in cufft_option_keys(). Needs no device.
CufftPins read_cufft_pins(const ConvProblem& p, const PlanOptions& opts);

struct CufftChoice {
  std::unique_ptr<CufftPipeline> pipeline;  // the winner, plans made, no memory attached
  std::string why;                          // for describe()
};

// The plan's configuration. Throws Unsupported (with the smallest requirement) when no candidate
// fits the workspace limit, OutOfMemory when tuning buffers cannot be allocated.
CufftChoice choose_cufft_config(const ConvProblem& p, Pass pass, const PlanOptions& opts, const CufftPins& pins);

// The naive configuration: next_pow2 basis, one cublasCgemm per frequency, largest chunk in the limit.
CufftChoice naive_cufft_config(const ConvProblem& p, Pass pass, const PlanOptions& opts);

// Relative l2 difference accepted for cublasCgemm3m and the 3xtf32 products against the standard
// CGEMM on the tuning run.
inline constexpr double kGemm3mTolerance = 1e-5;

// The autotuner times the callback variants (edges=callback, layout=gather) only when the best
// pipeline so far takes at least this long: linking callbacks costs tens to hundreds of milliseconds
// per cuFFT plan (Note [cufft callbacks]), and below it they can save a few microseconds at most.
inline constexpr double kCallbackMinMs = 0.05;
// A candidate whose first timed run takes more than this multiple of the best so far is timed no
// further: its minimum would have to halve. On L1 the one-CGEMM-per-frequency strategy runs about
// 100 ms against 2.7 ms; with the cutoff a cufft plan of L1's fprop, tuning included, took 0.92-0.98 s
// instead of 1.29-1.30 s (H200).
inline constexpr double kTuningCutoff = 2.0;
// The one-CGEMM-per-frequency strategy (gemm=loop) makes one cuBLAS launch per frequency and chunk,
// each at least this long on the host; the autotuner does not time it when that floor alone exceeds
// the cutoff. On L1 it ran at 12 us per launch (8,320 frequencies, about 100 ms against 2.7 ms
// strided, H200); a 2079x2080 basis has 2.16 million frequencies, and img2048_k31's accGrad in
// 64x64 tiles 2,112 frequencies in each of 10 chunks (370 ms against 4.7 ms).
inline constexpr double kLoopLaunchFloorMs = 0.002;
// Note [tuning bound]
// `auto` plans its candidates with the cheap tuners first (fbfft's) and times each plan once as soon
// as it is built; the fastest time so far goes to the next candidates as PlanOptions::tune_bound_ms.
// The cufft autotuner, whose callback variants link cuFFT kernels plan by plan, stops where its
// best cannot come near that bound: in or after the bases once its best is above kTuneBoundFactor
// times the bound, after the CGEMM strategies once it is above kTuneBoundLateFactor times it. The
// factors sit above what the later stages ever gained over 298 tunings in bench/results/h100 and
// validation/results/h100 (2.63x after the bases, 1.78x after the CGEMMs). A stopped tuning returns
// its best so far, says so in its description and is not written to the tune cache, so a later
// plan of cufft alone tunes in full. Invariant: a bound only shortens the tuning of a candidate
// that `auto` will not choose. On L1's fprop the bound cut auto's tuning from 1.9 to 0.49 s (H200).
inline constexpr double kTuneBoundFactor = 3.0;
inline constexpr double kTuneBoundLateFactor = 2.0;
// The direct layout with callbacks is not timed once the winner so far, with callbacks, takes at
// least this long: over the 121 tunings in bench/results/h100 and validation/results/h100 that timed
// it, it never won above 0.25 ms (36 of them, 1.38x the best at least), and on the H200 it ran 1.7-2.4x
// the best at 0.30-0.91 ms (odd_rect, large_21, big_k45, L2), linking two more cuFFT plans each time.
inline constexpr double kDirectCallbackMaxMs = 0.25;
// How many of the fastest bases (timed with copies) are timed again with callbacks.
inline constexpr std::size_t kCallbackBases = 3;
// Note [tuning budget]
// `auto` gives its tuning of one (problem, pass) a deadline (PlanOptions::tune_deadline,
// kAutoTuneBudgetMs after it began). The cufft autotuner always times its first basis; after that
// it times a candidate only when the wall time of the last one of its kind, building and linking
// included, still ends before the deadline. Before the first callback variant that cost is
// kCallbackPlanMs: linking LTO callbacks into cuFFT's kernels took 0.5-0.6 s a variant on odd_rect,
// large_21 and big_k45 (H200). A tuning cut short returns its best so far, names each candidate it
// left out, and is cached under its own key, which only a planner with a deadline looks up: `auto`'s
// later calls reuse it, and a plan of cufft alone still tunes in full. Invariant: a deadline leaves
// out later candidates only, never the first basis, so every tuning yields a plan.
inline constexpr double kCallbackPlanMs = 500.0;

}  // namespace fftconv
