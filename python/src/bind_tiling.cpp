// The tiling planner (tiling/) as plain Python data for plotting and study: the chosen TilePlan
// with its tiles' windows, every candidate with its cost-model figures, the reason and the table.
#include <map>
#include <vector>

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "common/errors.hpp"
#include "tiling/cost_model.hpp"
#include "tiling/planner.hpp"

namespace fftconv::py {

namespace {

nb::dict window_dict(const Window& w) {
  nb::dict d;
  d["y0"] = w.y0;
  d["x0"] = w.x0;
  d["h"] = w.h;
  d["w"] = w.w;
  return d;
}

nb::dict cost_dict(const TileCost& k) {
  nb::dict d;
  d["cost"] = k.cost;
  d["transform_cost"] = k.transform_cost;
  d["pointwise_cost"] = k.pointwise_cost;
  d["traffic_cost"] = k.traffic_cost;
  d["transform_flops"] = k.transform_flops;
  d["pointwise_flops"] = k.pointwise_flops;
  d["extra_flops"] = k.extra_flops;
  d["traffic_bytes"] = k.traffic_bytes;
  d["frequency_bytes"] = k.frequency_bytes;
  d["workspace_bytes"] = k.workspace_bytes;
  d["overlap_waste"] = k.overlap_waste;
  d["padding_waste"] = k.padding_waste;
  d["uncached_fraction"] = k.uncached_fraction;
  return d;
}

nb::dict axis_dict(const AxisTiling& a) {
  nb::dict d;
  d["origin"] = a.origin;
  d["extent"] = a.extent;
  d["fft"] = a.fft;
  d["kernel"] = a.kernel;
  d["step"] = a.step;
  d["count"] = a.count;
  return d;
}

nb::dict tile_dict(const Tile& t) {
  nb::dict d;
  d["index"] = t.index;
  d["row"] = t.row;
  d["col"] = t.col;
  d["window"] = window_dict(t.window);
  d["read"] = window_dict(t.read);
  d["read_valid"] = window_dict(t.read_valid);
  d["keep"] = window_dict(t.keep);
  d["border"] = t.border;
  return d;
}

nb::dict plan_dict(const TilePlan& t, bool include_tiles, int64_t max_tiles) {
  nb::dict d;
  d["problem"] = t.problem.to_string();
  d["pass"] = std::string(to_string(t.pass));
  d["tiled"] = t.tiled;
  d["fft_h"] = t.fft_h;
  d["fft_w"] = t.fft_w;
  d["tiles_in_flight"] = t.tiles_in_flight;
  d["count"] = t.tile_count();
  d["items"] = t.item_count();
  d["region"] = window_dict(t.region());
  d["summary"] = t.summary();
  d["cost"] = cost_dict(t.cost);
  if (t.pass == Pass::accgrad) d["reduction"] = std::string(to_string(t.reduction));
  if (t.pass == Pass::bprop) d["assembly"] = std::string(to_string(t.assembly));
  if (t.tiled) {
    d["out_tile_h"] = t.out_tile_h();
    d["out_tile_w"] = t.out_tile_w();
    d["rows"] = axis_dict(t.rows);
    d["cols"] = axis_dict(t.cols);
  }
  if (include_tiles && t.tiled && t.tile_count() <= max_tiles) {
    nb::list tiles;
    for (int64_t i = 0; i < t.tile_count(); ++i) tiles.append(tile_dict(t.tile(i)));
    d["tiles"] = tiles;
  } else {
    d["tiles"] = nb::none();  // untiled, not requested, or more than max_tiles
  }
  return d;
}

nb::dict candidate_dict(const Candidate& c) {
  nb::dict d;
  d["label"] = c.label();
  d["tiled"] = c.tiled;
  d["fft_h"] = c.fft_h;
  d["fft_w"] = c.fft_w;
  if (c.tiled) d["reduction"] = std::string(to_string(c.reduction));
  d["out_h"] = c.out_h;
  d["out_w"] = c.out_w;
  d["tiles_h"] = c.tiles_h;
  d["tiles_w"] = c.tiles_w;
  d["count"] = c.count();
  d["tiles_in_flight"] = c.tiles_in_flight;
  d["feasible"] = c.feasible;
  d["note"] = c.note;
  // Numbers only where the candidate could be costed (basis at least the kernel).
  if (c.tiles_in_flight > 0) d.update(cost_dict(c.cost));
  else d["cost"] = nb::none();
  return d;
}

nb::dict tiling(const ConvProblem& p, std::string_view pass_name, std::string_view tile, std::string_view tile_sizes,
                std::vector<int64_t> tile_candidates, std::size_t workspace_limit,
                std::map<std::string, std::string> extra, bool include_tiles, int64_t max_tiles, std::size_t max_rows) {
  const Pass pass = parse_pass(pass_name);
  PlanOptions o;
  o.tile = TileSpec::parse(tile);
  o.tile_sizes = parse_size_policy(tile_sizes);
  for (int64_t c : tile_candidates)
    if (c < 2 || c > 4096) throw InvalidArgument("tile_candidates: sizes must be in [2, 4096], got " + std::to_string(c));
  o.tile_candidates = std::move(tile_candidates);
  o.workspace_limit = workspace_limit;
  check_option_keys("tiling", extra, tiling_option_keys());
  o.extra = std::move(extra);
  if (max_tiles < 0) throw InvalidArgument("max_tiles: must be >= 0, got " + std::to_string(max_tiles));
  const TilingChoice c = plan_tiling(p, pass, o);
  nb::dict d;
  d["plan"] = plan_dict(c.plan, include_tiles, max_tiles);
  nb::list cands;
  for (const Candidate& k : c.candidates) cands.append(candidate_dict(k));
  d["candidates"] = cands;
  d["chosen"] = c.candidates.at(c.chosen).label();
  d["chosen_index"] = c.chosen;
  d["reason"] = c.reason;
  d["table"] = explain(c, max_rows);
  return d;
}

}  // namespace

void bind_tiling(nb::module_& m) {
  m.def("_tiling", &tiling, nb::arg("problem"), nb::arg("pass_"), nb::arg("tile") = "auto",
        nb::arg("tile_sizes") = "pow2", nb::arg("tile_candidates") = std::vector<int64_t>{},
        nb::arg("workspace_limit") = 0, nb::arg("extra") = std::map<std::string, std::string>{},
        nb::arg("include_tiles") = true, nb::arg("max_tiles") = 65536, nb::arg("max_rows") = 0);
  m.def(
      "_tile_plan",
      [](const ConvProblem& p, std::string_view pass_name, int64_t fft_h, int64_t fft_w, int64_t in_flight,
         std::string_view reduction, int64_t max_tiles) {
        const TilePlan t = make_tiled_plan(p, parse_pass(pass_name), fft_h, fft_w, in_flight,
                                           parse_accgrad_reduction(reduction));
        return plan_dict(t, true, max_tiles);
      },
      nb::arg("problem"), nb::arg("pass_"), nb::arg("fft_h"), nb::arg("fft_w"), nb::arg("tiles_in_flight") = 32,
      nb::arg("reduction") = "frequency", nb::arg("max_tiles") = 65536,
      "One tiled plan of a fixed basis (no search): its geometry and cost-model figures.");
}

}  // namespace fftconv::py
