// The `fbfft` convolution backend: paper Table 1 with fbfft transforms (gpu/fft/fbfft.hpp) that read
// the unpadded tensors in place and write the frequency-major layout the cuBLAS CGEMM reads, untiled on
// a power-of-two or smooth square basis, or on the shared planner's tiles (plan: fbfft_conv_plan.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "gpu/backends.hpp"
#include "gpu/runtime/cuda_check.hpp"
#include "gpu/fft/fbfft.hpp"
#include "gpu/fbfft/fbfft_conv_plan.hpp"
#include "gpu/fbfft/fbfft_depthwise.hpp"
#include "gpu/tiles/device_tiles.hpp"
#include "gpu/tiles/measured_tile.hpp"
#include "tiling/planner.hpp"

namespace fftconv {
namespace {

// Note [fbfft smooth tiles]
// Tile bases run on the register and four-step kernels only: powers of two (square or not) and, with
// tile_sizes=smooth, the smooth squares of kSmoothSides2d (never a Stockham rectangle, Note
// [stockham bases]). A large kernel wastes most of a power-of-two tile on its halo (k = 45 leaves 20
// outputs of a 64 tile, 52 of a 96 one), so the smooth policy offers the squares up to 120 besides
// the powers of two up to 128. The model ranks smooth tiles by their frequencies, which overrates them
// above 32 (their transforms run at about half the power-of-two kernels' bandwidth), so the measured
// choice also times the tiles the power-of-two policy times: the smooth policy keeps another tile only
// where it measured faster. (H100, big_k45 fprop: 64x64 0.43 ms, 96x96 0.30 ms.)
bool tile_side_ok(int64_t n) {
  return n >= 2 && n <= fbfft::kMaxSide2d && (is_pow2(n) || fbfft_smooth_side(n));
}
bool has_kernel(const Candidate& k) {
  if (!tile_side_ok(k.fft_h) || !tile_side_ok(k.fft_w)) return false;
  if (k.fft_h != k.fft_w && !(is_pow2(k.fft_h) && is_pow2(k.fft_w))) return false;  // smooth: squares only
  return fbfft::supported(int(k.fft_h), int(k.fft_w), fbfft::Kernel::automatic, fbfft::Layout::freq_major);
}
// A tile the power-of-two policy offers (sides 8..kLargestPolicyTile).
bool policy_pow2_tile(const Candidate& k) {
  return has_kernel(k) && is_pow2(k.fft_h) && is_pow2(k.fft_w) && k.fft_h <= kLargestPolicyTile &&
         k.fft_w <= kLargestPolicyTile;
}
// The smooth policy's tile sides: every power of two 8..128 and every smooth side of kSmoothSides2d >= 8.
std::vector<int64_t> smooth_tile_sides() {
  std::vector<int64_t> v;
  for (int64_t n = 8; n <= fbfft::kMaxSide2d; ++n)
    if (tile_side_ok(n)) v.push_back(n);
  return v;
}

class FbfftBackend final : public Backend {
 public:
  std::string_view name() const override { return "fbfft"; }
  Location location() const override { return Location::cuda; }
  std::string_view summary() const override {
    return "CUDA: warp-shuffle and register FFTs of power-of-two sizes and smooth squares 6..120, Stockham FFTs of "
           "every other 7-smooth size, with implicit padding + cuBLAS CGEMM on their frequency-major output (paper "
           "Table 1, no transpositions); untiled up to 128x128 or tiled 8..128; depthwise layers in one fused "
           "kernel per pass";
  }

  Support available() const override { return cuda_device_support(); }

  Support supports(const ConvProblem& p, Pass, DType dtype) const override {
    if (dtype != DType::f32) return {false, "fbfft computes in fp32 only (dtype=f64 requested)"};
    if (fbfft_conv::depthwise_support(p).ok) return {};  // Note [fused depthwise transforms]
    if (Support s = dense_problem_support(p); !s.ok) return s;
    fbfft_conv::Basis basis;
    const Support untiled = fbfft_conv::untiled_basis(p, 0, 0, basis);
    // Without an untiled kernel, a tiled plan runs it when a tile basis (up to 128) holds the kernel:
    // tile=auto (or a fixed tile) plans it, tile=none says why not.
    if (untiled.ok || (p.kh <= fbfft::kMaxSide2d && p.kw <= fbfft::kMaxSide2d)) return {};
    return {false, untiled.reason + "; no tile basis holds the " + std::to_string(p.kh) + "x" + std::to_string(p.kw) +
                       " kernel either (tiles up to " + std::to_string(fbfft::kMaxSide2d) + ")"};
  }

  std::vector<std::string_view> option_keys() const override { return fbfft_conv::option_keys(); }

  std::unique_ptr<Plan> plan(const ConvProblem& p, Pass pass, const PlanOptions& opts) const override {
    const bool depthwise = fbfft_conv::depthwise_support(p).ok;
    if (!depthwise) require_dense(p, "fbfft");
    (void)fbfft_conv::Options::parse(opts.extra);  // before the device: a wrong option is an error anywhere
    const std::string what = "fbfft: cannot plan " + std::string(to_string(pass)) + " for " + p.to_string();
    if (opts.dtype != DType::f32) throw Unsupported(what + ": fp32 only (dtype=f64 requested)");
    if (Support s = available(); !s.ok) throw Unsupported(what + ": " + s.reason);
    if (depthwise) return fbfft_conv::make_depthwise_plan(p, pass, opts);  // Note [fused depthwise transforms]
    if (opts.tile.kind == TileSpec::Kind::none) return plan_untiled(p, pass, opts, what);
    return plan_tiled(p, pass, opts, what);
  }

 private:
  // Untiled: the pinned basis, else the power-of-two one; with autotune, when a smooth square basis
  // holds the padded input with fewer frequencies (Note [smooth register FFT]), or a Stockham
  // rectangle with half as many or fewer (Note [stockham bases]), they are built and timed and the fastest runs.
  static std::unique_ptr<Plan> plan_untiled(const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                            const std::string& what) {
    fbfft_conv::Basis basis, smooth, rect;
    if (Support s = fbfft_conv::untiled_basis(p, opts.basis_h, opts.basis_w, basis); !s.ok)
      throw Unsupported(what + ": " + s.reason);
    auto make = [=](const fbfft_conv::Basis& b) { return fbfft_conv::make_untiled_conv_plan(p, pass, opts, b, ""); };
    if (!opts.autotune || opts.basis_h > 0 || opts.basis_w > 0) return make(basis);
    const bool has_smooth = fbfft_conv::smooth_basis(p, basis, smooth);
    const bool has_rect = fbfft_conv::stockham_basis(p, basis, has_smooth ? &smooth : nullptr, rect);
    if (!has_smooth && !has_rect) return make(basis);
    const auto label = [](const fbfft_conv::Basis& b) { return std::to_string(b.n_h) + "x" + std::to_string(b.n_w); };
    std::vector<PlanCandidate> cands{{label(basis), [=] { return make(basis); }}};
    if (has_smooth) cands.push_back({label(smooth), [=] { return make(smooth); }});
    if (has_rect) cands.push_back({label(rect), [=] { return make(rect); }});
    return fastest_plan("fbfft", p, pass, opts, std::move(cands), [=] { return make(basis); }, "basis");
  }

  // tile=auto or a fixed tile, through the shared planner restricted to what fbfft can run:
  // power-of-two tile sides, or smooth squares with tile_sizes=smooth (Note [fbfft smooth tiles]),
  // with a kernel, and accgrad's frequency reduction.
  std::unique_ptr<Plan> plan_tiled(const ConvProblem& p, Pass pass, const PlanOptions& opts,
                                   const std::string& what) const {
    PlanOptions o = frequency_reduction_only(opts, "fbfft");
    const bool smooth = o.tile_sizes == SizePolicy::smooth;
    o.tile_sizes = SizePolicy::pow2;
    if (!o.tile_candidates.empty()) {
      std::vector<int64_t> keep;
      for (int64_t n : o.tile_candidates)
        if (tile_side_ok(n)) keep.push_back(n);
      if (keep.empty())
        throw Unsupported(what + ": none of tile_candidates is a power of two or a side of fbfft's smooth squares (" +
                          "kSmoothSides2d) in 2..128");
      o.tile_candidates = keep;
    } else if (smooth) {
      o.tile_candidates = smooth_tile_sides();
    }
    Candidate fixed;
    fixed.fft_h = o.tile.fft_h;
    fixed.fft_w = o.tile.fft_w;
    if (o.tile.kind == TileSpec::Kind::fixed && !has_kernel(fixed))
      throw Unsupported(what + ": tile " + o.tile.to_string() +
                        " has no fbfft tile kernel (powers of two with a kernel, or a square of a smooth side 6..120)");
    const TilingChoice c = plan_tiling(p, pass, o);
    if (o.tile.kind == TileSpec::Kind::automatic && o.autotune) {  // Note [measured tile choice]
      std::vector<PlanCandidate> cands;
      fbfft_conv::Basis basis;
      if (fbfft_conv::untiled_basis(p, o.basis_h, o.basis_w, basis).ok)
        cands.push_back({"none", [=] { return plan_untiled(p, pass, o, what); }});  // its basis: its describe()
      std::vector<const Candidate*> tiles = cheapest_tiled(c, has_kernel);
      if (smooth)  // and the tiles the pow2 policy times (Note [fbfft smooth tiles])
        for (const Candidate* k : cheapest_tiled(c, policy_pow2_tile))
          if (std::find(tiles.begin(), tiles.end(), k) == tiles.end()) tiles.push_back(k);
      for (const Candidate* k : tiles) {
        const TilePlan tp = device_tile_plan(p, pass, *k, o);
        cands.push_back({k->label(), [=] { return fbfft_conv::make_tiled_conv_plan(p, pass, o, tp, ""); }});
      }
      return fastest_plan("fbfft", p, pass, o, std::move(cands), [&] { return planner_choice(p, pass, o, c, what); });
    }
    return planner_choice(p, pass, o, c, what);
  }

  // The plan of the planner's choice `c`, restricted to what fbfft runs.
  std::unique_ptr<Plan> planner_choice(const ConvProblem& p, Pass pass, const PlanOptions& o, const TilingChoice& c,
                                       const std::string& what) const {
    if (c.plan.tiled)
      return fbfft_conv::make_tiled_conv_plan(p, pass, o, device_in_flight(c.plan, o), "planner: " + c.reason);
    // The planner preferred no tiling: run untiled when fbfft has the basis, else the cheapest
    // feasible tile basis it has a kernel for.
    fbfft_conv::Basis basis;
    const Support untiled = fbfft_conv::untiled_basis(p, o.basis_h, o.basis_w, basis);
    if (untiled.ok) return fbfft_conv::make_untiled_conv_plan(p, pass, o, basis, "planner: " + c.reason);
    const std::vector<const Candidate*> tiles = cheapest_tiled(c, has_kernel);
    if (tiles.empty()) throw Unsupported(what + ": " + untiled.reason + ", and no feasible tile basis has an fbfft kernel");
    return fbfft_conv::make_tiled_conv_plan(p, pass, o, device_tile_plan(p, pass, *tiles.front(), o),
                                            "planner preferred untiled, but " + untiled.reason +
                                                "; cheapest tile with a kernel");
  }
};

}  // namespace

std::shared_ptr<const Backend> make_fbfft_backend() { return std::make_shared<const FbfftBackend>(); }

}  // namespace fftconv
