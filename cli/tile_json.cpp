// JSON views of the tiling planner's results (see tile_json.hpp).
#include "cli/tile_json.hpp"

#include <string>

namespace fftconv::cli {

namespace {
nlohmann::json cost_fields(const TileCost& k) {
  return {{"cost", k.cost},
          {"workspace_bytes", k.workspace_bytes},
          {"frequency_bytes", k.frequency_bytes},
          {"transform_flops", k.transform_flops},
          {"pointwise_flops", k.pointwise_flops},
          {"extra_flops", k.extra_flops},
          {"traffic_bytes", k.traffic_bytes},
          {"overlap_waste", k.overlap_waste},
          {"padding_waste", k.padding_waste},
          {"uncached_fraction", k.uncached_fraction}};
}
}  // namespace

nlohmann::json tile_plan_to_json(const TilePlan& t) {
  if (!t.tiled) return nullptr;
  nlohmann::json j = {{"fft_h", t.fft_h},
                      {"fft_w", t.fft_w},
                      {"out_h", t.out_tile_h()},
                      {"out_w", t.out_tile_w()},
                      {"count", t.tile_count()},
                      {"tiles_h", t.rows.count},
                      {"tiles_w", t.cols.count},
                      {"tiles_in_flight", t.tiles_in_flight},
                      {"summary", t.summary()}};
  if (t.pass == Pass::accgrad) j["reduction"] = std::string(to_string(t.reduction));
  if (t.pass == Pass::bprop) j["assembly"] = std::string(to_string(t.assembly));
  j.update(cost_fields(t.cost));
  return j;
}

nlohmann::json candidate_to_json(const Candidate& c) {
  nlohmann::json j = {{"label", c.label()},
                      {"tiled", c.tiled},
                      {"fft_h", c.fft_h},
                      {"fft_w", c.fft_w},
                      {"out_h", c.tiled ? nlohmann::json(c.out_h) : nlohmann::json(nullptr)},
                      {"out_w", c.tiled ? nlohmann::json(c.out_w) : nlohmann::json(nullptr)},
                      {"count", c.count()},
                      {"feasible", c.feasible},
                      {"note", c.note}};
  if (c.tiled) j["reduction"] = std::string(to_string(c.reduction));
  if (c.tiles_in_flight > 0) {
    j["tiles_in_flight"] = c.tiles_in_flight;
    j.update(cost_fields(c.cost));
  } else {
    j["tiles_in_flight"] = nullptr;
    j["cost"] = nullptr;
    j["workspace_bytes"] = nullptr;
  }
  return j;
}

nlohmann::json tiling_choice_to_json(const TilingChoice& c) {
  nlohmann::json cands = nlohmann::json::array();
  for (const Candidate& k : c.candidates) cands.push_back(candidate_to_json(k));
  return {{"problem", c.plan.problem.to_string()},
          {"pass", std::string(to_string(c.plan.pass))},
          {"tile", tile_plan_to_json(c.plan)},
          {"basis", {{"fft_h", c.plan.fft_h}, {"fft_w", c.plan.fft_w}, {"tiled", c.plan.tiled}}},
          {"chosen", c.candidates.at(c.chosen).label()},
          {"summary", c.plan.summary()},
          {"candidates", cands},
          {"reason", c.reason}};
}

}  // namespace fftconv::cli
