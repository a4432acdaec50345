// The tiling planner (see planner.hpp): candidate enumeration, fitting the workspace limit by
// lowering the tiles in flight, the choice and its explanation.
#include "tiling/planner.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "common/errors.hpp"
#include "common/fft_size.hpp"
#include "tiling/cost_model.hpp"

namespace fftconv {

namespace {

constexpr int64_t kMinSide = 2, kMaxSide = 4096;  // as TileSpec::parse

std::string fmt(double v) {  // 3 significant digits with an SI suffix
  const char* suffix[] = {"", "K", "M", "G", "T", "P", "E"};
  int i = 0;
  while (std::fabs(v) >= 1000.0 && i < 6) { v /= 1000.0; ++i; }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, suffix[i]);
  return buf;
}

std::string fmt_bytes(double v) {
  const char* suffix[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int i = 0;
  while (v >= 1024.0 && i < 6) { v /= 1024.0; ++i; }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %s", v, suffix[i]);
  return buf;
}

Candidate describe(const TilePlan& t) {
  Candidate c;
  c.tiled = t.tiled;
  c.fft_h = t.fft_h;
  c.fft_w = t.fft_w;
  c.reduction = t.reduction;
  if (t.tiled) {
    c.out_h = t.out_tile_h();
    c.out_w = t.out_tile_w();
    c.tiles_h = t.rows.count;
    c.tiles_w = t.cols.count;
  }
  c.tiles_in_flight = t.tiles_in_flight;
  c.cost = t.cost;
  c.feasible = true;
  return c;
}

// Builds the plan of one candidate with the largest in-flight count that fits the limit.
// Returns the plan (when feasible) and fills `cand`.
std::optional<TilePlan> fit(const ConvProblem& p, Pass pass, bool tiled, int64_t fh, int64_t fw,
                            AccgradReduction red, const TilingOptions& o, Candidate& cand) {
  TilePlan t;
  try {
    if (tiled) {
      t = make_tiled_plan(p, pass, fh, fw, o.tiles_in_flight > 0 ? o.tiles_in_flight : 1, red);
      if (o.tiles_in_flight == 0) {
        const WorkspaceModel ws = workspace_model(t);
        const double fit = std::floor((kCacheBytes - ws.fixed) / ws.per_item);
        const double b = std::clamp(fit, double(kMinTilesInFlight), double(kMaxTilesInFlight));
        t = make_tiled_plan(p, pass, fh, fw, int64_t(b), red);  // clamps to the item count
      }
    } else {
      t = make_untiled_plan(p, pass, fh, fw, p.S);
    }
  } catch (const Unsupported& e) {
    cand = Candidate{};
    cand.tiled = tiled;
    cand.fft_h = fh;
    cand.fft_w = fw;
    cand.reduction = red;
    cand.note = e.what();
    return std::nullopt;
  }
  const double limit = double(o.workspace_limit);
  if (o.workspace_limit > 0 && t.cost.workspace_bytes > limit) {
    const WorkspaceModel ws = workspace_model(t);
    const double b = std::floor((limit - ws.fixed) / ws.per_item);
    if (b < 1.0) {
      cand = describe(tiled ? make_tiled_plan(p, pass, fh, fw, 1, red) : make_untiled_plan(p, pass, fh, fw, 1));
      cand.feasible = false;
      cand.note = "needs " + fmt_bytes(ws.at(1)) + " with one " + (tiled ? "tile" : "image") +
                  " in flight, over the limit " + fmt_bytes(limit);
      return std::nullopt;
    }
    const int64_t bi = int64_t(std::min(b, double(t.tiles_in_flight)));
    t = tiled ? make_tiled_plan(p, pass, fh, fw, bi, red) : make_untiled_plan(p, pass, fh, fw, bi);
  }
  cand = describe(t);
  return t;
}

std::vector<AccgradReduction> reductions(Pass pass, bool tiled, const TilingOptions& o) {
  if (pass != Pass::accgrad || !tiled) return {AccgradReduction::frequency};
  if (o.reduction) return {*o.reduction};
  return {AccgradReduction::frequency, AccgradReduction::time};
}

// Adds every candidate of (tiled, fh, fw) to `out` and its plan to `plans` (nullopt if infeasible).
void add(const ConvProblem& p, Pass pass, bool tiled, int64_t fh, int64_t fw, const TilingOptions& o,
         TilingChoice& out, std::vector<std::optional<TilePlan>>& plans) {
  for (AccgradReduction r : reductions(pass, tiled, o)) {
    Candidate c;
    plans.push_back(fit(p, pass, tiled, fh, fw, r, o, c));
    out.candidates.push_back(std::move(c));
  }
}

// Picks the cheapest feasible candidate (ties: less workspace, then earlier), writes the reason.
// `mode`: "auto", "none" or "fixed" (which tile option asked).
void pick(TilingChoice& out, std::vector<std::optional<TilePlan>>& plans, const std::string& mode) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!plans[i]) continue;
    if (!best) { best = i; continue; }
    const TileCost &a = out.candidates[i].cost, &b = out.candidates[*best].cost;
    if (a.cost < b.cost || (a.cost == b.cost && a.workspace_bytes < b.workspace_bytes)) best = i;
  }
  if (!best) {
    std::string why;
    for (const Candidate& c : out.candidates) why += "; " + c.label() + ": " + c.note;
    throw Unsupported("tiling: no candidate fits (tile " + mode + ")" + why);
  }
  out.chosen = *best;
  out.plan = *plans[*best];
  const Candidate& win = out.candidates[*best];
  std::size_t feasible = 0, over_limit = 0, too_small = 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const std::string& note = out.candidates[i].note;
    if (plans[i]) ++feasible;
    else if (note.find("over the limit") != std::string::npos) ++over_limit;
    else if (note.find("smaller than") != std::string::npos) ++too_small;
  }
  const std::string how = mode == "auto" ? "is the cheapest" : mode == "none" ? "(untiled, as requested)"
                                                                              : "(fixed by the tile option)";
  std::string r = win.label() + " " + how + ": cost " + fmt(win.cost.cost) + ", workspace " +
                  fmt_bytes(win.cost.workspace_bytes);
  if (feasible > 1) {
    // Compare with the runner-up of the other kind (tiled vs none) when there is one.
    std::optional<std::size_t> other;
    for (std::size_t i = 0; i < plans.size(); ++i)
      if (plans[i] && out.candidates[i].tiled != win.tiled &&
          (!other || out.candidates[i].cost.cost < out.candidates[*other].cost.cost))
        other = i;
    if (other) {
      const Candidate& o = out.candidates[*other];
      r += "; best " + std::string(o.tiled ? "tiled " : "untiled ") + o.label() + " costs " +
           fmt(o.cost.cost / win.cost.cost) + "x as much";
      if (!win.tiled)
        r += " (its transforms " + fmt(o.cost.transform_flops) + " flops, products " +
             fmt(o.cost.pointwise_flops) + ", overlap re-reads " + fmt(100 * o.cost.overlap_waste) +
             "%, padding " + fmt(100 * o.cost.padding_waste) + "% of transformed samples)";
      r += ", workspace " + fmt_bytes(o.cost.workspace_bytes);
    }
  }
  if (win.tiled && !plans[0] && !out.candidates[0].note.empty())  // [0] is always "none"
    r += "; untiled " + out.candidates[0].label() + ": " + out.candidates[0].note;
  r += "; " + std::to_string(feasible) + " feasible of " + std::to_string(out.candidates.size());
  if (over_limit) r += ", " + std::to_string(over_limit) + " over the workspace limit";
  if (too_small) r += ", " + std::to_string(too_small) + " smaller than the kernel";
  out.reason = r;
}

int64_t parse_nonneg(std::string_view key, std::string_view v) {
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || out < 0)
    throw InvalidArgument(std::string(key) + ": expected a non-negative integer, got '" + std::string(v) + "'");
  return out;
}

void check_side(std::string_view what, int64_t n) {
  if (n < kMinSide || n > kMaxSide)
    throw InvalidArgument(std::string(what) + ": tile size " + std::to_string(n) + " outside [" +
                          std::to_string(kMinSide) + ", " + std::to_string(kMaxSide) + "]");
}

// The untiled candidate, first in every choice.
void add_untiled(const ConvProblem& p, Pass pass, const TilingOptions& o, TilingChoice& out,
                 std::vector<std::optional<TilePlan>>& plans) {
  add(p, pass, false, untiled_side(p, true, o.basis_h, o.policy), untiled_side(p, false, o.basis_w, o.policy), o,
      out, plans);
}

}  // namespace

int64_t untiled_side(const ConvProblem& p, bool rows, int64_t pinned, SizePolicy policy) {
  if (pinned > 0) return pinned;
  const int64_t extent = rows ? p.wrapped_h() : p.wrapped_w();
  return policy == SizePolicy::pow2 ? next_pow2(extent) : next_smooth7(extent);
}

std::string Candidate::label() const {
  std::string s = std::to_string(fft_h) + "x" + std::to_string(fft_w);
  if (!tiled) return "none(" + s + ")";
  if (reduction == AccgradReduction::time) s += "/time";
  return s;
}

std::vector<int64_t> policy_sizes(SizePolicy policy) {
  std::vector<int64_t> out;
  for (int64_t n = 8; n <= kLargestPolicyTile; ++n)
    if (policy == SizePolicy::pow2 ? is_pow2(n) : is_smooth7(n)) out.push_back(n);
  return out;
}

TilingOptions tiling_options(const PlanOptions& o) {
  TilingOptions t;
  t.policy = o.tile_sizes;
  t.sizes = o.tile_candidates;
  for (int64_t n : t.sizes) check_side("tile_candidates", n);
  t.workspace_limit = o.workspace_limit;
  if (o.basis_h < 0 || o.basis_w < 0)
    throw InvalidArgument("basis: must be >= 0, got " + std::to_string(o.basis_h) + "x" + std::to_string(o.basis_w));
  t.basis_h = o.basis_h;
  t.basis_w = o.basis_w;
  if (auto it = o.extra.find("tiles_in_flight"); it != o.extra.end())
    t.tiles_in_flight = parse_nonneg("tiles_in_flight", it->second);
  if (auto it = o.extra.find("accgrad_reduction"); it != o.extra.end())
    t.reduction = parse_accgrad_reduction(it->second);
  return t;
}

const std::vector<std::string_view>& tiling_option_keys() {
  static const std::vector<std::string_view> keys{"tiles_in_flight", "accgrad_reduction"};
  return keys;
}

std::vector<std::string_view> with_tiling_option_keys(std::vector<std::string_view> own) {
  own.insert(own.end(), tiling_option_keys().begin(), tiling_option_keys().end());
  return own;
}

bool runs_planner_tiles(const Backend& b) {
  const auto keys = b.option_keys();
  return std::find(keys.begin(), keys.end(), std::string_view("tiles_in_flight")) != keys.end();
}

TilingChoice choose_untiled(const ConvProblem& p, Pass pass, const TilingOptions& o) {
  require_dense(p, "tiling");  // the planner tiles the dense problem (Note [lowering])
  TilingChoice out;
  std::vector<std::optional<TilePlan>> plans;
  add_untiled(p, pass, o, out, plans);
  pick(out, plans, "none");
  return out;
}

TilingChoice choose_fixed(const ConvProblem& p, Pass pass, int64_t fh, int64_t fw, const TilingOptions& o) {
  require_dense(p, "tiling");  // the planner tiles the dense problem (Note [lowering])
  check_side("tile", fh);
  check_side("tile", fw);
  TilingChoice out;
  std::vector<std::optional<TilePlan>> plans;
  add_untiled(p, pass, o, out, plans);
  plans[0].reset();  // listed for comparison only
  if (out.candidates[0].note.empty()) out.candidates[0].note = "not requested (listed for comparison)";
  out.candidates[0].feasible = false;
  add(p, pass, true, fh, fw, o, out, plans);
  pick(out, plans, "fixed");
  return out;
}

TilingChoice choose(const ConvProblem& p, Pass pass, const TilingOptions& o) {
  require_dense(p, "tiling");  // the planner tiles the dense problem (Note [lowering])
  std::vector<int64_t> sizes = o.sizes.empty() ? policy_sizes(o.policy) : o.sizes;
  for (int64_t n : sizes) check_side("tile_candidates", n);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const bool rectangular = p.padded_h() != p.padded_w() || p.kh != p.kw;
  TilingChoice out;
  std::vector<std::optional<TilePlan>> plans;
  add_untiled(p, pass, o, out, plans);
  for (int64_t fh : sizes)
    for (int64_t fw : sizes)
      if (fh == fw || rectangular) add(p, pass, true, fh, fw, o, out, plans);
  pick(out, plans, "auto");
  return out;
}

TilingChoice plan_tiling(const ConvProblem& p, Pass pass, const PlanOptions& opts) {
  const TilingOptions o = tiling_options(opts);
  switch (opts.tile.kind) {
    case TileSpec::Kind::none: return choose_untiled(p, pass, o);
    case TileSpec::Kind::automatic: return choose(p, pass, o);
    case TileSpec::Kind::fixed: return choose_fixed(p, pass, opts.tile.fft_h, opts.tile.fft_w, o);
  }
  throw InvalidArgument("tile: unknown kind");
}

std::string explain(const TilingChoice& c, std::size_t max_rows) {
  const TilePlan& t = c.plan;
  std::string s = "problem " + t.problem.to_string() + ", pass " + std::string(to_string(t.pass)) + "\n";
  s += "chosen: " + t.summary() + "\n";
  std::vector<std::size_t> order(c.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Candidate &x = c.candidates[a], &y = c.candidates[b];
    if (x.feasible != y.feasible) return x.feasible;
    if (!x.feasible) return false;
    return x.cost.cost < y.cost.cost;
  });
  const double best = c.candidates[c.chosen].cost.cost;
  char line[512];
  std::snprintf(line, sizeof line, "  %-17s %-7s %-11s %-7s %-9s %-9s %-9s %-10s %-8s %-7s %-9s %-6s %s\n",
                "candidate", "out", "tiles", "flight", "fft", "cgemm", "traffic", "workspace", "overlap",
                "pad", "cost", "ratio", "note");
  s += line;
  std::size_t shown = 0;
  for (std::size_t i : order) {
    if (max_rows && shown == max_rows) {
      s += "  ... " + std::to_string(order.size() - shown) + " more candidates\n";
      break;
    }
    ++shown;
    const Candidate& k = c.candidates[i];
    const std::string label = (i == c.chosen ? "* " : "  ") + k.label();
    const std::string out = k.tiled && k.out_h > 0 ? std::to_string(k.out_h) + "x" + std::to_string(k.out_w) : "-";
    const bool costed = k.tiles_in_flight > 0;
    const std::string tiles = costed ? std::to_string(k.tiles_h) + "x" + std::to_string(k.tiles_w) : "-";
    std::snprintf(line, sizeof line, "%-19s %-7s %-11s %-7s %-9s %-9s %-9s %-10s %-8s %-7s %-9s %-6s %s\n",
                  label.c_str(), out.c_str(), tiles.c_str(),
                  costed ? std::to_string(k.tiles_in_flight).c_str() : "-",
                  costed ? fmt(k.cost.transform_flops).c_str() : "-",
                  costed ? fmt(k.cost.pointwise_flops).c_str() : "-",
                  costed ? fmt_bytes(k.cost.traffic_bytes).c_str() : "-",
                  costed ? fmt_bytes(k.cost.workspace_bytes).c_str() : "-",
                  costed ? (fmt(100 * k.cost.overlap_waste) + "%").c_str() : "-",
                  costed ? (fmt(100 * k.cost.padding_waste) + "%").c_str() : "-",
                  costed ? fmt(k.cost.cost).c_str() : "-",
                  costed && best > 0 ? fmt(k.cost.cost / best).c_str() : "-", k.note.c_str());
    s += line;
  }
  s += "reason: " + c.reason + "\n";
  return s;
}

PlanOptions frequency_reduction_only(const PlanOptions& opts, std::string_view backend) {
  PlanOptions o = opts;
  if (auto it = o.extra.find("accgrad_reduction");
      it != o.extra.end() && parse_accgrad_reduction(it->second) != AccgradReduction::frequency)
    throw Unsupported(std::string(backend) + ": tiled accgrad reduces in the frequency domain only (accgrad_reduction=" +
                      it->second + " requested)");
  o.extra["accgrad_reduction"] = "frequency";
  return o;
}

std::vector<const Candidate*> timed_tile_candidates(const TilingChoice& c,
                                                    const std::function<bool(const Candidate&)>& runnable,
                                                    std::size_t count) {  // Note [timed tile candidates]
  std::vector<const Candidate*> out;
  for (const Candidate& k : c.candidates)
    if (k.tiled && k.feasible && runnable(k)) out.push_back(&k);
  std::stable_sort(out.begin(), out.end(),
                   [](const Candidate* a, const Candidate* b) { return a->cost.cost < b->cost.cost; });
  if (out.size() > count) out.resize(count);
  if (!out.empty()) {
    const double limit = kTimedCostRatio * out.front()->cost.cost;
    out.erase(std::remove_if(out.begin() + 1, out.end(), [&](const Candidate* k) { return k->cost.cost > limit; }),
              out.end());
  }
  return out;
}

}  // namespace fftconv
