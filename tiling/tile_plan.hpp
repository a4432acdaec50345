// TilePlan: the geometry of one pass split into small convolutions by overlap-save (fprop, bprop)
// or by the reduction form (accgrad), shared by every backend (see Note [tile geometry]).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/problem.hpp"

namespace fftconv {

// The largest tile side the planner's policies propose (pow2 and smooth sizes in [8, 64]).
inline constexpr int64_t kLargestPolicyTile = 64;

// Half-open rectangle [y0, y0+h) × [x0, x0+w) in the coordinates named where it is used.
struct Window {
  int64_t y0 = 0, x0 = 0, h = 0, w = 0;
  int64_t area() const { return h * w; }
  bool empty() const { return h <= 0 || w <= 0; }
  bool contains(const Window& o) const {
    return o.y0 >= y0 && o.x0 >= x0 && o.y0 + o.h <= y0 + h && o.x0 + o.w <= x0 + w;
  }
  bool operator==(const Window&) const = default;
};

// accgrad only: where the sum over tiles is taken (Note [accGrad tile reduction]).
enum class AccgradReduction { frequency, time };
std::string_view to_string(AccgradReduction r);
AccgradReduction parse_accgrad_reduction(std::string_view s);  // "frequency" | "time"

// bprop only: how tile results on the padded grid reach gradInput (Note [bprop tile fold]).
enum class BpropAssembly { crop_store, fold_accumulate };
std::string_view to_string(BpropAssembly a);

// One axis of the tile grid: `count` tiles of step `step` = fft - kernel + 1 covering
// [origin, origin + extent) of the tiled grid; the last (remainder) tile may be shorter.
struct AxisTiling {
  int64_t origin = 0, extent = 0;  // the covered range of the tiled grid (see TilePlan::region)
  int64_t fft = 0;                 // Fourier basis length of a tile
  int64_t kernel = 0;              // kh or kw
  int64_t step = 0;                // fft - kernel + 1: the output tile length
  int64_t count = 0;               // ceil(extent / step)
  int64_t start(int64_t t) const { return origin + t * step; }
  int64_t length(int64_t t) const { return t + 1 < count ? step : extent - t * step; }
};

// One tile. Buffers are fft_h×fft_w real planes; see Note [tile geometry] for each pass.
struct Tile {
  int64_t index = 0, row = 0, col = 0;  // index = row * cols.count + col
  // fprop: output window; bprop: window of the padded-grid gradInput g_pad (hp×wp);
  // accgrad: the gradOutput tile (the reduction's second operand, placed at buffer offset 0).
  Window window;
  // The window of the transformed operand, (window.h + kh - 1)×(window.w + kw - 1), placed at
  // buffer offset (0, 0): fprop/accgrad: padded-input coordinates, always inside [0,hp)×[0,wp);
  // bprop: gradOutput coordinates, starting at window - (kh-1, kw-1), may run outside gradOutput.
  Window read;
  // read ∩ the source grid (the part with data); the rest of the buffer is zero. It lands at
  // buffer offset (read_valid.y0 - read.y0, read_valid.x0 - read.x0). Equal to `read` for fprop/accgrad.
  Window read_valid;
  // fprop/accgrad: `read` touches the padding ring, so the backend fills it through
  // padded_source() (zero or mirror) instead of a plain copy. bprop: read_valid != read.
  bool border = false;
  // The part of the tile's inverse transform that holds the result, in buffer coordinates:
  // fprop [0, window.h)×[0, window.w); bprop [kh-1, kh-1+window.h)×[kw-1, ...); accgrad [0,kh)×[0,kw).
  Window keep;
};

// Cost-model figures of one candidate (see tiling/planner.hpp).
struct TileCost {
  double transforms = 0;        // forward + inverse 2-D transforms (planes)
  double transform_flops = 0;   // forward + inverse rfft2 flops (common/fft_size.hpp)
  double pointwise_flops = 0;   // 8·M·N·K per frequency (complex multiply-adds)
  double extra_flops = 0;       // time-domain sums (accgrad, time reduction)
  double traffic_bytes = 0;     // gathers, frequency buffers written and read, scatters
  double frequency_bytes = 0;   // bytes of complex frequency buffers in the workspace
  double workspace_bytes = 0;   // all scratch of a plan run (frequency + real staging)
  double overlap_waste = 0;     // (sum of read areas - source area) / source area: halo re-reads
  double padding_waste = 0;     // fraction of transformed samples that are zero padding
  double uncached_fraction = 0; // of the workspace beyond the cache budget (Note [cost model])
  double cost = 0;              // flops + traffic · per-byte charge (Note [cost model])
  // The charged parts of cost (cost = transform_cost + pointwise_cost + extra_flops + traffic_cost):
  double transform_cost = 0;    // transform flops + the fixed charge per transform
  double pointwise_cost = 0;    // weighted CGEMM flops
  double traffic_cost = 0;      // traffic bytes at the per-byte charge
};

// Note [tile geometry]
// Per axis, with kernel k, tile basis N >= k and step d = N - k + 1, tiles partition a range R of
// the grid named per pass; tile t covers [r0 + t d, r0 + t d + len), len = d except the remainder.
//  fprop (overlap-save): y[i, i+len) = xpad[i, i+len+k-1) ⋆ c. R = [0, out). The tile reads the
//   padded-input window (always inside the padded grid), transforms it zero-embedded in N,
//   multiplies by conj(W) (W: FFT of the zero-embedded kernel), and keeps [0, len) of the inverse.
//  bprop: g_pad[i, i+len) = full correlation of gradOutput with c, which reads gradOutput
//   [i-k+1, i+len) (zero outside gradOutput). The window is placed at buffer offset 0, multiplied by
//   W (no conjugate: a linear convolution), and the inverse keeps [k-1, k-1+len). R: Note [bprop tile fold].
//  accgrad (the paper's reduction form): gradWeight = sum over tiles of xpad[i, i+len+k-1) ⋆ g[i, i+len),
//   including the remainder tile. R = [0, out) (the gradOutput grid): every gradOutput element is in
//   exactly one tile. Product conj(G_tile)·X_tile; the inverse keeps [0, k).
// In every pass len + k - 1 <= N, so no circular wrap-around reaches the kept part.
// The work items are (image s, tile t) pairs, ordered tile-major (item = t·S + s); a backend runs
// at most tiles_in_flight items at once, so its scratch is bounded by the plan (paper, Section 6).

// Note [bprop tile fold]
// bprop computes g_pad on the padded grid and returns P^T g_pad (Note [bprop padding adjoint]).
// Zero padding: P^T is a crop, so R = [ph, ph+h)×[pw, pw+w) only; each tile stores its kept
// values to gradInput[y - ph][x - pw] (BpropAssembly::crop_store; every element written once).
// Mirror padding: R = the whole padded grid [0,hp)×[0,wp); gradInput is zeroed first and each
// tile folds its own values: gradInput[padded_source(y)][padded_source(x)] += value
// (BpropAssembly::fold_accumulate). Since the tiles partition g_pad and the fold is linear, this
// equals fold_padded_plane on the assembled g_pad, without a problem-sized g_pad buffer; tiles of
// one (s, i) plane must not accumulate concurrently (or must use atomics).

// Note [accGrad tile reduction]
// frequency: accumulate conj(G_tile)·X_tile over every item into one fo×f spectrum of the tile
//   basis, then one inverse per (j, i) at the end (fo·f inverses).
// time: per spatial tile sum over images in frequency, inverse, add the kh×kw crop to gradWeight
//   (fo·f inverses per spatial tile). Same products, more inverses; kept for experiments and
//   picked by choose() only when it is not more expensive.

struct TilePlan {
  ConvProblem problem;
  Pass pass = Pass::fprop;
  bool tiled = false;            // false: one untiled transform of fft_h×fft_w per plane
  int64_t fft_h = 0, fft_w = 0;  // the Fourier basis: per tile when tiled, whole plane otherwise
  AxisTiling rows, cols;         // the tile grid (tiled only)
  AccgradReduction reduction = AccgradReduction::frequency;  // accgrad only
  BpropAssembly assembly = BpropAssembly::crop_store;        // bprop only
  int64_t tiles_in_flight = 1;   // (image, tile) items transformed at once (untiled: images)
  TileCost cost;

  // Output tile size (step): fft_h - kh + 1 by fft_w - kw + 1 (tiled only).
  int64_t out_tile_h() const { return rows.step; }
  int64_t out_tile_w() const { return cols.step; }
  int64_t tile_count() const { return tiled ? rows.count * cols.count : 1; }
  int64_t item_count() const { return problem.S * tile_count(); }
  // The range R the tiles partition (Note [tile geometry]); the whole result grid when untiled.
  Window region() const;
  // Tile `index` in [0, tile_count()) (tiled only); throws InvalidArgument otherwise.
  Tile tile(int64_t index) const;
  // "untiled 128x128" or "tile 16x16 (out 12x12, 11x11 tiles, 256 in flight)".
  std::string summary() const;
  // The plan summary of `fftconv run --json` and Plan::tile_json(): "null" when untiled, else
  // {"fft_h","fft_w","out_h","out_w","count","tiles_in_flight"} with the items a backend runs at once.
  std::string json(int64_t in_flight) const;
};

// Where bprop items [item0, item0 + items) of a tiled plan with axes `rows`, `cols` land in
// gradInput (Note [bprop tile fold]): the images [s0, s0 + images) and the rectangle `rect` of
// unpadded (h×w) coordinates that bound every element some padded position of those items' tiles
// reads from (padded_source). A bounding box: it holds every element the chunk adds to (exactly
// the bounds for zero padding and for chunks inside one tile; mirror reflections may widen it). A
// GPU fold visits only this part per chunk, so the chunks' folds together cost about one pass over
// gradInput instead of one pass per chunk. `rect` is empty
// (h = w = 0) when no padded position of the chunk has a source. Throws InvalidArgument when the
// items are not inside [0, S · rows.count · cols.count).
struct FoldFootprint {
  int64_t s0 = 0, images = 0;
  Window rect;
};
FoldFootprint bprop_fold_footprint(const ConvProblem& p, const AxisTiling& rows, const AxisTiling& cols,
                                   int64_t item0, int64_t items);

// The largest tile side make_tiled_plan() accepts on the rows (or columns) of (p, pass): a tile
// beyond the one that covers the whole axis only adds padding, so the larger of the policies'
// largest tile (kLargestPolicyTile) and the power of two that covers the axis in one tile (a
// 1000-point tile on an 8x8 input planned 148 MB of workspace).
int64_t largest_tile_side(const ConvProblem& p, Pass pass, bool rows);

// A tiled plan with basis fft_h×fft_w. Throws InvalidProblem for a bad problem, Unsupported
// when a basis side is smaller than the kernel or larger than largest_tile_side(). tiles_in_flight is clamped to [1, item_count()].
TilePlan make_tiled_plan(const ConvProblem& p, Pass pass, int64_t fft_h, int64_t fft_w,
                         int64_t tiles_in_flight,
                         AccgradReduction reduction = AccgradReduction::frequency);
// The untiled plan on basis fft_h×fft_w >= (hp, wp); throws Unsupported when it is smaller.
TilePlan make_untiled_plan(const ConvProblem& p, Pass pass, int64_t fft_h, int64_t fft_w,
                           int64_t images_in_flight);

}  // namespace fftconv
