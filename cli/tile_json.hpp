// JSON views of the tiling planner's results (TilePlan, candidates, the choice), shared by the
// `plan` and `run` subcommands (tiling/ itself stays free of JSON).
#pragma once
#include <nlohmann/json.hpp>

#include "tiling/planner.hpp"

namespace fftconv::cli {

// null when untiled; else {fft_h, fft_w, out_h, out_w, count, tiles_h, tiles_w, tiles_in_flight,
// reduction (accgrad), assembly (bprop), cost, workspace_bytes, summary}.
nlohmann::json tile_plan_to_json(const TilePlan& plan);
// {label, tiled, fft_h, fft_w, out_h, out_w, count, tiles_in_flight, cost, workspace_bytes,
//  transform_flops, pointwise_flops, traffic_bytes, overlap_waste, padding_waste, feasible, note};
// the numbers are null for a candidate that could not be costed (basis smaller than the kernel).
nlohmann::json candidate_to_json(const Candidate& c);
// {problem, pass, tile, basis: {fft_h, fft_w} (the chosen basis, tiled or not), chosen (label),
//  candidates, reason}.
nlohmann::json tiling_choice_to_json(const TilingChoice& c);

}  // namespace fftconv::cli
