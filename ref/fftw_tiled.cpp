// Tiled execution of the fftw backend over the shared tiling planner (filled in with tiling/).
#include "common/errors.hpp"
#include "ref/fftw_pass.hpp"

namespace fftconv {

std::unique_ptr<Plan> make_fftw_tiled_plan(const ConvProblem&, Pass, const PlanOptions& o) {
  throw Unsupported("fftw: tile '" + o.tile.to_string() + "' needs the tiling planner, not built yet");
}

}  // namespace fftconv
