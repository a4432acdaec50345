// TilePlan construction and per-tile geometry (see Note [tile geometry] in tile_plan.hpp).
#include "tiling/tile_plan.hpp"

#include <algorithm>

#include "common/backend.hpp"
#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "common/padding.hpp"
#include "tiling/cost_model.hpp"

namespace fftconv {

std::string_view to_string(AccgradReduction r) { return r == AccgradReduction::frequency ? "frequency" : "time"; }

AccgradReduction parse_accgrad_reduction(std::string_view s) {
  if (s == "frequency" || s == "freq") return AccgradReduction::frequency;
  if (s == "time") return AccgradReduction::time;
  throw InvalidArgument("accgrad_reduction: expected frequency or time, got '" + std::string(s) + "'");
}

std::string_view to_string(BpropAssembly a) {
  return a == BpropAssembly::crop_store ? "crop_store" : "fold_accumulate";
}

namespace {

// The range R of one axis (Note [tile geometry], Note [bprop tile fold]): origin and extent.
std::pair<int64_t, int64_t> axis_region(const ConvProblem& p, Pass pass, bool rows) {
  const int64_t n = rows ? p.h : p.w, pad = rows ? p.ph : p.pw;
  const int64_t out = rows ? p.out_h() : p.out_w(), padded = rows ? p.padded_h() : p.padded_w();
  if (pass != Pass::bprop) return {0, out};
  if (p.padding == Padding::zero) return {pad, n};
  return {0, padded};
}

}  // namespace

int64_t largest_tile_side(const ConvProblem& p, Pass pass, bool rows) {
  const auto [origin, extent] = axis_region(p, pass, rows);
  return std::max<int64_t>(kLargestPolicyTile, next_pow2(extent + (rows ? p.kh : p.kw) - 1));
}

namespace {

AxisTiling make_axis(const ConvProblem& p, Pass pass, bool rows, int64_t fft) {
  AxisTiling a;
  const int64_t k = rows ? p.kh : p.kw;
  const char* name = rows ? "fft_h" : "fft_w";
  if (fft < k)
    throw Unsupported(std::string("tile: ") + name + " = " + std::to_string(fft) +
                      " is smaller than the kernel (" + (rows ? "kh" : "kw") + " = " + std::to_string(k) + ")");
  auto [origin, extent] = axis_region(p, pass, rows);
  if (const int64_t largest = largest_tile_side(p, pass, rows); fft > largest)
    throw Unsupported(std::string("tile: ") + name + " = " + std::to_string(fft) +
                      " is larger than any useful tile for the padded input " + std::to_string(p.padded_h()) + "x" +
                      std::to_string(p.padded_w()) + ": one tile of " + std::to_string(next_pow2(extent + k - 1)) +
                      " covers its " + (rows ? "rows" : "columns") + " (tiles up to " + std::to_string(largest) +
                      " are accepted)");
  a.origin = origin;
  a.extent = extent;
  a.fft = fft;
  a.kernel = k;
  a.step = fft - k + 1;
  a.count = (extent + a.step - 1) / a.step;
  return a;
}

// [lo, hi] of padded_source over the padded coordinates [y0, y1) of an axis (n, pad); lo > hi when
// none of them has a source (zero padding outside the plane).
std::pair<int64_t, int64_t> source_span(int64_t y0, int64_t y1, int64_t n, int64_t pad, Padding mode) {
  int64_t lo = n, hi = -1;
  for (int64_t y = y0; y < y1; ++y) {
    const int64_t r = padded_source(y, n, pad, mode);
    if (r < 0) continue;
    lo = std::min(lo, r);
    hi = std::max(hi, r);
  }
  return {lo, hi};
}

}  // namespace

FoldFootprint bprop_fold_footprint(const ConvProblem& p, const AxisTiling& rows, const AxisTiling& cols,
                                   int64_t item0, int64_t items) {
  const int64_t tiles = rows.count * cols.count;
  if (item0 < 0 || items < 1 || item0 + items > p.S * tiles)
    throw InvalidArgument("bprop_fold_footprint: items [" + std::to_string(item0) + ", " +
                          std::to_string(item0 + items) + ") outside [0, " + std::to_string(p.S * tiles) + ")");
  const int64_t t0 = item0 / p.S, t1 = (item0 + items - 1) / p.S;  // items are tile-major: t·S + s
  FoldFootprint f;
  f.s0 = t0 == t1 ? item0 % p.S : 0;
  f.images = t0 == t1 ? items : p.S;
  const int64_t tr0 = t0 / cols.count, tr1 = t1 / cols.count;
  // One tile row: the tiles t0..t1 are adjacent columns; more: every column of those rows.
  const int64_t tc0 = tr0 == tr1 ? t0 % cols.count : 0, tc1 = tr0 == tr1 ? t1 % cols.count : cols.count - 1;
  const auto [r0, r1] = source_span(rows.start(tr0), rows.start(tr1) + rows.length(tr1), p.h, p.ph, p.padding);
  const auto [c0, c1] = source_span(cols.start(tc0), cols.start(tc1) + cols.length(tc1), p.w, p.pw, p.padding);
  if (r0 <= r1 && c0 <= c1) f.rect = Window{r0, c0, r1 - r0 + 1, c1 - c0 + 1};
  return f;
}

TilePlan make_tiled_plan(const ConvProblem& p, Pass pass, int64_t fft_h, int64_t fft_w, int64_t tiles_in_flight,
                         AccgradReduction reduction) {
  require_dense(p, "tiling");  // the planner tiles the dense problem (Note [lowering])
  TilePlan t;
  t.problem = p;
  t.pass = pass;
  t.tiled = true;
  t.fft_h = fft_h;
  t.fft_w = fft_w;
  t.rows = make_axis(p, pass, true, fft_h);
  t.cols = make_axis(p, pass, false, fft_w);
  t.reduction = reduction;
  t.assembly = p.padding == Padding::zero ? BpropAssembly::crop_store : BpropAssembly::fold_accumulate;
  t.tiles_in_flight = std::clamp<int64_t>(tiles_in_flight, 1, t.item_count());
  t.cost = estimate_cost(t);
  return t;
}

TilePlan make_untiled_plan(const ConvProblem& p, Pass pass, int64_t fft_h, int64_t fft_w, int64_t images_in_flight) {
  require_dense(p, "tiling");  // the planner tiles the dense problem (Note [lowering])
  if (fft_h < p.wrapped_h() || fft_w < p.wrapped_w())
    throw Unsupported("basis: " + std::to_string(fft_h) + "x" + std::to_string(fft_w) +
                      " is smaller than the circular extent " + std::to_string(p.wrapped_h()) + "x" +
                      std::to_string(p.wrapped_w()) + " (Note [wrapped padding])");
  TilePlan t;
  t.problem = p;
  t.pass = pass;
  t.tiled = false;
  t.fft_h = fft_h;
  t.fft_w = fft_w;
  t.assembly = p.padding == Padding::zero ? BpropAssembly::crop_store : BpropAssembly::fold_accumulate;
  t.tiles_in_flight = std::clamp<int64_t>(images_in_flight, 1, p.S);
  t.cost = estimate_cost(t);
  return t;
}

Window TilePlan::region() const {
  auto [y0, h] = axis_region(problem, pass, true);
  auto [x0, w] = axis_region(problem, pass, false);
  return {y0, x0, h, w};
}

Tile TilePlan::tile(int64_t index) const {
  if (!tiled || index < 0 || index >= tile_count())
    throw InvalidArgument("tile: index " + std::to_string(index) + " out of range (plan has " +
                          (tiled ? std::to_string(tile_count()) + " tiles" : std::string("no tiles")) + ")");
  Tile t;
  t.index = index;
  t.row = index / cols.count;
  t.col = index % cols.count;
  t.window = {rows.start(t.row), cols.start(t.col), rows.length(t.row), cols.length(t.col)};
  const int64_t kh = problem.kh, kw = problem.kw;
  const int64_t rh = t.window.h + kh - 1, rw = t.window.w + kw - 1;
  if (pass == Pass::bprop) {
    t.read = {t.window.y0 - (kh - 1), t.window.x0 - (kw - 1), rh, rw};
    const int64_t y0 = std::max<int64_t>(t.read.y0, 0), x0 = std::max<int64_t>(t.read.x0, 0);
    const int64_t y1 = std::min(t.read.y0 + rh, problem.out_h()), x1 = std::min(t.read.x0 + rw, problem.out_w());
    t.read_valid = {y0, x0, std::max<int64_t>(y1 - y0, 0), std::max<int64_t>(x1 - x0, 0)};
    t.border = !(t.read_valid == t.read);
    t.keep = {kh - 1, kw - 1, t.window.h, t.window.w};
  } else {
    t.read = {t.window.y0, t.window.x0, rh, rw};
    t.read_valid = t.read;
    const Window inner{problem.ph, problem.pw, problem.h, problem.w};
    t.border = !inner.contains(t.read);
    t.keep = pass == Pass::fprop ? Window{0, 0, t.window.h, t.window.w} : Window{0, 0, kh, kw};
  }
  return t;
}

std::string TilePlan::summary() const {
  const std::string basis = std::to_string(fft_h) + "x" + std::to_string(fft_w);
  if (!tiled) return "untiled " + basis + " (" + std::to_string(tiles_in_flight) + " images in flight)";
  std::string s = "tile " + basis + " (out " + std::to_string(out_tile_h()) + "x" + std::to_string(out_tile_w()) +
                  ", " + std::to_string(rows.count) + "x" + std::to_string(cols.count) + " tiles, " +
                  std::to_string(tiles_in_flight) + " in flight";
  if (pass == Pass::accgrad) s += ", " + std::string(to_string(reduction)) + " reduction";
  if (pass == Pass::bprop) s += ", " + std::string(to_string(assembly));
  return s + ")";
}

std::string TilePlan::json(int64_t in_flight) const {
  if (!tiled) return "null";
  return "{\"fft_h\":" + std::to_string(fft_h) + ",\"fft_w\":" + std::to_string(fft_w) + ",\"out_h\":" +
         std::to_string(out_tile_h()) + ",\"out_w\":" + std::to_string(out_tile_w()) + ",\"count\":" +
         std::to_string(tile_count()) + ",\"tiles_in_flight\":" + std::to_string(in_flight) + "}";
}

}  // namespace fftconv
