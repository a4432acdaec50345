// The plan of the fbfft convolution backend: paper Table 1 with fbfft transforms that read the
// unpadded tensors in place (implicit zero padding) and write the frequency-major layout that a
// strided-batched cuBLAS CGEMM consumes directly, untiled or on the shared planner's tiles.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/backend.hpp"
#include "gpu/fft/fbfft.hpp"
#include "tiling/tile_plan.hpp"

namespace fftconv::fbfft_conv {

// The backend's options (PlanOptions::extra), for experiments: kernel pins the transforms' family
// (auto, shuffle, registers, lanes, fourstep); window=off turns the pruned small-window transforms
// off (auto: tuned); fork=auto|on|off (Note [forked transforms]); launch=plain launches the
// transforms without programmatic dependent launch (default dependent, Note [dependent launch]);
// fused=on runs a tiled fprop as one fused kernel (Note [fused tiles]; Unsupported where it cannot),
// auto wherever it can, off (the default) as transforms, CGEMM and inverse; products=smallk runs an
// untiled pass's products of few input channels as the small-K kernels beside standard-layout
// transforms (Note [small-K products]; Unsupported where it cannot), gemm keeps the CGEMM, auto (the
// default) times both where the kernel can.
enum class Fork { automatic, on, off };
enum class Fused { automatic, on, off };
enum class Products { automatic, gemm, smallk };
struct Options {
  fbfft::Kernel kernel = fbfft::Kernel::automatic;
  bool windows = true;
  Fork fork = Fork::automatic;
  bool dependent = true;
  Fused fused = Fused::off;
  Products products = Products::automatic;
  // Throws InvalidArgument naming the key for a bad value, or naming fbfft and option_keys() for a
  // key not among them. Needs no device.
  static Options parse(const std::map<std::string, std::string>& extra);
};
// kernel, window, fork, launch, fused, products and the tiling planner's keys.
const std::vector<std::string_view>& option_keys();

// The Fourier basis of an untiled plan: powers of two, a smooth square (fbfft::kSmoothSides2d), or
// any other 7-smooth rectangle (the Stockham kernels).
struct Basis {
  int n_h = 0, n_w = 0;
  std::string note;  // how it was chosen
};

// The untiled basis for p: the pinned sides when > 0 (>= the padded input, with an fbfft kernel:
// 7-smooth sides), else max(2, next_pow2(padded)) per side,
// widened to 128×128 when one side exceeds 64 (fbfft has 2-D kernels for sides 2..64 and for
// 128×128). ok = false with the reason when no kernel fits.
Support untiled_basis(const ConvProblem& p, int64_t pin_h, int64_t pin_w, Basis& out);

// The smallest smooth square basis (fbfft::kSmoothSides2d) that holds p's padded input when it has
// fewer frequencies than `pow2`, the unpinned basis untiled_basis() gave for p (Note [smooth register
// FFT]: fewer CGEMM frequencies); false when there is none.
bool smooth_basis(const ConvProblem& p, const Basis& pow2, Basis& out);

// The rectangle of the smallest 7-smooth sides that hold p's padded input, when it has at most half
// the frequencies of `pow2` and of `square` (the smooth square, or null) and differs from both
// (Note [stockham bases]); false otherwise.
bool stockham_basis(const ConvProblem& p, const Basis& pow2, const Basis* square, Basis& out);

// An untiled plan on `basis` (from untiled_basis). `why` is appended to describe().
std::unique_ptr<Plan> make_untiled_conv_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                             const Basis& basis, std::string why);

// A plan running the tiles of `tp` (tp.tiled, fbfft::supported(fft_h, fft_w), accgrad with the
// frequency reduction), at most tp.tiles_in_flight items at once (fewer when the workspace limit
// requires it); with extra["fused"] an fprop on 16x16 or 32x32 tiles in one kernel (Note [fused
// tiles]), where fused_tiles_support() allows it.
std::unique_ptr<Plan> make_tiled_conv_plan(const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                           const TilePlan& tp, std::string why);

// Whether the fused tiled fprop (Note [fused tiles]) runs p's pass on `tp` (null: untiled), and why not:
// fprop only, tiled, zero padding, a square 16x16 or 32x32 tile basis, f within the shared-memory
// budget (fbfft::fused_tiles_unsupported). Needs no device.
Support fused_tiles_support(const ConvProblem& p, Pass pass, const TilePlan* tp);

}  // namespace fftconv::fbfft_conv
